"""Greedy insertion repair: feasibility under capacity, time windows and prizes."""

from __future__ import annotations

import numpy as np
import pytest

from routecli.generate import batch_instances, cvrp, pcvrp, vrptw
from routecli.kernels.provider import edge
from routecli.problems import CVRPInstance, Metric, PCVRPInstance, Routes, validate
from routecli.search.repair import (
    best_insertion,
    drop_unprofitable,
    insertion_order,
    remove_customers,
    repair,
)
from routecli.search.ruin import seed_kernels
from routecli.search.state import ROUTE, SearchProblem, SearchState, from_routes, total_cost

GENERATORS = {"cvrp": cvrp, "vrptw": vrptw, "pcvrp": pcvrp}


def _problem(problem: str, n: int = 40, seed: int = 0, **kw) -> SearchProblem:
    return SearchProblem.from_instance(
        batch_instances(problem, GENERATORS[problem](1, n, seed, **kw))[0])


def _repair_all(search: SearchProblem, blink: float = 0.01) -> SearchState:
    state = SearchState.empty(search.num_nodes)
    customers = np.arange(1, search.num_nodes, dtype=np.int64)
    failed = repair(*search.data, *state.arrays(), customers, blink)
    assert failed == 0
    return state


@pytest.mark.parametrize("problem,capacity", [("cvrp", 20), ("vrptw", 20), ("vrptw", None)])
def test_repair_from_scratch_is_feasible(problem: str, capacity) -> None:
    for seed in range(3):
        seed_kernels(seed)
        search = _problem(problem, seed=seed, capacity=capacity)
        state = _repair_all(search)
        sol = state.to_routes()
        assert validate(search.instance, sol) == []
        assert total_cost(search, state) == pytest.approx(search.instance.cost(sol))


def test_repair_after_removal_keeps_windows() -> None:
    seed_kernels(1)
    search = _problem("vrptw", 60)
    state = _repair_all(search)
    rng = np.random.default_rng(0)
    for _ in range(20):
        out = rng.choice(np.arange(1, search.num_nodes), 12, replace=False)
        assert remove_customers(search.dist, search.node_data, search.capacity, search.timed,
                                *state.arrays(), out)
        assert repair(*search.data, *state.arrays(), out, 0.01) == 0
        assert validate(search.instance, state.to_routes()) == []


def _brute_force(search: SearchProblem, sol: Routes, c: int) -> float:
    """Cheapest feasible insertion of ``c`` by trying every position and validating."""
    inst = search.instance
    base = inst.cost(sol)
    best = np.inf
    options = [Routes([*sol.routes, np.array([c])])]
    for k, route in enumerate(sol.routes):
        for p in range(len(route) + 1):
            new = list(sol.routes)
            new[k] = np.insert(route, p, c)
            options.append(Routes(new))
    for cand in options:
        visited = np.concatenate(cand.routes)
        problems = [m for m in validate(inst, cand) if "missing" not in m]
        if not problems and len(np.unique(visited)) == len(visited):
            best = min(best, inst.cost(cand) - base)
    return best


@pytest.mark.parametrize("problem", ["cvrp", "vrptw"])
def test_best_insertion_is_the_cheapest_feasible_one(problem: str) -> None:
    search = SearchProblem.from_instance(
        batch_instances(problem, GENERATORS[problem](1, 15, 3, capacity=15))[0], neighbours=14)
    seed_kernels(0)
    state = _repair_all(search, blink=0.0)
    for c in range(1, search.num_nodes):
        remove_customers(search.dist, search.node_data, search.capacity, search.timed,
                         *state.arrays(), np.array([c]))
        delta, _, _ = best_insertion(search.dist, search.node_data, search.capacity,
                                     search.timed, search.neighbours, search.grid,
                                     *state.arrays()[:4], c, 0.0)
        assert delta == pytest.approx(_brute_force(search, state.to_routes(), c))
        repair(*search.data, *state.arrays(), np.array([c]), 0.0)


def test_prizes_decide_who_is_served() -> None:
    base = batch_instances("pcvrp", pcvrp(1, 30, 0))[0]
    for scale, expect_all in ((0.0, False), (1e6, True)):
        inst = PCVRPInstance("p", base.metric, base.demands, base.capacity, base.prizes * scale)
        search = SearchProblem.from_instance(inst)
        seed_kernels(0)
        state = _repair_all(search)
        served = state.served()
        assert len(served) == (inst.num_customers if expect_all else 0)
        assert validate(inst, state.to_routes()) == []


def test_drop_leaves_only_profitable_customers() -> None:
    search = _problem("pcvrp", 50)
    inst = search.instance
    everyone = Routes([np.arange(1, 11), np.arange(11, 21), np.arange(21, 31),
                       np.arange(31, 41), np.arange(41, 51)])
    state = from_routes(search, everyone)
    before = total_cost(search, state)
    assert drop_unprofitable(search.dist, search.node_data, search.capacity, search.timed,
                             *state.arrays()) > 0
    sol = state.to_routes()
    assert validate(inst, sol) == []
    assert inst.cost(sol) < before
    for route in sol.routes:
        path = np.concatenate([[0], route, [0]])
        for a, c, b in zip(path, path[1:], path[2:]):
            detour = edge(search.dist, a, c) + edge(search.dist, c, b) - edge(search.dist, a, b)
            assert detour <= inst.prizes[c] + 1e-9
    assert (state.nodes[1:, ROUTE] >= -1).all()


def test_insertion_order_is_a_permutation() -> None:
    search = _problem("cvrp")
    customers = np.arange(1, 21, dtype=np.int64)
    for seed in range(10):
        seed_kernels(seed)
        order = insertion_order(search.dist, search.node_data, customers)
        assert sorted(order) == list(customers)


def test_without_room_near_it_a_large_instance_looks_further_on_the_grid() -> None:
    """Above the exhaustive size, a customer whose neighbours' routes are full is offered the
    positions next to the nearest nodes with room (found on the grid), not only a new route."""
    coords = np.array([[0.0, 0.0], [10.0, 0.0], [10.0, 1.0], [10.0, 2.0], [11.0, 5.0],
                       [12.0, 5.0], [10.5, 1.0]])
    demands = np.array([0, 1, 1, 1, 1, 1, 1])
    inst = CVRPInstance("grid", Metric("exact", coords=coords), demands, 3.0)
    search = SearchProblem.from_instance(inst, neighbours=2, exhaustive_max=0)
    assert search.grid[1].shape[0] > 0
    state = from_routes(search, Routes([np.array([1, 2, 3]), np.array([4, 5])]))
    delta, route, _ = best_insertion(search.dist, search.node_data, search.capacity,
                                     search.timed, search.neighbours, search.grid,
                                     *state.arrays()[:4], 6, 0.0)
    assert route == int(state.nodes[4, ROUTE])  # the route of 4 and 5, beyond 6's neighbours
    assert delta < edge(search.dist, 0, 6) * 2  # cheaper than a route of its own
