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

from dataclasses import dataclass

import numba as nb
import numpy as np

from routecli.baselines.knapsack import greedy_selection
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
from routecli.solvers import ProgressFn
from routecli.stop import Criterion

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


def _split_routes(path: np.ndarray) -> Routes:
    cuts = np.flatnonzero(path == 0)
    return Routes(chunk[chunk != 0] for chunk in np.split(path, cuts))


class NearestNeighbour:
    name = "nn"
    problems = ("tsp", "cvrp", "vrptw", "pcvrp", "pdtsp", "kp")

    def solve(self, instance: Instance, *, seed: int = 0, stop: Criterion | None = None,
              progress: ProgressFn | None = None) -> Solution:
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
