"""PyVRP's hybrid genetic search (Vidal 2022; Wouda et al. 2024) as the classical reference.

Every problem with a depot maps onto one PyVRP ``ProblemData``: TSP is a single uncapacitated
vehicle, CVRP an unlimited fleet, VRPTW adds windows and service times, PCVRP optional clients
with prizes (PyVRP minimises distance + uncollected prizes, the same argmin as distance -
collected prizes), PDTSP one vehicle with pickup-delivery shipments. PyVRP works in integers:
integral metrics (TSPLIB rules, explicit matrices) go in unchanged; exact Euclidean instances
are scaled by :data:`EXACT_SCALE` and rounded, and the returned solution is re-costed by the
instance on its own scale. Loads are scaled by the same factor as distances: PyVRP bounds its
penalty per unit of excess load (``PenaltyParams.max_penalty``), so distances scaled alone
would make overloading a route cheaper than driving and its search return overloaded routes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pyvrp
from pyvrp.search import (
    LocalSearch,
    NeighbourhoodParams,
    PerturbationManager,
    compute_neighbours,
)

from routecli.errors import OptionError
from routecli.kernels.provider import DistanceProvider
from routecli.problems import (
    CVRPInstance,
    Instance,
    PCVRPInstance,
    PDTSPInstance,
    Routes,
    Tour,
    TSPInstance,
    VRPTWInstance,
)
from routecli.resources import require_memory
from routecli.solvers import Effort, Progress, ProgressFn, read_start
from routecli.stop import Criterion, Watch, search_budget

EXACT_SCALE = 10_000
BLOCK_PAIRS = 1 << 22  # node pairs per block when filling the integer matrices (~100 MB of scratch)
# Peak memory of a run: PyVRP's two int64 matrices and the one filled for it, 24 bytes per pair
# of nodes, on about 250 MB (peak RSS of `routecli solve -m hgs -t 3` on AGS Leuven1, Antwerp1
# and Ghent1, 3,001 to 10,001 nodes: 0.50, 1.11, 2.64 GB); the base is rounded up.
BYTES_PER_PAIR = 24
BASE_BYTES = 400 * 2**20
# Above this many nodes the search starts from nearest neighbour unless given a start: PyVRP's
# own, a local search of a random solution to its end, runs before the stopping criterion is
# first asked (over 12 minutes at 10,000 nodes on a loaded 2-core machine).
NEAREST_START_NODES = 2_000
_UNLIMITED = np.iinfo(np.int64).max


def _scale(instance: Instance) -> float:
    return EXACT_SCALE if instance.metric.rule == "exact" else 1.0  # type: ignore[union-attr]


def memory_needed(instance: Instance) -> int:
    """Bytes a PyVRP run on ``instance`` takes at its peak, about: :data:`BYTES_PER_PAIR` per
    pair of nodes (its distance and duration matrices, and the one routecli fills first) on
    top of :data:`BASE_BYTES`."""
    n = instance.metric.size  # type: ignore[union-attr]
    return BYTES_PER_PAIR * n * n + BASE_BYTES


def integer_matrices(instance: Instance, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """PyVRP's distances (``d * scale`` rounded) and durations (rounded up) ``[N, N]`` int64,
    filled a block of rows at a time (no float copy of the whole matrix); one array for both
    while every value is an integer, as under the TSPLIB rules."""
    metric = instance.metric  # type: ignore[union-attr]
    n = metric.size
    edges = (DistanceProvider.on_demand(metric.coords, metric.rule) if metric.coords is not None
             else DistanceProvider.dense(metric.full_matrix()))
    distances = np.empty((n, n), np.int64)
    durations = distances
    rows = max(1, BLOCK_PAIRS // max(n, 1))
    for lo in range(0, n, rows):
        hi = min(n, lo + rows)
        src, dst = np.divmod(np.arange(lo * n, hi * n), n)
        block = edges.pairs(src, dst).reshape(hi - lo, n) * scale
        distances[lo:hi] = np.rint(block)
        # Times err on the late side (travel and service rounded up, closings down): a
        # schedule PyVRP finds on time in integers is then on time in the instance's units.
        late = np.ceil(block - 1e-9)
        if durations is distances and not np.array_equal(late, distances[lo:hi]):
            durations = distances.copy()  # earlier rows coincide; later ones are written below
        if durations is not distances:
            durations[lo:hi] = late
    # PyVRP needs a zero diagonal; GEO gives d(i, i) = 1 (truncation + 1), which no tour uses
    # (the solution is re-costed under the file's own rule)
    np.fill_diagonal(distances, 0)
    np.fill_diagonal(durations, 0)
    return distances, durations


def problem_data(instance: Instance) -> pyvrp.ProblemData:
    """Translate ``instance`` into PyVRP's data model (location 0 is the depot)."""
    metric = instance.metric  # type: ignore[union-attr]
    scale = _scale(instance)
    distances, durations = integer_matrices(instance, scale)
    coords = metric.coords if metric.coords is not None else np.zeros((metric.size, 2))
    locations = [pyvrp.Location(float(x), float(y)) for x, y in coords]
    n = metric.size
    clients: list[pyvrp.Client] = []
    shipments: list[pyvrp.Shipment] = []
    depot = pyvrp.Depot(0)
    vehicle = pyvrp.VehicleType(num_available=1, capacity=[])
    if isinstance(instance, TSPInstance):
        clients = [pyvrp.Client(location=i) for i in range(1, n)]
    elif isinstance(instance, PDTSPInstance):
        r = instance.num_requests
        shipments = [pyvrp.Shipment(i, i + r) for i in range(1, r + 1)]
    else:
        # a knapsack has no metric: instance.metric above already raised for one
        assert isinstance(instance, CVRPInstance | VRPTWInstance | PCVRPInstance)
        # loads err on the safe side like times: demands rounded up, the capacity down
        demand = np.ceil(np.asarray(instance.demands, np.float64) * scale - 1e-9).astype(np.int64)
        capacity = int(math.floor(float(instance.capacity) * scale + 1e-9))
        tw = _time_windows(instance, scale)
        if tw is not None:
            ready, due, service = tw
            depot = pyvrp.Depot(0, tw_early=int(ready[0]), tw_late=int(due[0]))
            vehicle = pyvrp.VehicleType(num_available=n - 1, capacity=[capacity],
                                        tw_early=int(ready[0]), tw_late=int(due[0]))
        else:
            ready = np.zeros(n, np.int64)
            due = np.full(n, _UNLIMITED)
            service = np.zeros(n, np.int64)
            vehicle = pyvrp.VehicleType(num_available=n - 1, capacity=[capacity])
        optional = isinstance(instance, PCVRPInstance)
        prizes = (np.rint(np.asarray(instance.prizes) * scale).astype(np.int64)
                  if isinstance(instance, PCVRPInstance) else np.zeros(n, np.int64))
        clients = [
            pyvrp.Client(location=i, delivery=[int(demand[i])], service_duration=int(service[i]),
                         tw_early=int(ready[i]), tw_late=int(due[i]), prize=int(prizes[i]),
                         required=not optional)
            for i in range(1, n)
        ]
    # pyvrp's stub types the matrices as np.ndarray[int], int in ndarray's shape parameter
    return pyvrp.ProblemData(locations, clients, [depot], [vehicle],
                             [distances], [durations],  # type: ignore[list-item]
                             shipments=shipments)


def _time_windows(instance: Instance, scale: float):  # noqa: ANN202 - tuple of 3 arrays or None
    """Integer ``ready``, ``due``, ``service`` (see the rounding note in :func:`problem_data`)."""
    if not isinstance(instance, VRPTWInstance):
        return None
    ready = np.ceil(np.asarray(instance.ready, np.float64) * scale - 1e-9).astype(np.int64)
    due = np.floor(np.asarray(instance.due, np.float64) * scale + 1e-9).astype(np.int64)
    service = np.ceil(np.asarray(instance.service, np.float64) * scale - 1e-9).astype(np.int64)
    return ready, due, service


def _locations(route: pyvrp.Route, data: pyvrp.ProblemData) -> list[int]:
    """Location indices a route visits, depots excluded, in order."""
    out: list[int] = []
    for act in route.schedule():
        kind = act.type
        if kind == pyvrp.ActivityType.CLIENT:
            out.append(data.client(act.idx).location)
        elif kind == pyvrp.ActivityType.PICKUP:
            out.append(data.shipment(act.idx).pickup.location)
        elif kind == pyvrp.ActivityType.DELIVERY:
            out.append(data.shipment(act.idx).delivery.location)
    return out


def to_solution(instance: Instance, result_routes: list[list[int]]) -> Tour | Routes:
    if isinstance(instance, TSPInstance | PDTSPInstance):
        visits = [v for route in result_routes for v in route]
        return Tour(np.array([0, *visits], dtype=np.int64))
    return Routes(result_routes)


class _Watch:
    """PyVRP stopping criterion: the run's criterion (:func:`routecli.stop.search_budget`)
    and a progress report whenever PyVRP's best cost improves. PyVRP calls it before every
    iteration with the best cost so far, in its integer units, so call ``k`` comes after ``k``
    iterations."""

    def __init__(self, stop: Criterion | None, progress: ProgressFn | None, scale: float,
                 early: Sequence[tuple[int, int]] = ()):
        self.watch = Watch(search_budget(stop))
        self.progress = progress
        self.scale = scale
        self.calls = 0
        self.best = math.inf
        self.improved_at: list[int] = []
        self.timed_out = False
        self.early = list(early)
        self.latest: pyvrp.Solution | None = None  # PyVRP's best after the last iteration
        self.early_best: list[pyvrp.Solution | None] = [None] * len(self.early)
        self.early_at: list[int | None] = [None] * len(self.early)

    def __call__(self, best_cost: float) -> bool:
        iteration = self.calls
        self.calls += 1
        if best_cost < self.best:
            self.best = best_cost
            self.improved_at.append(iteration)
            if self.progress is not None:
                self.progress(Progress(self.watch.elapsed, best=best_cost / self.scale))
        for k, (most, stall) in enumerate(self.early):
            if self.early_best[k] is None and (
                    iteration >= most or iteration - self.improved_at[-1] >= stall):
                self.early_best[k], self.early_at[k] = self.latest, iteration
        self.watch.record(iteration, best_cost)
        if self.watch.out_of_iterations():
            return True
        self.timed_out = self.watch.out_of_time()
        return self.timed_out or self.watch.done()


class _Latest(pyvrp.IteratedLocalSearchCallbacks):
    """Hands the watch PyVRP's best solution after every iteration (call ``k`` of the stopping
    criterion sees the best of iteration ``k``)."""

    def __init__(self, watch: _Watch):
        self.watch = watch

    def on_iteration(self, current: pyvrp.Solution, candidate: pyvrp.Solution,
                     best: pyvrp.Solution, cost_evaluator: pyvrp.CostEvaluator) -> None:
        self.watch.latest = best


@dataclass(frozen=True)
class Run:
    """One PyVRP run: the solution, the iterations it ran, the iterations at which its best
    solution improved (the first is 0, the initial solution), whether the wall clock stopped
    it rather than an iteration criterion (then the result depends on machine load), and the
    ``early`` solutions that were asked for with the iterations each of those runs made."""

    solution: Tour | Routes
    iterations: int
    improved_at: list[int]
    timed_out: bool
    early: list[Tour | Routes] = field(default_factory=list)
    early_iterations: list[int] = field(default_factory=list)
    seconds: float = 0.0  # the search's own wall clock, the part the criterion bounds
    stopped_by: str = "finished"  # routecli.stop.Watch.stopped_by when it stopped


def search(instance: Instance, *, seed: int = 0, stop: Criterion | None = None,
           progress: ProgressFn | None = None, early: Sequence[tuple[int, int]] = (),
           initial: Tour | Routes | None = None) -> Run:
    """Run PyVRP on ``instance`` until ``stop`` (:func:`routecli.stop.search_budget`). Stopped
    by iterations or iterations without improvement, not by the clock, the run is
    deterministic for a fixed ``seed``.

    ``early = [(iterations, no_improvement), ...]``: also return, for each pair, the best
    solution at the point where these smaller limits stop the same run, which is the result of
    a run with them (the criterion only watches the search), at no extra cost. ``initial``:
    a feasible solution to start from (PyVRP's warm start; default: :func:`nearest_start`).
    """
    data = problem_data(instance)
    neighbours = granular_neighbours(instance, data)
    start = initial if initial is not None else nearest_start(instance)
    warm = None if start is None else pyvrp.Solution(data, _pyvrp_routes(start))
    watch = _Watch(stop, progress, _scale(instance), early)
    params = pyvrp.SolveParams(ils=pyvrp.IteratedLocalSearchParams(callbacks=_Latest(watch))) \
        if early else pyvrp.SolveParams()
    result = _solve(data, neighbours, watch, seed, params, warm)
    return Run(_solution(instance, data, result.best), watch.calls - 1, watch.improved_at,
               watch.timed_out,
               [_solution(instance, data, result.best if best is None else best)
                for best in watch.early_best],
               [watch.calls - 1 if at is None else at for at in watch.early_at],
               watch.watch.elapsed, watch.watch.stopped_by())


def granular_neighbours(instance: Instance, data: pyvrp.ProblemData,
                        ) -> dict[pyvrp.Activity, list[pyvrp.Activity]]:
    """PyVRP's granular neighbourhood of ``data``: each client's nearest clients (PyVRP's
    default number), nearest first, ties by index. For TSP and CVRP, whose proximity is the
    distance, computed here from the integer matrix a block of rows at a time: the same lists
    as PyVRP's in a fifth of its time (2 s against 11 s at 10,000 nodes, before which the
    search cannot start). With time windows, prizes or shipments: PyVRP's own."""
    if instance.problem not in ("tsp", "cvrp"):
        return compute_neighbours(data)
    matrix = data.distance_matrix(0)  # [N, N], a view; client c is location c + 1
    clients = data.num_clients
    k = min(NeighbourhoodParams().num_neighbours, clients - 1)
    acts = [pyvrp.Activity(pyvrp.ActivityType.CLIENT, c) for c in range(clients)]
    if k < 1:
        return {act: [] for act in acts}
    nearest = np.empty((clients, k), np.int64)
    rows = max(1, BLOCK_PAIRS // clients)
    for lo in range(0, clients, rows):
        hi = min(clients, lo + rows)
        # PyVRP's symmetric proximity: the shorter of the two directions
        near = np.minimum(matrix[lo + 1:hi + 1, 1:], matrix[1:, lo + 1:hi + 1].T)  # [b, C]
        near[np.arange(hi - lo), np.arange(lo, hi)] = _UNLIMITED  # not its own neighbour
        kth = np.partition(near, k - 1, axis=1)[:, k - 1:k]  # [b, 1] the k-th proximity
        below = near < kth
        # of the clients at the k-th proximity, the lowest indices fill the row to k
        tied = (near == kth) & (np.cumsum(near == kth, axis=1) <= k - below.sum(1, keepdims=True))
        index = np.nonzero(below | tied)[1].reshape(hi - lo, k)  # ascending in each row
        order = np.argsort(np.take_along_axis(near, index, 1), axis=1, kind="stable")
        nearest[lo:hi] = np.take_along_axis(index, order, 1)
    return {acts[c]: [acts[j] for j in row] for c, row in enumerate(nearest.tolist())}


def _solve(data: pyvrp.ProblemData, neighbours: dict[pyvrp.Activity, list[pyvrp.Activity]],
           stop: _Watch, seed: int, params: pyvrp.SolveParams,
           initial: pyvrp.Solution | None) -> pyvrp.Result:
    """:func:`pyvrp.solve` on the given neighbour lists (it computes its own inside)."""
    rng = pyvrp.RandomNumberGenerator(seed=seed)
    search_method = LocalSearch(data, rng, neighbours, PerturbationManager(params.perturbation))
    for operator in params.operators:
        if operator.supports(data):
            search_method.add_operator(operator(data))
    penalties = pyvrp.PenaltyManager(params.penalty.midpoint_penalties(data), params.penalty)
    if initial is None:
        initial = search_method(pyvrp.Solution.make_random(data, rng),
                                penalties.max_cost_evaluator(), exhaustive=True)
    return pyvrp.IteratedLocalSearch(data, penalties, search_method, initial, params.ils).run(
        stop, collect_stats=False, display=False)


def nearest_start(instance: Instance) -> Tour | Routes | None:
    """The nearest-neighbour solution, PyVRP's start on instances above
    :data:`NEAREST_START_NODES` nodes given no other (not PDTSP, whose shipments PyVRP places
    itself); None (PyVRP's own start) otherwise."""
    from routecli.baselines.construction import NearestNeighbour

    if instance.size < NEAREST_START_NODES or isinstance(instance, PDTSPInstance):
        return None
    solution = NearestNeighbour().solve(instance)
    assert isinstance(solution, Tour | Routes)
    return solution


def _pyvrp_routes(solution: Tour | Routes) -> list[list[int]]:
    """A solution as PyVRP's routes of client indices (client ``i`` is node ``i + 1``, after
    the one depot); a tour is one route from node 0."""
    if isinstance(solution, Tour):
        return [[int(v) - 1 for v in solution.order if v != 0]]
    return [[int(v) - 1 for v in route] for route in solution.routes if len(route)]


def _solution(instance: Instance, data: pyvrp.ProblemData,
              solution: pyvrp.Solution) -> Tour | Routes:
    return to_solution(instance, [_locations(route, data) for route in solution.routes()])


class HGS:
    name = "hgs"
    problems = ("tsp", "cvrp", "vrptw", "pcvrp", "pdtsp")

    def __init__(self, init: str | None = None) -> None:
        self.init = init
        self.last: Run | None = None  # the latest solve's run (iterations, for rates)
        self.effort: Effort | None = None

    def check(self, instance: Instance) -> None:
        """Refuse, before any solving, an instance whose matrices would not fit in the memory
        available now (never an out-of-memory kill midway), and a warm start that does not
        fit."""
        require_memory(memory_needed(instance),
                       f"hgs on {instance.name} ({instance.metric.size:,} nodes, in PyVRP's "  # type: ignore[union-attr]
                       "dense matrices; sisr and nds --policy strings need none)")
        self.start(instance)

    def start(self, instance: Instance) -> Tour | Routes | None:
        """The warm start of ``instance`` (None: PyVRP's own)."""
        if self.init is None:
            return None
        if isinstance(instance, PDTSPInstance):
            raise OptionError("--init: hgs takes no warm start for PDTSP")
        start = read_start(instance, self.init)
        assert isinstance(start, Tour | Routes)
        return start

    def solve(self, instance: Instance, *, seed: int = 0, stop: Criterion | None = None,
              progress: ProgressFn | None = None) -> Tour | Routes:
        run = self.last = search(instance, seed=seed, stop=stop, progress=progress,
                                 initial=self.start(instance))
        self.effort = Effort("iterations", run.iterations, search_budget(stop).limits().iterations,
                             run.seconds, run.stopped_by)
        return run.solution


@dataclass(frozen=True)
class Settings:
    """PyVRP runs with its default parameters (one thread); the budget is the stopping
    criterion."""

    init: str | None = None  #: warm start: a solution file (any tool's), validated first


def make(settings: Settings) -> HGS:
    return HGS(settings.init)
