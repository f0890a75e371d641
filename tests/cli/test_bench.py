"""``routecli bench`` as a careful user meets it: where ``--out`` may write, what a foreign or
read-only folder gets, ``--compare`` on a file that is no results file, two runs at once."""

import os
import subprocess
import sys
from contextlib import contextmanager

import pytest

from routecli.bench import read_rows
from routecli.cli.app import main


def _one_error_line(capsys, *words):
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert err.startswith("error: ") and "\n" not in err, err
    assert captured.out == ""  # no progress bar drawn before the refusal
    assert all(w in err for w in words), err


def test_bench_into_a_folder_of_the_users_is_refused_and_leaves_it_alone(data_dir, tmp_path,
                                                                          capsys):
    out = tmp_path / "rep"
    out.mkdir()
    (out / "report.md").write_text("my notes\n")
    argv = ["bench", str(data_dir / "tiny.tsp"), "-m", "nn", "-o", str(out)]
    assert main(argv) == 2
    _one_error_line(capsys, "not a routecli bench run folder", "--force")
    assert [p.name for p in out.iterdir()] == ["report.md"]
    assert (out / "report.md").read_text() == "my notes\n"
    assert main([*argv, "--force"]) == 0
    assert (out / "report.md").read_text() != "my notes\n"


@contextmanager
def _immutable(folder):
    """``chattr +i``: a folder nobody, root included, may add files to."""
    if subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not available here")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=True)


@pytest.mark.parametrize("inside", [False, True])
def test_a_read_only_out_folder_is_one_line_and_exit_2(data_dir, tmp_path, capsys, inside):
    folder = tmp_path / "ro"
    folder.mkdir()
    out = folder / "run" if inside else folder
    with _immutable(folder):
        assert main(["bench", str(data_dir / "tiny.tsp"), "-m", "nn", "-o", str(out)]) == 2
    _one_error_line(capsys, "cannot write")


def test_compare_with_a_csv_that_is_no_results_file_is_one_line(data_dir, tmp_path, capsys):
    other = tmp_path / "scores.csv"
    other.write_text("name,score\na,1\n")
    assert main(["bench", str(data_dir / "tiny.tsp"), "-m", "nn", "-o", str(tmp_path / "b"),
                 "--compare", str(other)]) == 2
    _one_error_line(capsys, "--compare", "not a routecli results file")


@pytest.mark.parametrize("name, words", [("none.csv", "no such file"), ("", "a folder")])
def test_compare_with_a_missing_file_or_a_folder_is_named_so(data_dir, tmp_path, capsys, name,
                                                             words):
    assert main(["bench", str(data_dir / "tiny.tsp"), "-m", "nn", "-o", str(tmp_path / "b"),
                 "--compare", str(tmp_path / name)]) == 2
    _one_error_line(capsys, "--compare", words)


def test_two_benches_on_one_folder_write_each_row_once(data_dir, tmp_path):
    files = []
    for k in range(6):
        path = tmp_path / "inst" / f"t{k}.tsp"
        path.parent.mkdir(exist_ok=True)
        path.write_text((data_dir / "tiny.tsp").read_text())
        files.append(str(path))
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "routecli", "bench", *files, "-m", "nn", "-o", str(out)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    runs = [subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True) for _ in range(2)]
    results = [(run.wait(timeout=120), run.stderr.read()) for run in runs]
    rows = read_rows(out / "results.csv")
    assert len(rows) == 6 and len({r.file for r in rows}) == 6
    for code, err in results:
        assert code == 0 or (code == 2 and err.count("\n") == 1
                             and "another routecli bench" in err), err


def test_hgs_benches_a_set_holding_a_geo_file(data_dir, tmp_path):
    folder = tmp_path / "set"
    folder.mkdir()
    for name in ("geo_burma14.tsp", "tiny.tsp"):
        (folder / name).write_bytes((data_dir / name).read_bytes())
    assert main(["bench", str(folder), "-m", "hgs", "--iterations", "500", "-o",
                 str(tmp_path / "run")]) == 0
    rows = {row.instance: row for row in read_rows(tmp_path / "run" / "results.csv")}
    assert rows["burma14"].cost == 3323 and rows["burma14"].feasible


def test_workers_jobs_and_the_protocol_options_are_checked_in_one_line(data_dir, tmp_path,
                                                                       capsys):
    base = ["bench", str(data_dir / "tiny.vrp"), "-m", "hgs", "-o", str(tmp_path / "o")]
    assert main([*base, "--iterations", "20", "-j", "2"]) == 0  # the old spelling still runs
    assert len(read_rows(tmp_path / "o" / "results.csv")) == 1
    capsys.readouterr()
    assert main([*base, "-j", "2", "--workers", "3"]) == 2
    _one_error_line(capsys, "--jobs 2 and --workers 3")
    assert main([*base, "--time-scale", "0.5"]) == 2
    _one_error_line(capsys, "--time-scale", "--protocol")
    assert main([*base, "--protocol", "pyvrp", "--time-limit", "5"]) == 2
    _one_error_line(capsys, "--protocol pyvrp sets the time limit")
    assert main([*base, "--executor", "pool", "--scheduler", "tcp://127.0.0.1:8786"]) == 2
    _one_error_line(capsys, "--scheduler names a Dask scheduler")


def test_a_protocol_run_reports_gaps_over_seeds_and_the_measured_cpu(data_dir, tmp_path):
    out = tmp_path / "p"
    argv = ["bench", str(data_dir / "tiny.vrp"), "-m", "sisr", "--protocol", "pyvrp",
            "--time-scale", "0.01", "--runs", "2", "--workers", "1", "-o", str(out)]
    assert main(argv) == 0
    rows = read_rows(out / "results.csv")
    assert sorted(r.seed for r in rows) == [0, 1]
    assert all(r.time_limit == pytest.approx(0.024 * r.n) for r in rows)  # 2.4 n x 0.01
    report = (out / "report.md").read_text()
    assert "## Protocol pyvrp" in report and "iterations/s on PyVRP" in report
    assert sorted(p.name for p in (out / "solutions").iterdir()) == ["tiny-s0.sol", "tiny-s1.sol"]


def test_a_warm_start_does_not_apply_to_a_benchmark(data_dir, tmp_path, capsys):
    assert main(["bench", str(data_dir / "tiny.vrp"), "-m", "sisr", "--init",
                 str(data_dir / "tiny.sol"), "-o", str(tmp_path / "b")]) == 2
    assert "--init applies to solve" in capsys.readouterr().err
    assert not (tmp_path / "b").exists()


def test_an_instance_the_model_refuses_stops_the_benchmark_before_any_work(
        data_dir, tmp_path, capsys, monkeypatch):
    from routecli import resources

    monkeypatch.setattr(resources, "available_memory", lambda: 1)
    assert main(["bench", str(data_dir / "tiny.vrp"), "-m", "hgs", "-t", "1",
                 "-o", str(tmp_path / "b")]) == 2
    assert "in PyVRP's dense matrices" in capsys.readouterr().err
    assert not (tmp_path / "b").exists()
