"""Decoding a constructive policy: greedy, sampling, multi-start, 8-fold augmentation, best-of.

A batch is a dict of tensors like :mod:`routecli.generate` produces (``locs`` ``[B, N, 2]``;
CVRP adds ``demand`` ``[B, N+1]`` and ``capacity`` ``[B]``). Every instance is expanded into
``A x M`` rollouts (A = 8 symmetric copies with ``augment``, M starts or samples), all decoded
in one batched construction (in chunks sized so the rollouts' memories fit
:data:`MEMORY_BUDGET`), and the cheapest one is kept per instance. ``candidates`` = K limits
each step to the K nearest allowed nodes (:class:`routecli.envs.base.CandidateSets`), which is
what makes instances of 100k+ nodes decodable.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from routecli.envs import CVRPEnv, TSPEnv
from routecli.envs.base import CandidateSets, path_length
from routecli.miloop.model import MiLoop, rollout
from routecli.problems import CVRPInstance, Routes, Tour, TSPInstance
from routecli.problems.geometry import augment8

MEMORY_BUDGET = 2 << 30  # bytes of rollout state (MiLoop memory, visit flags) per chunk
DECODES = ("greedy", "sampling", "multistart")


def start_nodes(problem: str, num_nodes: int, starts: int) -> Tensor:
    """``[M]`` distinct, evenly spread starting nodes (TSP) or first customers (CVRP)."""
    pool = num_nodes if problem == "tsp" else num_nodes - 1  # CVRP: customers 1..N
    m = min(starts, pool)
    picks = torch.arange(m) * pool // m
    return picks if problem == "tsp" else picks + 1


@dataclass
class Decoded:
    """Best solution per instance."""

    actions: list[Tensor]  # per instance: TSP tour [N] / CVRP path from the depot [T]
    cost: Tensor  # [B] cost on the batch's own coordinates


def make_env(problem: str, batch: dict[str, Tensor], rows: Tensor, locs: Tensor,
             start: Tensor | None, candidates: CandidateSets | None = None) -> TSPEnv | CVRPEnv:
    """Environment for the instances ``rows`` ``[R]`` with coordinates ``locs`` ``[R, N, 2]``."""
    if problem == "tsp":
        first = start if start is not None else torch.zeros(len(rows), dtype=torch.long,
                                                            device=locs.device)
        return TSPEnv(locs, first, candidates)
    return CVRPEnv(locs, batch["demand"][rows], batch["capacity"][rows], candidates)


def candidate_sets(problem: str, batch: dict[str, Tensor], k: int) -> CandidateSets:
    """Candidate sets for the single instance of ``batch``."""
    if batch["locs"].shape[0] != 1:
        raise ValueError("candidate decoding takes one instance at a time")
    coords = batch["locs"][0].double().cpu().numpy()
    if problem == "tsp":
        return CandidateSets(coords, k)
    demand = (batch["demand"][0].double() / batch["capacity"][0].double()).cpu().numpy()
    return CandidateSets(coords, k, demand)


@torch.inference_mode()
def decode(model: MiLoop, batch: dict[str, Tensor], method: str = "greedy", starts: int = 100,
           augment: bool = False, samples: int = 16, chunk: int = 1024,
           generator: torch.Generator | None = None, candidates: int | None = None,
           progress: Callable[[float], None] | None = None,
           deadline: float | None = None) -> Decoded:
    """Decode every instance of ``batch`` and keep its best rollout.

    method: ``greedy`` (one rollout from node 0 / no forced first customer), ``multistart``
    (greedy from M = ``starts`` distinct first nodes, POMO style) or ``sampling`` (``samples``
    stochastic rollouts). ``augment`` multiplies the rollouts by the 8 symmetries.
    ``candidates``: K-nearest candidate sets of this size (one instance per call).
    ``progress(fraction)``, when given, reports the share of the work done (an estimate:
    CVRP rollouts take N plus the number of routes steps).
    ``deadline`` (a ``time.perf_counter()`` value): rollouts run in chunks of at most one
    symmetric image's starts, and no chunk starts after the deadline; the best finished
    rollout wins (at least one chunk always runs).
    """
    if method not in DECODES:
        raise ValueError(f"unknown decode {method!r}; choose from {', '.join(DECODES)}")
    problem = model.config.problem
    locs = batch["locs"].float()
    device = locs.device
    num, num_nodes = locs.shape[:2]
    views = augment8(locs) if augment else locs[None]  # [A, B, N, 2]
    first: torch.Tensor | None
    if method == "multistart":
        first = start_nodes(problem, num_nodes, starts)  # [M]
    elif method == "sampling":
        first = (torch.randint(0, num_nodes, (samples,), generator=generator)
                 if problem == "tsp" else None)
    else:
        first = torch.zeros(1, dtype=torch.long) if problem == "tsp" else None
    per = len(first) if first is not None else (samples if method == "sampling" else 1)
    # rollout r of instance b under view a sits at flat index (b * A + a) * per + r
    n_views = views.shape[0]
    total = num * n_views * per
    flat = torch.arange(total, device=device)
    inst = flat // (n_views * per)
    view = (flat // per) % n_views
    slot = flat % per
    costs = torch.empty(total, device=device)
    first = first.to(device) if first is not None else None
    generator = generator if device.type == "cpu" else None
    sets = candidate_sets(problem, batch, candidates) if candidates else None
    per_rollout = (num_nodes + 1) * model.config.dim * 4 + num_nodes  # memory rows + flags
    chunk = max(1, min(chunk, MEMORY_BUDGET // per_rollout))
    if deadline is not None:
        if num != 1:
            raise ValueError("a decoding deadline needs a batch of one instance")
        chunk = min(chunk, per)
    paths: list[Tensor] = []
    chunks = -(-total // chunk)
    costs.fill_(float("inf"))
    for lo in range(0, total, chunk):
        if deadline is not None and lo > 0 and time.perf_counter() >= deadline:
            break
        report = None if progress is None else (
            lambda t, done=lo // chunk: progress(min(1.0, (done + t / num_nodes) / chunks)))
        sel = slice(lo, min(lo + chunk, total))
        rows, chunk_locs = inst[sel], views[view[sel], inst[sel]]
        start = first[slot[sel]] if first is not None else None
        env = make_env(problem, batch, rows, chunk_locs,
                       start if problem == "tsp" else None, sets)
        result = rollout(model, env, "sample" if method == "sampling" else "greedy",
                         first_action=start if problem == "cvrp" else None,
                         generator=generator, progress=report)
        # cost on the original coordinates (the symmetries preserve it up to round-off)
        costs[sel] = path_length(locs[rows], result.actions)
        paths.extend(result.actions)
    best = costs.view(num, n_views * per).argmin(1)  # [B]; unfinished rollouts cost inf
    index = torch.arange(num, device=device) * n_views * per + best
    return Decoded([paths[i] for i in index.tolist()], costs[index])


def to_solution(instance: TSPInstance | CVRPInstance, actions: Tensor) -> Tour | Routes:
    """A decoded node sequence as the problem's solution type."""
    seq = actions.cpu().numpy()
    if isinstance(instance, TSPInstance):
        return Tour(seq)
    pieces = np.split(seq, np.flatnonzero(seq == 0))  # each piece starts at a depot visit
    return Routes([piece[piece != 0] for piece in pieces])
