"""Decoding a constructive policy: greedy, sampling, multi-start, 8-fold augmentation, best-of.

A batch is a dict of tensors like :mod:`routecli.generate` produces (``locs`` ``[B, N, 2]``;
CVRP adds ``demand`` ``[B, N+1]`` and ``capacity`` ``[B]``; a knapsack batch is ``weights``,
``values`` ``[B, N]`` and ``capacity``). Every instance is expanded into ``A x M`` rollouts
(A = 8 symmetric copies with ``augment``, routing only; M starts or samples), all decoded in
one batched construction (in chunks sized so the rollouts' memories fit
:data:`MEMORY_BUDGET`), and the cheapest one (for a knapsack: the most valuable) is kept per
instance. ``candidates`` = K limits
each step to the K nearest allowed nodes (:class:`routecli.envs.base.CandidateSets`), which is
what makes instances of 100k+ nodes decodable. Greedy TSP decoding with candidate sets from
:data:`FUSED_MIN_NODES` nodes on runs the compiled step of :mod:`routecli.miloop.fused_greedy`
instead of the torch one (``engine`` chooses explicitly).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from routecli.baselines.construction import complete_nearest
from routecli.baselines.knapsack import greedy_selection
from routecli.envs import CVRPEnv, KPEnv, PDTSPEnv, TSPEnv
from routecli.envs.base import CandidateSets, path_length
from routecli.miloop import fused_greedy
from routecli.miloop.model import MiLoop, rollout
from routecli.miloop.options import BF16_ON_CPU, DECODES, ENGINES, Decode, Engine
from routecli.nn.device import native_bf16, resolve_precision
from routecli.problems import CVRPInstance, KPInstance, PDTSPInstance, Routes, Selection, Tour, TSPInstance
from routecli.problems.geometry import augment8
from routecli.resources import PrecisionChoice
from routecli.stop import Watch, stop_requested

MEMORY_BUDGET = 2 << 30  # bytes of rollout state (MiLoop memory, visit flags) per chunk
FUSED_MIN_NODES = 2_000  # engine auto: greedy TSP decodes of this size and up run fused


def start_nodes(problem: str, num_nodes: int, starts: int,
                device: torch.device | str = "cpu") -> Tensor:
    """``[M]`` distinct, evenly spread starting nodes (TSP), first customers (CVRP) or first
    pickups (PDTSP: the only feasible first moves)."""
    pool = {"tsp": num_nodes, "cvrp": num_nodes - 1, "pdtsp": (num_nodes - 1) // 2}[problem]
    m = min(starts, pool)
    picks = torch.arange(m, device=device) * pool // m
    return picks if problem == "tsp" else picks + 1


def first_items(batch: dict[str, Tensor], starts: int) -> Tensor:
    """``[B, M]`` knapsack multi-start: the M densest items that fit the empty knapsack, M
    capped by the instance of the batch where the fewest fit."""
    weights, values = batch["weights"].float(), batch["values"].float()
    fits = weights <= batch["capacity"].float()[:, None]
    m = max(1, min(starts, int(fits.sum(1).min())))
    return (values / weights).masked_fill(~fits, -1.0).topk(m, dim=1).indices


class DeadlinePassed(Exception):
    """Raised inside a rollout that must stop: the deadline passed or a stop was requested."""


class DeadlinePace:
    """Chunk sizes that keep a decode within its deadline (a ``time.perf_counter()`` value),
    and the check that ends a chunk at the deadline or when a stop is requested
    (:func:`routecli.stop.request_stop`; ``watched``: the decode serves a solve that honours
    one).

    Under a deadline, the first chunk is one rollout, so a solution exists soon; each later
    chunk is at most four times the last one and no larger than the rollouts that fit the time
    left at the pace measured so far (a small chunk's pace per rollout is slower than a large
    one's, so the estimate errs on the safe side). A chunk still running at the deadline is
    abandoned after its current step; when it is the first, its first rollout is finished by
    nearest neighbour (:func:`finish_nearest`). So a decode overruns its deadline by at most one
    construction step and that completion (milliseconds at 10,000 nodes)."""

    def __init__(self, deadline: float | None, chunk: int, watched: bool = False):
        self.deadline = deadline
        self.chunk = chunk
        self.watched = watched
        self.last = 0  # rollouts in the last chunk
        self.seconds_per_rollout = 0.0
        self.started = time.perf_counter()

    def over(self) -> bool:
        """The deadline has passed or a stop was requested."""
        return (self.watched and stop_requested()) or (
            self.deadline is not None and time.perf_counter() >= self.deadline)

    def next_chunk(self, remaining: int) -> int:
        """Rollouts in the next chunk (0: stop)."""
        if self.last == 0:
            return 1 if self.deadline is not None else min(self.chunk, remaining)
        if self.over():
            return 0
        if self.deadline is None:
            return min(self.chunk, remaining)
        left = self.deadline - time.perf_counter()
        fits = int(left / self.seconds_per_rollout) if self.seconds_per_rollout > 0 else remaining
        return max(0, min(self.chunk, remaining, 4 * self.last, fits))

    def check(self) -> None:
        """Abandon the chunk running once the deadline has passed or a stop was requested."""
        if self.over():
            raise DeadlinePassed

    def finished(self, size: int) -> None:
        now = time.perf_counter()
        self.seconds_per_rollout = (now - self.started) / size
        self.started, self.last = now, size


@dataclass
class Decoded:
    """Best solution per instance, and how much of the decode ran."""

    actions: list[Tensor]  # per instance: TSP / PDTSP tour [N], CVRP path from the depot [T],
    # KP items in the order taken (N = no-op after the end)
    cost: Tensor  # [B] cost on the batch's own coordinates (KP: the negated value)
    finished: int = 0  # rollouts run to the end
    planned: int = 0  # rollouts the method plans
    completed: int = 0  # nodes (KP: items) of the best solution placed by nearest neighbour
    # (value/weight greedy) after a deadline cut its only rollout


def finish_nearest(problem: str, batch: dict[str, Tensor], prefix: Tensor) -> Tensor:
    """The one instance of ``batch`` solved from a rollout's first decisions ``prefix`` on:
    nearest neighbour on the coordinates
    (:func:`routecli.baselines.construction.complete_nearest`), the value/weight greedy for a
    knapsack. Same layout as a finished rollout's actions."""
    done = prefix.cpu().numpy()
    if problem == "kp":
        weights, values = (batch[k][0].double().cpu().numpy() for k in ("weights", "values"))
        items = greedy_selection(weights, values, float(batch["capacity"][0]),
                                 done[done < len(weights)])
        return torch.as_tensor(items, device=prefix.device)
    xy = batch["locs"][0].double().cpu().numpy()
    demand = None
    if problem == "cvrp":
        demand = (batch["demand"][0].double() / batch["capacity"][0].double()).cpu().numpy()
    path = complete_nearest(xy, done, demand, (len(xy) - 1) // 2 if problem == "pdtsp" else 0,
                            depot=problem != "tsp")
    return torch.as_tensor(path, device=prefix.device)


def make_env(problem: str, batch: dict[str, Tensor], rows: Tensor, locs: Tensor | None,
             start: Tensor | None, candidates: CandidateSets | None = None
             ) -> TSPEnv | CVRPEnv | PDTSPEnv | KPEnv:
    """Environment for the instances ``rows`` ``[R]`` with coordinates ``locs`` ``[R, N, 2]``
    (``None`` for a knapsack)."""
    if problem == "kp":
        return KPEnv(batch["weights"][rows], batch["values"][rows], batch["capacity"][rows])
    assert locs is not None
    if problem == "tsp":
        first = start if start is not None else torch.zeros(len(rows), dtype=torch.long,
                                                            device=locs.device)
        return TSPEnv(locs, first, candidates)
    if problem == "pdtsp":
        return PDTSPEnv(locs, candidates)
    return CVRPEnv(locs, batch["demand"][rows], batch["capacity"][rows], candidates)


def candidate_sets(problem: str, batch: dict[str, Tensor], k: int) -> CandidateSets:
    """Candidate sets for the single instance of ``batch``."""
    if batch["locs"].shape[0] != 1:
        raise ValueError("candidate decoding takes one instance at a time")
    coords = batch["locs"][0].double().cpu().numpy()
    if problem in ("tsp", "pdtsp"):
        return CandidateSets(coords, k)
    demand = (batch["demand"][0].double() / batch["capacity"][0].double()).cpu().numpy()
    return CandidateSets(coords, k, demand)


@torch.inference_mode()
def decode(model: MiLoop, batch: dict[str, Tensor], method: Decode = "greedy", starts: int = 100,
           augment: bool = False, samples: int = 16, chunk: int = 1024,
           generator: torch.Generator | None = None, candidates: int | None = None,
           progress: Callable[[float], None] | None = None,
           watch: Watch | None = None, precision: PrecisionChoice = "fp32",
           engine: Engine = "auto") -> Decoded:
    """Decode every instance of ``batch`` and keep its best rollout.

    method: ``greedy`` (one rollout from node 0 / no forced first customer, pickup or item),
    ``multistart`` (greedy from M = ``starts`` distinct first nodes, customers, pickups or
    items, POMO style) or ``sampling`` (``samples`` stochastic rollouts). ``augment``
    multiplies the rollouts by the 8 symmetries (routing problems).
    ``candidates``: K-nearest candidate sets of this size (one instance per call).
    ``progress(fraction)``, when given, reports the share of the work done (an estimate:
    CVRP rollouts take N plus the number of routes steps).
    ``watch``: a running :class:`routecli.stop.Watch` whose time limit, or a stop request,
    ends decoding, paced by :class:`DeadlinePace`; the best finished rollout wins (a first
    rollout that does not finish is completed by nearest neighbour).
    ``precision``: ``fp32``, ``bf16`` or ``auto`` (``bf16`` where the device multiplies
    bfloat16 natively, :func:`routecli.nn.device.resolve_precision`). The torch step under
    ``bf16`` runs in a bfloat16 autocast with the memory in bfloat16
    (:func:`routecli.miloop.model.rollout`); the fused engine multiplies in bfloat16 with float32
    accumulation, computes the rest in float32, and keeps float32 products on a CPU without
    native bfloat16 (emulated ones are slower). ``fp32`` is the default because greedy tours
    with bfloat16 products part from float32's at near-ties: on 1,000+ nodes almost every tour
    differs, by up to a few percent in length either way
    (``benchmarks/results/miloop_fused_step_quality.md``). Costs are computed from the
    coordinates either way.
    ``engine``: ``torch`` (the model's step), ``fused`` (:mod:`routecli.miloop.fused_greedy`:
    greedy TSP with candidate sets, one instance, on the CPU) or ``auto`` (fused where it
    applies and the instance has at least :data:`FUSED_MIN_NODES` nodes).
    """
    if method not in DECODES:
        raise ValueError(f"unknown decode {method!r}; choose from {', '.join(DECODES)}")
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    fusable = (method == "greedy" and not augment and candidates is not None
               and fused_greedy.supports(model) and batch.get("locs") is not None
               and batch["locs"].shape[0] == 1 and batch["locs"].device.type == "cpu")
    if engine == "fused" and not fusable:
        raise ValueError("the fused engine decodes greedy TSP with candidate sets, one instance, "
                         "on the CPU")
    if engine == "fused" or (engine == "auto" and fusable
                             and batch["locs"].shape[1] >= FUSED_MIN_NODES):
        assert candidates is not None
        bf16 = resolve_precision(precision, "cpu", BF16_ON_CPU) == "bf16" and native_bf16()
        pace = DeadlinePace(None if watch is None else watch.deadline(), 1, watch is not None)
        return fused_decode(model, batch["locs"], candidates, progress, bf16, pace.over)
    problem = model.config.problem
    if problem == "kp" and augment:
        raise ValueError("a knapsack has no symmetric images to augment")
    locs = batch["locs"].float() if problem != "kp" else None
    size = batch["weights"] if locs is None else locs  # [B, N, ...]
    device = size.device
    resolved = resolve_precision(precision, device, BF16_ON_CPU)
    num, num_nodes = size.shape[:2]
    views = None if locs is None else augment8(locs) if augment else locs[None]  # [A, B, N, 2]
    first: Tensor | None  # [B, M] forced first decisions
    if method == "multistart":
        first = (first_items(batch, starts) if problem == "kp" else
                 start_nodes(problem, num_nodes, starts, device).expand(num, -1))
    elif method == "sampling":
        first = (torch.randint(0, num_nodes, (samples,), generator=generator,
                               device=generator.device if generator else device).expand(num, -1)
                 if problem == "tsp" else None)
    else:
        first = torch.zeros(num, 1, dtype=torch.long, device=device) if problem == "tsp" else None
    per = first.shape[1] if first is not None else (samples if method == "sampling" else 1)
    # rollout r of instance b under view a sits at flat index (b * A + a) * per + r
    n_views = 1 if views is None else views.shape[0]
    total = num * n_views * per
    flat = torch.arange(total, device=device)
    inst = flat // (n_views * per)
    view = (flat // per) % n_views
    slot = flat % per
    costs = torch.empty(total, device=device)
    first = first.to(device) if first is not None else None
    generator = generator if device.type == "cpu" else None
    sets = candidate_sets(problem, batch, candidates) if candidates else None
    rows_seen = num_nodes + 2 if candidates is None else candidates + 2  # R of each step
    # memory rows + flags + the step's R x R pairwise tensors (bias, AAFM weights, ...)
    per_rollout = (num_nodes + 1) * model.config.dim * 4 + num_nodes + 8 * 4 * rows_seen ** 2
    chunk = max(1, min(chunk, MEMORY_BUDGET // per_rollout))
    if watch is not None and num != 1:
        raise ValueError("a decode under a stopping watch needs a batch of one instance")
    paths: list[Tensor] = []
    costs.fill_(float("inf"))
    pace = DeadlinePace(None if watch is None else watch.deadline(), chunk, watch is not None)
    lo = completed = 0
    while lo < total and (count := pace.next_chunk(total - lo)) > 0:

        def report(t: int, done: int = lo, count: int = count) -> None:
            if progress is not None:
                progress(min(1.0, (done + count * t / num_nodes) / total))

        sel = slice(lo, lo + count)
        rows = inst[sel]
        chunk_locs = None if views is None else views[view[sel], rows]
        start = first[rows, slot[sel]] if first is not None else None
        env = make_env(problem, batch, rows, chunk_locs,
                       start if problem == "tsp" else None, sets)
        try:
            result = rollout(model, env, "sample" if method == "sampling" else "greedy",
                             first_action=start if problem != "tsp" else None,
                             generator=generator, progress=report, precision=resolved,
                             check=pace.check if pace.deadline is not None or pace.watched
                             else None)
        except DeadlinePassed:
            if lo == 0:  # no rollout finished: complete the chunk's first
                prefix = env.paths()[0]
                path = finish_nearest(problem, batch, prefix)
                completed = (len(path) - int((prefix < num_nodes).sum()) if problem == "kp"
                             else int((path != 0).sum() - (prefix != 0).sum())
                             if problem == "cvrp" else len(path) - len(prefix))
                costs[0] = (-batch["values"][0][path].sum() if locs is None else
                            path_length(locs[:1], path[None])[0])
                paths.append(path)
            break
        # cost on the original coordinates (the symmetries preserve it up to round-off)
        costs[sel] = result.cost if locs is None else path_length(locs[rows], result.actions)
        paths.extend(result.actions)
        pace.finished(count)
        lo += count
    best = costs.view(num, n_views * per).argmin(1)  # [B]; unfinished rollouts cost inf
    index = torch.arange(num, device=device) * n_views * per + best
    return Decoded([paths[i] for i in index.tolist()], costs[index], lo, total,
                   completed if lo == 0 else 0)


def fused_decode(model: MiLoop, locs: Tensor, candidates: int,
                 progress: Callable[[float], None] | None = None, bf16: bool = False,
                 over: Callable[[], bool] | None = None) -> Decoded:
    """Greedy decoding of the one TSP instance ``locs`` ``[1, N, 2]`` from node 0 by
    :func:`routecli.miloop.fused_greedy.greedy_tour` (``bf16``: its matrix products); once
    ``over()``, nearest neighbour places the nodes left."""
    num_nodes = locs.shape[1]
    report = None if progress is None else (lambda placed: progress(placed / num_nodes))
    tour = torch.from_numpy(fused_greedy.greedy_tour(model, locs[0].float().numpy(), candidates,
                                                     progress=report, bf16=bf16, stop=over))
    placed = len(tour)
    if placed < num_nodes:
        tour = finish_nearest("tsp", {"locs": locs}, tour)
    return Decoded([tour], path_length(locs.float(), tour[None]), int(placed == num_nodes), 1,
                   num_nodes - placed)


def to_solution(instance: TSPInstance | CVRPInstance | PDTSPInstance | KPInstance,
                actions: Tensor) -> Tour | Routes | Selection:
    """A decoded node sequence as the problem's solution type."""
    seq = actions.cpu().numpy()
    if isinstance(instance, KPInstance):
        return Selection(seq[seq < instance.size])
    if isinstance(instance, TSPInstance | PDTSPInstance):
        return Tour(seq)
    pieces = np.split(seq, np.flatnonzero(seq == 0))  # each piece starts at a depot visit
    return Routes([piece[piece != 0] for piece in pieces])
