"""The NDS inputs read from the search state equal the slower path through ``Routes``."""

from __future__ import annotations

from dataclasses import fields

import numpy as np
import pytest
import torch

from routecli import generate
from routecli.generate import batch_instances
from routecli.nds.features import solution_batch
from routecli.pe.batch import RouteBatch
from routecli.problems import Routes
from routecli.problems.geometry import augment8
from routecli.search.asa import ASAConfig, initial_solution, solve
from routecli.search.repair import drop_unprofitable
from routecli.search.ruin import make_policy
from routecli.search.state import DEMAND, SearchProblem, from_routes
from routecli.stop import MaxIterations


def via_routes(problem: SearchProblem, routes: Routes, coords: np.ndarray) -> RouteBatch:
    """The former conversion: state -> Routes -> RouteBatch.from_routes."""
    demands = problem.node_data[:, DEMAND]
    return RouteBatch.from_routes(list(coords), [list(routes.routes)] * len(coords),
                                  [demands] * len(coords))


@pytest.mark.parametrize("kind", ["cvrp", "vrptw", "pcvrp"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_state_batch_equals_the_routes_batch_on_searched_states(kind: str, seed: int) -> None:
    raw = getattr(generate, kind)(1, 40, seed, capacity=None)
    problem = SearchProblem.from_instance(batch_instances(kind, raw)[0])
    start = initial_solution(problem)
    if problem.optional:
        drop_unprofitable(problem.dist, problem.node_data, problem.capacity, problem.timed,
                          *start.arrays())
    # a searched solution: routes emptied and refilled, slots reused out of order
    found = solve(problem, make_policy("random"), ASAConfig(stop=MaxIterations(200)),
                  seed=seed).solution
    rng = np.random.default_rng(seed)
    shuffled = Routes([found.routes[i] for i in rng.permutation(len(found.routes))])
    state = from_routes(problem, shuffled)
    coords = augment8(problem.unit_coords)[:3]
    fast = solution_batch(problem, state, coords)
    slow = via_routes(problem, state.to_routes(), coords)
    for f in fields(RouteBatch):
        a, b = getattr(fast, f.name), getattr(slow, f.name)
        assert a.shape == b.shape and a.dtype == b.dtype, f.name
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5, msg=f.name)


def test_a_solution_serving_nobody_is_the_depot_alone() -> None:
    raw = generate.pcvrp(1, 10, 0, capacity=None)
    problem = SearchProblem.from_instance(batch_instances("pcvrp", raw)[0])
    state = from_routes(problem, Routes([]))
    batch = solution_batch(problem, state, problem.unit_coords[None])
    assert batch.mask[0].tolist() == [True] + [False] * 10
    assert int(batch.route.max()) == 0 and float(batch.cum.abs().sum()) == 0.0
