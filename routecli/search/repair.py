"""Randomised greedy insertion repair (the "recreate" half of ruin-and-recreate), in numba.

Customers are inserted one at a time, in an order drawn as in SISRs (Christiaens and Vanden
Berghe, 2020): random, by decreasing demand, by decreasing or increasing distance to the
depot. Each goes to its cheapest feasible position among those next to its nearest
neighbours (granular), or to a new route; every candidate position is skipped ("blinks")
with a small probability, which diversifies otherwise deterministic greedy choices. When
no neighbour's route has room, the search widens: to every position of every route up to
:data:`routecli.search.state.EXHAUSTIVE_MAX_NODES` nodes, above that to the positions next to
the nearest nodes (found on a grid) whose routes have room, so an insertion never walks all
``N`` nodes of a large instance.

Feasibility: capacity from the route load; time windows in O(1) per position from the
service start ``EARLY`` of the predecessor and the latest feasible start ``LATE`` of the
successor (a vehicle may wait, so an arrival before ``LATE`` keeps the rest of the route on
time). PCVRP: a customer is inserted only if its prize exceeds its cheapest insertion cost,
since serving it must lower cost minus collected prizes; :func:`drop_unprofitable` removes
customers whose detour costs more than their prize.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from routecli.kernels.candidates import grid_cell, ring_span
from routecli.kernels.provider import edge
from routecli.search.state import (
    DEMAND,
    DUE,
    EARLY,
    EPS,
    FIRST,
    LATE,
    LOAD,
    OUT,
    PRED,
    PRIZE,
    READY,
    ROUTE,
    SERVICE,
    SIZE,
    SUCC,
    free_slot,
    link_after,
    refresh_route,
    unlink,
)

# Relative weights of the insertion orders: random, demand (desc), far first, close first.
ORDER_WEIGHTS = np.array([4.0, 4.0, 2.0, 1.0])
BLINK_RATE = 0.01
# The grid search of a large instance stops after the ring in which it has met this many
# nodes (when it has not yet found as many nodes with room as the neighbour lists are long).
WIDER_VISITS = 1_000


@nb.njit(cache=True)
def insertion_order(dist, node_data, customers) -> np.ndarray:  # noqa: ANN001
    """``customers`` in a randomly chosen SISR order (ties broken at random). ``[K]``."""
    k = customers.shape[0]
    shuffled = customers[np.random.permutation(k)]
    u = np.random.random() * ORDER_WEIGHTS.sum()
    if u < ORDER_WEIGHTS[0]:
        return shuffled
    key = np.empty(k)
    for i in range(k):
        c = shuffled[i]
        if u < ORDER_WEIGHTS[0] + ORDER_WEIGHTS[1]:
            key[i] = -node_data[c, DEMAND]
        elif u < ORDER_WEIGHTS[0] + ORDER_WEIGHTS[1] + ORDER_WEIGHTS[2]:
            key[i] = -edge(dist, 0, c)
        else:
            key[i] = edge(dist, 0, c)
    return shuffled[np.argsort(key, kind="mergesort")]


@nb.njit(cache=True, inline="always")
def _position_cost(dist, node_data, times, timed, c, a, b) -> float:  # noqa: ANN001
    """Extra distance of serving ``c`` between consecutive ``a`` and ``b`` (0 = the depot),
    ``inf`` if that breaks a time window. The cached out-edge of ``a`` saves one edge."""
    ab = edge(dist, 0, b) if a == 0 else times[a, OUT]
    delta = edge(dist, c, a) + edge(dist, c, b) - ab
    if not timed:
        return delta
    # the depot's "service start" is the route's departure time
    ta = (node_data[0, READY] if a == 0 else times[a, EARLY]) + node_data[a, SERVICE]
    tc = max(ta + edge(dist, c, a), node_data[c, READY])
    if tc > node_data[c, DUE] + EPS:
        return np.inf
    latest_b = node_data[0, DUE] if b == 0 else times[b, LATE]
    if tc + node_data[c, SERVICE] + edge(dist, c, b) > latest_b + EPS:
        return np.inf
    return delta


@nb.njit(cache=True, inline="always")
def _next_to(dist, node_data, timed, nodes, times, c, v, r, blink, best, best_r, best_a):  # noqa: ANN001, ANN202
    """The better of ``(best, best_r, best_a)`` and the two positions beside ``v`` (on route
    ``r``), blinking as :func:`best_insertion` does."""
    for side in range(2):
        a = nodes[v, PRED] if side == 0 else v
        b = v if side == 0 else nodes[v, SUCC]
        delta = _position_cost(dist, node_data, times, timed, c, a, b)
        if delta < best and (blink <= 0.0 or np.random.random() >= blink):
            best = delta
            best_r = r
            best_a = a
    return best, best_r, best_a


@nb.njit(cache=True)
def best_insertion(dist, node_data, capacity, timed, neighbours, grid, nodes, times, routes,
                   rstat, c, blink) -> tuple[float, int, int]:  # noqa: ANN001
    """Cheapest feasible insertion of ``c``: ``(delta, route, predecessor)``; route -1 means a
    new route, and delta ``inf`` means no feasible place at all.

    Granular first: only the positions next to ``c``'s nearest neighbours. When none of those
    is feasible, every position of every route, or with a ``grid`` (large instances) the
    positions next to the nearest nodes whose routes have room. A new route is always a
    candidate.
    """
    best = np.inf
    best_r = -2
    best_a = 0
    demand = node_data[c, DEMAND]
    for j in range(neighbours.shape[1]):
        v = neighbours[c, j]
        r = nodes[v, ROUTE]
        if r < 0 or rstat[r, LOAD] + demand > capacity + EPS:
            continue
        best, best_r, best_a = _next_to(dist, node_data, timed, nodes, times, c, v, r, blink,
                                        best, best_r, best_a)
    if best_r == -2 and grid[1].shape[0] > 0:  # a grid: the instance is too large to scan
        best, best_r, best_a = _nearby(dist, node_data, capacity, timed, grid, nodes, times,
                                       rstat, c, neighbours.shape[1], blink)
    elif best_r == -2:
        for r in range(routes.shape[0]):
            if routes[r, SIZE] == 0 or rstat[r, LOAD] + demand > capacity + EPS:
                continue
            a = 0
            b = routes[r, FIRST]
            while True:
                delta = _position_cost(dist, node_data, times, timed, c, a, b)
                if delta < best and (blink <= 0.0 or np.random.random() >= blink):
                    best = delta
                    best_r = r
                    best_a = a
                if b == 0:
                    break
                a = b
                b = nodes[b, SUCC]
    if demand <= capacity + EPS:
        alone = _position_cost(dist, node_data, times, timed, c, 0, 0)
        if alone < best:
            best = alone
            best_r = -1
            best_a = 0
    return best, best_r, best_a


@nb.njit(cache=True)
def _nearby(dist, node_data, capacity, timed, grid, nodes, times, rstat, c, want, blink):  # noqa: ANN001, ANN202
    """Best position next to the nodes nearest ``c`` on the ``grid`` whose routes have room:
    rings of cells around ``c`` until ``want`` such nodes or :data:`WIDER_VISITS` nodes in
    all have been met. ``(delta, route, predecessor)``, route -2 when none was found."""
    xy, start, members, cell, x0, y0, nx, ny = grid
    cx, cy = grid_cell(xy[c, 0], xy[c, 1], cell, x0, y0, nx, ny)
    demand = node_data[c, DEMAND]
    best = np.inf
    best_r = -2
    best_a = 0
    found = 0
    met = 0
    for ring in range(max(nx, ny) + 1):
        for t in range(max(8 * ring, 1)):
            lo, hi = ring_span(start, cx, cy, ring, t, nx, ny)
            for p in range(lo, hi):
                v = members[p]
                met += 1
                r = nodes[v, ROUTE]
                if v == 0 or r < 0 or rstat[r, LOAD] + demand > capacity + EPS:
                    continue
                found += 1
                best, best_r, best_a = _next_to(dist, node_data, timed, nodes, times, c, v, r,
                                                blink, best, best_r, best_a)
        if found >= want or met >= WIDER_VISITS:
            break
    return best, best_r, best_a


@nb.njit(cache=True)
def repair(dist, node_data, capacity, timed, optional, neighbours, grid, nodes, times, routes,
           rstat, totals, customers, blink) -> int:  # noqa: ANN001
    """Greedily insert the unserved ``customers`` (random SISR order, blinking positions).

    PCVRP customers whose prize does not pay for their cheapest insertion stay unserved.
    Returns how many mandatory customers found no feasible place (0 on success).
    """
    failed = 0
    for c in insertion_order(dist, node_data, customers):
        delta, r, a = best_insertion(dist, node_data, capacity, timed, neighbours, grid, nodes,
                                     times, routes, rstat, c, blink)
        if optional and delta >= node_data[c, PRIZE]:
            continue
        if r == -2:
            failed += 1
            continue
        if r == -1:
            r = free_slot(routes)
            a = 0
        link_after(dist, nodes, times, routes, c, a, r)
        refresh_route(dist, node_data, capacity, timed, nodes, times, routes, rstat, totals, r)
    return failed


@nb.njit(cache=True)
def remove_customers(dist, node_data, capacity, timed, nodes, times, routes, rstat, totals,
                     customers) -> bool:  # noqa: ANN001
    """Unserve ``customers`` (entries < 1 or already unserved are ignored) and refresh the
    routes they left. Returns False if a refreshed route is infeasible (possible only under
    rounded metrics that break the triangle inequality with zero service times)."""
    touched = np.empty(customers.shape[0], np.int64)
    count = 0
    for c in customers:
        if c < 1 or nodes[c, ROUTE] < 0:
            continue
        touched[count] = unlink(dist, nodes, times, routes, c)
        count += 1
    ok = True
    for i in range(count):
        r = touched[i]
        seen = False
        for j in range(i):
            seen = seen or touched[j] == r
        if not seen:
            ok &= refresh_route(dist, node_data, capacity, timed, nodes, times, routes, rstat,
                                totals, r)
    return ok


@nb.njit(cache=True)
def drop_unprofitable(dist, node_data, capacity, timed, nodes, times, routes, rstat, totals) -> int:  # noqa: ANN001
    """PCVRP: repeatedly unserve the customer whose detour exceeds its prize by the most,
    until every served customer pays for itself. Returns how many were dropped."""
    dropped = 0
    while True:
        worst = 0.0
        worst_c = -1
        for c in range(1, nodes.shape[0]):
            if nodes[c, ROUTE] < 0:
                continue
            a = nodes[c, PRED]
            b = nodes[c, SUCC]
            loss = edge(dist, c, a) + edge(dist, c, b) - edge(dist, a, b) - node_data[c, PRIZE]
            if loss > worst + EPS:
                worst = loss
                worst_c = c
        if worst_c < 0:
            return dropped
        r = unlink(dist, nodes, times, routes, worst_c)
        refresh_route(dist, node_data, capacity, timed, nodes, times, routes, rstat, totals, r)
        dropped += 1
