"""``routecli train-nds`` through ``main(argv)``: a time budget, and --resume."""

import torch

from routecli.cli.app import main

TINY = ["--size", "20", "--batch", "2", "--rollouts", "8", "--remove", "4", "--episode", "6",
        "--warmup", "1", "--val-every", "100000", "--val-instances", "1", "--val-iterations",
        "3", "--threads", "1"]


def test_time_limit_stops_at_an_episode_end_saves_last_pt_and_resumes(tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["train-nds", "--out", str(run), "--steps", "100000", *TINY,
                 "--time-limit", "2"]) == 0
    state = torch.load(run / "last.pt", weights_only=True)
    assert 0 < state["step"] < 100000 and state["step"] % 5 == 0  # whole episodes of 5 steps
    assert f"time limit reached at step {state['step']}: saved" in capsys.readouterr().out
    more = state["step"] + 5
    assert main(["train-nds", "--out", str(run), "--steps", str(more), *TINY, "--resume"]) == 0
    assert torch.load(run / "last.pt", weights_only=True)["step"] == more


def test_resume_without_last_pt_is_refused(tmp_path, capsys):
    assert main(["train-nds", "--out", str(tmp_path / "none"), "--resume"]) == 2
    assert "holds no last.pt" in capsys.readouterr().err
