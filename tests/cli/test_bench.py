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
