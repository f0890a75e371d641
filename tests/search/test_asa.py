"""ASA: the annealing rule, the schedule, and whole searches on small instances."""

from __future__ import annotations

import math

import numpy as np
import pytest

from routecli.generate import batch_instances, cvrp, pcvrp, vrptw
from routecli.problems import validate
from routecli.search.asa import (
    T_RATIO,
    T_START,
    ASAConfig,
    initial_solution,
    sa_accept,
    solve,
    temperature,
)
from routecli.search.ruin import RandomRemoval, StringRemoval, make_policy
from routecli.search.state import SearchProblem, SearchState, total_cost
from routecli.stop import MaxIterations, MaxRuntime, NoImprovement

GENERATORS = {"cvrp": cvrp, "vrptw": vrptw, "pcvrp": pcvrp}


def _search(problem: str, n: int = 40, seed: int = 0) -> SearchProblem:
    return SearchProblem.from_instance(
        batch_instances(problem, GENERATORS[problem](1, n, seed))[0])


def test_improvements_and_ties_are_always_accepted() -> None:
    for u in (0.0, 0.5, 0.999):
        assert sa_accept(9.0, 10.0, 1.0, u)
        assert sa_accept(10.0, 10.0, 0.0, u)


def test_worse_candidates_are_rejected_at_zero_temperature() -> None:
    assert not sa_accept(10.5, 10.0, 0.0, 0.0)


@pytest.mark.parametrize("delta,temp", [(1.0, 1.0), (0.5, 2.0), (3.0, 1.0)])
def test_acceptance_rate_is_the_boltzmann_probability(delta: float, temp: float) -> None:
    u = np.random.default_rng(0).random(40_000)
    rate = np.mean([sa_accept(10.0 + delta, 10.0, temp, x) for x in u])
    assert rate == pytest.approx(math.exp(-delta / temp), abs=0.01)


def test_schedule_is_geometric_between_its_ends() -> None:
    assert temperature(0.0, 100.0, 1.0) == pytest.approx(100.0)
    assert temperature(1.0, 100.0, 1.0) == pytest.approx(1.0)
    assert temperature(0.5, 100.0, 1.0) == pytest.approx(10.0)
    assert temperature(2.0, 100.0, 1.0) == pytest.approx(1.0)  # clamped past the budget


def test_temperatures_default_per_problem_and_can_be_set() -> None:
    start, end = ASAConfig().temperatures("pcvrp")
    assert start == T_START["pcvrp"] and end == pytest.approx(start / T_RATIO)
    assert ASAConfig(t_start=2.0, t_end=0.5).temperatures("cvrp") == (2.0, 0.5)


@pytest.mark.parametrize("problem", ["cvrp", "vrptw", "pcvrp"])
@pytest.mark.parametrize("policy", ["strings", "random"])
def test_search_returns_a_valid_solution_no_worse_than_its_start(problem: str,
                                                                 policy: str) -> None:
    search = _search(problem)
    start = total_cost(search, initial_solution(search))
    result = solve(search, make_policy(policy), ASAConfig(stop=MaxIterations(3000)))
    assert validate(search.instance, result.solution) == []
    # the tracked (incremental) cost is the instance's own cost of the returned routes
    assert result.cost == pytest.approx(search.instance.cost(result.solution), abs=1e-9)
    assert result.cost <= start + 1e-9
    assert result.iterations == 3000


def test_search_improves_the_savings_start() -> None:
    search = _search("cvrp", 60, seed=4)
    start = total_cost(search, initial_solution(search))
    result = solve(search, make_policy("strings"), ASAConfig(stop=MaxIterations(5000)))
    assert result.cost < start


def test_same_seed_same_result() -> None:
    search = _search("vrptw")
    config = ASAConfig(stop=MaxIterations(2000), rollouts=3)
    a = solve(search, make_policy("strings"), config, seed=7)
    b = solve(search, make_policy("strings"), config, seed=7)
    assert a.cost == b.cost
    assert [list(r) for r in a.solution.routes] == [list(r) for r in b.solution.routes]


class _PythonStrings(StringRemoval):
    """String removal driven through ``propose`` (the path a torch policy takes)."""

    kernel = None


@pytest.mark.parametrize("problem", ["cvrp", "pcvrp"])
def test_python_policy_path_with_many_rollouts(problem: str) -> None:
    search = _search(problem)
    config = ASAConfig(stop=MaxIterations(300), rollouts=8)
    result = solve(search, _PythonStrings(), config, seed=1)
    assert validate(search.instance, result.solution) == []
    assert result.cost == pytest.approx(search.instance.cost(result.solution), abs=1e-9)


def test_progress_reports_a_falling_best_cost() -> None:
    search = _search("cvrp", 50, seed=2)
    seen: list[float] = []
    result = solve(search, make_policy("strings"), ASAConfig(stop=MaxIterations(3000)),
                   progress=lambda seconds, cost: seen.append(cost))
    assert len(seen) >= 2 and seen == sorted(seen, reverse=True)
    assert seen[-1] == pytest.approx(result.cost)


def test_time_limit_stops_the_run() -> None:
    search = _search("cvrp", 40)
    result = solve(search, make_policy("strings"), ASAConfig(stop=MaxRuntime(0.0)))
    assert result.iterations >= 1  # at least one iteration, then the expired limit stops it
    capped = solve(search, make_policy("strings"), ASAConfig(stop=MaxRuntime(0.0) | MaxIterations(10**9)))
    assert capped.iterations < 10**9


def test_a_start_solution_can_be_given() -> None:
    search = _search("cvrp", 30)
    start = initial_solution(search).to_routes()
    result = solve(search, make_policy("random"), ASAConfig(stop=MaxIterations(500)),
                   initial=start)
    assert result.cost <= search.instance.cost(start)


def test_needs_a_budget() -> None:
    with pytest.raises(ValueError, match="time limit or an iteration budget"):
        solve(_search("cvrp", 10), make_policy("random"), ASAConfig(stop=NoImprovement(5)))


def test_empty_state_has_no_cost() -> None:
    search = _search("cvrp", 10)
    assert total_cost(search, SearchState.empty(search.num_nodes)) == 0.0


class _Sloppy(StringRemoval):
    """A policy proposing duplicates and out-of-range ids besides real customers."""

    kernel = None

    def propose(self, problem, state, rng, k, rollouts):  # noqa: ANN001, ANN201
        rows = super().propose(problem, state, rng, k, rollouts)
        junk = np.full((rollouts, 3), problem.num_nodes + 5, np.int64)
        junk[:, 1] = rows[:, 0]
        return np.concatenate([junk, rows], axis=1)


def test_duplicate_and_out_of_range_proposals_are_ignored() -> None:
    search = _search("cvrp", 30)
    result = solve(search, _Sloppy(), ASAConfig(stop=MaxIterations(200), rollouts=2))
    assert validate(search.instance, result.solution) == []


class _Hybrid(StringRemoval):
    """String removal in the compiled loop and, after every ``every`` of its iterations, one
    iteration on random removals proposed from Python (the engine path of NDS's hybrid)."""

    every = 7

    def __init__(self) -> None:
        self.calls = 0

    def propose(self, problem, state, rng, k, rollouts):  # noqa: ANN001, ANN201
        self.calls += 1
        return RandomRemoval().propose(problem, state, rng, 5, 6)  # its own sizes


@pytest.mark.parametrize("problem", ["cvrp", "vrptw", "pcvrp"])
def test_a_hybrid_policy_interleaves_its_proposals_with_kernel_iterations(problem: str) -> None:
    # 3000 iterations: with the rollouts' scratch state left stale by the single-rollout
    # kernel iterations, this crashed (CVRP) before the engine resynchronised it
    search = _search(problem)
    policy = _Hybrid()
    result = solve(search, policy, ASAConfig(stop=MaxIterations(3000)), seed=3)
    assert validate(search.instance, result.solution) == []
    assert result.cost == pytest.approx(search.instance.cost(result.solution), abs=1e-9)
    assert result.iterations == 3000
    assert policy.calls == 3000 // (policy.every + 1)


def _rounded(problem: str, n: int, seed: int = 0):
    """A generated instance on integer coordinates under CVRPLIB's rounded rule."""
    from dataclasses import replace

    from routecli.problems import Metric

    inst = batch_instances(problem, GENERATORS[problem](1, n, seed))[0]
    scaled = {name: getattr(inst, name) * 1000 for name in ("ready", "due", "service", "prizes")
              if hasattr(inst, name)}  # windows and prizes on the coordinates' new scale
    return replace(inst, metric=Metric("euc2d", coords=np.round(inst.metric.coords * 1000)),
                   **scaled)


@pytest.mark.parametrize("problem", ["cvrp", "vrptw", "pcvrp"])
@pytest.mark.parametrize("policy,rollouts", [("strings", 1), ("random", 1), ("strings", 4)])
def test_a_matrix_and_on_demand_edges_search_alike(problem: str, policy: str,
                                                   rollouts: int) -> None:
    """The same edges, so the same search: identical solutions at equal iterations."""
    inst = _rounded(problem, 60)
    config = ASAConfig(stop=MaxIterations(1500), rollouts=rollouts)
    results = [solve(SearchProblem.from_instance(inst, dense_max=limit), make_policy(policy),
                     config, seed=3) for limit in (10**6, 0)]
    assert results[0].cost == results[1].cost
    assert [list(r) for r in results[0].solution.routes] == \
        [list(r) for r in results[1].solution.routes]


def test_the_returned_best_is_the_best_seen_while_hot() -> None:
    """Many uphill moves between improvements: the best is kept by syncing only what
    changed, and must still be exactly the best solution seen."""
    search = _search("cvrp", 60, seed=5)
    seen: list[float] = []
    result = solve(search, make_policy("strings"),
                   ASAConfig(stop=MaxIterations(4000), t_start=20.0, t_end=5.0),
                   progress=lambda seconds, cost: seen.append(cost))
    assert result.cost == pytest.approx(search.instance.cost(result.solution), abs=1e-9)
    assert result.cost == min(seen)
    assert validate(search.instance, result.solution) == []


@pytest.mark.parametrize("problem", ["cvrp", "vrptw"])
def test_above_the_exhaustive_size_the_search_stays_granular_and_feasible(problem: str) -> None:
    inst = _rounded(problem, 300, seed=1)
    search = SearchProblem.from_instance(inst, dense_max=0, exhaustive_max=0)
    assert not search.exhaustive and search.grid[1].shape[0] > 0
    start = initial_solution(search)  # the savings solution, no local-search passes
    result = solve(search, make_policy("strings"), ASAConfig(stop=MaxIterations(20_000)), seed=2)
    assert validate(inst, result.solution) == []
    assert result.cost < total_cost(search, start)
