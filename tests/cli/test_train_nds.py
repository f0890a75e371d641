"""``routecli train-nds`` through ``main(argv)``: a time budget, and --resume."""

import torch

from routecli.cli.app import main

TINY = ["--size", "20", "--batch", "2", "--rollouts", "8", "--remove", "4", "--episode", "6",
        "--burn-in", "1", "--val-every", "100000", "--val-instances", "1", "--val-iterations",
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


def test_a_policy_as_last_pt_a_changed_setting_and_an_init_of_another_problem_are_one_line(
        tmp_path, capsys):
    from routecli.train.checkpoint import shipped

    def one_line() -> str:
        err = capsys.readouterr().err.strip()
        assert err.startswith("error: ") and "\n" not in err, err
        return err

    run = tmp_path / "run"
    run.mkdir()
    (run / "last.pt").write_bytes(shipped("nds-cvrp.pt").read_bytes())
    assert main(["train-nds", "--out", str(run), "--resume", *TINY]) == 2
    assert "not a training run's state (no train)" in one_line()
    assert main(["train-nds", "--problem", "vrptw", "--out", str(tmp_path / "new"), *TINY,
                 "--init", str(shipped("nds-cvrp.pt"))]) == 2
    assert "a checkpoint of problem 'cvrp', not 'vrptw'" in one_line()
    assert main(["train-nds", "--out", str(tmp_path / "r2"), "--steps", "5", *TINY]) == 0
    assert main(["train-nds", "--out", str(tmp_path / "r2"), "--steps", "10", *TINY,
                 "--lr", "0.01", "--resume"]) == 2
    assert "--lr 0.0001, not 0.01" in one_line()
