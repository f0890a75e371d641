"""PPO with n-step returns: the objective on hand-computed toy cases, one training batch, and the
step-budget evaluation."""

from __future__ import annotations

import math

import pytest
import torch

from routecli.generate import batch_instances
from routecli.improve.env import Env, initial_orders, make_instances, to_solution
from routecli.improve.model import DACT, DACTConfig
from routecli.improve.moves import pairwise_tour_costs
from routecli.improve.train import (
    PPOConfig,
    evaluate,
    generate_instances,
    imitation_segment,
    make_optimizer,
    n_step_returns,
    ppo_losses,
    problem_nodes,
    train,
)
from routecli.problems import validate

from .test_model import SMALL


def test_n_step_returns_discount_and_bootstrap():
    rewards = torch.tensor([[1.0, 0.0], [0.0, 2.0], [3.0, 0.0]])  # [n = 3, B = 2]
    out = n_step_returns(rewards, torch.tensor([10.0, -1.0]), gamma=0.5)
    # R_2 = r_2 + g V, R_1 = r_1 + g R_2, R_0 = r_0 + g R_1
    assert torch.allclose(out[:, 0], torch.tensor([1 + 0.5 * (0 + 0.5 * (3 + 5)), 0 + 0.5 * 8, 8.0]))
    assert torch.allclose(out[:, 1], torch.tensor([0 + 0.5 * (2 - 0.25), 2 - 0.25, -0.5]))


def test_ppo_losses_on_a_toy_case():
    old = torch.log(torch.tensor([0.5, 0.5, 0.5, 0.5]))
    # ratios 1.5 (clipped to 1.1), 0.6 (clipped to 0.9), 1.05, 0.95 with eps = 0.1
    new = torch.log(torch.tensor([0.75, 0.3, 0.525, 0.475])).requires_grad_()
    value = torch.tensor([0.0, 0.0, 1.0, 1.0], requires_grad=True)
    returns = torch.tensor([2.0, -2.0, 0.0, 3.0])  # advantages 2, -2, -1, 2
    policy, value_loss = ppo_losses(new, old, value, returns, eps=0.1)
    # min(r A, clip(r) A): 1.1*2, min(-1.2, -1.8) = -1.8, -1.05, 0.95*2
    assert policy.item() == pytest.approx(-(2.2 - 1.8 - 1.05 + 1.9) / 4)
    assert value_loss.item() == pytest.approx((4 + 4 + 1 + 4) / 4)
    policy.backward()
    assert new.grad is not None
    # where the clipped term is the minimum (ratio past the clip in the advantage's favour)
    # there is no gradient; inside the clip range there is
    assert new.grad[0] == 0 and new.grad[1] == 0 and new.grad[2] != 0 and new.grad[3] != 0
    # a positive advantage raises the probability of its action, a negative one lowers it
    assert new.grad[3] < 0 and new.grad[2] > 0


def test_clipped_value_loss_uses_the_worse_of_the_two_errors():
    value = torch.tensor([1.0, 0.0])
    old_value = torch.tensor([0.0, 0.0])
    returns = torch.tensor([0.0, 1.0])
    _, loss = ppo_losses(torch.zeros(2), torch.zeros(2), value, returns, eps=0.2,
                         old_value=old_value)
    # entry 0: unclipped error 1, clipped value 0.2 -> error 0.04: keep 1
    # entry 1: both 1
    assert loss.item() == pytest.approx((1.0 + 1.0) / 2)


def test_a_tiny_training_run_updates_the_policy_and_the_critic():
    torch.manual_seed(0)
    model = DACT(DACTConfig(**SMALL))
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    logs: list[dict] = []
    cfg = PPOConfig(epochs=2, batches=1, batch_size=4, t_train=6, n_step=3, curriculum=2)
    train(model, "cvrp", 10, cfg, seed=0, log=logs.append)
    assert len(logs) == 2 and all(math.isfinite(r["policy_loss"]) for r in logs)
    changed = {n for n, p in model.named_parameters() if not torch.equal(p, before[n])}
    assert any(n.startswith("critic.") for n in changed)
    assert any(n.startswith("decoder.") for n in changed)
    assert not model.training


def test_imitation_moves_the_policy_towards_best_improvement():
    """Repeated imitation updates on one batch raise the policy's probability of the teacher's
    move (cross-entropy falls) and leave the critic alone."""
    torch.manual_seed(0)
    model = DACT(DACTConfig(**SMALL))
    critic = {n: p.detach().clone() for n, p in model.named_parameters() if n.startswith("critic.")}
    cfg = PPOConfig(lr_actor=3e-3, max_grad_norm=1.0)
    optimizer = make_optimizer(model, cfg)
    data = make_instances("cvrp", generate_instances("cvrp", 10, 4, 0))
    order = initial_orders(data, torch.Generator().manual_seed(0))
    losses = []
    for _ in range(25):
        env = Env(data, order.clone())
        losses.append(imitation_segment(model, env, 2, cfg, optimizer,
                                        torch.Generator().manual_seed(1))["imitation_loss"])
    assert max(losses[-5:]) < 0.75 * losses[0], losses
    assert all(torch.equal(p, critic[n]) for n, p in model.named_parameters() if n in critic)


def test_the_soft_imitation_target_weighs_every_move_by_its_tour():
    """The soft target is softmax(-(L(m) - min L) / T) over the allowed moves m: the loss is
    its cross-entropy with the policy; a tiny T puts the weight on the shortest tours (split
    between ties), a large one approaches the uniform target over allowed moves; soft updates
    also raise the teacher's move (the hard, best-improvement loss falls)."""
    data = make_instances("cvrp", generate_instances("cvrp", 10, 4, 0))
    order = initial_orders(data, torch.Generator().manual_seed(0))

    def loss(model: DACT, temperature: float, optimizer=None) -> float:
        cfg = PPOConfig(lr_actor=3e-3, max_grad_norm=1.0, imitation_temperature=temperature)
        optimizer = optimizer or torch.optim.SGD(model.parameters(), lr=0.0)
        return imitation_segment(model, Env(data, order.clone()), 1, cfg, optimizer,
                                 torch.Generator().manual_seed(1))["imitation_loss"]

    torch.manual_seed(0)
    model = DACT(DACTConfig(**SMALL))
    obs = Env(data, order.clone()).observe()
    with torch.no_grad():
        log_p = torch.log_softmax(model.move_logits(obs).flatten(1), -1)
    allowed = obs.allowed.flatten(1)
    lengths = pairwise_tour_costs(order, data.coords, obs.allowed).flatten(1)
    excess = lengths - lengths.min(1, keepdim=True).values
    for temperature in (0.05, 0.5):
        weights = torch.softmax(-excess / temperature, 1)
        expected = -(weights * log_p.masked_fill(~allowed, 0)).sum(1).mean().item()
        assert loss(model, temperature) == pytest.approx(expected, rel=1e-5)
    ties = (excess < 1e-6).float()
    tied_best = -((ties * log_p.masked_fill(~allowed, 0)).sum(1) / ties.sum(1)).mean().item()
    assert loss(model, 1e-7) == pytest.approx(tied_best, rel=1e-4)
    uniform = -(log_p.masked_fill(~allowed, 0).sum(1) / allowed.sum(1)).mean().item()
    assert loss(model, 1e6) == pytest.approx(uniform, rel=1e-4)
    hard = loss(model, 0.0)
    optimizer = make_optimizer(model, PPOConfig(lr_actor=3e-3, max_grad_norm=1.0))
    for _ in range(25):
        loss(model, 0.05, optimizer)
    assert loss(model, 0.0) < 0.75 * hard


def test_an_imitation_warm_start_then_ppo_runs():
    model = DACT(DACTConfig(**SMALL))
    logs: list[dict] = []
    cfg = PPOConfig(epochs=2, batches=1, batch_size=4, t_train=4, n_step=2, curriculum=0,
                    imitation=1)
    train(model, "cvrp", 10, cfg, seed=0, log=logs.append)
    assert "teacher_agreement" in logs[0] and "policy_loss" in logs[1]


@pytest.mark.parametrize(("problem", "size"), [("cvrp", 10), ("vrptw", 8), ("pdtsp", 11)])
def test_evaluation_returns_feasible_tours_and_is_seeded(problem, size):
    torch.manual_seed(0)
    model = DACT(DACTConfig(problem=problem, pe="ipe_xpe", **SMALL))
    raw = generate_instances(problem, size, 5, seed=7)
    best, orders = evaluate(model, problem, raw, steps=15, seed=3, augment=2)
    again, _ = evaluate(model, problem, raw, steps=15, seed=3, augment=2)
    assert torch.equal(best, again)
    insts = batch_instances(problem, raw)
    data = make_instances(problem, raw)
    for b, inst in enumerate(insts):
        sol = to_solution(data, orders[b])
        assert validate(inst, sol) == []
        assert inst.cost(sol) == pytest.approx(float(best[b]), rel=1e-5)


def test_pdtsp_sizes_count_the_depot():
    assert problem_nodes("pdtsp", 21) == 20 and problem_nodes("cvrp", 20) == 20
    with pytest.raises(ValueError, match="odd"):
        problem_nodes("pdtsp", 20)
