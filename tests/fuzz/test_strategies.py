"""A few cases of each fuzz strategy (tests/fuzz/strategies.py) run through the
harness's worker and classification: no traceback, no unclean error, nothing invalid accepted,
nothing valid rejected. ``seeds`` is left to the full run (``python benchmarks/fuzz_inputs.py``):
its nds and hgs runs take seconds each. The oracle and the new steps (torn files, copies run at
once, unwritable folders, files that must stay as they were) are unit-tested on small inputs."""

from __future__ import annotations

import os

import numpy as np
import pytest

from routecli.cli.app import main
from tests.fuzz.harness import (
    BAD,
    Runner,
    capture_copies,
    classify,
    results_rows,
    run_case,
    snapshot,
    tear,
    unwritable,
)
from tests.fuzz.mutations import Seed, load_seeds
from tests.fuzz.strategies import (
    SEED_MAX,
    STRATEGIES,
    Case,
    Run,
    Tear,
    output_paths,
    seed_values,
    torn_results,
)

CASES = 4


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(STRATEGIES) - {"seeds"}))
def test_every_strategy_runs_clean(benchdata, tmp_path, name):
    seeds = load_seeds(benchdata)
    runner = Runner(main, timeout=120)
    try:
        for number in range(CASES):
            case = STRATEGIES[name](np.random.default_rng([7, number]), seeds)
            for row in run_case(runner, case, number, tmp_path):
                assert row["outcome"] not in BAD, row
    finally:
        runner.close()


def test_the_oracle_finds_what_it_is_for(tmp_path):
    """classify() counts a refused valid input, an accepted invalid one, and non-strict JSON."""
    case = Case("t", {}, [], "")
    ok = {"code": 0, "stdout": '{"gap_pct": NaN}\n', "stderr": "", "exception": "", "seconds": 0}
    assert classify(Run(["solve", "--json"], "accept"), ok, tmp_path, case)[0] == "invalid accepted"
    refused = {**ok, "code": 2, "stdout": "", "stderr": "error: x\n"}
    assert classify(Run(["info"], "accept"), refused, tmp_path, case)[0] == "valid input rejected"
    assert classify(Run(["info"], "reject"), refused, tmp_path, case)[0] == "clean error"
    assert classify(Run(["info"], "reject"), {**ok, "stdout": ""}, tmp_path,
                    case)[0] == "invalid accepted"
    infeasible = {**ok, "code": 1, "stdout": ""}
    assert classify(Run(["validate"], "infeasible"), infeasible, tmp_path,
                    case)[0] == "infeasible reported"
    crashed = {**ok, "exception": "Traceback ...\nOverflowError: x"}
    assert classify(Run(["info"], "any"), crashed, tmp_path, case) == ("traceback",
                                                                      "OverflowError: x")


def test_a_file_that_had_to_stay_is_checked_whatever_the_exit(tmp_path):
    (tmp_path / "mine.csv").write_text("my,numbers\n")
    run = Run(["solve", "--csv", "{dir}/mine.csv"], "reject", ("unchanged:mine.csv",))
    before = snapshot(run, tmp_path)
    (tmp_path / "mine.csv").write_text("instance,cost\n")  # what a careless writer does
    refused = {"code": 2, "stdout": "", "stderr": "error: x\n", "exception": "", "seconds": 0}
    assert classify(run, refused, tmp_path, Case("t", {}, [], ""), before) == (
        "output from failed run", "mine.csv was changed")
    quick = Run(["info"], "accept", ("within:1",))
    slow = {**refused, "code": 0, "stderr": "", "seconds": 3.0}
    assert classify(quick, slow, tmp_path, Case("t", {}, [], ""))[0] == "invalid accepted"


@pytest.mark.parametrize("share, kept", [(0.0, "a,b\n1,2\n"), (0.5, "a,b\n1,2\n3,"),
                                         (1.0, "a,b\n1,2\n3,4")])
def test_tear_cuts_inside_the_last_line(tmp_path, share, kept):
    path = tmp_path / "results.csv"
    path.write_text("a,b\n1,2\n3,4\n")
    tear(path, share)
    assert path.read_text() == kept


def test_results_rows_wants_one_complete_row_per_instance(tmp_path):
    path = tmp_path / "results.csv"
    path.write_text("instance,cost\nx,1\ny,2\n")
    assert results_rows(tmp_path, 2) is None
    path.write_text("instance,cost\nx,1\ny\n")
    assert results_rows(tmp_path, 2) == "results.csv holds a torn row"
    path.write_text("instance,cost\nx,1\nx,1\n")
    assert "2 rows for 1 of 2 instances" in str(results_rows(tmp_path, 2))
    path.write_text("name,score\n")
    assert "no header" in str(results_rows(tmp_path, 0))


def test_copies_run_at_the_same_time_in_processes_of_their_own():
    def main(argv: list[str]) -> int:
        print(os.getpid())
        return 0

    results = capture_copies(main, ["x"], 3)
    assert [r["code"] for r in results] == [0, 0, 0]
    assert len({r["stdout"] for r in results} | {f"{os.getpid()}\n"}) == 4


def test_an_unwritable_folder_is_writable_again_afterwards(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    with unwritable([folder]) as protected:
        if protected and os.geteuid() == 0:
            with pytest.raises(PermissionError):
                (folder / "x").write_text("x")
    (folder / "x").write_text("x")


def _fake_seeds(data_dir) -> list[Seed]:
    return [Seed(name, (data_dir / name).read_text(), (sib, (data_dir / sib).read_text()))
            for name, sib in [("tiny.tsp", "tiny.sol"), ("tiny.vrp", "tiny.sol")]]


def test_the_seed_rule_is_one_for_every_model(data_dir):
    for number in range(60):
        case = seed_values(np.random.default_rng([3, number]), _fake_seeds(data_dir))
        (run,) = case.runs
        assert isinstance(run, Run)
        model, value = run.argv[run.argv.index("--model") + 1], int(run.argv[-2])
        good = 0 <= value <= SEED_MAX and model != "dact"
        assert run.expect == ("accept" if good else "reject"), case.detail


def test_a_refused_output_names_the_files_that_must_stay(data_dir):
    for number in range(60):
        case = output_paths(np.random.default_rng([5, number]), _fake_seeds(data_dir))
        for run in case.runs:
            assert isinstance(run, Run)
            if run.expect == "reject" and "immutable" not in case.detail:
                assert any(c.startswith("unchanged:") for c in run.checks), case.detail
        assert all(target in case.files or any(
            isinstance(r, Run) and f"{{dir}}/{target}" in r.argv for r in case.runs)
                   for target in case.links.values()), case.detail


def test_a_torn_results_case_resumes_the_same_bench(benchdata):
    case = torn_results(np.random.default_rng(0), load_seeds(benchdata))
    first, cut, second = case.runs
    assert isinstance(cut, Tear) and isinstance(first, Run) and isinstance(second, Run)
    assert first.argv == second.argv and cut.path == "{dir}/run/results.csv"
