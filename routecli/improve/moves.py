"""Local-search moves on a giant tour, applied to a whole batch at once, and their feasibility
masks.

A solution is a *giant tour* ``order`` ``[B, V]``: a permutation of the slot ids ``0..V-1``
with ``order[:, 0] == 0``. Slot ``0`` is the depot; the other slots are customers (and, for
CVRP, further copies of the depot: DACT's dummy depots). A *route* is a depot copy followed by
the customers up to the next depot copy or the end of the tour, which closes at slot ``0``.
A depot copy followed directly by another one is an empty route; PDTSP has one depot, one route.

Pairwise operators (DACT): an action is ``(op, u, v)`` on slot ids.

- ``TWO_OPT``: ``u`` before ``v`` in the tour; reverse the stretch ``succ(u) .. v``. Inside a
  route this is 2-opt; a stretch that holds depot copies is 2-opt* (the head of ``u``'s route
  is joined to the reversed head of ``v``'s route, the two tails likewise, the routes in
  between are reversed whole).
- ``RELOCATE``: move customer ``u`` to right after ``v`` (``v`` a depot copy: the start of the
  route it opens).
- ``EXCHANGE``: swap customers ``u`` and ``v`` (``u < v``).

Pair operator (N2S, PDTSP): remove request ``r`` (pickup ``p = r + 1``, delivery
``d = r + 1 + n``), re-insert the pickup right after node ``i`` and the delivery right after
node ``j`` of the reduced tour (``i == j``: right after the pickup). Putting a request back
where it was is a move too, as in N2S, so a pair mask is never empty.

Every pairwise mask is ``True`` for a move that changes the tour and keeps it feasible
(capacity for CVRP, precedence for PDTSP, capacity and time windows for VRPTW). Capacity and
precedence masks are closed-form; time windows are checked by applying every
capacity-feasible move and scheduling the result (:func:`on_time`). ``tests/improve`` checks
all of them against applying every move and validating the result.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

TWO_OPT, RELOCATE, EXCHANGE = 0, 1, 2
OPERATORS = ("2opt", "relocate", "exchange")
CAPACITY_EPS = 1e-6
TIME_EPS = 1e-6
READY, DUE, SERVICE = 0, 1, 2


# --------------------------------------------------------------------------------------------
# tour arithmetic


def positions(order: Tensor) -> Tensor:
    """Position of every slot in its tour (the inverse permutation). ``[B, V]``."""
    ranks = torch.arange(order.shape[1], device=order.device).expand_as(order)
    return torch.empty_like(order).scatter_(1, order, ranks)


def successors(order: Tensor) -> Tensor:
    """``succ[b, s]``: the slot after ``s`` (the last slot's successor is slot 0). ``[B, V]``."""
    return torch.empty_like(order).scatter_(1, order, order.roll(-1, dims=1))


def predecessors(order: Tensor) -> Tensor:
    """``pred[b, s]``: the slot before ``s``. ``[B, V]``."""
    return torch.empty_like(order).scatter_(1, order, order.roll(1, dims=1))


def tour_cost(order: Tensor, coords: Tensor) -> Tensor:
    """Length of the closed giant tour (depot copies share the depot's point). ``[B]``."""
    xy = coords.gather(1, order[..., None].expand(-1, -1, 2))  # [B, V, 2] along the tour
    return (xy - xy.roll(-1, dims=1)).norm(dim=-1).sum(1)


def route_loads(order: Tensor, demand: Tensor, is_depot: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Per slot: its route index (routes numbered by their depot copy along the tour), the
    load of that route and the load of the route up to and including the slot (``0`` on a
    depot copy, which opens its route). Three ``[B, V]`` tensors in slot layout."""
    depot_seq = is_depot.expand_as(order).gather(1, order)  # [B, V] along the tour
    route_seq = depot_seq.long().cumsum(1) - 1  # [B, V] 0..D-1
    demand_seq = demand.gather(1, order)
    running = demand_seq.cumsum(1)
    routes = int(is_depot.sum())
    # demand is >= 0, so the running sum just before a route is its minimum over the route
    before = running.new_full((order.shape[0], routes), float("inf"))
    before = before.scatter_reduce(1, route_seq, running - demand_seq, reduce="amin")
    load = torch.zeros_like(before).scatter_add_(1, route_seq, demand_seq)
    prefix_seq = running - before.gather(1, route_seq)

    def to_slots(values: Tensor) -> Tensor:
        return torch.empty_like(values).scatter_(1, order, values)

    return to_slots(route_seq), to_slots(load.gather(1, route_seq)), to_slots(prefix_seq)


# --------------------------------------------------------------------------------------------
# pairwise moves


def two_opt(order: Tensor, u: Tensor, v: Tensor) -> Tensor:
    """Reverse the stretch ``succ(u) .. v`` (``u`` before ``v``); ``u, v`` ``[B]``."""
    pos = positions(order)
    first = pos.gather(1, u[:, None]) + 1  # [B, 1]
    last = pos.gather(1, v[:, None])
    k = torch.arange(order.shape[1], device=order.device)[None]
    inside = (k >= first) & (k <= last)
    return order.gather(1, torch.where(inside, first + last - k, k))


def relocate(order: Tensor, u: Tensor, v: Tensor) -> Tensor:
    """Move ``u`` to right after ``v``; ``u, v`` ``[B]``."""
    pos = positions(order)
    key = 2 * torch.arange(order.shape[1], device=order.device).expand_as(order).clone()
    key.scatter_(1, pos.gather(1, u[:, None]), 2 * pos.gather(1, v[:, None]) + 1)
    return order.gather(1, key.argsort(1))


def exchange(order: Tensor, u: Tensor, v: Tensor) -> Tensor:
    """Swap ``u`` and ``v``; ``u, v`` ``[B]``."""
    pos = positions(order)
    out = order.clone()
    out.scatter_(1, pos.gather(1, u[:, None]), v[:, None])
    return out.scatter_(1, pos.gather(1, v[:, None]), u[:, None])


def apply_pairwise(order: Tensor, action: Tensor) -> Tensor:
    """Apply ``action`` ``[B, 3]`` = ``(op, u, v)`` row by row (each row its own operator)."""
    op, u, v = action.unbind(1)
    out = torch.where((op == TWO_OPT)[:, None], two_opt(order, u, v), order)
    out = torch.where((op == RELOCATE)[:, None], relocate(order, u, v), out)
    return torch.where((op == EXCHANGE)[:, None], exchange(order, u, v), out)


def pairwise_tour_costs(order: Tensor, coords: Tensor, allowed: Tensor) -> Tensor:
    """The tour length after each allowed move ``(op, u, v)``, ``inf`` where not allowed,
    ``[B, 3, V, V]`` (``allowed`` is the same shape). Applies every allowed move of one row at a
    time, so the memory is ``3 V^2`` tours, not ``B`` times that."""
    return moved_tour_costs(order, coords, allowed, apply_pairwise)


def moved_tour_costs(order: Tensor, coords: Tensor, allowed: Tensor,
                     apply: Callable[[Tensor, Tensor], Tensor]) -> Tensor:
    """The tour length after each allowed move of a ``[B, K, V, V]`` layout, ``inf`` where
    not allowed: ``apply(tours [M, V], moves [M, 3])`` applied to every allowed move of one
    row at a time."""
    costs = torch.full(allowed.shape, float("inf"), dtype=coords.dtype, device=coords.device)
    for row in range(order.shape[0]):
        actions = allowed[row].nonzero()  # [M, 3]
        tours = apply(order[row].expand(len(actions), -1), actions)
        costs[row][actions.unbind(1)] = tour_cost(tours, coords[row].expand(len(actions), -1, -1))
    return costs


def unflatten_move(index: Tensor, v: int) -> Tensor:
    """The moves ``[B, 3]`` at ``index`` ``[B]`` of a flattened ``[B, K, V, V]`` move layout:
    ``(op, u, v)`` of the pairwise moves (``K = 3``), ``(r, i, j)`` of N2S's (``K = n``)."""
    return torch.stack([index // (v * v), index // v % v, index % v], 1)


def as_good_as_best(costs: Tensor) -> Tensor:
    """Which moves of the flattened :func:`pairwise_tour_costs` or :func:`pair_tour_costs`
    ``[B, M]`` are as good as the best one (to a relative 1e-6: through CVRP's depot copies,
    or a request put back where it was, several moves give one tour).
    ``[B, M]`` bool."""
    least = costs.min(1, keepdim=True).values
    return costs <= least + 1e-6 * least.abs()


def best_pairwise(costs: Tensor) -> Tensor:
    """The move ``(op, u, v)`` ``[B, 3]`` of least :func:`pairwise_tour_costs` (best
    improvement; the least worsening one when none improves): the imitation teacher."""
    return unflatten_move(costs.flatten(1).argmin(1), costs.shape[-1])


def _common(order: Tensor, is_customer: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Shared pieces of the pairwise masks: position, ``v != succ(u)`` for 2-opt,
    ``u`` customer and ``v`` not ``u`` nor ``pred(u)`` for relocate, both customers and ``u < v``
    for exchange. ``[B, V]`` and three ``[B, V, V]`` (``u`` on axis 1, ``v`` on axis 2)."""
    v_ids = torch.arange(order.shape[1], device=order.device)
    pos = positions(order)
    before = pos[:, :, None] < pos[:, None, :]
    two = before & (successors(order)[:, :, None] != v_ids)
    moved = is_customer[:, :, None] & (v_ids[None, :, None] != v_ids[None, None, :])
    rel = moved & (predecessors(order)[:, :, None] != v_ids)
    ex = is_customer[:, :, None] & is_customer[:, None, :] & (v_ids[:, None] < v_ids[None, :])
    return pos, two, rel, ex


def cvrp_mask(order: Tensor, demand: Tensor, is_depot: Tensor) -> Tensor:
    """Allowed pairwise moves under capacity; ``demand`` is per slot over the capacity (``0`` on
    depot copies), so a route is feasible when its load is at most ``1``. ``[B, 3, V, V]``."""
    _, two, rel, ex = _common(order, ~is_depot.expand_as(order))
    route, load, prefix = route_loads(order, demand, is_depot)
    limit = 1.0 + CAPACITY_EPS
    same = route[:, :, None] == route[:, None, :]
    # 2-opt*: head(u) + reversed head(v) and the two tails form the two changed routes
    heads = prefix[:, :, None] + prefix[:, None, :]
    tail = load - prefix
    tails = tail[:, :, None] + tail[:, None, :]
    two = two & (same | ((heads <= limit) & (tails <= limit)))
    rel = rel & (same | (load[:, None, :] + demand[:, :, None] <= limit))
    swap_u = load[:, :, None] - demand[:, :, None] + demand[:, None, :]
    swap_v = load[:, None, :] - demand[:, None, :] + demand[:, :, None]
    ex = ex & (same | ((swap_u <= limit) & (swap_v <= limit)))
    return torch.stack([two, rel, ex], dim=1)


def on_time(orders: Tensor, coords: Tensor, windows: Tensor, is_depot: Tensor) -> Tensor:
    """Whether every giant tour ``[R, V]`` meets its time windows ``[R, V, 3]`` (ready, due,
    service per slot; travel time = distance on ``coords`` ``[R, V, 2]``): each route leaves
    the depot at its ready time, waits for early windows, starts every service by its due time
    and is back by the depot's due time. ``[R]`` bool."""
    depot = is_depot[orders]  # [R, V] along the tour
    xy = coords.gather(1, orders[..., None].expand(-1, -1, 2))
    times = windows.gather(1, orders[..., None].expand(-1, -1, 3))
    opening, closing = windows[:, 0, READY], windows[:, 0, DUE]
    ok = torch.ones(orders.shape[0], dtype=torch.bool, device=orders.device)
    leave = opening.clone()  # when the vehicle leaves its last stop
    for k in range(1, orders.shape[1] + 1):
        here = k % orders.shape[1]  # the tour closes at slot 0's position
        arrive = leave + (xy[:, here] - xy[:, k - 1]).norm(dim=-1)
        back = depot[:, here] if k < orders.shape[1] else torch.ones_like(ok)
        start = torch.maximum(arrive, times[:, here, READY])
        ok &= torch.where(back, arrive <= closing + TIME_EPS, start <= times[:, here, DUE] + TIME_EPS)
        leave = torch.where(back, opening, start + times[:, here, SERVICE])
    return ok


def vrptw_mask(order: Tensor, demand: Tensor, is_depot: Tensor, coords: Tensor,
               windows: Tensor) -> Tensor:
    """Allowed pairwise moves under capacity and time windows. ``[B, 3, V, V]``."""
    mask = cvrp_mask(order, demand, is_depot)
    b, op, u, v = mask.nonzero(as_tuple=True)
    if len(b):
        tours = apply_pairwise(order[b], torch.stack([op, u, v], 1))
        mask[b, op, u, v] = on_time(tours, coords[b], windows[b], is_depot)
    return mask


def partners(size: int, requests: int, device: torch.device | None = None) -> Tensor:
    """PDTSP: the paired node of every node (pickup ``r`` <-> delivery ``r + n``; depot 0)."""
    ids = torch.arange(size, device=device)
    return torch.where(ids == 0, ids, torch.where(ids <= requests, ids + requests, ids - requests))


def pdtsp_mask(order: Tensor, requests: int) -> Tensor:
    """Allowed pairwise moves that keep every pickup before its delivery. ``[B, 3, V, V]``."""
    size = order.shape[1]
    ids = torch.arange(size, device=order.device)
    pos, two, rel, ex = _common(order, (ids != 0).expand_as(order))
    pickup = (ids >= 1) & (ids <= requests)
    mate = partners(size, requests, order.device)
    # 2-opt reverses positions (pos[u], pos[v]]: infeasible when that holds a whole request.
    # reach[k] = latest pickup position among requests whose delivery sits at or before k.
    at_pickup, at_delivery = pos[:, 1 : requests + 1], pos[:, requests + 1 :]
    reach = torch.full_like(pos, -1).scatter_(1, at_delivery, at_pickup).cummax(1).values
    two = two & ~(pos[:, :, None] < reach.gather(1, pos)[:, None, :])
    # relocate u after v: a pickup stays before its delivery iff v is before the delivery; a
    # delivery stays after its pickup iff v is the pickup or after it
    pos_mate = pos.gather(1, mate.expand_as(pos))  # [B, V] position of each node's partner
    rel = rel & torch.where(pickup[None, :, None], pos[:, None, :] < pos_mate[:, :, None],
                            pos_mate[:, :, None] <= pos[:, None, :])
    # exchange u, v: each moves to the other's position (a partner swapped with it too)
    new_u = pos[:, None, :].expand(-1, size, -1)  # u now at pos[v]
    new_v = pos[:, :, None].expand(-1, -1, size)  # v now at pos[u]
    mate_u = torch.where(mate[None, :, None] == ids[None, None, :], new_v, pos_mate[:, :, None])
    mate_v = torch.where(mate[None, None, :] == ids[None, :, None], new_u, pos_mate[:, None, :])
    ok_u = torch.where(pickup[None, :, None], new_u < mate_u, mate_u < new_u)
    ok_v = torch.where(pickup[None, None, :], new_v < mate_v, mate_v < new_v)
    return torch.stack([two, rel, ex & ok_u & ok_v], dim=1)


# --------------------------------------------------------------------------------------------
# N2S pair moves (PDTSP)


def pair_reinsert(order: Tensor, action: Tensor, requests: int) -> Tensor:
    """Apply N2S actions ``[B, 3]`` = ``(r, i, j)``: remove request ``r`` and re-insert its
    pickup after ``i`` and its delivery after ``j`` of the reduced tour."""
    r, i, j = action.unbind(1)
    p, d = r + 1, r + 1 + requests
    pos = positions(order)
    pos_p, pos_d = pos.gather(1, p[:, None]), pos.gather(1, d[:, None])
    rank = 3 * (pos - (pos_p < pos).long() - (pos_d < pos).long())  # place in the reduced tour
    key = rank.scatter(1, p[:, None], rank.gather(1, i[:, None]) + 1)
    key = key.scatter(1, d[:, None], rank.gather(1, j[:, None]) + 2)
    return key.argsort(1)  # slots in key order


def reinsertion_mask(order: Tensor, request: Tensor, requests: int) -> Tensor:
    """Allowed ``(i, j)`` for re-inserting each request of ``request`` ``[B, R]``: neither is
    the removed pickup or delivery, and ``i`` is not after ``j``. ``[B, R, V, V]``."""
    ids = torch.arange(order.shape[1], device=order.device)
    pos = positions(order)
    removed = (ids == request[..., None] + 1) | (ids == request[..., None] + 1 + requests)
    keep = ~removed  # [B, R, V]
    before = (pos[:, :, None] <= pos[:, None, :])[:, None]  # [B, 1, V, V]
    return keep[..., :, None] & keep[..., None, :] & before


def pair_mask(order: Tensor, requests: int, previous: Tensor) -> Tensor:
    """Every allowed N2S move ``(r, i, j)``: any request but the ``previous`` one ``[B]``
    (``-1``: none; N2S does not remove one request twice in a row), re-inserted as
    :func:`reinsertion_mask` allows. ``[B, n, V, V]``."""
    every = torch.arange(requests, device=order.device).expand(order.shape[0], -1)  # [B, n]
    mask = reinsertion_mask(order, every, requests)
    return mask & (every != previous[:, None])[..., None, None]


def pair_tour_costs(order: Tensor, coords: Tensor, allowed: Tensor, requests: int) -> Tensor:
    """The tour length after each allowed N2S move ``(r, i, j)``, ``inf`` where not allowed,
    ``[B, n, V, V]`` (``allowed`` is the same shape); one row at a time, as
    :func:`pairwise_tour_costs`."""
    return moved_tour_costs(order, coords, allowed,
                            lambda tours, actions: pair_reinsert(tours, actions, requests))
