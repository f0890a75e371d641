"""WTA training of the NDS policy: rollout scoring/replay, the loss, a tiny run, resuming."""

from __future__ import annotations

import json
import os
import socket

import numpy as np
import pytest
import torch
import torch.multiprocessing as mp

from routecli.nds.policy import NDSConfig, NDSPolicy, load_policy, to_checkpoint
from routecli.nds.train import (
    Episode,
    NDSTrainConfig,
    NDSTrainer,
    export_policy,
    rollout_rewards,
    winners,
    wta_loss,
)
from routecli.search.state import ROUTE
from routecli.train.checkpoint import CheckpointError, save


def tiny(tmp_path, **kw) -> NDSTrainConfig:
    base = dict(size=20, batch=2, rollouts=8, remove=4, episode=6, warmup=1, steps=6,
                val_every=1000, val_instances=1, val_iterations=3, val_rollouts=4,
                log_every=2, embed_dim=32, num_layers=1, lr=1e-3, lr_warmup=1,
                run_dir=str(tmp_path / "run"), checkpoint_every=0.0)
    base.update(kw)
    return NDSTrainConfig(**base)


def test_only_the_winning_rollout_gets_a_gradient():
    logp = torch.randn(3, 5, requires_grad=True)
    rewards = torch.tensor([[0.0, 2.0, 1.0, 0.0, 0.0],
                            [0.0, 0.0, 0.0, 0.0, 0.0],
                            [3.0, 0.0, 0.0, 0.0, 1.0]])
    best, advantage = winners(rewards)
    assert best.tolist()[0] == 1 and best.tolist()[2] == 0
    wta_loss(logp[torch.arange(3), best], advantage).backward()
    expected = torch.zeros(3, 5)
    expected[0, 1] = -(2.0 - 0.6) / 3
    expected[2, 0] = -(3.0 - 0.8) / 3
    torch.testing.assert_close(logp.grad, expected)  # no signal when nothing improves


def test_wta_steps_lower_the_loss_on_a_fixed_batch(tmp_path):
    """A tiny training run on fixed rollouts: the winners' log-probability rises, the WTA loss
    falls."""
    cfg = tiny(tmp_path, rollouts=16)
    trainer = NDSTrainer(cfg, quiet=True)
    ep = Episode(cfg, index=0)
    rng = np.random.default_rng(0)
    feats, batch, allowed = ep.inputs(rng)
    latent = torch.randint(0, 2, (cfg.batch, cfg.rollouts, 10)).float()
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        actions, _ = trainer.model(feats, batch, allowed, latent, cfg.remove, gen,
                                   distance=ep.distance)
    costs, _ = ep.score(actions.numpy().astype(np.int64), rng)
    rewards = np.maximum(np.where(np.isfinite(costs), ep.costs[:, None] - costs, 0.0), 0.0)
    rewards = torch.as_tensor(rewards / ep.scales[:, None], dtype=torch.float32)
    rewards[:, 0] += 0.5  # make sure every instance has a winner with a positive advantage
    losses = []
    best, advantage = winners(rewards)
    rows = torch.arange(cfg.batch)
    for _ in range(15):
        _, logp = trainer.model(feats, batch, allowed, latent[rows, best][:, None], cfg.remove,
                                actions=actions[rows, best][:, None], distance=ep.distance)
        loss = wta_loss(logp.squeeze(1), advantage)
        trainer.optimizer.zero_grad()
        loss.backward()
        trainer.optimizer.step()
        losses.append(float(loss.detach()))
    assert losses[-1] < losses[0] - 0.1


def test_tiny_run_logs_checkpoints_and_resumes(tmp_path):
    cfg = tiny(tmp_path, steps=5)
    first = NDSTrainer(cfg, quiet=True)
    first.run()
    run = tmp_path / "run"
    assert (run / "last.pt").exists() and (run / "best.pt").exists()
    records = [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]
    train = [r for r in records if r["kind"] == "train"]
    assert [r["step"] for r in train] == [2, 4]
    assert all(np.isfinite(r["loss"]) and 0 <= r["improving"] <= 1 for r in train)
    assert any(r["kind"] == "val" and r["ratio"] > 0 for r in records)
    state = torch.load(run / "last.pt", weights_only=True)
    assert state["step"] == 5 and state["instances"] == 2 * state["episode"]

    resumed = NDSTrainer(tiny(tmp_path, steps=9), resume=True, quiet=True)
    assert resumed.step == 5 and resumed.episode == state["episode"]
    for name, value in resumed.model.state_dict().items():
        torch.testing.assert_close(value, first.model.state_dict()[name])
    resumed.run()
    assert torch.load(run / "last.pt", weights_only=True)["step"] == 9
    best = torch.load(run / "best.pt", weights_only=True)
    assert best["kind"] == "nds" and best["meta"]["problem"] == "cvrp"

    card = export_policy(run, tmp_path / "ship" / "nds-cvrp.pt", hardware="test box",
                         command="pytest")
    shipped = load_policy(tmp_path / "ship" / "nds-cvrp.pt")
    assert shipped.config.pe == "ipe_inv_xpe"
    text = card.read_text()
    assert "test box" in text and "| step | minutes |" in text and "whole run: 9 steps" in text


def test_rewards_clipped_and_signed():
    current = np.array([10.0, 5.0])
    costs = np.array([[9.0, 11.0, np.inf], [np.inf, np.inf, np.inf]])
    np.testing.assert_allclose(rollout_rewards(current, costs, "clipped"),
                               [[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    # signed: worse rollouts are penalised, an infeasible one scores as the worst feasible one
    np.testing.assert_allclose(rollout_rewards(current, costs, "delta"),
                               [[1.0, -1.0, -1.0], [0.0, 0.0, 0.0]])


def test_teacher_steps_score_string_removals_then_hand_over_to_the_policy(tmp_path):
    """Warm start: the first steps' rollouts are string-removal sets (distinct served
    customers), later steps sample the policy; both take gradient steps."""
    cfg = tiny(tmp_path, steps=4, teacher_steps=2, log_every=1)
    trainer = NDSTrainer(cfg, quiet=True)
    ep = Episode(cfg, index=0)
    sets = ep.string_sets(cfg.rollouts, cfg.remove, np.random.default_rng(0))
    assert sets.shape == (cfg.batch, cfg.rollouts, cfg.remove)
    for i, state in enumerate(ep.current):
        assert (state.nodes[sets[i], ROUTE] >= 0).all()  # served
        assert all(len(set(row)) == cfg.remove for row in sets[i].tolist())
    trainer.run()
    records = [json.loads(line) for line in (tmp_path / "run" / "log.jsonl").read_text()
               .splitlines()]
    assert [r["step"] for r in records if r["kind"] == "train"] == [1, 2, 3, 4]
    assert all(np.isfinite(r["loss"]) for r in records if r["kind"] == "train")


def test_init_starts_from_a_policy_checkpoint_and_adds_the_distance_bias(tmp_path):
    source = NDSTrainer(tiny(tmp_path, run_dir=str(tmp_path / "a")), quiet=True)
    old = NDSPolicy(NDSConfig(**{**source.model.config.to_dict(), "distance_bias": False}))
    save(to_checkpoint(old), tmp_path / "old.pt")
    trainer = NDSTrainer(tiny(tmp_path, run_dir=str(tmp_path / "b"), init=str(tmp_path / "old.pt")),
                         quiet=True)
    torch.testing.assert_close(trainer.model.key.weight, old.key.weight)
    assert trainer.model.config.distance_bias
    other = NDSPolicy(NDSConfig(**{**old.config.to_dict(), "embed_dim": 16, "num_heads": 4}))
    save(to_checkpoint(other), tmp_path / "other.pt")
    with pytest.raises(CheckpointError, match="a checkpoint of embed_dim 16, not 32"):
        NDSTrainer(tiny(tmp_path, run_dir=str(tmp_path / "c"), init=str(tmp_path / "other.pt")),
                   quiet=True)


def test_bias_lr_trains_the_distance_bias_at_its_own_rate(tmp_path):
    trainer = NDSTrainer(tiny(tmp_path, lr=0.0, bias_lr=1e-2, reward="delta", steps=4),
                         quiet=True)
    assert len(trainer.optimizer.param_groups) == 2 and trainer.rates == [0.0, 1e-2]
    before = {k: v.clone() for k, v in trainer.model.state_dict().items()}
    trainer.run()
    changed = {k for k, v in trainer.model.state_dict().items() if not torch.equal(v, before[k])}
    assert changed and changed <= {"reach.weight", "reach.bias"}
    assert len(NDSTrainer(tiny(tmp_path, run_dir=str(tmp_path / "one")), quiet=True)
               .optimizer.param_groups) == 1


def _ddp_worker(rank: int, port: int, root: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                      WORLD_SIZE="2", LOCAL_RANK=str(rank))
    from pathlib import Path

    trainer = NDSTrainer(tiny(Path(root), steps=5, seed=rank), quiet=True)  # seeds differ:
    trainer.run()  # rank 0's initial weights must still reach both processes
    torch.save({k: v.clone() for k, v in trainer.model.state_dict().items()},
               f"{root}/state{rank}.pt")
    torch.distributed.destroy_process_group()


@pytest.mark.slow
def test_two_gloo_processes_train_one_model_on_different_data(tmp_path):
    """Under torchrun every process runs its own episodes, gradients are averaged, and the
    weights stay identical; rank 0 alone logs and writes checkpoints."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(_ddp_worker, args=(port, str(tmp_path)), nprocs=2, join=True)
    a, b = (torch.load(tmp_path / f"state{r}.pt", weights_only=True) for r in (0, 1))
    for name in a:
        assert torch.equal(a[name], b[name]), name
    single = NDSTrainer(tiny(tmp_path / "single", steps=5), quiet=True)
    single.run()
    assert any(not torch.equal(a[n], v) for n, v in single.model.state_dict().items())
    run = tmp_path / "run"
    records = [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]
    train = [r for r in records if r["kind"] == "train"]
    assert [r["step"] for r in train] == [2, 4] and all(r["world"] == 2 for r in train)
    state = torch.load(run / "last.pt", weights_only=True)
    assert state["step"] == 5 and state["instances"] == 2 * 2 * state["episode"]
