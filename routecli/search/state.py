"""The solution representation the numba search kernels share, and its converters.

Nodes are ``0..N`` (0 the depot). A solution is four arrays, so a numba kernel can read and
write it and the engine can copy it in one ``memcpy`` each; each is node- (or route-slot-)
major, so all fields of one node share a cache line:

- ``nodes``  int64  ``[V, 4]``: ``SUCC``, ``PRED`` (0 = the depot), ``ROUTE`` (-1 = unserved;
  PCVRP only), ``POS`` (0-based place in the route);
- ``times``  float64 ``[V, 4]``: ``EARLY`` (service start), ``LATE`` (latest service start
  that keeps the rest of the route feasible), ``CUMLOAD`` (load served up to and including
  the node), ``OUT`` (length of the edge leaving the node);
- ``routes`` int64  ``[V, 3]``: ``FIRST``, ``LAST``, ``SIZE`` per route slot (``SIZE`` 0 =
  free slot; there are ``V`` slots, more than any solution needs);
- ``rstat``  float64 ``[V, 3]``: ``LOAD``, ``LENGTH``, ``PRIZES`` (collected) per route slot.

The problem side is a dense distance matrix computed once from the instance's own metric (so
CVRPLIB's rounded ``euc2d`` edges are exactly what the search optimises) and ``node_data``
``[V, 5]`` (``DEMAND``, ``READY``, ``DUE``, ``SERVICE``, ``PRIZE``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np

from routecli.errors import OptionError
from routecli.kernels import knn
from routecli.problems import CVRPInstance, PCVRPInstance, Routes, VRPTWInstance
from routecli.problems.geometry import unit_square

SUCC, PRED, ROUTE, POS = 0, 1, 2, 3
EARLY, LATE, CUMLOAD, OUT = 0, 1, 2, 3
FIRST, LAST, SIZE = 0, 1, 2
LOAD, LENGTH, PRIZES = 0, 1, 2
DEMAND, READY, DUE, SERVICE, PRIZE = 0, 1, 2, 3, 4
MAX_NODES = 10_000  # the dense float64 matrix then takes 800 MB
# Slack for time-window and capacity comparisons of float sums (validate allows 1e-6).
EPS = 1e-9

RoutingInstance = CVRPInstance | VRPTWInstance | PCVRPInstance


@dataclass(frozen=True)
class SearchProblem:
    """Numba-ready view of a CVRP / VRPTW / PCVRP instance.

    ``dist`` ``[V, V]`` under the instance's metric; ``node_data`` ``[V, 5]``; ``neighbours``
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
        if metric.size > MAX_NODES:
            raise OptionError(f"{instance.name}: {metric.size} nodes; the search keeps a dense "
                              f"distance matrix and takes at most {MAX_NODES}")
        dist = np.ascontiguousarray(metric.full_matrix(), dtype=np.float64)
        if not np.array_equal(dist, dist.T):
            raise OptionError(f"{instance.name}: the search needs symmetric distances")
        v = dist.shape[0]
        data = np.zeros((v, 5))
        data[:, DEMAND] = instance.demands
        data[:, DUE] = np.inf
        timed = isinstance(instance, VRPTWInstance)
        if isinstance(instance, VRPTWInstance):
            data[:, READY] = instance.ready
            data[:, DUE] = instance.due
            data[:, SERVICE] = instance.service
        optional = isinstance(instance, PCVRPInstance)
        if isinstance(instance, PCVRPInstance):
            data[:, PRIZE] = instance.prizes
        coords = metric.coords
        if coords is None:  # explicit matrix: neighbours by the matrix, no geometry
            order = np.argsort(dist + np.diag(np.full(v, np.inf)), axis=1, kind="stable")
            near = order[:, : min(neighbours + 1, v - 1)]
            unit = np.zeros((v, 2))
        else:
            near = knn(np.asarray(coords, np.float64), neighbours + 1)
            unit = unit_square(coords)
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
        nodes = np.zeros((num_nodes, 4), np.int64)
        nodes[:, ROUTE] = -1
        return cls(nodes, np.zeros((num_nodes, 4)), np.zeros((num_nodes, 3), np.int64),
                   np.zeros((num_nodes, 3)))

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
        for r in np.flatnonzero(self.routes[:, SIZE] > 0):
            seq = np.empty(self.routes[r, SIZE], np.int64)
            node = self.routes[r, FIRST]
            for k in range(len(seq)):
                seq[k] = node
                node = self.nodes[node, SUCC]
            out.append(seq)
        return Routes(out)

    def served(self) -> np.ndarray:
        """Customers on some route. ``[S]``."""
        return np.flatnonzero(self.nodes[1:, ROUTE] >= 0) + 1


def from_routes(problem: SearchProblem, solution: Routes) -> SearchState:
    """Load ``solution`` (assumed valid for the problem) into a fresh :class:`SearchState`."""
    state = SearchState.empty(problem.num_nodes)
    for r, seq in enumerate(solution.routes):
        seq = np.asarray(seq, np.int64)
        state.nodes[seq, ROUTE] = r
        state.nodes[seq, SUCC] = np.append(seq[1:], 0)
        state.times[seq, OUT] = problem.dist[seq, state.nodes[seq, SUCC]]
        state.nodes[seq, PRED] = np.concatenate([[0], seq[:-1]])
        state.routes[r, FIRST] = seq[0]
        state.routes[r, SIZE] = len(seq)
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
    for r in range(routes.shape[0]):
        if routes[r, SIZE] > 0:
            total += rstat[r, LENGTH] - rstat[r, PRIZES]
    return total


@nb.njit(cache=True)
def refresh_route(dist, node_data, capacity, timed, nodes, times, routes, rstat, r) -> bool:  # noqa: ANN001
    """Recompute every derived field of route ``r`` from its ``FIRST``, the successor links
    and the cached out-edge lengths ``OUT`` (which every relinking keeps current, so this
    walk reads no distance-matrix row: they are the cache misses of large instances); an
    empty route (``FIRST`` 0) becomes a free slot. Returns False when the route breaks
    capacity or a time window."""
    node = routes[r, FIRST]
    if node == 0:
        routes[r, LAST] = 0
        routes[r, SIZE] = 0
        rstat[r, LOAD] = 0.0
        rstat[r, LENGTH] = 0.0
        rstat[r, PRIZES] = 0.0
        return True
    prev = 0
    pos = 0
    load = 0.0
    length = 0.0
    prizes = 0.0
    t = node_data[0, READY] + node_data[0, SERVICE]
    ok = True
    while node != 0:
        nodes[node, ROUTE] = r
        nodes[node, POS] = pos
        nodes[node, PRED] = prev
        load += node_data[node, DEMAND]
        prizes += node_data[node, PRIZE]
        times[node, CUMLOAD] = load
        edge = dist[0, node] if prev == 0 else times[prev, OUT]
        length += edge
        if timed:
            t = max(t + edge, node_data[node, READY])
            times[node, EARLY] = t
            if t > node_data[node, DUE] + EPS:
                ok = False
            t += node_data[node, SERVICE]
        prev = node
        pos += 1
        node = nodes[node, SUCC]
    length += times[prev, OUT]
    routes[r, LAST] = prev
    routes[r, SIZE] = pos
    rstat[r, LOAD] = load
    rstat[r, LENGTH] = length
    rstat[r, PRIZES] = prizes
    if load > capacity + EPS:
        ok = False
    if timed:
        if t + times[prev, OUT] > node_data[0, DUE] + EPS:
            ok = False
        late = node_data[0, DUE]
        node = prev
        while node != 0:
            late = min(node_data[node, DUE], late - times[node, OUT] - node_data[node, SERVICE])
            times[node, LATE] = late
            node = nodes[node, PRED]
    return ok


@nb.njit(cache=True)
def unlink(dist, nodes, times, routes, c) -> int:  # noqa: ANN001
    """Take customer ``c`` out of its route's links (derived fields are left stale until the
    route is refreshed). Returns the route it was on."""
    r = nodes[c, ROUTE]
    a = nodes[c, PRED]
    b = nodes[c, SUCC]
    if a == 0:
        routes[r, FIRST] = b
    else:
        nodes[a, SUCC] = b
        times[a, OUT] = dist[a, b]
    if b == 0:
        routes[r, LAST] = a
    else:
        nodes[b, PRED] = a
    nodes[c, ROUTE] = -1
    nodes[c, SUCC] = 0
    nodes[c, PRED] = 0
    return r


@nb.njit(cache=True)
def link_after(dist, nodes, times, routes, c, a, r) -> None:  # noqa: ANN001
    """Put customer ``c`` right after node ``a`` (0 = at the start) of route ``r``."""
    b = routes[r, FIRST] if a == 0 else nodes[a, SUCC]
    nodes[c, PRED] = a
    nodes[c, SUCC] = b
    nodes[c, ROUTE] = r
    times[c, OUT] = dist[c, b]
    if a == 0:
        routes[r, FIRST] = c
    else:
        nodes[a, SUCC] = c
        times[a, OUT] = dist[a, c]
    if b == 0:
        routes[r, LAST] = c
    else:
        nodes[b, PRED] = c


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
        node = dr[r, FIRST]
        while node != 0:
            buf[k] = node
            k += 1
            node = dn[node, SUCC]
        node = sr[r, FIRST]
        while node != 0:
            buf[k] = node
            k += 1
            node = sn[node, SUCC]
    for i in range(num_moved):
        buf[k] = moved[i]
        k += 1
    for i in range(k):
        v = buf[i]
        dn[v] = sn[v]
        dt[v] = st[v]
    for i in range(num_touched):
        r = touched[i]
        dr[r] = sr[r]
        ds[r] = ss[r]


@nb.njit(cache=True)
def free_slot(routes) -> int:  # noqa: ANN001
    for r in range(routes.shape[0]):
        if routes[r, SIZE] == 0 and routes[r, FIRST] == 0:
            return r
    return -1
