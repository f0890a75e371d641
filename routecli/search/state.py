"""The solution representation the numba search kernels share, and its converters.

Nodes are ``0..N`` (0 the depot). A solution is five arrays, so a numba kernel can read and
write it and the engine can copy it in one ``memcpy`` each; each is node- (or route-slot-)
major, so all fields of one node share a cache line:

- ``nodes``  int64  ``[V, 4]``: ``SUCC``, ``PRED`` (0 = the depot), ``ROUTE`` (-1 = unserved;
  PCVRP only), ``POS`` (0-based place in the route);
- ``times``  float64 ``[V, 4]``: ``EARLY`` (service start), ``LATE`` (latest service start
  that keeps the rest of the route feasible), ``CUMLOAD`` (load served up to and including
  the node), ``OUT`` (length of the edge leaving the node);
- ``routes`` int64  ``[V, 3]``: ``FIRST``, ``LAST``, ``SIZE`` per route slot (``SIZE`` 0 =
  free slot; there are ``V`` slots, more than any solution needs);
- ``rstat``  float64 ``[V, 3]``: ``LOAD``, ``LENGTH``, ``PRIZES`` (collected) per route slot;
- ``totals`` int64 ``[2]``: ``ROUTES`` (non-empty route slots) and ``SERVED`` (customers on
  a route), kept by :func:`refresh_route`, so no kernel counts them over all slots.

The problem side is a :class:`routecli.kernels.provider.DistanceProvider` under the instance's
own metric (so CVRPLIB's rounded ``euc2d`` edges are exactly what the search optimises): a
dense matrix up to :data:`DENSE_MAX_NODES` nodes and for explicit matrices, above that the
coordinates, each edge computed when asked (the same values; memory ``O(N)`` instead of
``O(N^2)``); ``node_data`` ``[V, 5]`` (``DEMAND``, ``READY``, ``DUE``, ``SERVICE``,
``PRIZE``); the ``K`` nearest neighbours of every node; and, above
:data:`EXHAUSTIVE_MAX_NODES`, a grid over the coordinates for the repair's wider search
(:func:`routecli.search.repair.best_insertion`). Memory is ``O(N K)`` whatever the size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np

from routecli.errors import OptionError
from routecli.kernels import knn
from routecli.kernels.candidates import GridView, NodeGrid
from routecli.kernels.provider import DistanceProvider, DistanceView, edge
from routecli.problems import CVRPInstance, PCVRPInstance, Routes, VRPTWInstance
from routecli.problems.geometry import unit_square

SUCC, PRED, ROUTE, POS = 0, 1, 2, 3
EARLY, LATE, CUMLOAD, OUT = 0, 1, 2, 3
FIRST, LAST, SIZE = 0, 1, 2
LOAD, LENGTH, PRIZES = 0, 1, 2
ROUTES, SERVED = 0, 1
DEMAND, READY, DUE, SERVICE, PRIZE = 0, 1, 2, 3, 4
# Up to here the search reads a dense matrix (8 MB at 1,000 nodes); above it computes edges
# from coordinates. The two give the same values; see docs/solvers.md for the measured speeds.
DENSE_MAX_NODES = 1_000
# Up to here the engine affords steps that cost O(N): an insertion with no room next to its
# neighbours scans every route, and the start solution gets full local-search passes (3 s
# each at 30,000 nodes). Above, the insertion looks at the nearest nodes with room on a grid
# and the annealing starts from the savings solution, which it improves faster than those
# passes do (docs/solvers.md).
EXHAUSTIVE_MAX_NODES = 10_000
NEIGHBOURS = 40  # K: the neighbour list of every node (granular ruin, repair, local search)
# Slack for time-window and capacity comparisons of float sums (validate allows 1e-6).
EPS = 1e-9

RoutingInstance = CVRPInstance | VRPTWInstance | PCVRPInstance
NO_GRID: GridView = (np.zeros((0, 2)), np.zeros(0, np.int64), np.zeros(0, np.int64), 1.0, 0.0,
                     0.0, 0, 0)


def distance_provider(instance: RoutingInstance,
                      dense_max: int = DENSE_MAX_NODES) -> DistanceProvider:
    """The instance's distances: its explicit matrix, a dense matrix up to ``dense_max``
    nodes, else its coordinates with on-demand edges."""
    metric = instance.metric
    if metric.coords is None or metric.size <= dense_max:
        return DistanceProvider.dense(metric.full_matrix())
    return DistanceProvider.on_demand(np.asarray(metric.coords, np.float64), metric.rule)


@dataclass(frozen=True)
class SearchProblem:
    """Numba-ready view of a CVRP / VRPTW / PCVRP instance.

    ``distances`` under the instance's metric (``dist``, its view, is what kernels take);
    ``node_data`` ``[V, 5]``; ``neighbours`` ``[V, K]`` nearest other nodes (by the metric) of
    each node, the depot excluded; ``exhaustive`` whether steps may cost ``O(N)``
    (:data:`EXHAUSTIVE_MAX_NODES`, always for an explicit matrix); ``grid`` a
    :class:`routecli.kernels.candidates.NodeGrid` view over the coordinates when not
    (else :data:`NO_GRID`);
    ``unit_coords`` ``[V, 2]`` coordinates scaled into the unit square (aspect kept), the
    normalised copy a learned policy reads.
    """

    instance: RoutingInstance
    distances: DistanceProvider
    node_data: np.ndarray
    capacity: float
    timed: bool
    optional: bool
    neighbours: np.ndarray
    exhaustive: bool
    grid: GridView
    unit_coords: np.ndarray

    @property
    def num_nodes(self) -> int:
        return self.node_data.shape[0]

    @property
    def dist(self) -> DistanceView:
        """The distances as kernels take them (read with
        :func:`routecli.kernels.provider.edge`)."""
        return self.distances.view

    @property
    def data(self) -> tuple:
        """What the engine's kernels take: ``(dist, node_data, capacity, timed, optional,
        neighbours, grid)``."""
        return (self.dist, self.node_data, self.capacity, self.timed, self.optional,
                self.neighbours, self.grid)

    @property
    def nbytes(self) -> int:
        """Memory of the problem's arrays (distances, node data, neighbour lists, grid)."""
        return (self.distances.nbytes + self.node_data.nbytes + self.neighbours.nbytes
                + sum(a.nbytes for a in self.grid[:3]) + self.unit_coords.nbytes)

    @classmethod
    def from_instance(cls, instance: RoutingInstance, neighbours: int = NEIGHBOURS,
                      dense_max: int = DENSE_MAX_NODES,
                      exhaustive_max: int = EXHAUSTIVE_MAX_NODES) -> SearchProblem:
        metric = instance.metric
        distances = distance_provider(instance, dense_max)
        if distances.is_dense and not np.array_equal(distances.matrix, distances.matrix.T):
            raise OptionError(f"{instance.name}: the search needs symmetric distances")
        v = distances.size
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
        exhaustive = coords is None or v <= exhaustive_max
        grid = NO_GRID
        if coords is None:  # explicit matrix: neighbours by the matrix, no geometry
            matrix = distances.matrix
            order = np.argsort(matrix + np.diag(np.full(v, np.inf)), axis=1, kind="stable")
            near = order[:, : min(neighbours + 1, v - 1)]
            unit = np.zeros((v, 2))
        else:
            xy = np.ascontiguousarray(coords, np.float64)
            near = knn(xy, neighbours + 1)
            unit = unit_square(coords)
            if not exhaustive:
                grid = NodeGrid(xy).view
        keep = max(0, min(neighbours, v - 2))
        return cls(instance, distances, data, float(instance.capacity), timed, optional,
                   _without_depot(near, keep), exhaustive, grid, unit)


def _without_depot(near: np.ndarray, keep: int) -> np.ndarray:
    """The first ``keep`` entries of each row of ``near`` other than the depot. ``[V, keep]``."""
    order = np.argsort(near == 0, axis=1, kind="stable")  # the depot to the end, others in order
    return np.ascontiguousarray(np.take_along_axis(near, order, axis=1)[:, :keep], np.int64)


@dataclass
class SearchState:
    """One solution in the kernels' representation (see the module docstring)."""

    nodes: np.ndarray
    times: np.ndarray
    routes: np.ndarray
    rstat: np.ndarray
    totals: np.ndarray

    @classmethod
    def empty(cls, num_nodes: int) -> SearchState:
        nodes = np.zeros((num_nodes, 4), np.int64)
        nodes[:, ROUTE] = -1
        return cls(nodes, np.zeros((num_nodes, 4)), np.zeros((num_nodes, 3), np.int64),
                   np.zeros((num_nodes, 3)), np.zeros(2, np.int64))

    def copy(self) -> SearchState:
        return SearchState(*(a.copy() for a in self.arrays()))

    def copy_from(self, other: SearchState) -> None:
        copy_state(other.arrays(), self.arrays())

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return self.nodes, self.times, self.routes, self.rstat, self.totals

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
        state.times[seq, OUT] = problem.distances.pairs(seq, state.nodes[seq, SUCC])
        state.nodes[seq, PRED] = np.concatenate([[0], seq[:-1]])
        state.routes[r, FIRST] = seq[0]
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
def copy_state(src, dst) -> None:  # noqa: ANN001
    """Copy one state's arrays (a tuple, :meth:`SearchState.arrays`) into another's."""
    sn, st, sr, ss, sx = src
    dn, dt, dr, ds, dx = dst
    dn[:] = sn
    dt[:] = st
    dr[:] = sr
    ds[:] = ss
    dx[:] = sx


@nb.njit(cache=True)
def state_cost(node_data, nodes, times, routes, rstat, totals) -> float:  # noqa: ANN001
    """Total route length minus collected prizes (prizes are 0 outside PCVRP)."""
    total = 0.0
    for r in range(routes.shape[0]):
        if routes[r, SIZE] > 0:
            total += rstat[r, LENGTH] - rstat[r, PRIZES]
    return total


@nb.njit(cache=True)
def refresh_route(dist, node_data, capacity, timed, nodes, times, routes, rstat, totals, r) -> bool:  # noqa: ANN001
    """Recompute every derived field of route ``r`` (and ``totals``) from its ``FIRST``, the
    successor links and the cached out-edge lengths ``OUT`` (which every relinking keeps
    current, so this walk computes one edge, the first); an empty route (``FIRST`` 0) becomes
    a free slot. Returns False when the route breaks capacity or a time window."""
    old_size = routes[r, SIZE]
    node = routes[r, FIRST]
    if node == 0:
        routes[r, LAST] = 0
        routes[r, SIZE] = 0
        rstat[r, LOAD] = 0.0
        rstat[r, LENGTH] = 0.0
        rstat[r, PRIZES] = 0.0
        _count_route(totals, old_size, 0)
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
        leg = edge(dist, 0, node) if prev == 0 else times[prev, OUT]
        length += leg
        if timed:
            t = max(t + leg, node_data[node, READY])
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
    _count_route(totals, old_size, pos)
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


@nb.njit(cache=True, inline="always")
def _count_route(totals, old_size, new_size) -> None:  # noqa: ANN001
    totals[ROUTES] += int(new_size > 0) - int(old_size > 0)
    totals[SERVED] += new_size - old_size


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
        times[a, OUT] = edge(dist, a, b)
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
    times[c, OUT] = edge(dist, c, b)
    if a == 0:
        routes[r, FIRST] = c
    else:
        nodes[a, SUCC] = c
        times[a, OUT] = edge(dist, a, c)
    if b == 0:
        routes[r, LAST] = c
    else:
        nodes[b, PRED] = c


@nb.njit(cache=True)
def sync_state(src, dst, touched, num_touched, moved, num_moved, buf) -> None:  # noqa: ANN001
    """Make ``dst`` equal to ``src``, given that they differ only on the route slots
    ``touched[:num_touched]`` (distinct), on customers that are on those routes (in either
    state) or in ``moved[:num_moved]``, and on ``totals``. ``buf`` is scratch of at least
    ``3 V`` ints."""
    sn, st, sr, ss, sx = src
    dn, dt, dr, ds, dx = dst
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
    dx[:] = sx


@nb.njit(cache=True)
def free_slot(routes) -> int:  # noqa: ANN001
    for r in range(routes.shape[0]):
        if routes[r, SIZE] == 0 and routes[r, FIRST] == 0:
            return r
    return -1
