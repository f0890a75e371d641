"""``routecli train`` end to end through ``main(argv)``."""

from __future__ import annotations

import json

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
    assert "writing runs/miloop-tsp/ (last.pt, best.pt, log.jsonl)" in out
    assert "step 1 " in out and "step 2 " in out
    assert main(argv) == 2  # a fresh run may not overwrite the run it finds
    err = capsys.readouterr().err.strip()
    assert err == ("error: runs/miloop-tsp holds a training run (last.pt); pass --resume to "
                   "continue it, or --out for a new folder")
