from dataclasses import replace
from pathlib import Path

import pytest

from routecli.atomic import sole_writer
from routecli.bench import completed, read_rows, read_rows_for, run_bench, write_report
from routecli.bench.runner import LOCK_FILE
from routecli.errors import OptionError
from routecli.solvers import make_settings
from routecli.stop import MaxIterations
from routecli.tasks import Dask, ExecutorLost, Pool, TasksFailed


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
    assert completed(out / "results.csv") == {(str(f.resolve()), 0) for f in files}


def test_a_local_pool_gives_the_same_rows(data_dir, tmp_path):
    files = _copy(data_dir, tmp_path, ["tiny.vrp", "tiny.tsp", "explicit5.tsp"])
    serial = run_bench(files, "nn", make_settings("nn"), tmp_path / "a")
    parallel = run_bench(files, "nn", make_settings("nn"), tmp_path / "b", executor=Pool(2))
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


# Runs on Dask distributed: a real LocalCluster of worker processes, one thread each.

DEMO = ["tiny.vrp", "tiny.tsp", "explicit5.tsp", "full4.tsp"]


def _key(rows):
    return sorted((Path(r.file).name, r.seed, r.cost, r.feasible) for r in rows)


def _stored_keys(out: Path) -> list[tuple[str, int]]:
    return [(Path(r.file).name, r.seed) for r in read_rows(out / "results.csv")]


def die_once(marker: str, run, args):  # noqa: ANN001, ANN201 - a task's function and result
    """Kill this worker process the first time (the marker file says it happened), as a node
    lost mid-task would; run the task when Dask reruns it elsewhere."""
    import os
    import signal

    if not Path(marker).exists():
        Path(marker).touch()
        os.kill(os.getpid(), signal.SIGKILL)
    return run(*args)


class DyingOnce(Dask):
    """Dask whose second task kills its worker the first time it runs."""

    def __init__(self, marker: Path, **kwargs):
        super().__init__(**kwargs)
        self.marker = str(marker)

    def run(self, tasks):  # noqa: ANN001, ANN201
        wrapped = [replace(t, run=die_once, args=(self.marker, t.run, t.args)) if i == 1 else t
                   for i, t in enumerate(tasks)]
        given = {t.key: t for t in tasks}
        for task, outcome in super().run(wrapped):
            yield given[task.key], outcome


@pytest.fixture(scope="module")
def cluster():
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as running:
        yield running


def _bench(files, out, **kwargs):
    return run_bench(files, "hgs", make_settings("hgs"), out, stop=MaxIterations(50), runs=2,
                     **kwargs)


def test_a_dask_local_cluster_gives_the_rows_of_the_local_pool(data_dir, tmp_path):
    files = _copy(data_dir, tmp_path, DEMO)
    pooled = _bench(files, tmp_path / "pool", executor=Pool(2))
    distributed = _bench(files, tmp_path / "dask", executor=Dask(workers=2))
    assert len(pooled) == 8 and all(r.feasible for r in pooled)
    assert _key(distributed) == _key(pooled)
    assert sorted(p.name for p in (tmp_path / "dask" / "solutions").iterdir()) == \
        sorted(p.name for p in (tmp_path / "pool" / "solutions").iterdir())


def test_a_worker_killed_mid_run_loses_and_repeats_no_row(data_dir, tmp_path, cluster):
    files = _copy(data_dir, tmp_path, DEMO)
    marker = tmp_path / "killed-once"
    rows = _bench(files, tmp_path / "out",
                  executor=DyingOnce(marker, workers=2, scheduler=cluster.scheduler_address))
    assert marker.exists()  # a worker did die
    stored = _stored_keys(tmp_path / "out")
    assert len(stored) == len(set(stored)) == 8
    assert _key(rows) == _key(_bench(files, tmp_path / "inline"))


def test_a_resumed_dask_run_solves_only_the_missing_tasks(data_dir, tmp_path, cluster):
    files = _copy(data_dir, tmp_path, DEMO)
    out = tmp_path / "out"
    dask = Dask(workers=2, scheduler=cluster.scheduler_address)
    _bench(files[:2], out, executor=dask)
    started, new = [], []
    rows = _bench(files, out, executor=dask, on_start=started.append, on_row=new.append)
    assert started == [4] and len(new) == 4 and len(rows) == 8
    assert {Path(r.file).name for r in new} == {"explicit5.tsp", "full4.tsp"}
    assert len(set(_stored_keys(out))) == len(_stored_keys(out)) == 8


def test_a_scheduler_that_disappears_stops_the_run_with_one_line_and_it_resumes(
        data_dir, tmp_path):
    from distributed import LocalCluster

    files = _copy(data_dir, tmp_path, DEMO)
    out = tmp_path / "out"
    running = LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                           dashboard_address=":0")
    lost = Dask(workers=1, scheduler=running.scheduler_address)
    with pytest.raises(ExecutorLost, match=r"lost the Dask scheduler .* are stored: rerun"):
        _bench(files, out, executor=lost, on_row=lambda row: running.close())
    kept = _stored_keys(out)
    assert 1 <= len(kept) < 8
    rows = _bench(files, out, executor=Pool(2))
    assert len(rows) == 8 and len(set(_stored_keys(out))) == 8


def test_a_task_that_raises_stops_the_run_with_one_line_after_the_others(data_dir, tmp_path):
    files = _copy(data_dir, tmp_path, ["tiny.vrp", "tiny.tsp"])
    bad = tmp_path / "inst" / "zbad.tsp"
    bad.write_text("NAME: zbad\nTYPE: TSP\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EUC_2D\n"
                   "NODE_COORD_SECTION\n1 0 0\n2 1 1\nEOF\n")
    out = tmp_path / "out"
    with pytest.raises(TasksFailed, match=r"2 of 6 tasks failed, the other 4 are stored") as err:
        _bench([*files, bad], out)
    assert "zbad" in str(err.value) and "\n" not in str(err.value)
    assert len(_stored_keys(out)) == 4
    bad.unlink()
    assert len(_bench(files, out)) == 4
