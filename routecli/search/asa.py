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

from routecli.problems import Routes
from routecli.search.repair import (
    BLINK_RATE, drop_unprofitable, remove_customers, repair,
)
from routecli.search.ruin import (
    POLICY_RANDOM, RemovalPolicy, ruin_random, ruin_strings, seed_kernels,
)
from routecli.search.state import (
    LENGTH, ROUTE, SIZE, SearchProblem, SearchState, copy_state, from_routes, state_cost,
)

CHUNK_SECONDS = 0.05  # compiled loop length between clock checks and progress reports
PRIZE_NEIGHBOURS = 5  # PCVRP: unserved neighbours of removed customers also get a chance


@dataclass(frozen=True)
class ASAConfig:
    """Search budget and annealing settings.

    ``time_limit`` (seconds) and ``iterations`` bound the run, whichever comes first (at least
    one must be set); ``t_start`` / ``t_end`` are the initial and final temperatures as
    multiples of the initial solution's mean edge length.
    """

    time_limit: float | None = 10.0
    iterations: int | None = None
    rollouts: int = 1
    remove: int = 10
    t_start: float = 0.3
    t_end: float = 0.003
    blink: float = BLINK_RATE


@dataclass
class ASAResult:
    solution: Routes
    cost: float
    iterations: int
    accepted: int
    seconds: float
    history: list[tuple[float, float]] = field(default_factory=list)  # (seconds, best cost)


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


@nb.njit(cache=True)
def _add_unserved_neighbours(nodes, neighbours, removed, count) -> np.ndarray:  # noqa: ANN001
    """Removed customers plus unserved near neighbours of them, without duplicates."""
    out = np.empty(count * (1 + PRIZE_NEIGHBOURS), np.int64)
    total = 0
    for i in range(count):
        c = removed[i]
        for j in range(-1, min(PRIZE_NEIGHBOURS, neighbours.shape[1])):
            v = c if j < 0 else neighbours[c, j]
            if j >= 0 and nodes[ROUTE, v] >= 0:
                continue
            dup = False
            for q in range(total):
                dup = dup or out[q] == v
            if not dup:
                out[total] = v
                total += 1
    return out[:total]


@nb.njit(cache=True)
def rollout(dist, node_data, capacity, timed, optional, neighbours, cur, cand, removed,
            count, blink) -> float:  # noqa: ANN001
    """``cand`` := ``cur`` with ``removed[:count]`` taken out and greedily reinserted.
    Returns the candidate's cost (``inf`` if it is infeasible)."""
    n0, t0, r0, s0 = cur
    nodes, times, routes, rstat = cand
    copy_state(n0, t0, r0, s0, nodes, times, routes, rstat)
    picked = np.empty(count, np.int64)
    k = 0
    for i in range(count):
        c = removed[i]
        if c >= 1 and nodes[ROUTE, c] >= 0:
            picked[k] = c
            k += 1
    if not remove_customers(dist, node_data, capacity, timed, nodes, times, routes, rstat,
                            picked[:k]):
        return np.inf
    customers = picked[:k]
    if optional:
        customers = _add_unserved_neighbours(nodes, neighbours, picked, k)
    if repair(dist, node_data, capacity, timed, optional, neighbours, nodes, times, routes,
              rstat, customers, blink) > 0:
        return np.inf
    if optional:
        drop_unprofitable(dist, node_data, capacity, timed, nodes, times, routes, rstat)
    return state_cost(node_data, nodes, times, routes, rstat)


@nb.njit(cache=True)
def evaluate_rollouts(dist, node_data, capacity, timed, optional, neighbours, cur, cand, pick,
                      removals, blink) -> float:  # noqa: ANN001
    """Repair every row of ``removals`` ``[M, K]`` (-1 padded) from ``cur``; the best lands in
    ``pick``. Returns its cost."""
    best = np.inf
    for m in range(removals.shape[0]):
        count = 0
        while count < removals.shape[1] and removals[m, count] >= 0:
            count += 1
        cost = rollout(dist, node_data, capacity, timed, optional, neighbours, cur, cand,
                       removals[m], count, blink)
        if cost < best:
            best = cost
            copy_state(cand[0], cand[1], cand[2], cand[3], pick[0], pick[1], pick[2], pick[3])
    return best


@nb.njit(cache=True)
def run_chunk(dist, node_data, capacity, timed, optional, neighbours, cur, cand, pick, best,
              policy, remove, rollouts, iterations, t_from, t_to, cur_cost, best_cost,
              blink) -> tuple[float, float, int]:  # noqa: ANN001
    """``iterations`` ASA iterations with a numba removal policy, temperature falling
    geometrically from ``t_from`` to ``t_to``. Returns (current cost, best cost, accepted)."""
    buf = np.empty(dist.shape[0], np.int64)
    accepted = 0
    for it in range(iterations):
        temp = t_from * (t_to / t_from) ** (it / iterations)
        pick_cost = np.inf
        for _ in range(rollouts):
            if policy == POLICY_RANDOM:
                count = ruin_random(cur[0], remove, buf)
            else:
                count = ruin_strings(cur[0], cur[2], neighbours, float(remove), buf)
            cost = rollout(dist, node_data, capacity, timed, optional, neighbours, cur, cand,
                           buf, count, blink)
            if cost < pick_cost:
                pick_cost = cost
                if rollouts > 1:
                    copy_state(cand[0], cand[1], cand[2], cand[3],
                               pick[0], pick[1], pick[2], pick[3])
        chosen = pick if rollouts > 1 else cand
        if pick_cost < np.inf and sa_accept(pick_cost, cur_cost, temp, np.random.random()):
            copy_state(chosen[0], chosen[1], chosen[2], chosen[3], cur[0], cur[1], cur[2], cur[3])
            cur_cost = pick_cost
            accepted += 1
            if cur_cost < best_cost - 1e-9:
                best_cost = cur_cost
                copy_state(cur[0], cur[1], cur[2], cur[3], best[0], best[1], best[2], best[3])
    return cur_cost, best_cost, accepted


def initial_solution(problem: SearchProblem, blink: float = 0.0) -> SearchState:
    """Greedy insertion of every customer into an empty solution (PCVRP: the profitable ones)."""
    state = SearchState.empty(problem.num_nodes)
    customers = np.arange(1, problem.num_nodes, dtype=np.int64)
    failed = repair(problem.dist, problem.node_data, problem.capacity, problem.timed,
                    problem.optional, problem.neighbours, *state.arrays(), customers, blink)
    if failed:
        raise ValueError(f"{problem.instance.name}: {failed} customers fit in no route "
                         "(demand above capacity or an unreachable time window)")
    return state


def mean_edge(problem: SearchProblem, state: SearchState) -> float:
    """Mean edge length of a solution; the nearest-neighbour distance if it has no routes."""
    used = state.routes[SIZE] > 0
    edges = int(state.routes[SIZE, used].sum() + used.sum())
    if edges:
        return float(state.rstat[LENGTH, used].sum()) / edges
    near = problem.neighbours[1:, 0] if problem.neighbours.shape[1] else np.zeros(1, np.int64)
    return float(problem.dist[np.arange(1, 1 + len(near)), near].mean()) or 1.0


def solve(problem: SearchProblem, policy: RemovalPolicy, config: ASAConfig, seed: int = 0,
          initial: Routes | None = None,
          progress: Callable[[float, float], None] | None = None) -> ASAResult:
    """Run ASA from ``initial`` (greedy insertion when None) and return the best solution.

    ``progress(seconds, best_cost)`` is called whenever the best cost improves.
    """
    if config.time_limit is None and config.iterations is None:
        raise ValueError("ASA needs a time limit or an iteration budget")
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    seed_kernels(seed)
    cur = initial_solution(problem) if initial is None else from_routes(problem, initial)
    cand, pick, best = cur.copy(), cur.copy(), cur.copy()
    cur_cost = best_cost = float(state_cost(problem.node_data, *cur.arrays()))
    scale = mean_edge(problem, cur)
    t0, t1 = config.t_start * scale, config.t_end * scale
    history = [(time.perf_counter() - start, best_cost)]
    if progress is not None:
        progress(history[-1][0], best_cost)
    args = (problem.dist, problem.node_data, problem.capacity, problem.timed, problem.optional,
            problem.neighbours)
    done = accepted = 0
    chunk = 1

    def fraction(iters: int) -> float:
        by_time = (time.perf_counter() - start) / config.time_limit if config.time_limit else 0.0
        by_iter = iters / config.iterations if config.iterations else 0.0
        return max(by_time, by_iter)

    while (frac := fraction(done)) < 1.0:
        if config.iterations is not None:
            chunk = min(chunk, config.iterations - done)
        tick = time.perf_counter()
        if policy.kernel is not None:
            frac_end = fraction(done + chunk) if config.time_limit is None else \
                frac + CHUNK_SECONDS / config.time_limit
            cur_cost, new_best, acc = run_chunk(
                *args, cur.arrays(), cand.arrays(), pick.arrays(), best.arrays(), policy.kernel,
                config.remove, config.rollouts, chunk, temperature(frac, t0, t1),
                temperature(frac_end, t0, t1), cur_cost, best_cost, config.blink)
        else:
            removals = policy.propose(problem, cur, rng, config.remove, config.rollouts)
            cost = evaluate_rollouts(*args, cur.arrays(), cand.arrays(), pick.arrays(),
                                     np.ascontiguousarray(removals, np.int64), config.blink)
            acc = int(cost < np.inf and sa_accept(cost, cur_cost, temperature(frac, t0, t1),
                                                  rng.random()))
            new_best = best_cost
            if acc:
                cur.copy_from(pick)
                cur_cost = cost
                if cost < best_cost - 1e-9:
                    new_best = cost
                    best.copy_from(cur)
        done += chunk
        accepted += acc
        if new_best < best_cost:
            best_cost = new_best
            history.append((time.perf_counter() - start, best_cost))
            if progress is not None:
                progress(history[-1][0], best_cost)
        if policy.kernel is not None:  # size the next chunk to about CHUNK_SECONDS
            took = max(time.perf_counter() - tick, 1e-6)
            chunk = max(1, min(int(chunk * CHUNK_SECONDS / took) + 1, 4 * chunk + 1))
    return ASAResult(best.to_routes(), best_cost, done, accepted, time.perf_counter() - start,
                     history)
