"""The NDS policy's inputs, read straight from the search engine's state arrays.

The current solution becomes a :class:`routecli.pe.batch.RouteBatch` (for the positional
encodings) and per-node features ``[x, y, demand/Q, load(route)/Q, is_depot]`` (+ VRPTW
``ready, due, service, start, slack`` over the horizon; + PCVRP ``prize`` over the coordinate
span), so every feature is unit-free.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from routecli.pe.batch import RouteBatch
from routecli.search.state import (
    DEMAND,
    DUE,
    EARLY,
    LATE,
    LOAD,
    PRIZE,
    READY,
    ROUTE,
    SERVICE,
    SearchProblem,
    SearchState,
)


def solution_batch(problem: SearchProblem, state: SearchState,
                   coords: np.ndarray) -> RouteBatch:
    """The current solution on each of ``A`` coordinate copies ``coords`` ``[A, V, 2]`` (e.g.
    the 8 images of :func:`routecli.problems.geometry.augment8`) in node layout. ``[A, V]`` slots."""
    routes = list(state.to_routes().routes)
    if not routes:
        routes = [np.zeros(0, np.int64)]
    demands = problem.node_data[:, DEMAND]
    return RouteBatch.from_routes(list(coords), [routes] * len(coords), [demands] * len(coords))


def node_features(problem: SearchProblem, state: SearchState, coords: np.ndarray) -> torch.Tensor:
    """Per-node features on each coordinate copy. ``[A, V, 2]`` -> ``[A, V, F]`` float32."""
    data = problem.node_data
    v = problem.num_nodes
    route = state.nodes[:, ROUTE]
    served = route >= 0
    capacity = problem.capacity if math.isfinite(problem.capacity) else max(data[:, DEMAND].sum(), 1.0)
    load = np.where(served, state.rstat[np.maximum(route, 0), LOAD], 0.0) / capacity
    depot = np.zeros(v)
    depot[0] = 1.0
    columns = [data[:, DEMAND] / capacity, load, depot]
    if problem.timed:
        horizon = float(data[0, DUE]) if math.isfinite(data[0, DUE]) else 1.0
        start = np.where(served, state.times[:, EARLY], 0.0)
        slack = np.where(served, state.times[:, LATE] - state.times[:, EARLY], 0.0)
        due = np.minimum(data[:, DUE], horizon)
        columns += [data[:, READY] / horizon, due / horizon, data[:, SERVICE] / horizon,
                    start / horizon, slack / horizon]
    if problem.optional:
        coords_span = _span(problem)
        columns.append(data[:, PRIZE] / coords_span)
    shared = np.stack(columns, axis=-1)  # [V, F - 2]
    feats = np.concatenate([coords, np.broadcast_to(shared, (len(coords), *shared.shape))], -1)
    return torch.as_tensor(feats, dtype=torch.float32)  # [A, V, F]


def _span(problem: SearchProblem) -> float:
    coords = problem.instance.metric.coords
    if coords is None:
        return 1.0
    return float((coords.max(axis=0) - coords.min(axis=0)).max()) or 1.0


def removable(problem: SearchProblem, state: SearchState, copies: int) -> torch.Tensor:
    """``[A, V]`` bool: customers the policy may remove (served, never the depot)."""
    ok = state.nodes[:, ROUTE] >= 0
    ok[0] = False
    return torch.as_tensor(ok).expand(copies, -1)


