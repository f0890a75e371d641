"""Learning curves of the PE comparison: a training run stopped after any epoch and resumed from
its saved state ends with the weights of an uninterrupted run; curves advance round-robin and
resume from their folder."""

from __future__ import annotations

import csv
import io

import torch

from routecli.improve import curve
from routecli.improve.model import DACT, DACTConfig
from routecli.improve.protocol import make_protocol
from routecli.improve.train import PPOConfig, train

from .test_model import SMALL

CFG = PPOConfig(epochs=3, batches=2, batch_size=3, t_train=4, n_step=2, curriculum=2,
                lr_actor=1e-3, lr_critic=1e-3)


def test_a_resumed_run_ends_with_the_weights_of_an_uninterrupted_one():
    torch.manual_seed(0)
    straight = DACT(DACTConfig(**SMALL))
    interrupted = DACT(DACTConfig(**SMALL))
    interrupted.load_state_dict(straight.state_dict())
    train(straight, "cvrp", 8, CFG, seed=4)

    saved: dict = {}

    def stop_after_first(state: dict) -> bool:
        buffer = io.BytesIO()  # the state goes through a weights-only save and load
        torch.save({"model": interrupted.state_dict(), "state": state}, buffer)
        buffer.seek(0)
        saved.update(torch.load(buffer, weights_only=True))
        return False

    train(interrupted, "cvrp", 8, CFG, seed=4, after_epoch=stop_after_first)
    assert saved["state"]["epoch"] == 1
    resumed = DACT(DACTConfig(**SMALL))
    resumed.load_state_dict(saved["model"])
    train(resumed, "cvrp", 8, CFG, seed=4, resume=saved["state"])
    for (name, a), b in zip(straight.state_dict().items(), resumed.state_dict().values(),
                            strict=True):
        assert torch.equal(a, b), name
    assert not all(torch.equal(a, b) for a, b in zip(
        straight.state_dict().values(), interrupted.state_dict().values(), strict=True))


def rows(path) -> list[dict[str, str]]:
    with open(path) as handle:
        return list(csv.DictReader(handle))


def test_curves_advance_round_robin_stop_on_their_budget_and_resume(tmp_path, monkeypatch):
    monkeypatch.setenv("ROUTECLI_CACHE", str(tmp_path / "cache"))
    protocol = curve.validation_protocol(
        make_protocol("cvrp", 8, "dact", "smoke:epochs=2,eval_steps=5"), val_size=3)
    assert protocol.test_seed != make_protocol("cvrp", 8, "dact", "smoke").test_seed
    plan = curve.CurvePlan(protocol, ("nope", "xpe"), (0,), val_every=1)
    out = tmp_path / "curve"
    quiet = {"log": lambda line: None, "progress": False}
    assert not curve.run_curves(plan, out, cpu_minutes=0, **quiet)  # nothing trained yet
    assert not (out / "curve.csv").exists()
    assert curve.run_curves(plan, out, **quiet)
    done = [(r["pe"], int(r["epoch"])) for r in rows(out / "curve.csv")]
    assert done == [("nope", 1), ("xpe", 1), ("nope", 2), ("xpe", 2)]  # the least trained first
    assert all(float(r["val_gap_pct"]) >= -1e-6 for r in rows(out / "curve.csv"))
    state = torch.load(curve.state_path(out, "xpe", 0), weights_only=True)["train_state"]
    assert state["epoch"] == 2 and state["cpu_seconds"] > 0
    assert curve.run_curves(plan, out, **quiet)  # complete: nothing more is trained
    assert len(rows(out / "curve.csv")) == 4
    text = curve.curve_markdown(out, "t")
    assert "| nope | 2 | 1 |" in text and "| xpe | 1 | 1 |" in text
    curve.curve_plot(out, tmp_path / "curve.png", "t")
    assert (tmp_path / "curve.png").stat().st_size > 0
