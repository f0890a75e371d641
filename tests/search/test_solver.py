"""The ``sisr`` solver through the registry and the validating runner."""

from __future__ import annotations

import pytest

from routecli.errors import OptionError
from routecli.generate import batch_instances, cvrp, pcvrp, vrptw
from routecli.io import read_instance
from routecli.solvers import REGISTRY, make_solver, run
from routecli.stop import DEFAULT_SECONDS, MaxIterations, MaxRuntime

GENERATORS = {"cvrp": cvrp, "vrptw": vrptw, "pcvrp": pcvrp}


def test_registered() -> None:
    assert REGISTRY["sisr"][0] == "routecli.search.solver"


@pytest.mark.parametrize("problem", ["cvrp", "vrptw", "pcvrp"])
@pytest.mark.parametrize("policy,polish", [("strings", False), ("random", True)])
def test_solves_tiny_generated_instances(problem: str, policy: str, polish: bool) -> None:
    inst = batch_instances(problem, GENERATORS[problem](1, 25, 0))[0]
    solver = make_solver("sisr", policy=policy, polish=polish)
    seen: list[float] = []
    result = run(solver, inst, seed=0, stop=MaxIterations(300),
                 progress=lambda p: seen.append(p.best))
    assert result.feasible, result.problems
    assert seen and result.cost <= seen[-1] + 1e-9  # polish may lower it further
    assert solver.last is not None and solver.last.iterations > 0


def test_settings_reach_the_search() -> None:
    solver = make_solver("sisr", rollouts=4, t_start=2.0)
    config = solver.settings.asa_config(MaxIterations(7))
    assert config.rollouts == 4 and config.t_start == 2.0
    assert config.stop == MaxIterations(7)
    assert solver.settings.asa_config(None).stop == MaxRuntime(DEFAULT_SECONDS)
    with pytest.raises(OptionError, match="model 'sisr' has no setting 'warp'"):
        make_solver("sisr", warp=9)
    with pytest.raises(OptionError, match="rollouts"):
        make_solver("sisr", rollouts=0)


def test_unknown_policy_fails_at_make() -> None:
    with pytest.raises(OptionError, match="--policy must be one of"):
        make_solver("sisr", policy="nope")


def test_cvrplib_instance_on_its_rounded_metric(benchdata) -> None:  # noqa: ANN001
    inst = read_instance(benchdata / "cvrplib" / "X" / "X-n101-k25.vrp")
    result = run(make_solver("sisr"), inst, seed=0, stop=MaxIterations(3000), bks=27591)
    assert result.feasible
    assert result.cost == int(result.cost)  # integer edges under euc2d
    assert 0.0 <= result.gap < 5.0


def test_twenty_thousand_customers_solve_without_a_distance_matrix() -> None:
    """20,001 nodes: a dense float64 matrix alone would take 3.2 GB; the search keeps
    coordinates, neighbour lists and a grid, and its peak stays a small fraction of that."""
    import tracemalloc

    inst = batch_instances("cvrp", cvrp(1, 20_000, 0))[0]
    solver = make_solver("sisr")
    tracemalloc.start()
    try:
        result = run(solver, inst, seed=0, stop=MaxIterations(300))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.feasible, result.problems[:3]
    assert solver.last is not None and solver.last.iterations == 300
    assert peak < 150 * 2**20, f"peak {peak / 2**20:.0f} MiB"


@pytest.mark.parametrize("problem", ["cvrp", "vrptw", "pcvrp"])
def test_a_warm_start_is_where_the_search_begins(problem: str, tmp_path) -> None:
    from routecli.baselines.construction import NearestNeighbour
    from routecli.io import write_solution
    from routecli.problems import Routes
    from routecli.search.asa import improved_start
    from routecli.search.repair import drop_unprofitable
    from routecli.search.state import SearchProblem, from_routes, total_cost

    inst = batch_instances(problem, GENERATORS[problem](1, 30, 0))[0]
    start = NearestNeighbour().solve(inst)
    assert isinstance(start, Routes)
    write_solution(tmp_path / "start.sol", inst, start)
    solver = make_solver("sisr", init=str(tmp_path / "start.sol"))
    seen: list[float] = []
    result = run(solver, inst, seed=0, stop=MaxIterations(200),
                 progress=lambda p: seen.append(p.best))
    assert result.feasible
    problem = SearchProblem.from_instance(inst)
    ready = improved_start(problem, from_routes(problem, start))  # the start after local search
    if problem.optional:  # and without the customers that do not pay for themselves
        drop_unprofitable(problem.dist, problem.node_data, problem.capacity, problem.timed,
                          *ready.arrays())
    assert seen[0] == pytest.approx(total_cost(problem, ready)) and seen[0] <= inst.cost(start)
    assert result.cost <= seen[0] + 1e-9


# Cost and SHA-1 (first 12 hex digits) of repr([list(route) ...]) of runs at fixed iterations
# and seed 0, recorded with the engine that kept every instance's dense matrix (commit
# 67fcdf1): the provider, route totals and lazy best must leave every search step as it was.
SAME_AS_THE_MATRIX_ENGINE = [
    ("demo/cvrp-demo-50", {}, 3000, 10154.0, "999c5b56101a"),
    ("demo/cvrp-demo-50", {"policy": "random"}, 3000, 10154.0, "a49ef6ad9f3a"),
    ("demo/cvrp-demo-50", {"rollouts": 4}, 1000, 10241.0, "7b6465883e5e"),
    ("demo/vrptw-demo-50", {}, 3000, 17497.0, "9061a70144e4"),
    ("demo/pcvrp-demo-50", {}, 3000, -4008.0, "ca1cdbff63c1"),
    ("X/X-n502-k39", {}, 5000, 70716.0, "4a151213f517"),
    ("X/X-n1001-k43", {}, 20000, 76409.0, "7cfd78f06f80"),  # 1,001 nodes: on-demand edges
]


def _same_run(path, options, iterations, cost, digest) -> None:  # noqa: ANN001
    import hashlib

    inst = read_instance(path)
    routes = make_solver("sisr", **options).solve(inst, seed=0, stop=MaxIterations(iterations))
    assert inst.cost(routes) == cost
    text = repr([list(map(int, r)) for r in routes.routes])
    assert hashlib.sha1(text.encode()).hexdigest()[:12] == digest


@pytest.mark.parametrize("name,options,iterations,cost,digest",
                         [c for c in SAME_AS_THE_MATRIX_ENGINE if c[0].startswith("demo/")])
def test_demo_results_are_those_of_the_matrix_engine(name, options, iterations, cost,
                                                     digest) -> None:  # noqa: ANN001
    from pathlib import Path

    demo = Path(__file__).resolve().parents[2] / "data" / "demo"
    _same_run(demo / f"{name.split('/')[1]}.vrp", options, iterations, cost, digest)


@pytest.mark.parametrize("name,options,iterations,cost,digest",
                         [c for c in SAME_AS_THE_MATRIX_ENGINE if c[0].startswith("X/")])
def test_cvrplib_results_are_those_of_the_matrix_engine(name, options, iterations, cost, digest,
                                                        benchdata) -> None:  # noqa: ANN001
    _same_run(benchdata / "cvrplib" / f"{name}.vrp", options, iterations, cost, digest)
