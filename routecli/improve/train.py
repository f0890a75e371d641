"""PPO with n-step returns for the improvement policies (DACT and N2S recipes), rollouts and the
step-budget evaluation.

Per training batch (DACT / N2S): fresh instances from :mod:`routecli.generate` start from random
feasible tours; a curriculum first improves them with the current policy (``curriculum`` steps
at the last epoch, ramped linearly from 0; DACT's ramp is logistic) and restarts from the best
tours found; then ``t_train`` steps are taken in segments of ``n_step``. After each segment the
policy and the critic are updated ``k_epochs`` times on it::

    R_t = r_t + gamma r_{t+1} + ... + gamma^{n-1} r_{t+n-1} + gamma^n V(s_{t+n})   (n-step return)
    A_t = R_t - V(s_t)                                                            (advantage)
    L   = -mean(min(rho_t A_t, clip(rho_t, 1 - eps, 1 + eps) A_t)) + L_V            (clipped PPO)

with ``rho_t = pi(a_t | s_t) / pi_old(a_t | s_t)``; ``L_V`` is the squared error to ``R_t`` in
the first update and the clipped value loss afterwards. The first update reuses the sampling
pass; later ones re-score the stored actions. Actor and critic have their own learning rates,
gradient norms are clipped per group, and both learning rates decay by ``lr_decay`` per epoch.

The first ``imitation`` epochs (0 in the papers' recipes) replace PPO by a warm start that is
the same for every encoding: after each segment the actor takes one step towards the best
improving move of every state the policy visited (:func:`imitation_segment`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Protocol

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from routecli import generate
from routecli.improve.env import (
    Env,
    Instances,
    Observation,
    capacity_depot_slots,
    initial_orders,
    make_instances,
)
from routecli.improve.model import DACT, Decision, categorical
from routecli.improve.moves import OPERATORS, best_pairwise, pairwise_tour_costs, unflatten_move
from routecli.improve.options import BF16_ON_CPU
from routecli.limits import MAX_STEPS
from routecli.nn.device import generator as seeded_generator
from routecli.nn.device import mixed_precision
from routecli.problems.geometry import augment8


class Policy(Protocol):
    kind: str

    def __call__(self, obs: Observation, action: Tensor | None = None,
                 generator: torch.Generator | None = None) -> Decision: ...

    def move_logits(self, obs: Observation) -> Tensor: ...

    def parameters(self) -> Any: ...

    def named_parameters(self) -> Any: ...

    def train(self, mode: bool = True) -> Any: ...


@dataclass(frozen=True)
class PPOConfig:
    """Training budget and schedule. Defaults are DACT's published recipe (CVRP-20: 200 epochs
    of 20 batches of 600 instances, 200 steps each); the CPU protocol scales the budget."""

    epochs: int = 200
    batches: int = 20
    batch_size: int = 600
    t_train: int = 200
    n_step: int = 4
    k_epochs: int = 3
    eps_clip: float = 0.1
    gamma: float = 0.999
    lr_actor: float = 1e-4
    lr_critic: float = 3e-5
    lr_decay: float = 0.985
    max_grad_norm: float = 0.04
    curriculum: int = 50
    imitation: int = 0  # first epochs: imitate best improvement instead of PPO (not DACT's)
    imitation_temperature: float = 0.0  # > 0: soft targets over every move (imitation_segment)

    def __post_init__(self) -> None:
        for name in ("epochs", "batches", "batch_size", "t_train", "n_step", "k_epochs"):
            if not 1 <= getattr(self, name) <= MAX_STEPS:
                raise ValueError(f"{name} must be from 1 to {MAX_STEPS:,}, got "
                                 f"{getattr(self, name)}")
        for name in ("curriculum", "imitation"):
            if not 0 <= getattr(self, name) <= MAX_STEPS:
                raise ValueError(f"{name} must be from 0 to {MAX_STEPS:,}, got "
                                 f"{getattr(self, name)}")
        shares = {"eps_clip": self.eps_clip, "gamma": self.gamma, "lr_decay": self.lr_decay,
                  "lr_actor": self.lr_actor, "lr_critic": self.lr_critic}
        for name, value in shares.items():
            if not 0.0 < value <= 1.0:
                raise ValueError(f"{name} must be in (0, 1], got {value}")
        if not 0.0 < self.max_grad_norm < math.inf:
            raise ValueError(f"max_grad_norm must be positive and finite, got "
                             f"{self.max_grad_norm}")
        if not 0.0 <= self.imitation_temperature < math.inf:
            raise ValueError(f"imitation_temperature must be >= 0 and finite, got "
                             f"{self.imitation_temperature}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def problem_nodes(problem: str, size: int) -> int:
    """The generator's ``n`` for a problem size as the papers name it: CVRP-N and VRPTW-N have
    N customers, PDTSP-N has N nodes with the depot (PDTSP-21: 10 requests)."""
    if problem == "pdtsp":
        if size < 3 or size % 2 == 0:
            raise ValueError(f"PDTSP-{size}: the size counts the depot and the pickup-delivery "
                             "pairs, so it is odd and at least 3")
        return size - 1
    return size


def generate_instances(problem: str, size: int, num: int, seed: int,
                       capacity: float | None = None) -> dict[str, np.ndarray]:
    """A :mod:`routecli.generate` batch; CVRP and VRPTW vehicles of ``capacity`` (default: the
    PE paper's Appendix F rule)."""
    n = problem_nodes(problem, size)
    if problem == "cvrp":
        return generate.cvrp(num, n, seed, capacity=capacity)
    if problem == "vrptw":
        return generate.vrptw(num, n, seed, capacity=capacity)
    if problem == "pdtsp":
        return generate.pdtsp(num, n, seed)
    raise ValueError(f"the improvement backbone solves cvrp, vrptw and pdtsp, not {problem!r}")


def data_seed(*parts: int) -> int:
    """A generator seed derived from ``parts`` (run seed, epoch, batch)."""
    return int(np.random.SeedSequence(list(parts)).generate_state(1)[0])


# --------------------------------------------------------------------------------------------
# the PPO objective


def n_step_returns(rewards: Tensor, bootstrap: Tensor, gamma: float) -> Tensor:
    """``R_t`` for rewards ``[n, B]`` and the value of the state after them ``[B]``. ``[n, B]``."""
    out = torch.empty_like(rewards)
    ret = bootstrap
    for t in range(rewards.shape[0] - 1, -1, -1):
        ret = rewards[t] + gamma * ret
        out[t] = ret
    return out


def ppo_losses(log_prob: Tensor, old_log_prob: Tensor, value: Tensor, returns: Tensor,
               eps: float, old_value: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """Clipped surrogate policy loss and value loss (module docstring); any equal shapes.
    ``old_value`` given: the value loss is clipped around it."""
    advantage = returns - value.detach()
    ratio = torch.exp(log_prob - old_log_prob.detach())
    surrogate = torch.min(ratio * advantage, ratio.clamp(1 - eps, 1 + eps) * advantage)
    if old_value is None:
        value_loss = ((value - returns) ** 2).mean()
    else:
        clipped = old_value + (value - old_value).clamp(-eps, eps)
        value_loss = torch.max((value - returns) ** 2, (clipped - returns) ** 2).mean()
    return -surrogate.mean(), value_loss


def make_optimizer(model: Policy, cfg: PPOConfig) -> torch.optim.Adam:
    """Adam with the actor and the critic (parameters named ``critic.*``) as two groups."""
    actor = [p for n, p in model.named_parameters() if not n.startswith("critic.")]
    critic = [p for n, p in model.named_parameters() if n.startswith("critic.")]
    return torch.optim.Adam([{"params": actor, "lr": cfg.lr_actor},
                             {"params": critic, "lr": cfg.lr_critic}])


def ppo_segment(model: Policy, env: Env, steps: int, cfg: PPOConfig,
                optimizer: torch.optim.Optimizer, generator: torch.Generator) -> dict[str, float]:
    """Take ``steps`` moves in ``env`` and update on them ``k_epochs`` times."""
    states: list[Observation] = []
    decisions: list[Decision] = []
    rewards: list[Tensor] = []
    autocast = mixed_precision(env.order.device, bf16_on_cpu=BF16_ON_CPU)
    for _ in range(steps):
        obs = env.observe()
        with autocast:
            decision = model(obs, generator=generator)
        rewards.append(env.step(decision.action))
        states.append(obs)
        decisions.append(decision)
    with torch.no_grad(), autocast:
        bootstrap = model(env.observe(), generator=generator).value
    returns = n_step_returns(torch.stack(rewards), bootstrap, cfg.gamma)  # [n, B]
    old_log_prob = torch.stack([d.log_prob for d in decisions]).detach()
    old_value: Tensor | None = None
    stats: dict[str, float] = {}
    for k in range(cfg.k_epochs):
        if k:
            with autocast:
                decisions = [model(s, action=d.action)
                             for s, d in zip(states, decisions, strict=True)]
        log_prob = torch.stack([d.log_prob for d in decisions]).float()
        value = torch.stack([d.value for d in decisions]).float()
        policy_loss, value_loss = ppo_losses(log_prob, old_log_prob, value, returns,
                                             cfg.eps_clip, old_value)
        old_value = value.detach() if old_value is None else old_value
        optimizer.zero_grad()
        (policy_loss + value_loss).backward()
        for group in optimizer.param_groups:
            nn.utils.clip_grad_norm_(group["params"], cfg.max_grad_norm)
        optimizer.step()
        stats = {"policy_loss": policy_loss.item(), "value_loss": value_loss.item(),
                 "entropy": torch.stack([d.entropy for d in decisions]).mean().item()}
    return stats


def imitation_segment(model: Policy, env: Env, steps: int, cfg: PPOConfig,
                      optimizer: torch.optim.Optimizer,
                      generator: torch.Generator) -> dict[str, float]:
    """Take ``steps`` sampled moves in ``env`` and update once on the cross-entropy between the
    policy and the teacher in each state visited.

    The teacher is best improvement (:func:`routecli.improve.moves.best_pairwise`) or, with
    ``cfg.imitation_temperature`` T > 0, the soft target ``softmax(-(L(m) - min L) / T)`` over
    the allowed moves m, L(m) the tour length after m (T in units of length; it ranks every
    move, not only the best, so one state teaches more). The states are the policy's own
    (DAgger: the teacher labels where the learner goes, so it learns to recover from its
    mistakes); the critic is left to PPO."""
    if not isinstance(model, DACT):
        raise ValueError("the imitation warm start teaches pairwise moves (DACT), not N2S's")
    autocast = mixed_precision(env.order.device, bf16_on_cpu=BF16_ON_CPU)
    losses, agree = [], []
    for _ in range(steps):
        obs = env.observe()
        assert obs.allowed is not None  # pairwise actions
        costs = pairwise_tour_costs(env.order, env.data.coords, obs.allowed)  # [B, 3, V, V]
        with autocast:
            log_p = torch.log_softmax(model.move_logits(obs).float().flatten(1), -1)  # [B, M]
        allowed = obs.allowed.flatten(1)
        if cfg.imitation_temperature > 0:
            excess = costs.flatten(1) - costs.flatten(1).min(1, keepdim=True).values
            target = torch.softmax(-excess / cfg.imitation_temperature, -1)  # 0 where not allowed
        else:
            target = F.one_hot(costs.flatten(1).argmin(1), allowed.shape[1]).to(log_p.dtype)
        losses.append(-(target * log_p.masked_fill(~allowed, 0.0)).sum(1).mean())
        index, _, _ = categorical(log_p.detach(), generator)
        sampled = unflatten_move(index, costs.shape[-1])
        agree.append((sampled == best_pairwise(costs)).all(1).float().mean())
        env.step(sampled)
    loss = torch.stack(losses).mean()
    optimizer.zero_grad()
    loss.backward()
    for group in optimizer.param_groups:
        nn.utils.clip_grad_norm_(group["params"], cfg.max_grad_norm)
    optimizer.step()
    return {"imitation_loss": loss.item(), "teacher_agreement": torch.stack(agree).mean().item()}


# --------------------------------------------------------------------------------------------
# rollouts, training, evaluation


def make_env(model: Policy, data: Instances, order: Tensor, operators: tuple[str, ...]) -> Env:
    return Env(data, order, kind=model.kind, operators=operators, window=data.slots - 1)


@torch.no_grad()
def rollout(model: Policy, env: Env, steps: int, generator: torch.Generator) -> None:
    """``steps`` sampled moves of ``model`` in ``env`` (best tours kept by the env)."""
    autocast = mixed_precision(env.order.device, bf16_on_cpu=BF16_ON_CPU)
    for _ in range(steps):
        with autocast:
            action = model(env.observe(), generator=generator).action
        env.step(action)


def train(model: Policy, problem: str, size: int, cfg: PPOConfig, seed: int,
          operators: tuple[str, ...] = OPERATORS,
          log: Callable[[dict[str, Any]], None] | None = None,
          device: str | torch.device = "cpu", resume: dict[str, Any] | None = None,
          after_epoch: Callable[[dict[str, Any]], bool] | None = None,
          capacity: float | None = None) -> None:
    """Train ``model`` in place on generated instances (data and sampling seeded by ``seed``;
    ``capacity`` as :func:`generate_instances`) on ``device``, where the model already is.

    After every epoch ``after_epoch`` gets the training state (``epoch`` done, ``optimizer``,
    ``schedule`` and ``generator`` states; tensors and numbers only) and returns whether to go
    on; passing that state back as ``resume`` (with the model's weights of that moment)
    continues exactly where it stopped, as if never interrupted."""
    if cfg.imitation and model.kind != "pairwise":
        raise ValueError("the imitation warm start teaches pairwise moves (DACT), not N2S's")
    generator = seeded_generator(device, seed)
    optimizer = make_optimizer(model, cfg)
    schedule = torch.optim.lr_scheduler.ExponentialLR(optimizer, cfg.lr_decay)
    first = 0
    if resume is not None:
        optimizer.load_state_dict(resume["optimizer"])
        schedule.load_state_dict(resume["schedule"])
        generator.set_state(resume["generator"])
        first = int(resume["epoch"])
    started = time.perf_counter()
    for epoch in range(first, cfg.epochs):
        warm = round(cfg.curriculum * epoch / max(cfg.epochs - 1, 1))
        for b in range(cfg.batches):
            batch = generate_instances(problem, size, cfg.batch_size, data_seed(seed, epoch, b),
                                       capacity)
            data = make_instances(problem, batch, capacity_depot_slots(problem, batch, capacity),
                                  device=device)
            env = make_env(model, data, initial_orders(data, generator), operators)
            if warm:
                model.train(False)
                rollout(model, env, warm, generator)
                env = make_env(model, data, env.best_order, operators)
            model.train(True)
            initial = float(env.cost.mean())
            stats: dict[str, float] = {}
            segment = imitation_segment if epoch < cfg.imitation else ppo_segment
            for t in range(0, cfg.t_train, cfg.n_step):
                stats = segment(model, env, min(cfg.n_step, cfg.t_train - t), cfg, optimizer,
                                generator)
            if log is not None:
                log({"epoch": epoch, "batch": b, "initial": initial,
                     "best": float(env.best.mean()), "seconds": time.perf_counter() - started,
                     **stats})
        schedule.step()
        model.train(False)
        if after_epoch is not None and not after_epoch({
                "epoch": epoch + 1, "optimizer": optimizer.state_dict(),
                "schedule": schedule.state_dict(), "generator": generator.get_state()}):
            return
    model.train(False)


@torch.no_grad()
def evaluate(model: Policy, problem: str, batch: dict[str, np.ndarray], steps: int, seed: int,
             augment: int = 1, operators: tuple[str, ...] = OPERATORS,
             depots: int | None = None,
             device: str | torch.device = "cpu") -> tuple[Tensor, Tensor]:
    """Improve every instance of ``batch`` for ``steps`` sampled moves from the same seeded
    random tour, on ``augment`` (1..8) symmetric images at once; the best over the images.
    ``depots``: depot slots of the giant tour (default: the size's, as in training).
    Returns best costs ``[B]`` and best giant tours ``[B, V]`` (slot layout of
    :func:`make_instances`), on ``device``, where the model already is."""
    if not 1 <= augment <= 8:
        raise ValueError(f"augment must be 1..8 images, got {augment}")
    model.train(False)
    data = make_instances(problem, batch, depots, device=device)
    num = data.size
    order = initial_orders(data, seeded_generator(device, seed))
    images = augment8(data.coords)[:augment].reshape(augment * num, data.slots, 2)
    instance = torch.arange(num, device=data.coords.device)
    repeated = data.index(instance.repeat(augment)).with_coords(images)
    env = make_env(model, repeated, order.repeat(augment, 1), operators)
    rollout(model, env, steps, seeded_generator(device, seed))
    best, image = env.best.view(augment, num).min(0)
    rows = image * num + instance
    return best, env.best_order[rows]
