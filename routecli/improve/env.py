"""The improvement environment: a batch of instances, their current giant tours, what a policy
observes and what one move earns.

Slots (see :mod:`routecli.improve.moves`): CVRP and VRPTW use slots ``0..N`` for the depot
and the customers (the instance's own node ids) and ``N+1..V-1`` for further copies of the
depot (DACT's dummy depots, so at most that many routes: ``ceil(rate * N)`` for CVRP, ``N`` for
VRPTW, where windows can force a route per customer); PDTSP uses the ``2n + 1`` nodes as they
are.

The reward of a move is DACT's: the decrease of the best cost found so far,
``r_t = best_t - min(best_t, cost(s_{t+1}))``, on the unit-square coordinates.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace

import numpy as np
import torch
from torch import Tensor

from routecli.improve import moves
from routecli.nn.device import to_host
from routecli.pe.batch import RouteBatch
from routecli.problems import Routes, Tour

PROBLEMS = ("cvrp", "vrptw", "pdtsp")
ROUTED = ("cvrp", "vrptw")  # several routes, depot copies, capacity
FEATURES = {"cvrp": 4, "vrptw": 7, "pdtsp": 5}
DUMMY_RATE = {20: 0.5, 50: 0.4, 100: 0.2}  # DACT's dummy depots per customer by size
SIGNATURE_WINDOW = 3  # N2S action signature: the last 3 removals and the removal frequency


def depot_copies(customers: int) -> int:
    """Depot slots of a CVRP giant tour (at least 2): DACT's rate for the size, 0.5 below 20,
    0.2 above 100."""
    near = min(DUMMY_RATE, key=lambda n: abs(n - customers))
    return max(2, math.ceil(DUMMY_RATE[near] * customers))


def depot_slots(problem: str, batch: dict[str, np.ndarray]) -> int | None:
    """Depot slots of the improvement backbone's CVRP giant tour for ``batch``: the training
    size's (:func:`depot_copies`), or more where a tighter capacity
    needs them (the next-fit start tour of a random order uses fewer than
    ``2 * demand / capacity + 1`` routes). None (the default) for VRPTW, which has a slot
    per customer."""
    if problem != "cvrp":
        return None
    load = batch["demand"].sum(1) / batch["capacity"]  # [B] in vehicle loads
    return max(depot_copies(batch["locs"].shape[1] - 1), math.ceil(2 * float(load.max())) + 1)


def capacity_depot_slots(problem: str, batch: dict[str, np.ndarray],
                         capacity: float | None) -> int | None:
    """Depot slots of a run that sets the vehicles' ``capacity`` itself (``compare-pe
    --capacity``): :func:`depot_slots`, so that a tight capacity's start tours fit; None (the
    training size's rate) under the PE paper's capacity rule, the layout of every run made
    with it."""
    return None if capacity is None else depot_slots(problem, batch)


@dataclass(frozen=True)
class Instances:
    """``B`` instances of one problem in slot layout. ``coords`` ``[B, V, 2]`` (depot copies at
    the depot), ``demand`` ``[B, V]`` over the capacity (CVRP, VRPTW; zeros otherwise),
    ``is_depot`` ``[V]``, ``node`` ``[V]`` the instance node of each slot, ``requests`` (PDTSP
    ``n``), ``features`` ``[B, V, F]``: CVRP ``[x, y, d/Q, depot]``, VRPTW ``[x, y, d/Q, ready,
    due, service, depot]`` (times over the horizon), PDTSP ``[x, y, pickup, delivery, depot]``;
    ``windows`` ``[B, V, 3]`` (VRPTW: ready, due, service per slot)."""

    problem: str
    coords: Tensor
    demand: Tensor
    is_depot: Tensor
    node: Tensor
    requests: int
    features: Tensor
    windows: Tensor | None = None

    @property
    def size(self) -> int:
        return self.coords.shape[0]

    @property
    def slots(self) -> int:
        return self.coords.shape[1]

    def index(self, rows: Tensor | slice) -> Instances:
        return replace(self, coords=self.coords[rows], demand=self.demand[rows],
                       features=self.features[rows],
                       windows=None if self.windows is None else self.windows[rows])

    def with_coords(self, coords: Tensor) -> Instances:
        """The same instances on other coordinates (a symmetric image)."""
        return replace(self, coords=coords,
                       features=torch.cat([coords, self.features[..., 2:]], -1))


def make_instances(problem: str, batch: dict[str, np.ndarray], depots: int | None = None,
                   device: str | torch.device = "cpu") -> Instances:
    """Slot layout of a :mod:`routecli.generate` batch (unit-square coordinates), on ``device``."""

    def tensor(values: np.ndarray) -> Tensor:
        return torch.as_tensor(values, dtype=torch.float32, device=device)

    locs = tensor(batch["locs"])
    num, nodes, _ = locs.shape
    if problem in ROUTED:
        copies = depots or (depot_copies(nodes - 1) if problem == "cvrp" else nodes - 1)
        extra = copies - 1

        def with_copies(values: Tensor) -> Tensor:  # [B, N + 1, ...]: depot values repeated
            return torch.cat([values, values[:, :1].expand(num, extra, *values.shape[2:])], 1)

        coords = with_copies(locs)
        demand = with_copies(tensor(batch["demand"]) / tensor(batch["capacity"])[:, None])
        slot_ids = torch.arange(nodes + extra, device=device)
        is_depot = slot_ids == 0
        is_depot[nodes:] = True
        node = torch.where(is_depot, 0, slot_ids)
        columns = [coords, demand[..., None]]
        windows = None
        if problem == "vrptw":
            windows = with_copies(torch.stack([tensor(batch[k])
                                               for k in ("ready", "due", "service")], -1))
            columns.append(windows / windows[:, :1, moves.DUE, None])
        features = torch.cat([*columns, is_depot.float().expand(num, -1)[..., None]], -1)
        return Instances(problem, coords, demand, is_depot, node, 0, features, windows)
    if problem == "pdtsp":
        requests = (nodes - 1) // 2
        ids = torch.arange(nodes, device=device)
        pickup = ((ids >= 1) & (ids <= requests)).float()
        delivery = (ids > requests).float()
        roles = torch.stack([pickup, delivery, (ids == 0).float()], -1).expand(num, -1, -1)
        return Instances(problem, locs, locs.new_zeros(num, nodes), ids == 0, ids, requests,
                         torch.cat([locs, roles], -1))
    raise ValueError(f"the improvement backbone solves {', '.join(PROBLEMS)}, not {problem!r}")


# --------------------------------------------------------------------------------------------
# initial solutions


def initial_orders(data: Instances, generator: torch.Generator) -> Tensor:
    """Random feasible giant tours. CVRP and VRPTW: customers in random order, a new route
    whenever the next one would overflow or (VRPTW) miss its window or the depot's closing
    (next-fit), spare depot copies at the end; PDTSP: a random order in which every pickup
    precedes its delivery. ``[B, V]``, on the device of ``data`` (``generator`` is on it too)."""
    num, slots = data.size, data.slots
    device = data.coords.device
    if data.problem == "pdtsp":
        n = data.requests
        keys = torch.rand(num, n, 2, generator=generator, device=device).sort(-1).values
        # pickup first
        key = torch.cat([keys.new_full((num, 1), -1.0), keys[..., 0], keys[..., 1]], 1)
        return key.argsort(1)
    customers = torch.nonzero(~data.is_depot).squeeze(1)
    perm = customers[torch.rand(num, len(customers), generator=generator,
                                device=device).argsort(1)]  # [B, N]
    demand = data.demand.gather(1, perm)
    copies = int(data.is_depot.sum())
    # next-fit: route number of every customer in the random order
    route = torch.zeros_like(perm)
    load = data.coords.new_zeros(num)
    rows = torch.arange(num, device=device)
    last = torch.zeros(num, dtype=torch.long, device=device)  # previous stop (slot 0: the depot)
    leave = data.coords.new_zeros(num)  # VRPTW: when the vehicle leaves it

    def schedule(frm: Tensor, to: Tensor, at: Tensor) -> tuple[Tensor, Tensor]:
        """Service start at ``to`` coming from ``frm`` at ``at``, and whether it and the
        return to the depot are on time."""
        assert data.windows is not None
        w = data.windows[rows, to]
        start = torch.maximum(at + (data.coords[rows, to] - data.coords[rows, frm]).norm(dim=-1),
                              w[:, moves.READY])
        back = start + w[:, moves.SERVICE] + (data.coords[rows, to] - data.coords[:, 0]).norm(dim=-1)
        ok = (start <= w[:, moves.DUE] + moves.TIME_EPS) & \
            (back <= data.windows[:, 0, moves.DUE] + moves.TIME_EPS)
        return start, ok

    for k in range(perm.shape[1]):
        full = load + demand[:, k] > 1.0 + moves.CAPACITY_EPS
        if data.windows is not None:
            start, ok = schedule(last, perm[:, k], leave)
            full |= ~ok
            fresh, _ = schedule(torch.zeros_like(last), perm[:, k], data.windows[:, 0, moves.READY])
            start = torch.where(full, fresh, start)
            leave = start + data.windows[rows, perm[:, k], moves.SERVICE]
            last = perm[:, k]
        route[:, k] = route[:, k - 1] + full.long() if k else 0
        load = torch.where(full, demand[:, k], load + demand[:, k])
    if int(route.max()) + 1 > copies:
        raise ValueError(f"{int(route.max()) + 1} routes needed but only {copies} depot copies")
    # sort key: route r's depot copy at 2 r (slot 0 opens route 0), its customers after it
    depot_slots = torch.nonzero(data.is_depot).squeeze(1)  # [D], slot 0 first
    key = data.coords.new_empty(num, slots)
    key[:, depot_slots] = 2.0 * torch.arange(copies, dtype=torch.float32, device=device)
    key.scatter_(1, perm, 2.0 * route + 1.0 + torch.linspace(0, 0.5, perm.shape[1], device=device))
    return key.argsort(1)


# --------------------------------------------------------------------------------------------
# what the positional encodings read


def tour_batch(data: Instances, order: Tensor) -> RouteBatch:
    """The giant tours as a node-layout :class:`RouteBatch` (slot ``s`` of the batch is slot
    ``s`` of the tour; depot copies are node ``0``, with the depot's encoding). Routes are
    numbered ``1..K`` along the tour, empty routes skipped; ``pos``, ``length``, ``cum`` and
    ``total`` follow :mod:`routecli.pe.batch`."""
    num, slots = order.shape
    node = data.node.expand(num, slots)
    depot_seq = data.is_depot.expand(num, slots).gather(1, order)  # along the tour
    route_seq = depot_seq.long().cumsum(1) - 1  # [B, V]
    closed = torch.cat([order, order[:, :1]], 1)  # [B, V + 1]
    xy = data.coords.gather(1, closed[..., None].expand(-1, -1, 2))
    leg = (xy[:, 1:] - xy[:, :-1]).norm(dim=-1)  # leg k: from tour position k to k + 1
    run = torch.cat([leg.new_zeros(num, 1), leg.cumsum(1)], 1)  # [B, V + 1] distance to k
    routes = int(data.is_depot.sum())
    starts = torch.nonzero(depot_seq)[:, 1].view(num, routes)  # tour position of each route
    ends = torch.cat([starts[:, 1:], starts.new_full((num, 1), slots)], 1)
    start_of = starts.gather(1, route_seq)  # [B, V]
    k = torch.arange(slots, device=order.device).expand(num, slots)
    customer = ~depot_seq
    pos_seq = (k - start_of) * customer
    length_r = ends - starts  # arcs of every route (1 when empty)
    number_r = (length_r > 1).long().cumsum(1)  # non-empty routes numbered 1..K
    cum_seq = (run[:, :-1] - run.gather(1, start_of)) * customer
    total_seq = (run.gather(1, ends) - run.gather(1, starts)).gather(1, route_seq) * customer
    prev_seq = torch.where(customer, node.gather(1, closed[:, :-1].roll(1, 1)), -1)
    next_seq = torch.where(customer, node.gather(1, closed[:, 1:]), -1)
    rel = data.coords - data.coords[:, :1]
    theta = torch.atan2(rel[..., 1], rel[..., 0])
    theta = torch.where(theta >= math.pi, theta - 2 * math.pi, theta) * ~data.is_depot  # [-pi, pi)
    demand = data.demand if data.problem in ROUTED else torch.ones_like(data.demand)

    def slot(values: Tensor) -> Tensor:  # along the tour -> slot layout
        return torch.empty_like(values).scatter_(1, order, values)

    return RouteBatch(
        coords=data.coords, node=node, prev=slot(prev_seq), next=slot(next_seq),
        route=slot(number_r.gather(1, route_seq) * customer), pos=slot(pos_seq),
        length=slot(length_r.gather(1, route_seq) * customer), cum=slot(cum_seq),
        total=slot(total_seq), theta=theta, demand=demand,
        mask=torch.ones(num, slots, dtype=torch.bool, device=order.device))


# --------------------------------------------------------------------------------------------
# observation and transition


@dataclass(frozen=True)
class Observation:
    """What a policy sees at one step. ``allowed`` ``[B, 3, V, V]`` (pairwise moves, DACT);
    ``signature`` ``[B, n, 4]`` (N2S: removed in each of the last 3 steps, and how often in
    the window); ``last`` ``[B, 3]`` the previous action (``-1`` before the first)."""

    features: Tensor
    route: RouteBatch
    order: Tensor
    cost: Tensor
    best: Tensor
    last: Tensor
    requests: int
    allowed: Tensor | None = None
    signature: Tensor | None = None

    def index(self, rows: Tensor | slice) -> Observation:
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        for name, value in values.items():
            if isinstance(value, Tensor):
                values[name] = value[rows]
        values["route"] = self.route.index(rows)
        return Observation(**values)


KINDS = ("pairwise", "pair")


class Env:
    """A batch of instances with their current tours. ``kind``: ``pairwise`` (DACT actions
    ``(op, u, v)``) or ``pair`` (N2S actions ``(r, i, j)``, PDTSP only)."""

    def __init__(self, data: Instances, order: Tensor, kind: str = "pairwise",
                 operators: tuple[str, ...] = moves.OPERATORS, window: int = 0):
        if kind not in KINDS:
            raise ValueError(f"unknown action kind {kind!r}; expected one of {KINDS}")
        if kind == "pair" and data.problem != "pdtsp":
            raise ValueError("pair moves (N2S) are defined for PDTSP only")
        self.data, self.kind = data, kind
        device = order.device
        self.enabled = torch.tensor([name in operators for name in moves.OPERATORS], device=device)
        self.order = order
        self.cost = moves.tour_cost(order, data.coords)
        self.best, self.best_order = self.cost.clone(), order.clone()
        self.last = torch.full((data.size, 3), -1, dtype=torch.long, device=device)
        self.removals = data.coords.new_zeros(data.size, max(window, SIGNATURE_WINDOW),
                                              data.requests)

    def allowed(self) -> Tensor:
        """Pairwise mask ``[B, 3, V, V]``: feasible, operator enabled, not the previous action;
        a row left without any move may repeat its previous one (never empty)."""
        if self.data.windows is not None:
            mask = moves.vrptw_mask(self.order, self.data.demand, self.data.is_depot,
                                    self.data.coords, self.data.windows)
        elif self.data.problem == "cvrp":
            mask = moves.cvrp_mask(self.order, self.data.demand, self.data.is_depot)
        else:
            mask = moves.pdtsp_mask(self.order, self.data.requests)
        mask = mask & self.enabled[None, :, None, None]
        rows = torch.arange(self.data.size, device=mask.device)
        op, u, v = self.last.clamp_min(0).unbind(1)
        previous = mask[rows, op, u, v] & (self.last[:, 0] >= 0)
        mask[rows, op, u, v] &= ~previous
        mask[rows, op, u, v] |= previous & ~mask.flatten(1).any(1)
        if not mask.flatten(1).any(1).all():
            raise RuntimeError("a tour has no feasible move")
        return mask

    def observe(self) -> Observation:
        signature = None
        allowed = None
        if self.kind == "pair":
            recent = self.removals[:, -SIGNATURE_WINDOW:].transpose(1, 2)  # [B, n, 3]
            signature = torch.cat([recent, self.removals.mean(1)[..., None]], -1)
        else:
            allowed = self.allowed()
        return Observation(self.data.features, tour_batch(self.data, self.order), self.order,
                           self.cost, self.best, self.last, self.data.requests, allowed,
                           signature)

    def step(self, action: Tensor) -> Tensor:
        """Apply ``action`` ``[B, 3]``; returns the reward ``[B]``."""
        if self.kind == "pair":
            self.order = moves.pair_reinsert(self.order, action, self.data.requests)
            removed = torch.nn.functional.one_hot(action[:, 0], self.data.requests).float()
            self.removals = torch.cat([self.removals[:, 1:], removed[:, None]], 1)
        else:
            self.order = moves.apply_pairwise(self.order, action)
        self.last = action
        self.cost = moves.tour_cost(self.order, self.data.coords)
        improved = self.cost < self.best
        reward = torch.where(improved, self.best - self.cost, torch.zeros_like(self.cost))
        self.best = torch.where(improved, self.cost, self.best)
        self.best_order = torch.where(improved[:, None], self.order, self.best_order)
        return reward


# --------------------------------------------------------------------------------------------
# back to routecli solutions


def to_solution(data: Instances, order: Tensor) -> Routes | Tour:
    """One giant tour ``[V]`` as a :mod:`routecli.problems` solution (node ids)."""
    seq = to_host(order)
    if data.problem == "pdtsp":
        return Tour(seq)
    depot = to_host(data.is_depot)[seq]
    cuts = np.flatnonzero(depot)
    return Routes([seq[a + 1 : b] for a, b in zip(cuts, [*cuts[1:], len(seq)], strict=True)])
