"""Initial solutions: Clarke-Wright savings on neighbour pairs, in numba.

Every customer starts on its own route; pairs ``(i, j)`` of near neighbours are visited in
decreasing saving ``s_ij = d_0i + d_0j - d_ij`` and the route ending at ``i`` is joined to the
route starting at ``j`` when capacity (and, for VRPTW, every time window of the joined route)
allows. Without time windows a route may be reversed to bring ``i`` and ``j`` to its ends.
Restricting the pairs to each customer's nearest neighbours keeps this ``O(N K log(N K))``,
so it also starts the search quickly on thousands of customers. PCVRP then drops the
customers whose detour costs more than their prize.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from routecli.kernels.provider import edge
from routecli.search.repair import drop_unprofitable
from routecli.search.state import (
    DUE,
    EARLY,
    EPS,
    FIRST,
    LAST,
    LOAD,
    OUT,
    PRED,
    READY,
    ROUTE,
    SERVICE,
    SUCC,
    SearchProblem,
    SearchState,
    refresh_route,
)


@nb.njit(cache=True)
def _reverse(dist, nodes, times, routes, r) -> None:  # noqa: ANN001
    node = routes[r, FIRST]
    while node != 0:
        nxt = nodes[node, SUCC]
        nodes[node, SUCC] = nodes[node, PRED]
        nodes[node, PRED] = nxt
        times[node, OUT] = edge(dist, node, nodes[node, SUCC])
        node = nxt
    routes[r, FIRST], routes[r, LAST] = routes[r, LAST], routes[r, FIRST]


@nb.njit(cache=True)
def _joinable_in_time(dist, node_data, nodes, times, routes, i, rj) -> bool:  # noqa: ANN001
    """Whether the route ending at ``i`` followed by route ``rj`` keeps every window."""
    t = times[i, EARLY] + node_data[i, SERVICE]
    prev = i
    node = routes[rj, FIRST]
    while node != 0:
        t = max(t + edge(dist, prev, node), node_data[node, READY])
        if t > node_data[node, DUE] + EPS:
            return False
        t += node_data[node, SERVICE]
        prev = node
        node = nodes[node, SUCC]
    return t + edge(dist, prev, 0) <= node_data[0, DUE] + EPS


@nb.njit(cache=True)
def savings(dist, node_data, capacity, timed, neighbours, nodes, times, routes, rstat, totals) -> None:  # noqa: ANN001
    """Fill an empty state with the savings solution of every customer."""
    v = node_data.shape[0]
    for c in range(1, v):
        r = c - 1
        nodes[c, SUCC] = 0
        nodes[c, PRED] = 0
        times[c, OUT] = edge(dist, c, 0)
        routes[r, FIRST] = c
        refresh_route(dist, node_data, capacity, timed, nodes, times, routes, rstat, totals, r)
    k = neighbours.shape[1]
    first = np.empty((v - 1) * k, np.int64)
    second = np.empty((v - 1) * k, np.int64)
    gain = np.empty((v - 1) * k)
    count = 0
    for i in range(1, v):
        for q in range(k):
            j = neighbours[i, q]
            if timed or i < j:  # without windows (i, j) and (j, i) are the same join
                first[count] = i
                second[count] = j
                gain[count] = edge(dist, 0, i) + edge(dist, 0, j) - edge(dist, i, j)
                count += 1
    order = np.argsort(-gain[:count], kind="mergesort")
    for p in order:
        if gain[p] <= 0.0:
            break
        i = first[p]
        j = second[p]
        ri = nodes[i, ROUTE]
        rj = nodes[j, ROUTE]
        if ri == rj or rstat[ri, LOAD] + rstat[rj, LOAD] > capacity + EPS:
            continue
        if timed:
            if routes[ri, LAST] != i or routes[rj, FIRST] != j:
                continue
            if not _joinable_in_time(dist, node_data, nodes, times, routes, i, rj):
                continue
        else:
            i_end = routes[ri, FIRST] == i or routes[ri, LAST] == i
            j_end = routes[rj, FIRST] == j or routes[rj, LAST] == j
            if not (i_end and j_end):
                continue
            if routes[ri, LAST] != i:
                _reverse(dist, nodes, times, routes, ri)
            if routes[rj, FIRST] != j:
                _reverse(dist, nodes, times, routes, rj)
        nodes[i, SUCC] = j
        times[i, OUT] = edge(dist, i, j)
        nodes[j, PRED] = i
        routes[ri, LAST] = routes[rj, LAST]
        routes[rj, FIRST] = 0
        refresh_route(dist, node_data, capacity, timed, nodes, times, routes, rstat, totals, rj)
        refresh_route(dist, node_data, capacity, timed, nodes, times, routes, rstat, totals, ri)


def savings_solution(problem: SearchProblem) -> SearchState:
    """The savings start of :mod:`routecli.search.asa` (PCVRP: unprofitable customers out)."""
    state = SearchState.empty(problem.num_nodes)
    savings(problem.dist, problem.node_data, problem.capacity, problem.timed,
            problem.neighbours, *state.arrays())
    if problem.optional:
        drop_unprofitable(problem.dist, problem.node_data, problem.capacity, problem.timed,
                          *state.arrays())
    return state
