"""Training MiLoop on PDTSP and KP through the shared trainer: DPO, REINFORCE and the supervised
stage (PyVRP tours, exact knapsack optima), validation gaps, resume; ``routecli train``."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from routecli import generate
from routecli.baselines.knapsack import optimum
from routecli.cli.app import main
from routecli.envs import KPEnv, PDTSPEnv
from routecli.miloop.train import (
    Stage,
    TrainConfig,
    Trainer,
    expand_rollouts,
    optimal_item_sequences,
    validation_batch,
)


def config(tmp_path, problem: str, curriculum: str, **kw) -> TrainConfig:
    base = dict(problem=problem, run_dir=str(tmp_path / "run"),
                curriculum=Stage.parse_list(curriculum), val_size=12 if problem == "kp" else 8,
                val_instances=4, val_every=2, val_time_limit=0.05, label_time_limit=0.05,
                log_every=1, threads=1, checkpoint_every=0.0, lr=1e-3)
    base.update(kw)
    return TrainConfig(**base)


def records(tmp_path) -> list[dict]:
    return [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]


def test_rollouts_start_from_distinct_pickups_and_fitting_items():
    g = torch.Generator().manual_seed(0)
    locs = torch.rand(2, 13, 2)
    env, forced, k = expand_rollouts("pdtsp", {"locs": locs}, 10, g)
    assert isinstance(env, PDTSPEnv) and k == 6 and forced is not None
    assert all(len(set(row)) == 6 and min(row) >= 1 and max(row) <= 6
               for row in forced.view(2, 6).tolist())
    data = {"weights": torch.tensor([[0.5, 5.0, 0.2], [0.1, 0.2, 9.0]]),
            "values": torch.rand(2, 3), "capacity": torch.tensor([1.0, 1.0])}
    env, forced, k = expand_rollouts("kp", data, 5, g)
    assert isinstance(env, KPEnv) and k == 2 and forced is not None
    assert sorted(forced.view(2, 2)[0].tolist()) == [0, 2] and sorted(forced.view(2, 2)[1].tolist()) == [0, 1]


def test_kp_labels_are_optimal_items_by_density():
    raw = generate.kp(3, 15, seed=4, capacity=3)
    labels = optimal_item_sequences(raw)
    for b in range(3):
        seq = labels[b][labels[b] < 15].numpy()
        chosen, _ = optimum(raw["weights"][b], raw["values"][b], 3.0)
        assert sorted(seq.tolist()) == sorted(chosen.tolist())
        density = raw["values"][b][seq] / raw["weights"][b][seq]
        assert (np.diff(density) <= 0).all()


def test_kp_validation_cycles_capacities_and_gap_is_nonnegative(tmp_path):
    cfg = config(tmp_path, "kp", "12:2:3:2", val_instances=8)
    assert validation_batch(cfg)["capacity"].tolist() == [10, 25, 50, 100] * 2
    trainer = Trainer(cfg)
    trainer.run()
    gaps = [r["val_gap"] for r in records(tmp_path) if "val_gap" in r]
    assert gaps and all(g >= -1e-4 for g in gaps)  # nothing beats the optimum
    assert (tmp_path / "run" / "best.pt").exists()


@pytest.mark.parametrize("loss", ["dpo", "reinforce"])
def test_pdtsp_trains_and_resumes_exactly(tmp_path, monkeypatch, loss):
    monkeypatch.setattr("routecli.miloop.train.Trainer.validate",
                        lambda self, model=None: {"val_gap": 1.0, "val_cost": 1.0,
                                                  "val_seconds": 0.0})
    straight = Trainer(config(tmp_path / "a", "pdtsp", "6:3:2:3", loss=loss))
    straight.run()
    Trainer(config(tmp_path / "b", "pdtsp", "6:3:2:3", loss=loss)).run(until_step=1)
    resumed = Trainer(config(tmp_path / "b", "pdtsp", "6:3:2:3", loss=loss), resume=True)
    resumed.run()
    for (name, a), (_, b) in zip(straight.model.state_dict().items(),
                                 resumed.model.state_dict().items(), strict=True):
        assert torch.equal(a, b), name


@pytest.mark.parametrize("problem,curriculum", [("pdtsp", "6:2:2:1:imitation"),
                                                ("kp", "12:2:3:1:imitation")])
def test_supervised_stage_on_reference_labels(tmp_path, monkeypatch, problem, curriculum):
    monkeypatch.setenv("ROUTECLI_CACHE", str(tmp_path / "cache"))
    Trainer(config(tmp_path, problem, curriculum)).run()
    logged = records(tmp_path)
    assert all(r["loss"] > 0 and np.isfinite(r["loss"]) for r in logged if "loss" in r)
    assert any("val_gap" in r for r in logged)


def test_cli_trains_kp_and_refuses_odd_pdtsp_sizes(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ROUTECLI_CACHE", str(tmp_path / "cache"))
    run = tmp_path / "kp"
    argv = ["train", "--problem", "kp", "--out", str(run), "--curriculum", "10:2:2:2",
            "--val-size", "10", "--val-instances", "4", "--val-every", "2",
            "--kp-capacity", "2,3"]
    assert main(argv) == 0
    state = torch.load(run / "last.pt", weights_only=True)
    assert state["config"]["problem"] == "kp" and tuple(state["train"]["kp_capacities"]) == (2.0, 3.0)
    assert main(["train", "--problem", "pdtsp", "--out", str(tmp_path / "p"),
                 "--curriculum", "7:2:2:2"]) == 2
    assert "must be even" in capsys.readouterr().err
