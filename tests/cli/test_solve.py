"""``routecli solve`` as scripts and careful users meet it (issue 15): what ``--out`` may
overwrite and when that is decided, folder inputs, machine-readable output, one-line errors from
every model, and ``--time-limit`` as a contract."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
import torch
import vrplib

from routecli import solvers
from routecli.cli.app import main
from routecli.stop import DEFAULT_SECONDS as SEARCH_SECONDS

MALFORMED = Path(__file__).parents[1] / "data" / "malformed"


@pytest.fixture
def published(data_dir, tmp_path) -> Path:
    """An instance beside its published best-known solution, as CVRPLIB ships them."""
    for name in ("tiny.vrp", "tiny.sol"):
        shutil.copy(data_dir / name, tmp_path / name)
    return tmp_path


@pytest.fixture
def no_solving(monkeypatch):
    """Fail the test if anything is solved: refusals must come before the work."""
    def refuse(*args, **kwargs):
        raise AssertionError("solved before refusing")

    monkeypatch.setattr(solvers, "run", refuse)


def one_error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("error: "), err
    return err


def test_out_never_overwrites_a_best_known_solution_without_force(published, capsys, no_solving):
    before = (published / "tiny.sol").read_text()
    assert main(["solve", str(published / "tiny.vrp"), "-m", "nn",
                 "--out", str(published / "tiny.sol")]) == 2
    err = one_error(capsys)
    assert "best-known solution" in err and "--force" in err
    assert (published / "tiny.sol").read_text() == before


def test_force_overwrites_and_the_written_file_is_no_longer_a_best_known_source(published, capsys):
    argv = ["solve", str(published / "tiny.vrp"), "-m", "nn", "--out", str(published / "tiny.sol")]
    assert main([*argv, "--force"]) == 0
    assert "bks=52" in capsys.readouterr().out
    assert main(argv) == 0  # routecli's own file: replaced without --force, not taken as BKS
    assert "bks=-" in capsys.readouterr().out


@pytest.mark.parametrize("out, message", [
    ("notes.txt", "is a file, not a .sol/.tour file or a folder"),  # an existing other file
    ("foreign.sol", "was not written by routecli"),  # another tool's solution
    ("folder.sol", "is a folder, not a file"),  # a folder where a file is expected
    ("notes.txt/x.sol", "is a file, not a folder"),  # a path that cannot be created
    ("tiny.tour", "a CVRP solution is a CVRPLIB route file"),  # the wrong format
])
def test_a_bad_out_is_refused_before_solving(data_dir, tmp_path, capsys, no_solving, out, message):
    (tmp_path / "notes.txt").write_text("keep me\n")
    (tmp_path / "foreign.sol").write_text("Route #1: 1 2 3 4 5\nCost 70\n")
    (tmp_path / "folder.sol").mkdir()
    assert main(["solve", str(data_dir / "tiny.vrp"), "-m", "nn", "--out",
                 str(tmp_path / out)]) == 2
    assert message in one_error(capsys)
    assert (tmp_path / "notes.txt").read_text() == "keep me\n"
    assert not list((tmp_path / "folder.sol").iterdir())


def test_a_tsp_tour_is_not_written_into_a_sol_file(data_dir, tmp_path, capsys, no_solving):
    assert main(["solve", str(data_dir / "tiny.tsp"), "-m", "nn", "--out",
                 str(tmp_path / "tiny.sol")]) == 2
    assert "name the file tiny.tour" in one_error(capsys)
    assert not list(tmp_path.iterdir())


def test_several_inputs_need_a_folder_not_a_sol_file(data_dir, tmp_path, capsys, no_solving):
    files = [str(data_dir / "tiny.vrp"), str(data_dir / "tiny_solomon.txt")]
    assert main(["solve", *files, "-m", "nn", "--out", str(tmp_path / "x.sol")]) == 2
    assert "2 inputs need a folder" in one_error(capsys)
    assert not list(tmp_path.iterdir())


def test_two_inputs_with_one_solution_name_are_refused(data_dir, deep_dir, capsys, no_solving):
    for folder in ("a", "b"):
        (deep_dir / folder).mkdir()
        shutil.copy(data_dir / "tiny.vrp", deep_dir / folder / "tiny.vrp")
    assert main(["solve", str(deep_dir / "a" / "tiny.vrp"), str(deep_dir / "b" / "tiny.vrp"),
                 "-m", "nn", "--out", str(deep_dir / "sols")]) == 2
    assert "; solve them into different folders" in one_error(capsys)  # not cut short


def test_a_one_customer_solution_is_a_sol_vrplib_reads(data_dir, tmp_path):
    out = tmp_path / "one.sol"
    assert main(["solve", str(data_dir / "one_customer.vrp"), "-m", "nn", "--out", str(out)]) == 0
    assert vrplib.read_solution(str(out)) == {"routes": [[1]], "cost": 10}


def test_a_folder_input_solves_every_instance_in_it(data_dir, tmp_path, capsys):
    folder = tmp_path / "instances"
    folder.mkdir()
    for name in ("tiny.vrp", "one_customer.vrp", "tiny.tsp"):
        shutil.copy(data_dir / name, folder / name)
    assert main(["solve", str(folder), "-m", "nn", "--json", "--out", str(tmp_path / "sols")]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["instance"] for r in rows] == ["one_customer", "tiny", "tiny"]
    assert sorted(p.name for p in (tmp_path / "sols").iterdir()) == [
        "one_customer.sol", "tiny.sol", "tiny.tour"]


def test_json_prints_one_plain_object_per_instance_and_csv_the_same_rows(data_dir, tmp_path,
                                                                         capsys):
    summary = tmp_path / "summary.csv"
    assert main(["solve", str(data_dir / "tiny.vrp"), str(data_dir / "tiny.tsp"), "-m", "nn",
                 "--json", "--csv", str(summary)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2  # no table, no status lines, no markup
    rows = [json.loads(line) for line in lines]
    assert rows[0]["cost"] == 63 and rows[0]["bks"] == 52 and rows[0]["bks_source"] == "tiny.sol"
    assert rows[0]["gap_pct"] == pytest.approx(100 * 11 / 52)
    assert rows[0]["feasible"] is True and rows[0]["violations"] == []
    with open(summary, newline="") as fh:
        table = list(csv.DictReader(fh))
    assert [r["instance"] for r in table] == ["tiny", "tiny"]
    assert float(table[0]["cost"]) == 63 and table[1]["bks"] == ""


def test_machine_output_has_no_thousands_separators(benchdata, capsys):
    assert main(["solve", str(benchdata / "cvrplib" / "X" / "X-n101-k25.vrp"), "-m", "nn",
                 "--json"]) == 0
    line = capsys.readouterr().out.strip()
    assert json.loads(line)["bks"] == 27591 and "27,591" not in line


@pytest.mark.parametrize("value", ["0", "-5"])
def test_a_best_known_value_must_be_positive(data_dir, capsys, no_solving, value):
    assert main(["solve", str(data_dir / "tiny.vrp"), "-m", "nn", f"--bks={value}"]) == 2
    assert "--bks must be a number from 1e-06 to 9.0072e+15, got" in one_error(capsys)


@pytest.mark.parametrize("argv, message", [
    (["{tiny_vrp}", "-m", "nds", "--decode", "greedy"], "--decode does not apply to model 'nds'"),
    (["{explicit}", "-m", "miloop"], "MiLoop needs node coordinates"),
    (["{diagonal}", "-m", "hgs"], "the diagonal must be 0"),
    (["{tiny_tsp}", "-m", "miloop", "--checkpoint", "{empty}"], "not a readable routecli checkpoint"),
    (["{tiny_tsp}", "-m", "miloop", "--checkpoint", "{truncated}"], "not a readable routecli checkpoint"),
    (["{tiny_tsp}", "-m", "miloop", "--checkpoint", "{malicious}"], "not a readable routecli checkpoint"),
    (["{tiny_vrp}", "-m", "nds", "--checkpoint", "{empty}"], "not a readable routecli checkpoint"),
    (["{tiny_vrp}", "-m", "nds", "--checkpoint", "{malicious}"], "not a readable routecli checkpoint"),
    (["{tiny_tsp}", "-m", "miloop", "--checkpoint", "{missing}"], "not found"),
])
def test_model_failures_are_one_line_with_exit_2(data_dir, tmp_path, capsys, argv, message):
    import torch

    class Payload:
        def __reduce__(self):
            return (print, ("pwned",))

    malicious = tmp_path / "malicious.pt"
    torch.save({"kind": "miloop", "x": Payload()}, malicious)
    paths = {"tiny_vrp": data_dir / "tiny.vrp", "tiny_tsp": data_dir / "tiny.tsp",
             "explicit": data_dir / "explicit5.tsp",
             "diagonal": MALFORMED / "explicit_nonzero_diagonal.tsp",
             "empty": MALFORMED / "empty_checkpoint.pt",
             "truncated": MALFORMED / "truncated_checkpoint.pt",
             "malicious": malicious, "missing": tmp_path / "missing.pt"}
    assert main(["solve", *(a.format(**paths) for a in argv)]) == 2
    err = one_error(capsys)
    assert message in err and "pwned" not in err + capsys.readouterr().out


def untrained_dact(folder: Path) -> str:
    """``--model dact`` ships no weights (compare-pe trains them): a small untrained model."""
    from routecli.improve.model import DACT, DACTConfig, to_checkpoint
    from routecli.train.checkpoint import save

    torch.manual_seed(0)
    path = folder / "dact.pt"
    save(to_checkpoint(DACT(DACTConfig(embed_dim=16, num_heads=2, num_layers=1, ff_dim=16,
                                       pe_dim=8))), path)
    return str(path)


@pytest.mark.parametrize("model", list(solvers.REGISTRY))
def test_time_limit_zero_is_honoured_by_every_model(data_dir, tmp_path, capsys, model):
    problem = solvers.make_solver(model).problems[0]
    instance = data_dir / {"tsp": "tiny.tsp", "cvrp": "tiny.vrp", "kp": "tiny.kp"}[problem]
    extra = ["--decode", "multistart", "--augment"] if model == "miloop" else []
    if model == "dact":
        extra = ["--checkpoint", untrained_dact(tmp_path)]
    argv = ["solve", str(instance), "-m", model, "-t", "0", "--json", *extra]
    assert main(argv) == 0  # the first run may compile numba kernels (minutes on a cold cache)
    capsys.readouterr()
    assert main(argv) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["feasible"]
    # A search given no limit runs SEARCH_SECONDS; a limit of 0 must stop it long before.
    assert row["seconds"] < SEARCH_SECONDS / 2


def test_nn_accepts_a_time_limit_it_always_meets_but_no_iteration_limit(data_dir, capsys):
    assert main(["solve", str(data_dir / "tiny.vrp"), "-m", "nn", "-t", "5", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["seconds"] < 5 and row["stopped_by"] == "finished" and row["work_done"] == 1
    for limit in ("--iterations", "--no-improvement"):
        assert main(["solve", str(data_dir / "tiny.vrp"), "-m", "nn", limit, "5"]) == 2
        assert "nn is a construction: it takes a time limit, not an iteration" in \
            one_error(capsys)


def test_csv_refuses_a_file_routecli_did_not_write_unless_forced(data_dir, tmp_path, capsys,
                                                                 monkeypatch):
    mine = tmp_path / "mine.csv"
    mine.write_text("my,numbers\n1,2\n")
    argv = ["solve", str(data_dir / "tiny.tsp"), "-m", "nn", "--csv", str(mine)]
    with monkeypatch.context() as patch:
        patch.setattr(solvers, "run", lambda *a, **k: pytest.fail("solved before refusing"))
        assert main(argv) == 2
    err = one_error(capsys)
    assert "--csv" in err and "not written by routecli" in err and "--force" in err
    assert mine.read_text() == "my,numbers\n1,2\n"
    assert main([*argv, "--force"]) == 0
    assert main(argv) == 0  # routecli's own summary is replaced without --force
    assert mine.read_text().startswith("instance,file,problem")


def test_csv_replaces_a_symlink_by_a_file_and_leaves_its_target_alone(data_dir, tmp_path):
    target = tmp_path / "kept.csv"
    assert main(["solve", str(data_dir / "tiny.tsp"), "-m", "nn", "--csv", str(target)]) == 0
    before = target.read_text()
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    assert main(["solve", str(data_dir / "tiny.vrp"), "-m", "nn", "--csv", str(link)]) == 0
    assert not link.is_symlink() and "tiny.vrp" in link.read_text()
    assert target.read_text() == before


def test_a_line_that_only_mentions_routecli_is_not_its_mark(data_dir, tmp_path, capsys):
    notes = tmp_path / "notes.sol"
    notes.write_text("# draft: NOT written by routecli\nRoute #1: 1 2\n")
    assert main(["solve", str(data_dir / "tiny.vrp"), "-m", "nn", "--out", str(notes)]) == 2
    assert "not written by routecli" in one_error(capsys)
    assert notes.read_text().startswith("# draft")


@pytest.mark.parametrize("edit", ["integer weight", "layers"])
def test_an_edited_checkpoint_is_one_line_and_exit_2(data_dir, tmp_path, capsys, edit):
    from routecli.train.checkpoint import shipped

    data = torch.load(shipped("miloop-tsp.pt"), weights_only=True)
    if edit == "layers":
        data["config"]["layers"] = 10**6
    else:
        data["model"][next(iter(data["model"]))] = 7
    torch.save(data, tmp_path / "edited.pt")
    assert main(["solve", str(data_dir / "tiny.tsp"), "-m", "miloop", "--checkpoint",
                 str(tmp_path / "edited.pt")]) == 2
    assert "edited.pt" in one_error(capsys)


def test_a_long_decode_shows_its_share_and_the_time_left():
    from routecli.cli.solve import progress_text
    from routecli.solvers import Progress

    assert progress_text(Progress(30.0, share=0.25)) == "25% after 30s, about 90s left"
    assert progress_text(Progress(0.0, share=0.0)) == "0% after 0s"


def test_json_says_how_each_result_was_made(data_dir, capsys):
    from routecli import __version__
    from routecli.train.checkpoint import load, shipped

    assert main(["solve", str(data_dir / "tiny.tsp"), "-m", "miloop", "--decode", "multistart",
                 "--starts", "3", "--augment", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["settings"]["decode"] == "multistart" and row["settings"]["starts"] == 3
    assert row["settings"]["augment"] is True
    assert row["checkpoint_sha256"] == load(shipped("miloop-tsp.pt"))["sha256"]
    assert row["routecli_version"] == __version__ and row["objective"] == "length"


def test_text_names_the_objective_and_a_knapsack_prints_its_value(data_dir, capsys):
    assert main(["solve", str(data_dir / "tiny.kp"), str(data_dir / "tiny.tsp"),
                 "-m", "nn"]) == 0
    out = capsys.readouterr().out
    assert " value=" in out and "made with" in out and "routecli " in out
    kp_line = next(line for line in out.splitlines() if line.startswith("tiny KP"))
    assert "cost=" not in kp_line


def test_pcvrp_names_its_objective(tmp_path, capsys):
    from tests.conftest import DATA

    demo = DATA.parents[1] / "data" / "demo" / "pcvrp-demo-50.vrp"
    assert main(["solve", str(demo), "-m", "nds", "--policy", "strings", "--iterations",
                 "5"]) == 0
    assert "(length minus collected prizes)" in capsys.readouterr().out


def test_the_mean_row_shows_the_mean_time():
    from rich.console import Console

    from routecli.cli.solve import summary_table

    rows = [{"instance": name, "size": 5, "model": "nn", "problem": "tsp", "cost": 10.0,
             "bks": None, "gap_pct": None, "seconds": seconds, "feasible": True}
            for name, seconds in (("a", 1.0), ("b", 3.0))]
    console = Console(width=120, record=True)
    console.print(summary_table(rows))
    mean_line = next(line for line in console.export_text().splitlines() if "mean" in line)
    assert "2.00" in mean_line and "4.00" not in mean_line


def test_init_starts_the_search_from_a_file_checked_first(data_dir, tmp_path, capsys):
    start = tmp_path / "start.sol"
    assert main(["solve", str(data_dir / "tiny.vrp"), "-m", "nn", "--out", str(start)]) == 0
    capsys.readouterr()
    assert main(["solve", str(data_dir / "tiny.vrp"), "-m", "sisr", "--iterations", "50",
                 "--init", str(start), "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["feasible"] and row["settings"]["init"] == str(start)
    start.write_text("Route #1: 1 2\nCost 10\n")  # customers 3..5 missing
    assert main(["solve", str(data_dir / "tiny.vrp"), "-m", "sisr", "--init", str(start)]) == 2
    assert "is not a feasible solution of tiny" in one_error(capsys)
    assert main(["solve", str(data_dir / "tiny.vrp"), str(data_dir / "one_customer.vrp"),
                 "-m", "sisr", "--init", str(start)]) == 2
    assert "--init applies to a single instance" in one_error(capsys)
    assert main(["solve", str(data_dir / "tiny.vrp"), "-m", "nn", "--init", str(start)]) == 2
    assert "--init does not apply to model 'nn'" in one_error(capsys)


def test_a_search_shows_its_best_cost_and_gap():
    from routecli.cli.solve import progress_text
    from routecli.solvers import Progress

    assert progress_text(Progress(2.5, best=110.0), 100.0) == "best 110 (gap 10.00%) at 2.5s"
    assert progress_text(Progress(2.5, best=110.0)) == "best 110 at 2.5s"


def test_greedy_results_record_no_starts(data_dir, capsys):
    for decode, shown in (("greedy", False), ("multistart", True)):
        assert main(["solve", str(data_dir / "tiny.tsp"), "-m", "miloop", "--decode", decode,
                     "--starts", "3", "--threads", "1", "--json"]) == 0
        row = json.loads(capsys.readouterr().out)
        assert ("starts" in row["settings"]) == shown
        assert row["work_unit"] == "rollouts" and row["stopped_by"] == "finished"
