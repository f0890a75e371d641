"""Batched, padded multi-route solutions: the one input every positional encoding reads.

A :class:`RouteBatch` holds ``B`` solutions as ``S`` *slots* per row. Two layouts:

- **node layout** (:meth:`RouteBatch.from_routes`, :meth:`RouteBatch.from_solutions`): slot
  ``s`` is node ``s`` of the instance (depot ``0`` first), so a PE's ``[B, S, D]`` output lines
  up with the node features an encoder already has. The depot sits at position ``0``.
- **walk layout** (:meth:`RouteBatch.from_walk`): one closed route per row, slot ``i`` is the
  ``i``-th visit ``v_0 .. v_L`` of the walk, the depot both first and last (``v_0 = v_L``). This
  is the layout in which circularity (``PE(v_0) = PE(v_L)``) can be observed directly.

Conventions (PE paper Appendix D): a route with ``m`` customers has length ``L = m + 1`` (its
number of arcs); position ``i`` runs over ``0..L`` with the depot at ``0`` (and ``L``);
``d_i`` is the travel distance from the depot to position ``i`` along the route and ``d_L`` the
route's total length; ``theta`` is the depot-relative polar angle
``atan2(y - y_0, x - x_0) in [-pi, pi)`` (``0`` for the depot itself).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields

import numpy as np
import torch

from routecli.problems import Routes, Tour


@dataclass(frozen=True)
class RouteBatch:
    """``B`` solutions as ``S`` padded slots (see module docstring). All fields ``[B, S]`` unless
    noted; padding slots have ``mask == False`` and zeros elsewhere.

    - ``coords`` ``[B, S, 2]`` float: coordinates of the slot's node.
    - ``node`` long: node id of the slot (the depot is ``0``); ``node < S``.
    - ``prev`` / ``next`` long: node id of the route predecessor / successor (``-1`` when the
      slot has none, e.g. the depot in the node layout, which starts every route).
    - ``route`` long: route number ``1..K`` (``0`` for the depot in the node layout).
    - ``pos`` long: position ``i`` in the route (``0`` for the depot).
    - ``length`` long: ``L`` of the slot's route (``0`` for the node-layout depot).
    - ``cum`` float: cumulative distance ``d_i``; ``total`` float: route length ``d_L``.
    - ``theta`` float: depot-relative polar angle.
    - ``demand`` float: demand of the node (``1`` when the problem has none).
    - ``mask`` bool: the slot is on the solution (the depot and every routed customer).
    """

    coords: torch.Tensor
    node: torch.Tensor
    prev: torch.Tensor
    next: torch.Tensor
    route: torch.Tensor
    pos: torch.Tensor
    length: torch.Tensor
    cum: torch.Tensor
    total: torch.Tensor
    theta: torch.Tensor
    demand: torch.Tensor
    mask: torch.Tensor

    @property
    def batch_size(self) -> int:
        return self.node.shape[0]

    @property
    def num_slots(self) -> int:
        return self.node.shape[1]

    @property
    def is_depot(self) -> torch.Tensor:
        """``[B, S]`` bool: slots holding the depot."""
        return self.mask & (self.node == 0)

    @property
    def is_customer(self) -> torch.Tensor:
        """``[B, S]`` bool: slots holding a routed customer."""
        return self.mask & (self.node != 0)

    @property
    def num_routes(self) -> torch.Tensor:
        """``[B]`` number of routes of each solution."""
        return self.route.amax(dim=1)

    def to(self, device: torch.device | str) -> RouteBatch:
        return RouteBatch(**{f.name: getattr(self, f.name).to(device) for f in fields(self)})

    def index(self, rows: torch.Tensor | slice) -> RouteBatch:
        """A sub-batch of the given rows."""
        return RouteBatch(**{f.name: getattr(self, f.name)[rows] for f in fields(self)})

    # ----------------------------------------------------------------------------------------
    # constructors

    @classmethod
    def from_routes(cls, coords: Sequence[np.ndarray], routes: Sequence[Sequence[np.ndarray]],
                    demands: Sequence[np.ndarray] | None = None) -> RouteBatch:
        """Node layout from per-instance coordinates ``[n_b + 1, 2]`` (depot first) and routes
        (customer index arrays, depot omitted). Vectorised over all routes of all instances."""
        num = len(coords)
        if len(routes) != num:
            raise ValueError(f"{len(coords)} coordinate arrays but {len(routes)} route lists")
        slots = max(len(c) for c in coords)
        xy = np.zeros((num, slots, 2))
        present = np.zeros((num, slots), bool)
        dem = np.ones((num, slots))
        for b, c in enumerate(coords):
            xy[b, : len(c)] = c
            present[b, : len(c)] = True
            if demands is not None:
                dem[b, : len(c)] = demands[b]
        flat = [np.asarray(r, np.int64) for rs in routes for r in rs if len(r)]
        per_instance = np.array([sum(1 for r in rs if len(r)) for rs in routes], np.int64)
        sizes = np.array([len(r) for r in flat], np.int64)
        if (sizes == 0).all():
            raise ValueError("every solution is empty")
        nodes = np.concatenate(flat)
        inst_of_route = np.repeat(np.arange(num), per_instance)
        first_route = np.cumsum(per_instance) - per_instance
        route_no = np.arange(len(flat)) - np.repeat(first_route, per_instance) + 1
        inst = np.repeat(inst_of_route, sizes)
        route = np.repeat(route_no, sizes)
        start = np.cumsum(sizes) - sizes
        pos = np.arange(len(nodes)) - np.repeat(start, sizes) + 1
        if (nodes < 1).any() or (nodes >= present.sum(1)[inst]).any():
            raise ValueError("a route visits a node that is not a customer of its instance")
        prev_node = np.where(pos == 1, 0, np.roll(nodes, 1))
        last = pos == np.repeat(sizes, sizes)
        next_node = np.where(last, 0, np.roll(nodes, -1))
        here = xy[inst, nodes]
        leg = np.linalg.norm(here - xy[inst, prev_node], axis=-1)
        back = np.linalg.norm(here - xy[inst, 0], axis=-1)
        cum_all = np.cumsum(leg)
        cum = cum_all - np.repeat(cum_all[start] - leg[start], sizes)
        total = np.repeat(cum[last] + back[last], sizes)
        out = {k: np.zeros((num, slots), np.int64) for k in ("route", "pos", "length")}
        out["prev"] = np.full((num, slots), -1, np.int64)
        out["next"] = np.full((num, slots), -1, np.int64)
        cumulative = np.zeros((num, slots))
        totals = np.zeros((num, slots))
        for key, value in (("route", route), ("pos", pos), ("length", np.repeat(sizes + 1, sizes)),
                           ("prev", prev_node), ("next", next_node)):
            out[key][inst, nodes] = value
        cumulative[inst, nodes] = cum
        totals[inst, nodes] = total
        mask = np.zeros((num, slots), bool)
        mask[inst, nodes] = True
        mask[:, 0] = True
        rel = xy - xy[:, :1]
        theta = np.where(mask, np.arctan2(rel[..., 1], rel[..., 0]), 0.0)
        theta = np.where(theta >= math.pi, theta - 2 * math.pi, theta)  # [-pi, pi)
        node = np.where(mask, np.arange(slots)[None], 0)
        t = torch.as_tensor
        return cls(
            coords=t(xy * mask[..., None], dtype=torch.float32), node=t(node),
            prev=t(out["prev"]), next=t(out["next"]), route=t(out["route"]), pos=t(out["pos"]),
            length=t(out["length"]), cum=t(cumulative, dtype=torch.float32),
            total=t(totals, dtype=torch.float32), theta=t(theta, dtype=torch.float32),
            demand=t(dem * mask, dtype=torch.float32), mask=t(mask),
        )

    @classmethod
    def from_solutions(cls, instances: Sequence, solutions: Sequence[Routes | Tour]) -> RouteBatch:
        """Node layout from ``routecli.problems`` instances (with coordinates) and solutions.

        A :class:`~routecli.problems.Tour` (TSP, PDTSP) becomes one route through node ``0``.
        """
        coords, routes, demands = [], [], []
        for inst, sol in zip(instances, solutions, strict=True):
            if inst.coords is None:
                raise ValueError(f"{inst.name}: positional encodings need node coordinates")
            coords.append(np.asarray(inst.coords, np.float64))
            demands.append(np.asarray(getattr(inst, "demands", np.ones(len(inst.coords)))))
            if isinstance(sol, Tour):
                order = np.roll(sol.order, -int(np.flatnonzero(sol.order == 0)[0]))
                routes.append([order[1:]])
            else:
                routes.append(list(sol.routes))
        return cls.from_routes(coords, routes, demands)

    @classmethod
    def from_walk(cls, walk: torch.Tensor, mask: torch.Tensor | None = None) -> RouteBatch:
        """Walk layout from coordinates of closed walks ``[B, L + 1, 2]`` (``walk[:, 0]`` is the
        depot and equals the last valid point). ``mask`` ``[B, L + 1]`` marks valid visits
        (a prefix of each row); rows may have different ``L``."""
        walk = torch.as_tensor(walk, dtype=torch.float32)
        num, slots, _ = walk.shape
        if mask is None:
            mask = torch.ones(num, slots, dtype=torch.bool, device=walk.device)
        mask = mask.bool()
        length = mask.sum(1, keepdim=True) - 1  # [B, 1]
        pos = torch.arange(slots, device=walk.device).expand(num, slots)
        node = torch.where(pos == length, torch.zeros_like(pos), pos) * mask
        leg = torch.linalg.norm(walk[:, 1:] - walk[:, :-1], dim=-1) * mask[:, 1:]
        cum = torch.cat([leg.new_zeros(num, 1), torch.cumsum(leg, 1)], 1) * mask
        total = cum.gather(1, length).expand(num, slots) * mask
        rel = walk - walk[:, :1]
        theta = torch.atan2(rel[..., 1], rel[..., 0])
        theta = torch.where(theta >= math.pi, theta - 2 * math.pi, theta)
        theta = torch.where((node == 0) | ~mask, torch.zeros_like(theta), theta)
        shifted_prev = torch.cat([node.new_full((num, 1), -1), node[:, :-1]], 1)
        shifted_next = torch.cat([node[:, 1:], node.new_full((num, 1), -1)], 1)
        prev = torch.where(mask & (pos > 0), shifted_prev, -torch.ones_like(pos))
        nxt = torch.where(mask & (pos < length), shifted_next, -torch.ones_like(pos))
        return cls(
            coords=walk * mask[..., None], node=node, prev=prev, next=nxt,
            route=mask.long(), pos=pos * mask, length=length.expand(num, slots) * mask,
            cum=cum, total=total, theta=theta, demand=mask.float(), mask=mask,
        )


def route_graph(batch: RouteBatch) -> torch.Tensor:
    """Adjacency ``[B, S, S]`` (0/1, symmetric, indexed by node id) of the route graph: the
    depot plus the arcs of every route (PE paper Appendix D, Laplacian PE)."""
    num, slots = batch.node.shape
    adj = batch.coords.new_zeros(num, slots, slots)
    rows = torch.arange(num, device=batch.node.device)[:, None].expand(num, slots)
    for other in (batch.prev, batch.next):
        ok = batch.mask & (other >= 0)
        adj[rows[ok], batch.node[ok], other[ok]] = 1.0
        adj[rows[ok], other[ok], batch.node[ok]] = 1.0
    return adj


def node_present(batch: RouteBatch) -> torch.Tensor:
    """``[B, S]`` bool: node ids that occur on the solution."""
    present = torch.zeros_like(batch.mask)
    rows = torch.arange(batch.batch_size, device=batch.node.device)[:, None].expand_as(batch.node)
    present[rows[batch.mask], batch.node[batch.mask]] = True
    return present


def gather_nodes(values: torch.Tensor, batch: RouteBatch) -> torch.Tensor:
    """Per-node values ``[B, S, ...]`` (indexed by node id) -> per-slot values ``[B, S, ...]``,
    zero on padding slots."""
    idx = batch.node.reshape(*batch.node.shape, *([1] * (values.dim() - 2)))
    out = values.gather(1, idx.expand(-1, -1, *values.shape[2:]))
    return out * batch.mask.reshape(*batch.mask.shape, *([1] * (values.dim() - 2)))
