"""``routecli train`` end to end through ``main(argv)``."""

from __future__ import annotations

import json

import pytest
import torch

from routecli.cli.app import main


def test_train_writes_checkpoint_and_log_then_resumes(tmp_path, monkeypatch):
    monkeypatch.setenv("ROUTECLI_CACHE", str(tmp_path / "cache"))
    run = tmp_path / "run"
    argv = ["train", "--problem", "cvrp", "--run-dir", str(run), "--curriculum", "6:2:2:3",
            "--val-size", "6", "--val-instances", "2", "--val-every", "2",
            "--val-time-limit", "0.05", "--threads", "1", "--log-every", "1"]
    assert main(argv) == 0
    state = torch.load(run / "last.pt", weights_only=True)
    assert state["step"] == 2 and state["config"]["problem"] == "cvrp"
    with open(run / "log.jsonl") as fh:
        records = [json.loads(line) for line in fh]
    assert any("val_gap" in r for r in records)
    more = [a if a != "6:2:2:3" else "6:3:2:3" for a in argv] + ["--resume"]
    assert main(more) == 0
    assert torch.load(run / "last.pt", weights_only=True)["step"] == 3


def test_bad_curriculum_is_one_line(capsys):
    assert main(["train", "--curriculum", "20:5"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "steps:batch:rollouts" in err


def test_a_resumed_run_logs_each_step_once(tmp_path, monkeypatch):
    """Steps logged after the last checkpoint (then a crash) are trained and logged again on
    --resume; their old records must go."""
    monkeypatch.setenv("ROUTECLI_CACHE", str(tmp_path / "cache"))
    run = tmp_path / "run"
    argv = ["train", "--problem", "tsp", "--out", str(run), "--curriculum", "6:2:2:3",
            "--val-size", "6", "--val-instances", "2", "--val-every", "100",
            "--val-time-limit", "0.05", "--log-every", "1"]
    assert main(argv) == 0
    with open(run / "log.jsonl", "a") as fh:  # logged after last.pt (step 2), then killed
        fh.write(json.dumps({"step": 3, "loss": 9.0}) + "\n" + '{"step": 4, "lo')
    assert main([a if a != "6:2:2:3" else "6:4:2:3" for a in argv] + ["--resume"]) == 0
    records = [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]
    trained = [r["step"] for r in records if "loss" in r]
    assert trained == [1, 2, 3, 4] and 9.0 not in [r["loss"] for r in records if "loss" in r]


def test_train_without_out_says_where_it_writes_shows_steps_and_keeps_old_runs(
        tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ROUTECLI_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    argv = ["train", "--problem", "tsp", "--curriculum", "6:2:2:3", "--val-size", "6",
            "--val-instances", "2", "--val-every", "100", "--val-time-limit", "0.05",
            "--log-every", "1"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert ("training in runs/miloop-tsp/: log.jsonl as it goes, last.pt and state-bf16.pt at "
            "each checkpoint and at the end, best.pt after each better validation") in out
    assert "step 1 " in out and "step 2 " in out
    assert main(argv) == 2  # a fresh run may not overwrite the run it finds
    err = capsys.readouterr().err.strip()
    assert err == ("error: runs/miloop-tsp holds a training run (last.pt); pass --resume to "
                   "continue it, or --out for a new folder")


TINY = ["--val-size", "6", "--val-instances", "2", "--val-every", "100000",
        "--val-time-limit", "0.05", "--log-every", "1", "--threads", "1"]


def test_ctrl_c_saves_last_pt_says_so_and_the_run_resumes(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    run = tmp_path / "run"
    argv = [sys.executable, "-m", "routecli", "train", "--problem", "tsp", "--out", str(run),
            "--curriculum", "6:100000:2:3", *TINY]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path),
           "ROUTECLI_CACHE": str(tmp_path / "cache")}
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    log = run / "log.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (log.exists() and '"loss"' in log.read_text()):
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    step = torch.load(run / "last.pt", weights_only=True)["step"]
    assert step >= 1
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines[-1] == (f"interrupted at step {step}: saved {run / 'last.pt'}; rerun with "
                         "--resume to continue"), err
    assert main(["train", "--problem", "tsp", "--out", str(run), "--curriculum",
                 f"6:{step + 2}:2:3", *TINY, "--resume"]) == 0
    assert torch.load(run / "last.pt", weights_only=True)["step"] == step + 2


def test_time_limit_stops_training_and_saves_last_pt(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ROUTECLI_CACHE", str(tmp_path / "cache"))
    run = tmp_path / "run"
    assert main(["train", "--problem", "tsp", "--out", str(run), "--curriculum",
                 "6:100000:2:3", *TINY, "--time-limit", "2"]) == 0
    step = torch.load(run / "last.pt", weights_only=True)["step"]
    assert 0 < step < 100000
    assert f"time limit reached at step {step}: saved" in capsys.readouterr().out


def test_resume_without_last_pt_is_refused_with_one_line(tmp_path, capsys):
    assert main(["train", "--out", str(tmp_path / "none"), "--resume"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"error: --resume: {tmp_path / 'none'} holds no last.pt or state-bf16.pt to "
                   "continue; drop --resume to start a new run there")
    assert not (tmp_path / "none").exists()


def test_an_interrupted_run_exits_with_the_code_of_its_signal(tmp_path, capsys):
    import os
    import signal

    import typer

    from routecli.cli.train import report_stop
    from routecli.stop import Interruption
    from routecli.train.stopping import StopReason

    for number, code in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
        with Interruption():
            os.kill(os.getpid(), number)
        with pytest.raises(typer.Exit) as stopped:
            report_stop(StopReason.INTERRUPTED, tmp_path, 3)
        assert stopped.value.exit_code == code


def test_validation_defaults_to_the_size_training_ends_on(tmp_path, monkeypatch):
    import routecli.miloop.train as train_module

    seen = []

    class Recorder:
        step = 0

        def __init__(self, cfg, resume=False):
            seen.append(cfg)

        def run(self, time_limit=None):
            return None

    monkeypatch.setattr(train_module, "Trainer", Recorder)
    base = ["train", "--problem", "tsp", "--threads", "1"]
    assert main([*base, "--size", "20", "--steps", "1", "--batch", "2", "--rollouts", "2",
                 "--out", str(tmp_path / "a")]) == 0
    assert main([*base, "--curriculum", "10:1:2:2,30:1:2:2", "--out", str(tmp_path / "b")]) == 0
    assert main([*base, "--size", "20", "--steps", "1", "--batch", "2", "--rollouts", "2",
                 "--val-size", "50", "--out", str(tmp_path / "c")]) == 0
    assert [cfg.val_size for cfg in seen] == [20, 30, 50]


def test_a_clone_resumes_a_run_from_its_committed_compact_state(tmp_path, capsys):
    """A run folder as a clone holds it (log and state-bf16.pt, no last.pt) resumes with
    --resume; without it a fresh run refuses to start over it."""
    argv = ["train", "--problem", "tsp", "--curriculum", "6:2:2:3", "--val-size", "6",
            "--val-instances", "2", "--val-every", "100", "--val-time-limit", "0.05",
            "--out", str(tmp_path / "run"), "--threads", "1", "--no-compile"]
    assert main([*argv[:4], "6:1:2:3", *argv[5:]]) == 0
    (tmp_path / "run" / "last.pt").unlink()
    (tmp_path / "run" / "best.pt").unlink()
    capsys.readouterr()
    assert main(argv) == 2
    assert "holds a training run (state-bf16.pt)" in capsys.readouterr().err
    assert main([*argv, "--resume"]) == 0
    assert "step 2 " in capsys.readouterr().out


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err, err
    return err


def test_resume_keeps_the_runs_settings_and_may_only_train_longer(tmp_path, monkeypatch,
                                                                    capsys):
    monkeypatch.setenv("ROUTECLI_CACHE", str(tmp_path / "cache"))
    run = tmp_path / "run"
    argv = ["train", "--problem", "tsp", "--out", str(run), *TINY]
    assert main([*argv, "--curriculum", "6:2:2:3"]) == 0
    last = (run / "last.pt").read_bytes()
    for changed, named in ((["--curriculum", "8:3:2:3"], "--curriculum '6:2:2:3', not '8:3:2:3'"),
                           (["--curriculum", "6:3:2:3", "--lr", "0.001"], "--lr 0.0001, not 0.001"),
                           (["--curriculum", "6:3:2:3", "--seed", "1"], "--seed 0, not 1")):
        capsys.readouterr()
        assert main([*argv, *changed, "--resume"]) == 2
        assert named in _one_line(capsys)
        assert (run / "last.pt").read_bytes() == last
    assert main([*argv, "--curriculum", "6:3:2:3", "--resume"]) == 0


def test_a_policy_as_last_pt_and_an_init_of_another_problem_are_one_line(tmp_path, capsys):
    from routecli.train.checkpoint import shipped

    run = tmp_path / "run"
    run.mkdir()
    (run / "last.pt").write_bytes(shipped("miloop-tsp.pt").read_bytes())
    assert main(["train", "--problem", "tsp", "--out", str(run), "--resume", *TINY]) == 2
    assert "not a training run's state (no train)" in _one_line(capsys)
    assert main(["train", "--problem", "tsp", "--out", str(tmp_path / "new"), *TINY,
                 "--init", str(shipped("miloop-cvrp.pt"))]) == 2
    assert "a checkpoint of problem 'cvrp', not 'tsp'" in _one_line(capsys)


def test_lkh_labels_for_another_problem_than_tsp_are_one_line(capsys):
    argv = ["train", "--problem", "cvrp", "--curriculum", "20:2:2:1:supervised",
            "--labeller", "lkh"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "TSP instances only" in err
