from pathlib import Path

import pytest

from routecli.bench import completed, read_rows, run_bench
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
