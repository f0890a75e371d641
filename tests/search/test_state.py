"""The kernels' solution representation: round trips, derived fields, syncing."""

from __future__ import annotations

import numpy as np
import pytest

from routecli.baselines.construction import NearestNeighbour
from routecli.errors import InstanceFormatError, OptionError
from routecli.generate import batch_instances, cvrp, pcvrp, vrptw
from routecli.kernels.provider import edge
from routecli.problems import CVRPInstance, Metric, Routes
from routecli.search.state import (
    EARLY,
    FIRST,
    LATE,
    SIZE,
    SearchProblem,
    copy_state,
    from_routes,
    refresh_route,
    sync_state,
    total_cost,
)

GENERATORS = {"cvrp": cvrp, "vrptw": vrptw, "pcvrp": pcvrp}


def _instance(problem: str, n: int = 30, seed: int = 0):
    return batch_instances(problem, GENERATORS[problem](1, n, seed))[0]


@pytest.mark.parametrize("problem", ["cvrp", "vrptw", "pcvrp"])
def test_round_trip_keeps_routes_and_cost(problem: str) -> None:
    inst = _instance(problem)
    sol = NearestNeighbour().solve(inst)
    sol = Routes(sol.routes[:-1]) if problem == "pcvrp" else sol  # some customers unserved
    search = SearchProblem.from_instance(inst)
    state = from_routes(search, sol)
    back = state.to_routes()
    assert [list(r) for r in back.routes] == [list(r) for r in sol.routes]
    assert total_cost(search, state) == pytest.approx(inst.cost(sol), abs=1e-9)


def test_time_fields_match_the_instance_schedule() -> None:
    inst = _instance("vrptw")
    sol = NearestNeighbour().solve(inst)
    search = SearchProblem.from_instance(inst)
    state = from_routes(search, sol)
    for route in sol.routes:
        starts, _ = inst.schedule(route)
        np.testing.assert_allclose(state.times[route, EARLY], starts)
        # LATE is the latest start keeping the rest on time: never before the actual start,
        # never after the due time
        assert (state.times[route, LATE] >= starts - 1e-9).all()
        assert (state.times[route, LATE] <= inst.due[route] + 1e-9).all()


def test_refresh_reports_capacity_and_window_violations() -> None:
    inst = _instance("vrptw")
    search = SearchProblem.from_instance(inst)
    one_route = Routes([np.arange(1, inst.num_customers + 1)])  # everything on one vehicle
    state = from_routes(search, one_route)
    assert not refresh_route(search.dist, search.node_data, search.capacity, search.timed,
                             *state.arrays(), 0)


def test_sync_restores_exactly_the_touched_part() -> None:
    inst = _instance("cvrp", 40)
    search = SearchProblem.from_instance(inst)
    a = from_routes(search, NearestNeighbour().solve(inst))
    b = a.copy()
    # move the first customer of route 0 to the end of route 1 in b
    r0, r1 = np.flatnonzero(a.routes[:, SIZE] > 0)[:2]
    routes = [list(r) for r in a.to_routes().routes]
    c = routes[0].pop(0)
    routes[1].append(c)
    moved = from_routes(search, Routes(routes))
    copy_state(moved.arrays(), b.arrays())
    buf = np.zeros(3 * search.num_nodes, np.int64)
    sync_state(a.arrays(), b.arrays(), np.array([r0, r1]), 2, np.array([c]), 1, buf)
    assert [list(r) for r in b.to_routes().routes] == [list(r) for r in a.to_routes().routes]
    assert total_cost(search, b) == pytest.approx(total_cost(search, a))


def test_rounded_metric_is_what_the_search_sees() -> None:
    coords = np.array([[0, 0], [0, 1.4], [1.4, 0]])
    inst = CVRPInstance("r", Metric("euc2d", coords=coords), np.array([0, 1, 1]), 5.0)
    search = SearchProblem.from_instance(inst)
    assert edge(search.dist, 1, 2) == 2.0 and edge(search.dist, 0, 1) == 1.0


def test_asymmetric_distances_are_refused() -> None:
    matrix = np.array([[0.0, 1.0], [2.0, 0.0]])
    inst = CVRPInstance("a", Metric("explicit", matrix=matrix), np.array([0, 1]), 5.0)
    with pytest.raises(OptionError, match="symmetric"):
        SearchProblem.from_instance(inst)


def test_an_impossible_customer_is_reported() -> None:
    from routecli.search.asa import initial_solution

    coords = np.random.default_rng(0).random((4, 2))
    inst = CVRPInstance("big", Metric("exact", coords=coords), np.array([0, 1, 9, 1]), 5.0)
    with pytest.raises(InstanceFormatError, match="fits in no route"):
        initial_solution(SearchProblem.from_instance(inst))


def test_large_instances_keep_coordinates_not_a_matrix() -> None:
    coords = np.random.default_rng(0).uniform(0, 1000, (40, 2))
    inst = CVRPInstance("n", Metric("euc2d", coords=coords), np.ones(40), 5.0)
    small = SearchProblem.from_instance(inst)
    large = SearchProblem.from_instance(inst, dense_max=10)
    assert small.distances.is_dense and not large.distances.is_dense
    assert large.distances.nbytes == 40 * 2 * 8
    np.testing.assert_array_equal(small.neighbours, large.neighbours)


def test_totals_follow_every_route_change() -> None:
    inst = _instance("pcvrp", 30)
    search = SearchProblem.from_instance(inst)
    state = from_routes(search, Routes([np.arange(1, 6), np.arange(6, 9)]))
    assert list(state.totals) == [2, 8]
    state.routes[0, FIRST] = 0  # empty route 0
    refresh_route(search.dist, search.node_data, search.capacity, search.timed,
                  *state.arrays(), 0)
    assert list(state.totals) == [1, 3]
