"""The solution representation the numba search kernels share, and its converters.

Nodes are ``0..N`` (0 the depot). A solution is four arrays, so a numba kernel can read and
write it and the engine can copy it in one ``memcpy`` each:

- ``nodes``  int64  ``[4, V]``: ``SUCC``, ``PRED`` (0 = the depot), ``ROUTE`` (-1 = unserved;
  PCVRP only), ``POS`` (0-based place in the route);
- ``times``  float64 ``[4, V]``: ``EARLY`` (service start), ``LATE`` (latest service start
  that keeps the rest of the route feasible), ``CUMLOAD`` (load served up to and including
  the node), ``OUT`` (length of the edge leaving the node);
- ``routes`` int64  ``[3, V]``: ``FIRST``, ``LAST``, ``SIZE`` per route slot (``SIZE`` 0 =
  free slot; there are ``V`` slots, more than any solution needs);
- ``rstat``  float64 ``[3, V]``: ``LOAD``, ``LENGTH``, ``PRIZES`` (collected) per route slot.

The problem side is a dense distance matrix computed once from the instance's own metric (so
CVRPLIB's rounded ``euc2d`` edges are exactly what the search optimises) and ``node_data``
``[5, V]`` (``DEMAND``, ``READY``, ``DUE``, ``SERVICE``, ``PRIZE``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np

from routecli.kernels import knn
from routecli.problems import CVRPInstance, PCVRPInstance, Routes, VRPTWInstance

SUCC, PRED, ROUTE, POS = 0, 1, 2, 3
EARLY, LATE, CUMLOAD, OUT = 0, 1, 2, 3
FIRST, LAST, SIZE = 0, 1, 2
LOAD, LENGTH, PRIZES = 0, 1, 2
DEMAND, READY, DUE, SERVICE, PRIZE = 0, 1, 2, 3, 4
# Slack for time-window and capacity comparisons of float sums (validate allows 1e-6).
EPS = 1e-9

RoutingInstance = CVRPInstance | VRPTWInstance | PCVRPInstance


@dataclass(frozen=True)
class SearchProblem:
    """Numba-ready view of a CVRP / VRPTW / PCVRP instance.

    ``dist`` ``[V, V]`` under the instance's metric; ``node_data`` ``[5, V]``; ``neighbours``
    ``[V, K]`` nearest other nodes (by the metric) of each node, the depot excluded;
    ``unit_coords`` ``[V, 2]`` coordinates scaled into the unit square (aspect kept), the
    normalised copy a learned policy reads.
    """

    instance: RoutingInstance
    dist: np.ndarray
    node_data: np.ndarray
    capacity: float
    timed: bool
    optional: bool
    neighbours: np.ndarray
    unit_coords: np.ndarray

    @property
    def num_nodes(self) -> int:
        return self.dist.shape[0]

    @classmethod
    def from_instance(cls, instance: RoutingInstance, neighbours: int = 40) -> SearchProblem:
        metric = instance.metric
        dist = np.ascontiguousarray(metric.full_matrix(), dtype=np.float64)
        if not np.array_equal(dist, dist.T):
            raise ValueError(f"{instance.name}: the search needs symmetric distances")
        v = dist.shape[0]
        data = np.zeros((5, v))
        data[DEMAND] = instance.demands
        data[DUE] = np.inf
        timed = isinstance(instance, VRPTWInstance)
        if timed:
            data[READY] = instance.ready
            data[DUE] = instance.due
            data[SERVICE] = instance.service
        optional = isinstance(instance, PCVRPInstance)
        if optional:
            data[PRIZE] = instance.prizes
        coords = metric.coords
        if coords is None:  # explicit matrix: neighbours by the matrix, no geometry
            order = np.argsort(dist + np.diag(np.full(v, np.inf)), axis=1, kind="stable")
            near = order[:, : min(neighbours + 1, v - 1)]
            unit = np.zeros((v, 2))
        else:
            near = knn(np.asarray(coords, np.float64), neighbours + 1)
            lo = coords.min(axis=0)
            span = float((coords.max(axis=0) - lo).max()) or 1.0
            unit = (coords - lo) / span
        keep = max(0, min(neighbours, v - 2))
        near = np.array([row[row != 0][:keep] for row in near], dtype=np.int64).reshape(v, keep)
        return cls(instance, dist, data, float(instance.capacity), timed, optional,
                   np.ascontiguousarray(near), unit)


@dataclass
class SearchState:
    """One solution in the kernels' representation (see the module docstring)."""

    nodes: np.ndarray
    times: np.ndarray
    routes: np.ndarray
    rstat: np.ndarray

    @classmethod
    def empty(cls, num_nodes: int) -> SearchState:
        nodes = np.zeros((4, num_nodes), np.int64)
        nodes[ROUTE] = -1
        return cls(nodes, np.zeros((4, num_nodes)), np.zeros((3, num_nodes), np.int64),
                   np.zeros((3, num_nodes)))

    def copy(self) -> SearchState:
        return SearchState(self.nodes.copy(), self.times.copy(), self.routes.copy(),
                           self.rstat.copy())

    def copy_from(self, other: SearchState) -> None:
        copy_state(other.nodes, other.times, other.routes, other.rstat,
                   self.nodes, self.times, self.routes, self.rstat)

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return self.nodes, self.times, self.routes, self.rstat

    def to_routes(self) -> Routes:
        """The solution as :class:`Routes` (route slots in order, empty ones dropped)."""
        out = []
        for r in np.flatnonzero(self.routes[SIZE] > 0):
            seq = np.empty(self.routes[SIZE, r], np.int64)
            node = self.routes[FIRST, r]
            for k in range(len(seq)):
                seq[k] = node
                node = self.nodes[SUCC, node]
            out.append(seq)
        return Routes(out)

    def served(self) -> np.ndarray:
        """Customers on some route. ``[S]``."""
        return np.flatnonzero(self.nodes[ROUTE, 1:] >= 0) + 1


def from_routes(problem: SearchProblem, solution: Routes) -> SearchState:
    """Load ``solution`` (assumed valid for the problem) into a fresh :class:`SearchState`."""
    state = SearchState.empty(problem.num_nodes)
    for r, seq in enumerate(solution.routes):
        seq = np.asarray(seq, np.int64)
        state.nodes[ROUTE, seq] = r
        state.nodes[SUCC, seq] = np.append(seq[1:], 0)
        state.nodes[PRED, seq] = np.concatenate([[0], seq[:-1]])
        state.routes[FIRST, r] = seq[0]
        state.routes[SIZE, r] = len(seq)
        refresh_route(problem.dist, problem.node_data, problem.capacity, problem.timed,
                      *state.arrays(), r)
    return state


def check_route(problem: SearchProblem, state: SearchState, r: int) -> bool:
    """Whether route slot ``r`` keeps capacity and every time window (refreshing it)."""
    return bool(refresh_route(problem.dist, problem.node_data, problem.capacity, problem.timed,
                              *state.arrays(), r))


def total_cost(problem: SearchProblem, state: SearchState) -> float:
    return float(state_cost(problem.node_data, *state.arrays()))


@nb.njit(cache=True)
def copy_state(n0, t0, r0, s0, n1, t1, r1, s1) -> None:  # noqa: ANN001
    """Copy one state's four arrays into another's (same shapes)."""
    n1[:] = n0
    t1[:] = t0
    r1[:] = r0
    s1[:] = s0


@nb.njit(cache=True)
def state_cost(node_data, nodes, times, routes, rstat) -> float:  # noqa: ANN001
    """Total route length minus collected prizes (prizes are 0 outside PCVRP)."""
    total = 0.0
    for r in range(routes.shape[1]):
        if routes[SIZE, r] > 0:
            total += rstat[LENGTH, r] - rstat[PRIZES, r]
    return total


@nb.njit(cache=True)
def refresh_route(dist, node_data, capacity, timed, nodes, times, routes, rstat, r) -> bool:  # noqa: ANN001
    """Recompute every derived field of route ``r`` from its ``FIRST`` and the successor
    links; an empty route (``FIRST`` 0) becomes a free slot. Returns False when the route
    breaks capacity or a time window."""
    node = routes[FIRST, r]
    if node == 0:
        routes[LAST, r] = 0
        routes[SIZE, r] = 0
        rstat[LOAD, r] = 0.0
        rstat[LENGTH, r] = 0.0
        rstat[PRIZES, r] = 0.0
        return True
    prev = 0
    pos = 0
    load = 0.0
    length = 0.0
    prizes = 0.0
    t = node_data[READY, 0] + node_data[SERVICE, 0]
    ok = True
    while node != 0:
        nodes[ROUTE, node] = r
        nodes[POS, node] = pos
        nodes[PRED, node] = prev
        load += node_data[DEMAND, node]
        prizes += node_data[PRIZE, node]
        times[CUMLOAD, node] = load
        length += dist[prev, node]
        times[OUT, prev] = dist[prev, node]
        if timed:
            t = max(t + dist[prev, node], node_data[READY, node])
            times[EARLY, node] = t
            if t > node_data[DUE, node] + EPS:
                ok = False
            t += node_data[SERVICE, node]
        prev = node
        pos += 1
        node = nodes[SUCC, node]
    length += dist[prev, 0]
    times[OUT, prev] = dist[prev, 0]
    routes[LAST, r] = prev
    routes[SIZE, r] = pos
    rstat[LOAD, r] = load
    rstat[LENGTH, r] = length
    rstat[PRIZES, r] = prizes
    if load > capacity + EPS:
        ok = False
    if timed:
        if t + dist[prev, 0] > node_data[DUE, 0] + EPS:
            ok = False
        late = node_data[DUE, 0]
        nxt = 0
        node = prev
        while node != 0:
            late = min(node_data[DUE, node],
                       late - dist[node, nxt] - node_data[SERVICE, node])
            times[LATE, node] = late
            nxt = node
            node = nodes[PRED, node]
    return ok


@nb.njit(cache=True)
def unlink(nodes, routes, c) -> int:  # noqa: ANN001
    """Take customer ``c`` out of its route's links (derived fields are left stale until the
    route is refreshed). Returns the route it was on."""
    r = nodes[ROUTE, c]
    a = nodes[PRED, c]
    b = nodes[SUCC, c]
    if a == 0:
        routes[FIRST, r] = b
    else:
        nodes[SUCC, a] = b
    if b == 0:
        routes[LAST, r] = a
    else:
        nodes[PRED, b] = a
    nodes[ROUTE, c] = -1
    nodes[SUCC, c] = 0
    nodes[PRED, c] = 0
    return r


@nb.njit(cache=True)
def link_after(nodes, routes, c, a, r) -> None:  # noqa: ANN001
    """Put customer ``c`` right after node ``a`` (0 = at the start) of route ``r``."""
    b = routes[FIRST, r] if a == 0 else nodes[SUCC, a]
    nodes[PRED, c] = a
    nodes[SUCC, c] = b
    nodes[ROUTE, c] = r
    if a == 0:
        routes[FIRST, r] = c
    else:
        nodes[SUCC, a] = c
    if b == 0:
        routes[LAST, r] = c
    else:
        nodes[PRED, b] = c


@nb.njit(cache=True)
def sync_state(src, dst, touched, num_touched, moved, num_moved, buf) -> None:  # noqa: ANN001
    """Make ``dst`` equal to ``src``, given that they differ only on the route slots
    ``touched[:num_touched]`` and on customers that are on those routes (in either state) or
    in ``moved[:num_moved]``. ``buf`` is scratch of at least ``3 V`` ints."""
    sn, st, sr, ss = src
    dn, dt, dr, ds = dst
    k = 0
    for i in range(num_touched):  # collect first: copying rewires dst while walking it
        r = touched[i]
        node = dr[FIRST, r]
        while node != 0:
            buf[k] = node
            k += 1
            node = dn[SUCC, node]
        node = sr[FIRST, r]
        while node != 0:
            buf[k] = node
            k += 1
            node = sn[SUCC, node]
    for i in range(num_moved):
        buf[k] = moved[i]
        k += 1
    for i in range(k):
        v = buf[i]
        dn[:, v] = sn[:, v]
        dt[:, v] = st[:, v]
    for i in range(num_touched):
        r = touched[i]
        dr[:, r] = sr[:, r]
        ds[:, r] = ss[:, r]


@nb.njit(cache=True)
def free_slot(routes) -> int:  # noqa: ANN001
    for r in range(routes.shape[1]):
        if routes[SIZE, r] == 0 and routes[FIRST, r] == 0:
            return r
    return -1
