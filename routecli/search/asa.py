"""Ruin-and-recreate with (augmented) simulated annealing, the search NDS plugs into.

One iteration (PE paper Appendix E, ASA): the removal policy proposes ``rollouts``
deconstructions of the current solution, each is repaired by randomised greedy insertion,
the best candidate ``s'`` is kept and accepted with probability
``min(1, exp(-(cost(s') - cost(s)) / T))``. The temperature falls geometrically from
``T0`` to ``Tend`` as the elapsed fraction of the budget (wall clock or iterations,
whichever is further along) goes from 0 to 1; both are multiples of the mean edge length of
the initial solution, so one setting serves unit-square and CVRPLIB scales alike.

Numba policies (:mod:`routecli.search.ruin`) run whole chunks of iterations inside one
compiled loop; a policy without a kernel (the learned one) is called from Python once per
iteration and its rollouts are repaired in one compiled call.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numba as nb
import numpy as np

from routecli.errors import InstanceFormatError
from routecli.problems import Routes
from routecli.search.construct import savings_solution
from routecli.search.local_search import local_search
from routecli.search.repair import BLINK_RATE, drop_unprofitable, repair
from routecli.search.ruin import (
    POLICY_RANDOM,
    POLICY_STRINGS,
    RemovalPolicy,
    ruin_random,
    ruin_strings,
    seed_kernels,
)
from routecli.search.state import (
    LENGTH,
    PRIZES,
    ROUTE,
    SIZE,
    SearchProblem,
    SearchState,
    check_route,
    from_routes,
    refresh_route,
    state_cost,
    sync_state,
    unlink,
)
from routecli.stop import DEFAULT_SECONDS, Criterion, MaxRuntime, Watch

CHUNK_SECONDS = 0.05  # compiled loop length between clock checks and progress reports
PRIZE_NEIGHBOURS = 5  # PCVRP: unserved neighbours of removed customers also get a chance
# Initial temperature per problem, in mean edge lengths of the start solution, and the
# start/end ratio. Measured on generated N=100 instances (30k iterations, 5 instances x 2
# seeds): CVRP and VRPTW do best hot (1.5 beat 0.3), PCVRP with string removal cooler (0.3
# beat 1.5 by 7%: hot runs keep adding and dropping customers; random removal preferred 1.5
# by 2%); 1.5 also beat 0.3 on CVRPLIB X-n1001 under 20 s.
T_START = {"cvrp": 1.5, "vrptw": 1.5, "pcvrp": 0.3}
T_RATIO = 30.0


@dataclass(frozen=True)
class ASAConfig:
    """Search budget and annealing settings.

    ``stop`` ends the run (it must bound time or iterations, which the temperature follows;
    the search always runs at least one iteration); ``t_start`` /
    ``t_end`` are the initial and final temperatures as multiples of the initial solution's
    mean edge length (None: the problem's entry in :data:`T_START`, and
    ``t_start / T_RATIO``).
    """

    stop: Criterion = MaxRuntime(DEFAULT_SECONDS)
    rollouts: int = 1
    remove: int = 10
    t_start: float | None = None
    t_end: float | None = None
    blink: float = BLINK_RATE

    def temperatures(self, problem: str) -> tuple[float, float]:
        start = T_START[problem] if self.t_start is None else self.t_start
        return start, start / T_RATIO if self.t_end is None else self.t_end


@dataclass
class ASAResult:
    """Best solution found, its cost, and how the run went."""

    solution: Routes
    cost: float
    iterations: int
    accepted: int
    seconds: float
    history: list[tuple[float, float]] = field(default_factory=list)  # (seconds, best cost)
    stopped_by: str = "finished"  # routecli.stop.Watch.stopped_by when it stopped


@nb.njit(cache=True)
def sa_accept(candidate: float, current: float, temperature: float, u: float) -> bool:
    """Annealing rule: accept with probability ``min(1, exp(-(candidate - current) / T))``,
    ``u ~ U[0, 1)`` supplied by the caller."""
    if candidate <= current:
        return True
    if temperature <= 0.0:
        return False
    return u < math.exp(-(candidate - current) / temperature)


def temperature(progress: float, t_start: float, t_end: float) -> float:
    """Geometric schedule: ``t_start`` at progress 0, ``t_end`` at progress 1."""
    p = min(max(progress, 0.0), 1.0)
    return t_start * (t_end / t_start) ** p


def workspace(num_nodes: int) -> tuple[np.ndarray, ...]:
    """Scratch arrays of one search: touched routes and moved customers of the current
    candidate and of the best rollout so far, their counts (and those of the two lists
    below), route flags, sync and removal buffers; then the routes and customers that
    accepted iterations changed since the best solution was last the current one, with
    their flags (:func:`promote_best`)."""
    v = num_nodes
    return (np.zeros(v, np.int64), np.zeros(v, np.int64), np.zeros(v, np.int64),
            np.zeros(v, np.int64), np.zeros(6, np.int64), np.zeros(v, np.bool_),
            np.zeros(3 * v, np.int64), np.zeros(v, np.int64),
            np.zeros(v, np.int64), np.zeros(v, np.int64), np.zeros(v, np.bool_),
            np.zeros(v, np.bool_))


@nb.njit(cache=True)
def _changed(ws, touched, num_touched, moved, num_moved) -> None:  # noqa: ANN001
    """Note in ``ws`` that the current solution changed on these routes and customers."""
    counts = ws[4]
    _list_new(touched, num_touched, ws[10], ws[8], counts, 4)
    _list_new(moved, num_moved, ws[11], ws[9], counts, 5)


@nb.njit(cache=True, inline="always")
def _list_new(items, num, listed, out, counts, slot) -> None:  # noqa: ANN001
    """Append to ``out`` the ``items[:num]`` not ``listed`` yet (``counts[slot]`` long)."""
    for i in range(num):
        v = items[i]
        if not listed[v]:
            listed[v] = True
            out[counts[slot]] = v
            counts[slot] += 1


@nb.njit(cache=True)
def promote_best(cur, best, ws) -> None:  # noqa: ANN001
    """Make ``best`` equal to ``cur``, copying only what changed since they were last equal
    (so a new best costs the routes it changed, not a copy of the whole solution)."""
    counts, buf = ws[4], ws[6]
    routes, customers, route_listed, customer_listed = ws[8:12]
    sync_state(cur, best, routes, counts[4], customers, counts[5], buf)
    route_listed[routes[:counts[4]]] = False
    customer_listed[customers[:counts[5]]] = False
    counts[4] = 0
    counts[5] = 0


@nb.njit(cache=True, inline="always")
def _listed(items, count, v) -> bool:  # noqa: ANN001
    for i in range(count):  # noqa: SIM110 - numba compiles loops, not generators
        if items[i] == v:
            return True
    return False


@nb.njit(cache=True)
def rollout(problem, cur, cand, ws, removed, count, blink, cur_cost) -> float:  # noqa: ANN001
    """Turn ``cand`` (equal to ``cur`` on entry) into ``cur`` with ``removed[:count]`` taken
    out and greedily reinserted; record what changed in ``ws`` for :func:`sync_state`.
    PCVRP: unserved customers in ``removed``, and unserved near neighbours of the removed
    ones, are offered for insertion too. Returns the candidate's cost (``inf`` if
    infeasible)."""
    dist, node_data, capacity, timed, optional, neighbours, grid = problem
    touched, moved, _, _, counts, flags = ws[:6]
    nodes, times, routes, rstat, totals = cand
    nt = 0
    nm = 0
    for i in range(count):
        c = removed[i]
        if c < 1 or c >= nodes.shape[0]:  # padding (or a policy's out-of-range id)
            continue
        if nodes[c, ROUTE] < 0:  # PCVRP: an unserved customer proposed for insertion
            if optional and not _listed(moved, nm, c):
                moved[nm] = c
                nm += 1
            continue
        r = unlink(dist, nodes, times, routes, c)
        moved[nm] = c
        nm += 1
        if not flags[r]:
            flags[r] = True
            touched[nt] = r
            nt += 1
    feasible = True
    for i in range(nt):
        feasible &= refresh_route(dist, node_data, capacity, timed, nodes, times, routes, rstat,
                                  totals, touched[i])
    if optional:  # unserved near neighbours of the removed customers get a chance too
        for i in range(nm):
            for j in range(min(PRIZE_NEIGHBOURS, neighbours.shape[1])):
                v = neighbours[moved[i], j]
                if nodes[v, ROUTE] < 0 and not _listed(moved, nm, v):
                    moved[nm] = v
                    nm += 1
    failed = repair(dist, node_data, capacity, timed, optional, neighbours, grid, nodes, times,
                    routes, rstat, totals, moved[:nm], blink)
    for i in range(nm):
        r = nodes[moved[i], ROUTE]
        if r >= 0 and not flags[r]:
            flags[r] = True
            touched[nt] = r
            nt += 1
    if optional:  # only touched routes can hold a newly unprofitable customer
        drop_unprofitable(dist, node_data, capacity, timed, nodes, times, routes, rstat, totals)
    cost = cur_cost
    for i in range(nt):
        r = touched[i]
        flags[r] = False
        cost += (rstat[r, LENGTH] - rstat[r, PRIZES]) - (cur[3][r, LENGTH] - cur[3][r, PRIZES])
    counts[0] = nt
    counts[1] = nm
    if failed > 0 or not feasible:
        return np.inf
    return cost


@nb.njit(cache=True)
def iteration(problem, cur, cand, pick, ws, policy, remove, removals, rollouts, blink,
              temp, u, cur_cost) -> tuple[float, bool, float]:  # noqa: ANN001
    """One ASA iteration on ``cur`` (``cand`` and ``pick`` equal to it on entry and exit
    relative to the returned state). Rollouts come from the numba ``policy`` or, when
    ``policy`` < 0, from the rows of ``removals`` ``[M, K]`` (-1 padded); an accepted change
    is noted for :func:`promote_best`. Returns (new current cost, accepted, best rollout
    cost)."""
    touched, moved, ptouched, pmoved, counts, _, buf, rbuf = ws[:8]
    neighbours = problem[5]
    num = rollouts if policy >= 0 else removals.shape[0]
    counts[2] = 0
    counts[3] = 0
    pick_cost = np.inf
    for m in range(num):
        if policy == POLICY_RANDOM:
            count = ruin_random(cur[0], cur[4], remove, rbuf)
            row = rbuf
        elif policy == POLICY_STRINGS:
            count = ruin_strings(cur[0], cur[2], cur[4], neighbours, float(remove), problem[4],
                                 rbuf)
            row = rbuf
        else:
            row = removals[m]
            count = 0
            while count < row.shape[0] and row[count] >= 0:
                count += 1
        cost = rollout(problem, cur, cand, ws, row, count, blink, cur_cost)
        if num == 1:
            pick_cost = cost
            break
        if cost < pick_cost:
            pick_cost = cost
            sync_state(cur, pick, ptouched, counts[2], pmoved, counts[3], buf)
            sync_state(cand, pick, touched, counts[0], moved, counts[1], buf)
            ptouched[: counts[0]] = touched[: counts[0]]
            pmoved[: counts[1]] = moved[: counts[1]]
            counts[2] = counts[0]
            counts[3] = counts[1]
        sync_state(cur, cand, touched, counts[0], moved, counts[1], buf)
    accept = pick_cost < np.inf and sa_accept(pick_cost, cur_cost, temp, u)
    if num == 1:
        if accept:
            sync_state(cand, cur, touched, counts[0], moved, counts[1], buf)
            _changed(ws, touched, counts[0], moved, counts[1])
        else:
            sync_state(cur, cand, touched, counts[0], moved, counts[1], buf)
    elif accept:
        sync_state(pick, cur, ptouched, counts[2], pmoved, counts[3], buf)
        sync_state(pick, cand, ptouched, counts[2], pmoved, counts[3], buf)
        _changed(ws, ptouched, counts[2], pmoved, counts[3])
    else:
        sync_state(cur, pick, ptouched, counts[2], pmoved, counts[3], buf)
    return (pick_cost if accept else cur_cost), accept, pick_cost


@nb.njit(cache=True)
def run_chunk(problem, cur, cand, pick, best, ws, policy, remove, rollouts, iterations,
              t_from, t_to, cur_cost, best_cost, blink) -> tuple[float, float, int]:  # noqa: ANN001
    """``iterations`` ASA iterations with a numba removal policy, the temperature falling
    geometrically from ``t_from`` to ``t_to``. Returns (current cost, best cost, accepted)."""
    no_rows = np.zeros((0, 0), np.int64)
    accepted = 0
    for it in range(iterations):
        temp = t_from * (t_to / t_from) ** (it / iterations)
        cur_cost, ok, _ = iteration(problem, cur, cand, pick, ws, policy, remove, no_rows,
                                    rollouts, blink, temp, np.random.random(), cur_cost)
        if ok:
            accepted += 1
            if cur_cost < best_cost - 1e-9:
                best_cost = cur_cost
                promote_best(cur, best, ws)
    return cur_cost, best_cost, accepted


def initial_solution(problem: SearchProblem) -> SearchState:
    """Savings start (:mod:`routecli.search.construct`), improved by local search when the
    problem is ``exhaustive`` (:data:`routecli.search.state.EXHAUSTIVE_MAX_NODES`); raises
    if a customer fits nowhere."""
    state = savings_solution(problem)
    if not all(check_route(problem, state, int(r)) for r in np.flatnonzero(state.routes[:, SIZE])):
        raise InstanceFormatError(f"{problem.instance.name}: some customer fits in no route "
                                  "(demand above capacity or an unreachable time window)")
    return improved_start(problem, state)


def improved_start(problem: SearchProblem, state: SearchState) -> SearchState:
    """``state`` after local search when the problem is ``exhaustive``
    (:data:`routecli.search.state.EXHAUSTIVE_MAX_NODES`; above, the annealing improves a
    start faster than full local-search passes do)."""
    if problem.exhaustive:
        local_search(problem.dist, problem.node_data, problem.capacity, problem.timed,
                     problem.neighbours, *state.arrays(), np.arange(1, problem.num_nodes))
    return state


def mean_edge(problem: SearchProblem, state: SearchState) -> float:
    """Mean edge length of a solution; the nearest-neighbour distance if it has no routes."""
    used = state.routes[:, SIZE] > 0
    edges = int(state.routes[used, SIZE].sum() + used.sum())
    if edges:
        return float(state.rstat[used, LENGTH].sum()) / edges
    near = problem.neighbours[1:, 0] if problem.neighbours.shape[1] else np.zeros(1, np.int64)
    return float(problem.distances.pairs(np.arange(1, 1 + len(near)), near).mean()) or 1.0


def solve(problem: SearchProblem, policy: RemovalPolicy, config: ASAConfig, seed: int = 0,
          initial: Routes | None = None,
          progress: Callable[[float, float], None] | None = None) -> ASAResult:
    """Run ASA from ``initial`` (:func:`initial_solution` when None; a given start gets the
    same local search, :func:`improved_start`); return the best found.

    ``progress(seconds, best_cost)`` is called whenever the best cost improves.
    """
    watch = Watch(config.stop)
    if watch.limits.seconds is None and watch.limits.iterations is None:
        raise ValueError("ASA needs a time limit or an iteration budget")
    rng = np.random.default_rng(seed)
    seed_kernels(seed)
    cur = (initial_solution(problem) if initial is None
           else improved_start(problem, from_routes(problem, initial)))
    if problem.optional:  # the search assumes every served customer pays for itself
        drop_unprofitable(problem.dist, problem.node_data, problem.capacity, problem.timed,
                          *cur.arrays())
    cand, pick, best = cur.copy(), cur.copy(), cur.copy()
    ws = workspace(problem.num_nodes)
    cur_cost = best_cost = float(state_cost(problem.node_data, *cur.arrays()))
    scale = mean_edge(problem, cur)
    t_start, t_end = config.temperatures(problem.instance.problem)
    t0, t1 = t_start * scale, t_end * scale
    history = [(watch.elapsed, best_cost)]
    if progress is not None:
        progress(history[-1][0], best_cost)
    data = problem.data
    done = accepted = 0
    chunk = 1
    since = 0  # kernel iterations since the last proposal iteration (hybrid policies)
    limits = watch.limits
    watch.record(0, best_cost)
    # At least one iteration: set-up (start solution, JIT compilation on a cold cache) can
    # use up a short limit, and a search that never searched is no answer.
    while done == 0 or not watch.done():
        frac = min(watch.used(), 1.0)
        left = watch.iterations_left()
        size = chunk if left is None else min(chunk, left)
        if policy.every is not None:  # a hybrid's kernel chunk ends where its proposal is due
            size = min(size, policy.every - since)
        tick = time.perf_counter()
        compiled = policy.kernel is not None and size > 0
        if compiled:
            frac_end = watch.used(done + size) if limits.seconds is None else \
                frac + CHUNK_SECONDS / max(limits.seconds, CHUNK_SECONDS)
            cur_cost, new_best, acc = run_chunk(
                data, cur.arrays(), cand.arrays(), pick.arrays(), best.arrays(), ws,
                policy.kernel, config.remove, config.rollouts, size, temperature(frac, t0, t1),
                temperature(frac_end, t0, t1), cur_cost, best_cost, config.blink)
            since += size
        else:
            if since:  # single-rollout kernel iterations leave `pick` behind; the rollouts need it
                pick.copy_from(cur)
            removals = policy.propose(problem, cur, rng, config.remove, config.rollouts)
            cur_cost, ok, _ = iteration(
                data, cur.arrays(), cand.arrays(), pick.arrays(), ws, -1, config.remove,
                np.ascontiguousarray(removals, np.int64), config.rollouts, config.blink,
                temperature(frac, t0, t1), rng.random(), cur_cost)
            acc = int(ok)
            new_best = best_cost
            if cur_cost < best_cost - 1e-9:
                new_best = cur_cost
                promote_best(cur.arrays(), best.arrays(), ws)
            size, since = 1, 0
        done += size
        accepted += acc
        watch.record(done, new_best)
        if new_best < best_cost:
            best_cost = new_best
            history.append((watch.elapsed, best_cost))
            if progress is not None:
                progress(history[-1][0], best_cost)
        if compiled:  # size the next chunk to about CHUNK_SECONDS
            took = max(time.perf_counter() - tick, 1e-6)
            chunk = max(1, min(int(size * CHUNK_SECONDS / took) + 1, 4 * size + 1))
    return ASAResult(best.to_routes(), best_cost, done, accepted, watch.elapsed, history,
                     watch.stopped_by())
