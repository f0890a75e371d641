"""The CLI end to end through ``main(argv)``: exit codes, stderr lines, written files."""

from __future__ import annotations

import signal

import pytest

from routecli.cli.app import main
from routecli.errors import OptionError
from tests.io.test_cvrplib import MALFORMED


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_file_gives_one_stderr_line_exit_2_and_no_output(malformed_dir, tmp_path,
                                                                  capsys, name):
    (tmp_path / "out").mkdir()
    out = tmp_path / "out" / "out.sol"
    code = main(["solve", str(malformed_dir / name), "--model", "nn", "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and err.startswith("error: ")
    assert MALFORMED[name] in err
    assert not list((tmp_path / "out").iterdir())


@pytest.mark.parametrize("argv, message", [
    (["solve", "{tiny}", "--model", "nope"], "unknown model 'nope'"),
    (["solve", "{tiny}", "-m", "miloop", "--decode", "beam"], "'beam' is not one of"),
    (["solve", "{tiny}", "-m", "nn", "--decode", "sampling"], "--decode does not apply"),
    (["solve", "{tiny}", "-m", "hgs", "--augment"], "--augment does not apply"),
    (["solve", "{tiny}", "-m", "miloop", "--pe", "ipe"], "--pe does not apply"),
    (["solve", "{tiny}", "--round", "manhattan"], "--round must be one of"),
    (["solve", "{tiny}", "--time-limit", "-1"], "--time-limit must be a number from 0 to 604800, got '-1'"),
    (["solve", "{missing}"], "no such file"),
    (["generate", "vrp", "--out", "x.npz"], "unknown problem 'vrp'"),
    (["generate", "cvrp", "--out", "x.txt"], "--out must end in .npz"),
    (["generate", "kp", "--capacity", "7", "--out", "x.npz"], "KP --capacity must be one of"),
    (["solve", "{tiny}", "--frobnicate"], "No such option"),
])
def test_bad_options_give_one_line(data_dir, tmp_path, capsys, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    argv = [a.format(tiny=data_dir / "tiny.vrp", missing=tmp_path / "nope.vrp") for a in argv]
    code = main(argv)
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and message in err
    assert not list(tmp_path.iterdir())


def test_solve_prints_cost_gap_and_writes_solution(data_dir, tmp_path, capsys):
    out = tmp_path / "tiny.sol"
    assert main(["solve", str(data_dir / "tiny.vrp"), "-m", "nn", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "cost=" in text and "gap=" in text and "bks=52" in text and "feasible" in text
    assert out.read_text().strip().endswith(text.split("cost=")[1].split()[0].replace(",", ""))


def test_solve_several_files_prints_a_summary_and_writes_a_folder(data_dir, tmp_path, capsys):
    files = [str(data_dir / "tiny.vrp"), str(data_dir / "tiny.tsp")]
    assert main(["solve", *files, "-m", "nn", "-o", str(tmp_path / "sols")]) == 0
    out = capsys.readouterr().out
    assert "routecli solve" in out and "mean" in out
    assert sorted(p.name for p in (tmp_path / "sols").iterdir()) == ["tiny.sol", "tiny.tour"]


def test_solve_refuses_a_problem_the_model_does_not_handle(data_dir, tmp_path, capsys):
    out = tmp_path / "tiny.tour"
    assert main(["solve", str(data_dir / "tiny.tsp"), "--model", "sisr", "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "error: model 'sisr' does not solve TSP (it solves CVRP, VRPTW, PCVRP)"
    assert not out.exists()


def test_info_describes_instance(data_dir, capsys):
    assert main(["info", str(data_dir / "tiny.vrp")]) == 0
    out = capsys.readouterr().out
    assert "CVRP" in out and "5 customers" in out and "at least 2 routes" in out


def test_generate_files_and_batches_round_trip(tmp_path, capsys):
    folder = tmp_path / "gen"
    assert main(["generate", "vrptw", "--size", "20", "--num", "2", "--format", "file",
                 "--out", str(folder)]) == 0
    files = sorted(folder.iterdir())
    assert [f.name for f in files] == ["vrptw-20-s0-0.vrp", "vrptw-20-s0-1.vrp"]
    assert main(["solve", str(files[0]), "-m", "nn"]) == 0
    assert "feasible" in capsys.readouterr().out
    assert main(["generate", "kp", "--size", "50", "--capacity", "10",
                 "--out", str(tmp_path / "kp.npz")]) == 0


@pytest.mark.parametrize("command", ["solve", "info", "generate", "bench"])
def test_every_command_has_help(capsys, command):
    assert main([command, "--help"]) == 0
    assert "Usage" in capsys.readouterr().out


def test_bench_writes_csv_report_and_resumes(data_dir, tmp_path, capsys):
    out = tmp_path / "bench"
    argv = ["bench", str(data_dir / "tiny.vrp"), str(data_dir / "tiny.tsp"), "-m", "nn",
            "-o", str(out)]
    assert main(argv) == 0
    assert {p.name for p in out.iterdir()} >= {"results.csv", "report.md", "gap_vs_size.png"}
    assert main(argv) == 0
    assert len((out / "results.csv").read_text().splitlines()) == 3  # header + 2, not rerun
    assert "solved 1/1" in capsys.readouterr().out


def test_plot_solution_writes_png_and_rejects_infeasible(data_dir, tmp_path, capsys):
    png = tmp_path / "tiny.png"
    assert main(["plot", "solution", str(data_dir / "tiny.vrp"), str(data_dir / "tiny.sol"),
                 "-o", str(png)]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"
    bad = tmp_path / "bad.sol"
    bad.write_text("Route #1: 1 2 3 4 5\nCost 1\n")
    assert main(["plot", "solution", str(data_dir / "tiny.vrp"), str(bad),
                 "-o", str(tmp_path / "bad.png")]) == 2
    assert "over capacity" in capsys.readouterr().err
    assert not (tmp_path / "bad.png").exists()


def test_python_dash_m_routecli_runs_the_cli():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "routecli", "--help"], capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0 and "Usage" in done.stdout and "solve" in done.stdout


def test_a_warning_before_an_error_leaves_the_error_line_alone(data_dir, monkeypatch, capsys):
    import warnings

    from routecli import solvers

    def warn_then_refuse(*args, **kwargs):
        warnings.warn("TypedStorage is deprecated", UserWarning, stacklevel=1)
        raise OptionError("--threads must be at most 2")

    monkeypatch.setattr(solvers, "make_solver", warn_then_refuse)
    assert main(["solve", str(data_dir / "tiny.tsp"), "-m", "nn"]) == 2
    assert capsys.readouterr().err == "error: --threads must be at most 2\n"


def test_a_warning_of_a_command_that_succeeds_is_one_line(data_dir, monkeypatch, capsys):
    import warnings

    from routecli import solvers

    real = solvers.make_solver

    def warn(*args, **kwargs):
        warnings.warn("first line\nsecond line", UserWarning, stacklevel=1)
        return real(*args, **kwargs)

    monkeypatch.setattr(solvers, "make_solver", warn)
    assert main(["solve", str(data_dir / "tiny.tsp"), "-m", "nn"]) == 0
    assert capsys.readouterr().err == "warning: first line second line\n"


@pytest.mark.parametrize(("number", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_during_a_solve_keeps_the_best_solution(data_dir, tmp_path, number, code):
    """The first signal stops the search: its best solution is printed and written, the
    inputs left are not solved, and the exit code is the signal's (128 + its number)."""
    import os
    import subprocess
    import sys
    import time

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    demo = data_dir.parents[1] / "data" / "demo"
    proc = subprocess.Popen([sys.executable, "-m", "routecli", "solve",
                             str(demo / "cvrp-demo-50.vrp"), str(demo / "vrptw-demo-50.vrp"),
                             "-m", "sisr", "-t", "60", "--out", str(tmp_path)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(8)  # past the imports (a busy machine is slow), inside the 60 s search
    proc.send_signal(number)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert err == (f"interrupted ({signal.Signals(number).name}): the best solution found so "
                   "far is reported above; 1 input not solved\n")
    assert "cvrp-demo-50 CVRP" in out and "feasible" in out and "stopped by an interruption" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cvrp-demo-50.sol"]
