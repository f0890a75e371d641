"""Offline imitation of best improvement: a training method for the improvement backbones (DACT's
pairwise moves, N2S's pickup-delivery reinsertions) where PPO does not converge on a CPU budget
(docs/pe-paper.md, the learning curves). Not DACT's or N2S's recipe: the comparison of
encodings it gives is under this signal.

1. Label states once (:func:`label_states`): ``instances`` generated instances, each improved for
   ``trajectory`` moves from a random tour by an epsilon-greedy teacher (the best move of the
   backbone's kind, every allowed move applied and measured:
   :func:`routecli.improve.moves.pairwise_tour_costs`, :func:`~routecli.improve.moves.pair_tour_costs`;
   with probability ``epsilon`` a uniformly random allowed move, so the states range from random
   tours to perturbed local optima). Every ``keep_every``-th state is kept with the teacher's move
   and the set of moves as good as it (depot copies, or a request put back where it was, make
   several moves equal).
2. Take ``updates`` Adam steps (:func:`fit`) of cross-entropy on random minibatches of those
   states: towards the teacher's move (``target`` ``move``) or any move as good as it (``ties``:
   ``-log P(tie set)``). ``train_states`` ``improvable`` leaves out the local optima, where the
   teacher's move is an arbitrary least-worsening one. Minibatch ``u`` is drawn from a generator
   seeded by (seed, u), so the same states and minibatches reach every PE, and a run cut into
   chunks trains exactly as one run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import torch
import torch.nn.functional as F
from torch import Tensor

from routecli.atomic import atomic_write, one_at_a_time
from routecli.improve.env import (
    ROUTED,
    Env,
    Instances,
    capacity_depot_slots,
    initial_orders,
    make_instances,
)
from routecli.improve.moves import (
    as_good_as_best,
    pair_mask,
    pair_tour_costs,
    pairwise_tour_costs,
    unflatten_move,
)
from routecli.improve.train import Policy, data_seed, generate_instances
from routecli.nn.device import generator as seeded_generator

Target = Literal["move", "ties"]
TrainStates = Literal["all", "improvable"]
TARGETS: tuple[Target, ...] = ("move", "ties")
TRAIN_STATES: tuple[TrainStates, ...] = ("all", "improvable")


@dataclass(frozen=True)
class ImitationConfig:
    """The labelled states and the fit (module docstring). Defaults: the protocol whose
    learning curves flatten on CVRP-10 within minutes of one core (docs/pe-paper.md)."""

    instances: int = 2048
    trajectory: int = 200
    keep_every: int = 1
    epsilon: float = 0.25
    updates: int = 8000
    batch: int = 64
    lr: float = 1e-3
    target: Target = "ties"
    train_states: TrainStates = "improvable"

    def __post_init__(self) -> None:
        if self.target not in TARGETS:
            raise ValueError(f"target {self.target!r}: choose {', '.join(TARGETS)}")
        if self.train_states not in TRAIN_STATES:
            raise ValueError(f"train_states {self.train_states!r}: choose "
                             f"{', '.join(TRAIN_STATES)}")
        for name in ("instances", "trajectory", "keep_every", "updates", "batch"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if not 0.0 <= self.epsilon <= 1.0:
            raise ValueError(f"epsilon must be in [0, 1], got {self.epsilon}")
        if not 0.0 < self.lr <= 1.0:
            raise ValueError(f"lr must be in (0, 1], got {self.lr}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# --------------------------------------------------------------------------------------------
# 1. labelled states


def move_costs(env: Env) -> Tensor:
    """The tour length after every move the policy of the env's kind may take, ``inf`` where
    it may not: ``[B, 3, V, V]`` (pairwise) or ``[B, n, V, V]`` (N2S's ``(r, i, j)``, the
    previous request left out as N2S's removal decoder does)."""
    if env.kind == "pair":
        allowed = pair_mask(env.order, env.data.requests, env.last[:, 0])
        return pair_tour_costs(env.order, env.data.coords, allowed, env.data.requests)
    return pairwise_tour_costs(env.order, env.data.coords, env.allowed())


def label_states(problem: str, size: int, cfg: ImitationConfig, seed: int,
                 kind: str = "pairwise", capacity: float | None = None) -> dict[str, Any]:
    """Run the epsilon-greedy teacher of moves of ``kind`` (``pairwise``: DACT, ``pair``: N2S)
    on every instance; keep every ``keep_every``-th state (with ``train_states``
    ``improvable``, those where some move shortens the tour): ``instance`` ``[S]``, ``order``
    ``[S, V]``, ``last`` ``[S, 3]``, ``target`` ``[S]`` (the flattened teacher move), ``ties``
    ``[S, M]``, ``improvable`` ``[S]``, for N2S ``recent`` ``[S, W]`` (the request removed at
    each step of the signature window, ``-1``: none), and the generated ``batch`` (tensors;
    ``capacity`` as :func:`routecli.improve.train.generate_instances`)."""
    batch = generate_instances(problem, size, cfg.instances, data_seed(seed, 0, 0), capacity)
    data = make_instances(problem, batch, capacity_depot_slots(problem, batch, capacity))
    generator = seeded_generator("cpu", seed)
    env = Env(data, initial_orders(data, generator), kind=kind, window=data.slots - 1)
    rows = torch.arange(data.size)
    kept: dict[str, list[Tensor]] = {"instance": [], "order": [], "last": [], "target": [],
                                     "ties": [], "improvable": []}
    if kind == "pair":
        kept["recent"] = []
    for step in range(cfg.trajectory):
        costs = move_costs(env)
        flat = costs.flatten(1)
        target = flat.argmin(1)  # [B]
        ties = as_good_as_best(flat)  # [B, M]
        improvable = flat.min(1).values < env.cost - 1e-6
        keep = improvable if cfg.train_states == "improvable" else torch.ones_like(improvable)
        if step % cfg.keep_every == 0:
            state = {"instance": rows, "order": env.order, "last": env.last, "target": target,
                     "ties": ties, "improvable": improvable}
            if kind == "pair":
                removed = env.removals.sum(-1) > 0  # [B, W]
                state["recent"] = torch.where(removed, env.removals.argmax(-1), -1).to(torch.int8)
            for key, value in state.items():
                kept[key].append(value[keep].clone())
        env.step(teacher_move(costs, target, cfg.epsilon, generator))
    return {"batch": {k: torch.as_tensor(v) for k, v in batch.items()},
            **{key: torch.cat(value) for key, value in kept.items()}}


def teacher_move(costs: Tensor, best: Tensor, epsilon: float,
                 generator: torch.Generator) -> Tensor:
    """The epsilon-greedy teacher's move ``[B, 3]``: the best flattened move ``best`` ``[B]``,
    or with probability ``epsilon`` a uniformly random allowed one (finite ``costs``)."""
    flat = costs.flatten(1)
    uniform = torch.rand(flat.shape, generator=generator, device=flat.device)
    random_move = uniform.masked_fill(~torch.isfinite(flat), -1.0).argmax(1)
    explore = torch.rand(flat.shape[0], generator=generator, device=flat.device) < epsilon
    return unflatten_move(torch.where(explore, random_move, best), costs.shape[-1])


@torch.no_grad()
def teacher_evaluate(data: Instances, steps: int, epsilon: float, seed: int,
                     kind: str = "pairwise") -> Tensor:
    """Best costs ``[B]`` of the epsilon-greedy teacher (``epsilon`` 0: best improvement, 1: a
    uniformly random allowed move per step) run for ``steps`` moves from the same seeded random
    tours as :func:`routecli.improve.train.evaluate`: the teacher and random rows of a
    comparison table."""
    generator = seeded_generator(data.coords.device, seed)
    env = Env(data, initial_orders(data, generator), kind=kind, window=data.slots - 1)
    for _ in range(steps):
        costs = move_costs(env)
        env.step(teacher_move(costs, costs.flatten(1).argmin(1), epsilon, generator))
    return env.best


def labelled_states(problem: str, size: int, cfg: ImitationConfig, seed: int,
                    cache: Path | None = None, log: Callable[[str], None] | None = None,
                    kind: str = "pairwise", capacity: float | None = None) -> dict[str, Any]:
    """:func:`label_states`, read from ``cache`` when it exists, else labelled and saved there;
    processes that need the same missing file wait for the one labelling it."""
    if cache is None:
        return label_states(problem, size, cfg, seed, kind, capacity)
    with one_at_a_time(cache.with_suffix(".lock")):
        if cache.is_file():
            return torch.load(cache, weights_only=True)
        started = time.perf_counter()
        states = label_states(problem, size, cfg, seed, kind, capacity)
        atomic_write(cache, lambda handle: torch.save(states, handle))
    if log is not None:
        log(f"labelled {len(states['target'])} states in {time.perf_counter() - started:.0f} s")
    return states


def state_instances(problem: str, states: dict[str, Any],
                    device: str | torch.device = "cpu") -> Instances:
    """The labelled states' instances (with the depot slots they were labelled with), on
    ``device``."""
    batch = {k: v.numpy() for k, v in states["batch"].items()}
    slots, nodes = states["order"].shape[1], batch["locs"].shape[1]
    depots = slots - nodes + 1 if problem in ROUTED else None
    return make_instances(problem, batch, depots, device=device)


def state_env(data: Instances, states: dict[str, Any], rows: Tensor) -> Env:
    """An env holding the stored states ``rows`` (their tours, previous moves and, for N2S,
    removal signatures), on the device of ``data``."""
    device = data.coords.device
    kind = "pair" if "recent" in states else "pairwise"
    env = Env(data.index(states["instance"][rows].to(device)), states["order"][rows].to(device),
              kind=kind, window=data.slots - 1)
    env.last = states["last"][rows].to(device)
    if kind == "pair":
        recent = states["recent"][rows].long().to(device)  # [R, W]
        one_hot = F.one_hot(recent.clamp_min(0), data.requests).float()
        env.removals = one_hot * (recent >= 0)[..., None]
    return env


def trainable(states: dict[str, Any], cfg: ImitationConfig) -> Tensor:
    """Indices of the states the fit draws from (the improvable ones, or all, per
    ``train_states``)."""
    if cfg.train_states == "improvable":
        return states["improvable"].nonzero()[:, 0]
    return torch.arange(len(states["improvable"]))


# --------------------------------------------------------------------------------------------
# 2. the fit


def imitation_loss(logits: Tensor, states: dict[str, Any], rows: Tensor,
                   target: Target) -> Tensor:
    """Cross-entropy of the flattened move ``logits`` ``[R, M]`` towards the teacher's move
    (``move``) or towards any move as good as it (``ties``: ``-log P(tie set)``)."""
    device = logits.device
    if target == "ties":
        best = logits.masked_fill(~states["ties"][rows].to(device), float("-inf"))
        return (logits.logsumexp(1) - best.logsumexp(1)).mean()
    return F.cross_entropy(logits, states["target"][rows].to(device))


def make_optimizer(model: Policy, cfg: ImitationConfig) -> torch.optim.Adam:
    return torch.optim.Adam(model.parameters(), lr=cfg.lr)


def fit(model: Policy, optimizer: torch.optim.Optimizer, data: Instances,
        states: dict[str, Any], rows: Tensor, cfg: ImitationConfig, seed: int, start: int,
        stop: int) -> list[float]:
    """Updates ``start .. stop - 1`` on minibatches of the states ``rows`` (minibatch ``u``
    from a generator seeded by (``seed``, ``u``)); the losses."""
    model.train(True)
    losses = []
    for update in range(start, stop):
        pick = torch.randint(len(rows), (cfg.batch,),
                             generator=torch.Generator().manual_seed(data_seed(seed, update)))
        batch_rows = rows[pick]
        obs = state_env(data, states, batch_rows).observe()
        loss = imitation_loss(model.move_logits(obs).float().flatten(1), states, batch_rows,
                              cfg.target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    model.train(False)
    return losses


def train_imitation(model: Policy, problem: str, size: int, cfg: ImitationConfig, seed: int,
                    cache: Path | None = None,
                    log: Callable[[dict[str, Any]], None] | None = None,
                    device: str | torch.device = "cpu", log_every: int = 500,
                    capacity: float | None = None) -> None:
    """Label (or read from ``cache``) the seed's states and fit ``model`` in place on
    ``device``, where the model already is; ``log`` gets the mean loss of every ``log_every``
    updates."""
    states = labelled_states(problem, size, cfg, seed, cache, kind=model.kind, capacity=capacity)
    data = state_instances(problem, states, device)
    rows = trainable(states, cfg)
    optimizer = make_optimizer(model, cfg)
    started = time.perf_counter()
    for start in range(0, cfg.updates, log_every):
        losses = fit(model, optimizer, data, states, rows, cfg, seed, start,
                     min(start + log_every, cfg.updates))
        if log is not None:
            log({"update": start + len(losses), "loss": sum(losses) / len(losses),
                 "seconds": time.perf_counter() - started})
