"""The NDS policy's inputs, read straight from the search engine's state arrays.

The current solution becomes a :class:`routecli.pe.batch.RouteBatch` (for the positional
encodings) and per-node features ``[x, y, demand/Q, load(route)/Q, is_depot]`` (+ VRPTW
``ready, due, service, start, slack`` over the horizon; + PCVRP ``prize`` over the coordinate
span), so every feature is unit-free.

This is the CPU boundary of NDS: the search engine's state lives in NumPy arrays (its numba
kernels run on the CPU), and these functions turn it into tensors on ``device``, the
policy's, once per search iteration.
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
    POS,
    PRED,
    PRIZE,
    READY,
    ROUTE,
    SERVICE,
    SIZE,
    SUCC,
    SearchProblem,
    SearchState,
)


def solution_batch(problem: SearchProblem, state: SearchState, coords: np.ndarray,
                   device: str | torch.device = "cpu") -> RouteBatch:
    """The current solution on each of ``A`` coordinate copies ``coords`` ``[A, V, 2]`` (e.g.
    the 8 images of :func:`routecli.problems.geometry.augment8`) in node layout, ``[A, V]``
    slots, read straight from the state's arrays (predecessor, successor, route, position):
    one vectorised pass, no walk along the routes. Routes are numbered ``1..K`` in route-slot
    order and travel distances are Euclidean on ``coords[0]`` (the images are isometries)."""
    copies, v = coords.shape[:2]
    nodes = state.nodes
    served = np.flatnonzero(nodes[:, ROUTE] >= 0)
    served = served[served > 0]
    slot = nodes[served, ROUTE]
    used = state.routes[:, SIZE] > 0
    number = np.cumsum(used)  # route slot -> route number 1..K
    pos = nodes[served, POS] + 1
    order = np.lexsort((pos, slot))  # along each route, routes in slot order
    seq, seq_slot = served[order], slot[order]
    xy = coords[0]
    leg = np.linalg.norm(xy[seq] - xy[nodes[seq, PRED]], axis=-1)
    route_start = np.r_[True, seq_slot[1:] != seq_slot[:-1]] if len(seq) else np.zeros(0, bool)
    run = np.cumsum(leg)
    offset = np.maximum.accumulate(np.where(route_start, run - leg, 0.0)) if len(seq) else run
    cum = run - offset
    last = nodes[seq, SUCC] == 0
    back = np.linalg.norm(xy[seq] - xy[0], axis=-1)
    route_total = np.zeros(v)
    route_total[seq_slot[last]] = cum[last] + back[last]
    mask = np.zeros(v, bool)
    mask[0] = True
    mask[served] = True
    field = {name: np.zeros(v, np.int64) for name in ("route", "pos", "length")}
    field["route"][served] = number[slot]
    field["pos"][served] = pos
    field["length"][served] = state.routes[slot, SIZE] + 1
    prev = np.full(v, -1, np.int64)
    nxt = np.full(v, -1, np.int64)
    prev[served], nxt[served] = nodes[served, PRED], nodes[served, SUCC]
    cumulative, totals = np.zeros(v), np.zeros(v)
    cumulative[seq] = cum
    totals[seq] = route_total[seq_slot]
    rel = coords - coords[:, :1]  # [A, V, 2]
    theta = np.where(mask, np.arctan2(rel[..., 1], rel[..., 0]), 0.0)
    theta = np.where(theta >= math.pi, theta - 2 * math.pi, theta)  # [-pi, pi)

    def rows(values: np.ndarray, dtype: torch.dtype) -> torch.Tensor:  # [V] -> [A, V]
        return torch.as_tensor(values, dtype=dtype, device=device).expand(copies, v)

    return RouteBatch(
        coords=torch.as_tensor(coords * mask[:, None], dtype=torch.float32, device=device),
        node=rows(np.where(mask, np.arange(v), 0), torch.long), prev=rows(prev, torch.long),
        next=rows(nxt, torch.long), route=rows(field["route"], torch.long),
        pos=rows(field["pos"], torch.long), length=rows(field["length"], torch.long),
        cum=rows(cumulative, torch.float32), total=rows(totals, torch.float32),
        theta=torch.as_tensor(theta, dtype=torch.float32, device=device),
        demand=rows(problem.node_data[:, DEMAND] * mask, torch.float32),
        mask=rows(mask, torch.bool))


def node_features(problem: SearchProblem, state: SearchState, coords: np.ndarray,
                  device: str | torch.device = "cpu") -> torch.Tensor:
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
    return torch.as_tensor(feats, dtype=torch.float32, device=device)  # [A, V, F]


def _span(problem: SearchProblem) -> float:
    coords = problem.instance.metric.coords
    if coords is None:
        return 1.0
    return float((coords.max(axis=0) - coords.min(axis=0)).max()) or 1.0


def removable(problem: SearchProblem, state: SearchState, copies: int,
              device: str | torch.device = "cpu") -> torch.Tensor:
    """``[A, V]`` bool: customers the policy may remove (served, never the depot)."""
    ok = state.nodes[:, ROUTE] >= 0
    ok[0] = False
    return torch.as_tensor(ok, device=device).expand(copies, -1)


