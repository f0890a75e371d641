"""Local-search polish: never worse, always valid, and each move family does its job."""

from __future__ import annotations

import numpy as np
import pytest

from routecli.baselines.construction import NearestNeighbour
from routecli.generate import batch_instances, cvrp, pcvrp, vrptw
from routecli.problems import CVRPInstance, Metric, Routes, validate
from routecli.search.local_search import (
    RELOCATE_AFTER,
    SWAP,
    TWO_OPT,
    TWO_OPT_STAR,
    TWO_OPT_STAR_REV,
    _build,
    _gain,
    polish,
)
from routecli.search.state import ROUTE, SearchProblem, from_routes

GENERATORS = {"cvrp": cvrp, "vrptw": vrptw, "pcvrp": pcvrp}


@pytest.mark.parametrize("problem", ["cvrp", "vrptw", "pcvrp"])
def test_polish_never_worsens_and_stays_valid(problem: str) -> None:
    for inst in batch_instances(problem, GENERATORS[problem](3, 60, 5)):
        start = NearestNeighbour().solve(inst)
        out = polish(inst, start)
        assert validate(inst, out) == []
        assert inst.cost(out) <= inst.cost(start) + 1e-9
    # nearest neighbour leaves plenty to improve on
    assert inst.cost(out) < inst.cost(start) - 1e-6


def test_polish_returns_an_invalid_input_unchanged() -> None:
    inst = batch_instances("cvrp", cvrp(1, 20, 0))[0]
    broken = Routes([np.arange(1, 11)])  # customers 11..20 missing
    assert polish(inst, broken) is broken


def test_two_opt_uncrosses_a_route() -> None:
    # a unit square above the depot, visited in a crossing order 1 -> 3 -> 2 -> 4; the best
    # tour goes around it: up the left side, across, down the right side
    coords = np.array([[0.5, 0.0], [0, 1], [1, 1], [1, 2], [0, 2]], float)
    inst = CVRPInstance("sq", Metric("exact", coords=coords), np.array([0, 1, 1, 1, 1]), 10.0)
    crossing = Routes([np.array([1, 3, 2, 4])])
    out = polish(inst, crossing)
    assert inst.cost(out) < inst.cost(crossing)
    assert inst.cost(out) == pytest.approx(inst.cost(Routes([np.array([1, 4, 3, 2])])))


def _cost_of(search: SearchProblem, seqs: list[np.ndarray]) -> float:
    return search.instance.cost(Routes([s for s in seqs if len(s)]))


@pytest.mark.parametrize("move", [RELOCATE_AFTER, SWAP, TWO_OPT, TWO_OPT_STAR, TWO_OPT_STAR_REV])
def test_move_gain_matches_the_built_routes(move: int) -> None:
    """The O(1) gain of each move equals the cost difference of the routes it builds."""
    inst = batch_instances("cvrp", cvrp(1, 30, 2, capacity=1000))[0]
    search = SearchProblem.from_instance(inst)
    sol = Routes([np.arange(1, 16), np.arange(16, 31)])
    state = from_routes(search, sol)
    buf = np.empty(2 * search.num_nodes, np.int64)
    checked = 0
    for u in range(1, 31):
        for v in range(1, 31):
            if u == v:
                continue
            same = (u <= 15) == (v <= 15)
            if move == TWO_OPT and not (same and u < v):
                continue
            gain = _gain(search.dist, search.node_data, search.capacity, *state.arrays()[:2],
                         state.rstat, move, u, v)
            if gain == 0.0:
                continue
            split, end = _build(state.nodes, state.routes, move, u, v, buf)
            ru = int(state.nodes[u, ROUTE])
            rv = int(state.nodes[v, ROUTE])
            new = [r.copy() for r in sol.routes]
            new[ru] = buf[:split].copy()
            if rv != ru:
                new[rv] = buf[split:end].copy()
            assert sorted(np.concatenate(new)) == list(range(1, 31))
            assert inst.cost(sol) - _cost_of(search, new) == pytest.approx(gain, abs=1e-9)
            checked += 1
    assert checked > 20
