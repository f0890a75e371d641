"""Nearest-neighbour construction, a sanity baseline for every routing problem.

From the depot (node 0; TSP starts at node 0 too) the vehicle always moves to the nearest
unvisited node it may feasibly serve next; when none fits (capacity, time window) it returns
to the depot and starts a new route. PDTSP lets a delivery be chosen only after its pickup.
PCVRP serves every customer (all prizes collected), which is always feasible. On a knapsack,
the same sanity role is played by the value/weight greedy of :mod:`routecli.baselines.knapsack`.
Distances are Euclidean on the coordinates (or the explicit matrix); costs are then
recomputed by the instance under its own rule.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numba as nb
import numpy as np

from routecli.baselines.knapsack import greedy_selection
from routecli.kernels.candidates import NodeGrid, grid_nearest
from routecli.problems import (
    CVRPInstance,
    Instance,
    KPInstance,
    PCVRPInstance,
    PDTSPInstance,
    Routes,
    Selection,
    Solution,
    Tour,
    TSPInstance,
    VRPTWInstance,
)
from routecli.solvers import Effort, ProgressFn
from routecli.stop import Criterion, time_limit_only

_INF = np.inf


@nb.njit(cache=True, inline="always")
def _dist(xy: np.ndarray, mat: np.ndarray, a: int, b: int) -> float:
    if mat.shape[0] > 0:
        return mat[a, b]
    dx = xy[a, 0] - xy[b, 0]
    dy = xy[a, 1] - xy[b, 1]
    return np.sqrt(dx * dx + dy * dy)


@nb.njit(cache=True)
def nearest_neighbour_paths(
    xy: np.ndarray, mat: np.ndarray, demand: np.ndarray, capacity: float, ready: np.ndarray,
    due: np.ndarray, service: np.ndarray, partner: np.ndarray, use_depot: bool,
) -> np.ndarray:
    """Visit order with depot returns encoded as 0; ``[<= 2N]``.

    ``partner[i] > 0`` marks delivery ``i`` whose pickup is ``partner[i]``. ``due`` of size 0
    disables time windows. ``use_depot=False`` builds one closed tour from node 0.
    """
    n = demand.shape[0]
    visited = np.zeros(n, dtype=np.bool_)
    visited[0] = True
    out = np.empty(2 * n, dtype=np.int64)
    length = 0
    cur = 0
    load = 0.0
    t = 0.0
    timed = due.shape[0] > 0
    remaining = n - 1
    while remaining > 0:
        best = -1
        best_d = _INF
        for j in range(1, n):
            if visited[j] or (partner[j] > 0 and not visited[partner[j]]):
                continue
            if use_depot and load + demand[j] > capacity:
                continue
            d = _dist(xy, mat, cur, j)
            if timed:
                start = max(t + d, ready[j])
                if start > due[j] or start + service[j] + _dist(xy, mat, j, 0) > due[0]:
                    continue
            if d < best_d:
                best_d = d
                best = j
        if best < 0:
            if cur == 0:  # nothing fits even from the depot: infeasible instance
                break
            out[length] = 0
            length += 1
            cur = 0
            load = 0.0
            t = ready[0] if timed else 0.0
            continue
        if timed:
            t = max(t + best_d, ready[best]) + service[best]
        out[length] = best
        length += 1
        visited[best] = True
        load += demand[best]
        cur = best
        remaining -= 1
    return out[:length]


@nb.njit(cache=True)
def _nearest_completion(xy, cur, visited, release, demand, room, depot_returns, grid_start,
                        grid_nodes, cell, x0, y0, nx, ny):  # noqa: ANN001, ANN202 - numba
    """The nodes not ``visited`` in nearest-neighbour order from ``cur`` (depot returns as 0
    where ``depot_returns``, when no demand fits the ``room`` left); a node ``j`` with
    ``release[j] >= 0`` makes ``release[j]`` visitable once visited (PDTSP pairs)."""
    n = xy.shape[0]
    blocked = visited.copy()
    for j in range(n):
        if release[j] >= 0 and not visited[j]:
            blocked[release[j]] = True  # a delivery waits for its pickup
    remaining = n - visited.sum()
    out = np.empty(2 * n, np.int64)
    length = 0
    dist = np.empty(1, np.float64)
    idx = np.empty(1, np.int64)
    while remaining > 0:
        found = grid_nearest(xy, cur, blocked, demand, room + 1e-9, -1, 1, grid_start,
                             grid_nodes, cell, x0, y0, nx, ny, dist, idx)
        if found == 0:
            if not depot_returns or cur == 0:
                break  # nothing can follow: an infeasible instance
            out[length] = 0
            length += 1
            cur = 0
            room = 1.0
            continue
        j = idx[0]
        out[length] = j
        length += 1
        blocked[j] = True
        room -= demand[j]
        cur = j
        remaining -= 1
        if release[j] >= 0:
            blocked[release[j]] = False
    return out[:length]


def complete_nearest(xy: np.ndarray, prefix: np.ndarray, demand: np.ndarray | None = None,
                     requests: int = 0, depot: bool = False) -> np.ndarray:
    """``prefix`` continued by nearest neighbour until every node is visited: a TSP tour, or
    with ``depot`` a path from the depot (node 0): CVRP with ``demand`` ``[N]`` in shares of
    the capacity (a return to the depot, 0, when no customer fits), PDTSP with ``requests``
    pickups ``1..r`` whose deliveries ``r+1..2r`` come after them. Euclidean on ``xy``
    ``[N, 2]``; each next node is found on a grid, so the completion takes far less than the
    O(N^2) of :class:`NearestNeighbour` (what finishes a MiLoop rollout a time limit cut)."""
    xy = np.ascontiguousarray(xy, np.float64)
    n = len(xy)
    prefix = np.asarray(prefix, np.int64)
    visited = np.zeros(n, np.bool_)
    visited[prefix] = True
    visited[0] |= depot
    share = np.zeros(n) if demand is None else np.asarray(demand, np.float64)
    since_depot = prefix[np.flatnonzero(prefix == 0)[-1] + 1:] if depot else prefix[:0]
    release = np.full(n, -1, np.int64)
    release[1:requests + 1] = np.arange(requests + 1, 2 * requests + 1)
    grid = NodeGrid(xy)
    tail = _nearest_completion(xy, int(prefix[-1]), visited, release, share,
                               1.0 - float(share[since_depot].sum()), depot, grid.start,
                               grid.nodes, grid.cell, grid.x0, grid.y0, grid.nx, grid.ny)
    return np.concatenate([prefix, tail])


def _split_routes(path: np.ndarray) -> Routes:
    cuts = np.flatnonzero(path == 0)
    return Routes(chunk[chunk != 0] for chunk in np.split(path, cuts))


class NearestNeighbour:
    """A construction: it always finishes, so a time limit has nothing to bound (it takes
    O(N^2) steps: about a second at 30,000 nodes)."""

    name = "nn"
    problems = ("tsp", "cvrp", "vrptw", "pcvrp", "pdtsp", "kp")

    def __init__(self) -> None:
        self.effort: Effort | None = None

    def solve(self, instance: Instance, *, seed: int = 0, stop: Criterion | None = None,
              progress: ProgressFn | None = None) -> Solution:
        limits = time_limit_only(stop, "nn is a construction: it")
        started = time.perf_counter()
        solution = self._construct(instance)
        # said, so that a time limit given is not taken for one that bought a better solution
        note = (None if limits.seconds is None else
                "a construction runs to its end: --time-limit does not change it")
        self.effort = Effort("constructions", 1, 1, time.perf_counter() - started, note=note)
        return solution

    def _construct(self, instance: Instance) -> Solution:
        if isinstance(instance, KPInstance):
            return Selection(greedy_selection(instance.weights, instance.values, instance.capacity))
        metric = instance.metric
        n = metric.size
        empty = np.zeros(0)
        xy = np.zeros((0, 2)) if metric.coords is None else np.asarray(metric.coords, np.float64)
        mat = np.asarray(metric.matrix, np.float64) if metric.coords is None else np.zeros((0, 0))
        demand = np.zeros(n)
        capacity = _INF
        ready = due = service = empty
        partner = np.zeros(n, dtype=np.int64)
        if isinstance(instance, CVRPInstance | VRPTWInstance | PCVRPInstance):
            demand = np.asarray(instance.demands, np.float64)
            capacity = float(instance.capacity)
        if isinstance(instance, VRPTWInstance):
            ready, due, service = (np.asarray(a, np.float64)
                                   for a in (instance.ready, instance.due, instance.service))
        if isinstance(instance, PDTSPInstance):
            r = instance.num_requests
            partner[r + 1:] = np.arange(1, r + 1)
        tour_like = isinstance(instance, TSPInstance | PDTSPInstance)
        path = nearest_neighbour_paths(xy, mat, demand, capacity, ready, due, service, partner,
                                       not tour_like)
        if tour_like:
            return Tour(np.concatenate([[0], path]))
        return _split_routes(path)


@dataclass(frozen=True)
class Settings:
    """Nearest neighbour has no settings: it is deterministic and runs to completion."""


def make(settings: Settings) -> NearestNeighbour:
    return NearestNeighbour()
