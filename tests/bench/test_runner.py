from pathlib import Path

import pytest

from routecli.atomic import sole_writer
from routecli.bench import completed, read_rows, read_rows_for, run_bench, write_report
from routecli.bench.runner import LOCK_FILE
from routecli.errors import OptionError
from routecli.solvers import make_settings
from routecli.stop import MaxIterations


def _copy(data_dir: Path, tmp_path: Path, names: list[str]) -> list[Path]:
    files = []
    for name in names:
        target = tmp_path / "inst" / name
        target.parent.mkdir(exist_ok=True)
        target.write_text((data_dir / name).read_text())
        files.append(target)
    return files


def test_rows_are_appended_and_a_rerun_skips_finished_instances(data_dir, tmp_path):
    files = _copy(data_dir, tmp_path, ["tiny.vrp", "tiny.tsp"])
    out = tmp_path / "out"
    seen = []
    rows = run_bench(files[:1], "nn", make_settings("nn"), out, on_row=seen.append)
    assert len(rows) == 1 and len(seen) == 1 and rows[0].feasible
    assert (out / "solutions" / "tiny.sol").exists()
    seen.clear()
    rows = run_bench(files, "nn", make_settings("nn"), out, on_row=seen.append)
    assert [r.instance for r in seen] == ["tiny"] and seen[0].problem == "tsp"  # only the new one
    assert len(rows) == 2 and len(read_rows(out / "results.csv")) == 2
    assert completed(out / "results.csv") == {str(f.resolve()) for f in files}


def test_parallel_jobs_give_the_same_rows(data_dir, tmp_path):
    files = _copy(data_dir, tmp_path, ["tiny.vrp", "tiny.tsp", "explicit5.tsp"])
    serial = run_bench(files, "nn", make_settings("nn"), tmp_path / "a")
    parallel = run_bench(files, "nn", make_settings("nn"), tmp_path / "b", jobs=2)
    key = sorted((r.instance, r.problem, r.cost) for r in serial)
    assert key == sorted((r.instance, r.problem, r.cost) for r in parallel)


def test_a_folder_made_by_another_configuration_is_refused(data_dir, tmp_path):
    files = _copy(data_dir, tmp_path, ["tiny.vrp"])
    out = tmp_path / "out"
    run_bench(files, "nn", make_settings("nn"), out)
    with pytest.raises(OptionError, match="model, settings, stop differ"):
        run_bench(files, "sisr", make_settings("sisr"), out, stop=MaxIterations(5))
    with pytest.raises(OptionError, match="seed differ"):
        run_bench(files, "nn", make_settings("nn"), out, seed=3)
    assert len(read_rows(out / "results.csv")) == 1


def test_a_folder_of_the_users_is_refused_unless_forced(data_dir, tmp_path):
    files = _copy(data_dir, tmp_path, ["tiny.vrp"])
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("my notes")
    with pytest.raises(OptionError, match="not a routecli bench run folder"):
        run_bench(files, "nn", make_settings("nn"), out)
    assert [p.name for p in out.iterdir()] == ["notes.txt"]
    run_bench(files, "nn", make_settings("nn"), out, force=True)
    assert (out / "notes.txt").read_text() == "my notes" and (out / "run.json").exists()


@pytest.mark.parametrize("name", ["report.md", "gap_vs_size.png", "solutions/tiny.sol"])
def test_a_run_folder_never_loses_a_file_the_run_did_not_write(data_dir, tmp_path, name):
    files = _copy(data_dir, tmp_path, ["tiny.vrp"])
    out = tmp_path / "out"
    run_bench(files, "nn", make_settings("nn"), out, finish=lambda rows: write_report(rows, out, "t"))
    (out / "results.csv").unlink()  # the instance is solved again, so every file is rewritten
    (out / name).write_text("the user's own")
    with pytest.raises(OptionError, match=f"{name} was not written by routecli"):
        run_bench(files, "nn", make_settings("nn"), out, finish=lambda rows: write_report(rows, out, "t"))
    assert (out / name).read_text() == "the user's own"


def test_the_run_rewrites_its_own_files(data_dir, tmp_path):
    files = _copy(data_dir, tmp_path, ["tiny.vrp"])
    out = tmp_path / "out"
    for _ in range(2):
        (out / "results.csv").unlink(missing_ok=True)
        rows = run_bench(files, "nn", make_settings("nn"), out,
                         finish=lambda rows: write_report(rows, out, "t"))
        assert len(rows) == 1


def test_a_second_writer_is_refused_while_the_folder_is_locked(data_dir, tmp_path):
    files = _copy(data_dir, tmp_path, ["tiny.vrp"])
    out = tmp_path / "out"
    run_bench(files[:0], "nn", make_settings("nn"), out)
    with sole_writer(out / LOCK_FILE), pytest.raises(OptionError, match="another routecli bench"):
        run_bench(files, "nn", make_settings("nn"), out)
    assert read_rows(out / "results.csv") == []


def test_a_torn_last_row_is_dropped_and_solved_again(data_dir, tmp_path):
    files = _copy(data_dir, tmp_path, ["tiny.vrp", "tiny.tsp"])
    out = tmp_path / "out"
    run_bench(files, "nn", make_settings("nn"), out)
    csv_path = out / "results.csv"
    text = csv_path.read_text()
    csv_path.write_text(text[: len(text) - 40])  # the last row cut mid-line
    assert len(read_rows(csv_path)) == 1  # the torn row reads as not solved
    rows = run_bench(files, "nn", make_settings("nn"), out)
    assert sorted(r.instance for r in rows) == ["tiny", "tiny"] and len(read_rows(csv_path)) == 2


@pytest.mark.parametrize("text", ["name,score\na,1\n", "instance,problem\nx\n"])
def test_a_foreign_results_csv_is_one_error(data_dir, tmp_path, text):
    files = _copy(data_dir, tmp_path, ["tiny.vrp"])
    out = tmp_path / "out"
    run_bench(files[:0], "nn", make_settings("nn"), out)
    (out / "results.csv").write_text(text)
    with pytest.raises(OptionError, match="not a routecli results file"):
        run_bench(files, "nn", make_settings("nn"), out)
    with pytest.raises(OptionError, match="--compare: .* not a routecli results file"):
        read_rows_for(out / "results.csv")


def test_a_folder_holding_only_the_lock_is_a_run_folder_being_started(data_dir, tmp_path):
    files = _copy(data_dir, tmp_path, ["tiny.vrp"])
    out = tmp_path / "out"
    out.mkdir()
    with sole_writer(out / LOCK_FILE), pytest.raises(OptionError, match="another routecli bench"):
        run_bench(files, "nn", make_settings("nn"), out)
    assert len(run_bench(files, "nn", make_settings("nn"), out)) == 1  # the lock was left
