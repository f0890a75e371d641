"""Granular local search in numba: relocate, swap, 2-opt and 2-opt* on neighbour lists.

For every customer ``u`` and each of its nearest neighbours ``v`` the moves below are tried,
each creating an edge next to ``v`` (the granular neighbourhood of Toth and Vigo, 2003);
the first improving feasible move is applied, until a full pass finds none:

- relocate ``u`` right after or right before ``v``;
- swap ``u`` and ``v``;
- 2-opt (same route): reverse the stretch between them, creating edge ``(u, v)``;
- 2-opt* (two routes): exchange the route tails, creating ``(u, v)``, either as
  ``head(u) + tail(v)`` / ``head(pred v) + tail(succ u)`` or with one head and one tail
  reversed (``head(u) + reversed head(v)`` / ``reversed tail(succ u) + tail(succ v)``).

The distance change is O(1); capacity is checked in O(1) from route loads and cumulative
loads; time windows (VRPTW), only for a move that already improves distance, by simulating
the new routes. :func:`polish` therefore never returns a worse or infeasible solution.
PCVRP moves keep the served set; profitable unserved customers are then inserted and
unprofitable ones dropped, and the search repeats while that helps.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from routecli.kernels.provider import edge
from routecli.problems import Routes, validate
from routecli.search.repair import drop_unprofitable, repair
from routecli.search.state import (
    CUMLOAD,
    DEMAND,
    DUE,
    EPS,
    FIRST,
    LAST,
    LOAD,
    OUT,
    POS,
    PRED,
    READY,
    ROUTE,
    SERVICE,
    SUCC,
    RoutingInstance,
    SearchProblem,
    from_routes,
    refresh_route,
    state_cost,
)

GAIN_EPS = 1e-9  # a move must improve by more than this (no cycling on float noise)
RELOCATE_AFTER, RELOCATE_BEFORE, SWAP, TWO_OPT, TWO_OPT_STAR, TWO_OPT_STAR_REV = range(6)


@nb.njit(cache=True)
def _walk(nodes, buf, n, start, end, forward) -> int:  # noqa: ANN001
    """Append the nodes from ``start`` to ``end`` inclusive (following successors, or
    predecessors when not ``forward``) to ``buf[n:]``; ``start`` 0 appends nothing."""
    node = start
    while node != 0:
        buf[n] = node
        n += 1
        if node == end:
            break
        node = nodes[node, SUCC] if forward else nodes[node, PRED]
    return n


@nb.njit(cache=True)
def _edit(nodes, routes, r, buf, n, drop, put_after, put_before, put, swap_a, swap_b) -> int:  # noqa: ANN001
    """Append route ``r`` to ``buf[n:]`` with edits: skip ``drop``; emit ``put`` right after
    ``put_after`` / right before ``put_before``; exchange ``swap_a`` and ``swap_b``."""
    node = routes[r, FIRST]
    while node != 0:
        if node != drop:
            if node == put_before:
                buf[n] = put
                n += 1
            out = swap_b if node == swap_a else (swap_a if node == swap_b else node)
            buf[n] = out
            n += 1
            if node == put_after:
                buf[n] = put
                n += 1
        node = nodes[node, SUCC]
    return n


@nb.njit(cache=True)
def _on_time(dist, node_data, buf, lo, hi) -> bool:  # noqa: ANN001
    """Whether the route ``buf[lo:hi]`` keeps every time window and the depot horizon."""
    t = node_data[0, READY] + node_data[0, SERVICE]
    prev = 0
    for k in range(lo, hi):
        node = buf[k]
        t = max(t + edge(dist, prev, node), node_data[node, READY])
        if t > node_data[node, DUE] + EPS:
            return False
        t += node_data[node, SERVICE]
        prev = node
    return t + edge(dist, prev, 0) <= node_data[0, DUE] + EPS


@nb.njit(cache=True)
def _write(dist, nodes, times, routes, r, buf, lo, hi) -> None:  # noqa: ANN001
    """Relink route slot ``r`` as ``buf[lo:hi]`` (empty: free the slot)."""
    prev = 0
    for k in range(lo, hi):
        node = buf[k]
        nodes[node, PRED] = prev
        if prev == 0:
            routes[r, FIRST] = node
        else:
            nodes[prev, SUCC] = node
            times[prev, OUT] = edge(dist, prev, node)
        prev = node
    if prev == 0:
        routes[r, FIRST] = 0
    else:
        nodes[prev, SUCC] = 0
        times[prev, OUT] = edge(dist, prev, 0)


@nb.njit(cache=True)
def _build(nodes, routes, move, u, v, buf) -> tuple[int, int]:  # noqa: ANN001
    """The route(s) after ``move``: ``buf[0:split]`` replaces ``u``'s route and
    ``buf[split:end]`` ``v``'s (empty when both are on one route). Returns (split, end)."""
    ru = nodes[u, ROUTE]
    rv = nodes[v, ROUTE]
    x = nodes[u, SUCC]
    pv = nodes[v, PRED]
    same = ru == rv
    n = 0
    if move in (RELOCATE_AFTER, RELOCATE_BEFORE):
        after = v if move == RELOCATE_AFTER else -1
        before = v if move == RELOCATE_BEFORE else -1
        if same:
            n = _edit(nodes, routes, ru, buf, 0, u, after, before, u, -1, -1)
            return n, n
        n = _edit(nodes, routes, ru, buf, 0, u, -1, -1, -1, -1, -1)
        return n, _edit(nodes, routes, rv, buf, n, -1, after, before, u, -1, -1)
    if move == SWAP:
        n = _edit(nodes, routes, ru, buf, 0, -1, -1, -1, -1, u, v)
        if same:
            return n, n
        return n, _edit(nodes, routes, rv, buf, n, -1, -1, -1, -1, u, v)
    if move == TWO_OPT:  # u before v on one route: reverse x..v
        n = _walk(nodes, buf, 0, routes[ru, FIRST], u, True)
        n = _walk(nodes, buf, n, v, x, False)
        n = _walk(nodes, buf, n, nodes[v, SUCC], routes[ru, LAST], True)
        return n, n
    if move == TWO_OPT_STAR:
        n = _walk(nodes, buf, 0, routes[ru, FIRST], u, True)
        n = _walk(nodes, buf, n, v, routes[rv, LAST], True)
        split = n
        n = _walk(nodes, buf, n, routes[rv, FIRST], pv, True) if pv != 0 else n
        n = _walk(nodes, buf, n, x, routes[ru, LAST], True)
        return split, n
    n = _walk(nodes, buf, 0, routes[ru, FIRST], u, True)  # TWO_OPT_STAR_REV
    n = _walk(nodes, buf, n, v, routes[rv, FIRST], False)
    split = n
    n = _walk(nodes, buf, n, routes[ru, LAST], x, False) if x != 0 else n
    n = _walk(nodes, buf, n, nodes[v, SUCC], routes[rv, LAST], True)
    return split, n


@nb.njit(cache=True)
def _gain(dist, node_data, capacity, nodes, times, rstat, move, u, v) -> float:  # noqa: ANN001
    """Distance saved by ``move`` (<= 0 when it is not applicable or breaks capacity)."""
    ru = nodes[u, ROUTE]
    rv = nodes[v, ROUTE]
    pu = nodes[u, PRED]
    x = nodes[u, SUCC]
    pv = nodes[v, PRED]
    y = nodes[v, SUCC]
    du = node_data[u, DEMAND]
    dv = node_data[v, DEMAND]
    same = ru == rv
    if move in (RELOCATE_AFTER, RELOCATE_BEFORE):
        a, b = (v, y) if move == RELOCATE_AFTER else (pv, v)
        if a == u or b == u or (not same and rstat[rv, LOAD] + du > capacity + EPS):
            return 0.0
        return ((edge(dist, pu, u) + edge(dist, u, x) - edge(dist, pu, x))
                - (edge(dist, a, u) + edge(dist, u, b) - edge(dist, a, b)))
    if move == SWAP:
        if x == v or y == u:
            return 0.0
        if not same and (rstat[ru, LOAD] - du + dv > capacity + EPS
                         or rstat[rv, LOAD] - dv + du > capacity + EPS):
            return 0.0
        return (edge(dist, pu, u) + edge(dist, u, x) + edge(dist, pv, v) + edge(dist, v, y)
                - edge(dist, pu, v) - edge(dist, v, x) - edge(dist, pv, u) - edge(dist, u, y))
    if move == TWO_OPT:
        if not same or x == v:
            return 0.0
        return edge(dist, u, x) + edge(dist, v, y) - edge(dist, u, v) - edge(dist, x, y)
    if same:
        return 0.0
    head_u = times[u, CUMLOAD]
    if move == TWO_OPT_STAR:
        head_pv = times[pv, CUMLOAD] if pv != 0 else 0.0
        if (head_u + rstat[rv, LOAD] - head_pv > capacity + EPS
                or head_pv + rstat[ru, LOAD] - head_u > capacity + EPS):
            return 0.0
        return edge(dist, u, x) + edge(dist, pv, v) - edge(dist, u, v) - edge(dist, pv, x)
    head_v = times[v, CUMLOAD]  # TWO_OPT_STAR_REV
    if (head_u + head_v > capacity + EPS
            or rstat[ru, LOAD] - head_u + rstat[rv, LOAD] - head_v > capacity + EPS):
        return 0.0
    return edge(dist, u, x) + edge(dist, v, y) - edge(dist, u, v) - edge(dist, x, y)


@nb.njit(cache=True)
def _try(dist, node_data, capacity, timed, nodes, times, routes, rstat, totals, move, u, v,
         buf) -> bool:  # noqa: ANN001
    if _gain(dist, node_data, capacity, nodes, times, rstat, move, u, v) <= GAIN_EPS:
        return False
    if move == TWO_OPT and nodes[u, POS] > nodes[v, POS]:
        return False
    ru = nodes[u, ROUTE]
    rv = nodes[v, ROUTE]
    split, end = _build(nodes, routes, move, u, v, buf)
    if timed and not (_on_time(dist, node_data, buf, 0, split)
                      and _on_time(dist, node_data, buf, split, end)):
        return False
    _write(dist, nodes, times, routes, ru, buf, 0, split)
    if rv != ru:
        _write(dist, nodes, times, routes, rv, buf, split, end)
        refresh_route(dist, node_data, capacity, timed, nodes, times, routes, rstat, totals, rv)
    refresh_route(dist, node_data, capacity, timed, nodes, times, routes, rstat, totals, ru)
    return True


@nb.njit(cache=True)
def local_search(dist, node_data, capacity, timed, neighbours, nodes, times, routes, rstat,
                 totals, order) -> int:  # noqa: ANN001
    """Apply first-improving moves until none is left; customers scanned in ``order``.
    Returns the number of moves applied."""
    buf = np.empty(2 * node_data.shape[0], np.int64)
    applied = 0
    improved = True
    while improved:
        improved = False
        for u in order:
            if nodes[u, ROUTE] < 0:
                continue
            for j in range(neighbours.shape[1]):
                v = neighbours[u, j]
                if nodes[v, ROUTE] < 0:
                    continue
                for move in range(6):
                    a, b = u, v
                    if move == TWO_OPT and nodes[u, ROUTE] == nodes[v, ROUTE] \
                            and nodes[u, POS] > nodes[v, POS]:
                        a, b = v, u
                    if _try(dist, node_data, capacity, timed, nodes, times, routes, rstat,
                            totals, move, a, b, buf):
                        applied += 1
                        improved = True
                        break
    return applied


def polish(instance: RoutingInstance, solution: Routes, seed: int = 0) -> Routes:
    """Local-search ``solution`` of a CVRP / VRPTW / PCVRP instance; returns it unchanged
    unless the result is valid and no more costly."""
    if validate(instance, solution):
        return solution
    problem = SearchProblem.from_instance(instance)
    state = from_routes(problem, solution)
    data = (problem.dist, problem.node_data, problem.capacity, problem.timed)
    order = np.random.default_rng(seed).permutation(np.arange(1, problem.num_nodes))
    cost = state_cost(problem.node_data, *state.arrays())
    for _ in range(10):
        local_search(*data, problem.neighbours, *state.arrays(), order)
        if problem.optional:
            unserved = np.flatnonzero(state.nodes[1:, ROUTE] < 0).astype(np.int64) + 1
            repair(*data, True, problem.neighbours, problem.grid, *state.arrays(), unserved, 0.0)
            drop_unprofitable(*data, *state.arrays())
        new_cost = state_cost(problem.node_data, *state.arrays())
        if new_cost >= cost - GAIN_EPS:
            break
        cost = new_cost
    result = state.to_routes()
    if validate(instance, result) or instance.cost(result) > instance.cost(solution):
        return solution
    return result
