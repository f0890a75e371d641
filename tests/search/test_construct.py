"""Savings construction: feasible starts for every routing problem."""

from __future__ import annotations

import pytest

from routecli.baselines.construction import NearestNeighbour
from routecli.generate import batch_instances, cvrp, pcvrp, vrptw
from routecli.problems import validate
from routecli.search.construct import savings_solution
from routecli.search.state import SearchProblem, total_cost

GENERATORS = {"cvrp": cvrp, "vrptw": vrptw, "pcvrp": pcvrp}


@pytest.mark.parametrize("problem", ["cvrp", "vrptw", "pcvrp"])
def test_savings_is_feasible_and_costed_right(problem: str) -> None:
    for inst in batch_instances(problem, GENERATORS[problem](3, 80, 1)):
        search = SearchProblem.from_instance(inst)
        state = savings_solution(search)
        sol = state.to_routes()
        assert validate(inst, sol) == []
        assert total_cost(search, state) == pytest.approx(inst.cost(sol))


def test_unlimited_capacity_gives_one_route() -> None:
    inst = batch_instances("cvrp", cvrp(1, 30, 0, capacity=10_000))[0]
    sol = savings_solution(SearchProblem.from_instance(inst, neighbours=29)).to_routes()
    assert len(sol.routes) == 1


def test_savings_beats_nearest_neighbour_on_uniform_cvrp() -> None:
    insts = batch_instances("cvrp", cvrp(5, 100, 3))
    savings = sum(i.cost(savings_solution(SearchProblem.from_instance(i)).to_routes())
                  for i in insts)
    nn = sum(i.cost(NearestNeighbour().solve(i)) for i in insts)
    assert savings < nn
