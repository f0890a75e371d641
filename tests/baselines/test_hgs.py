import pytest

from routecli import generate as gen
from routecli.baselines.construction import NearestNeighbour
from routecli.baselines.hgs import HGS
from routecli.problems import validate
from routecli.stop import MaxIterations, NoImprovement


@pytest.mark.parametrize("problem", ["tsp", "cvrp", "vrptw", "pcvrp", "pdtsp"])
def test_hgs_is_feasible_and_beats_nearest_neighbour(problem):
    inst = gen.batch_instances(problem, gen.GENERATORS[problem](1, 30, seed=4))[0]
    solution = HGS().solve(inst, seed=1, stop=MaxIterations(300))
    assert validate(inst, solution) == []
    assert inst.cost(solution) <= inst.cost(NearestNeighbour().solve(inst)) + 1e-9


def test_hgs_on_a_file_with_integer_rounding(data_dir):
    from routecli.io import read_instance

    inst = read_instance(data_dir / "tiny.vrp")
    solution = HGS().solve(inst, stop=MaxIterations(200))
    # optimum by hand: [3, 2, 5] = 5 + 10 + 8 + 5 and [1, 4] = 5 + 7 + 10 (rounded edges)
    assert validate(inst, solution) == [] and inst.cost(solution) == 50


def test_hgs_vrptw_schedules_are_on_time_in_float_units():
    # PyVRP works in scaled integers; rounding travel times to nearest once let schedules
    # arrive ~1e-5 late in the instance's own units.
    for inst in gen.batch_instances("vrptw", gen.vrptw(6, 60, seed=11)):
        assert validate(inst, HGS().solve(inst, stop=MaxIterations(200))) == []


def test_hgs_stops_after_iterations_without_improvement():
    from routecli.baselines.hgs import search
    from routecli.solvers import make_solver

    inst = gen.batch_instances("cvrp", gen.cvrp(1, 30, seed=2))[0]
    run = search(inst, stop=MaxIterations(100_000) | NoImprovement(50))
    assert run.iterations == run.improved_at[-1] + 50 and not run.timed_out
    assert validate(inst, run.solution) == []
    solver = make_solver("hgs")
    again = solver.solve(inst, stop=NoImprovement(50) | MaxIterations(100_000))
    assert inst.cost(again) == inst.cost(run.solution)
    assert solver.last.iterations == run.iterations  # kept for iterations-per-second tables


def test_each_early_solution_is_that_of_a_run_with_the_smaller_budget():
    # a criterion only watches PyVRP's search, so a run with smaller limits is the same run
    # stopped earlier (by the iteration limit, or by iterations without improvement)
    from routecli.baselines.hgs import search

    inst = gen.batch_instances("cvrp", gen.cvrp(1, 30, seed=6))[0]
    early = [(150, 10_000), (10_000, 40), (400, 120)]
    run = search(inst, stop=MaxIterations(600) | NoImprovement(200), early=early)
    alone = search(inst, stop=MaxIterations(600) | NoImprovement(200))
    assert len(run.early) == len(early) and alone.early == []
    for (iterations, stall), solution, ran in zip(early, run.early, run.early_iterations,
                                                  strict=True):
        small = search(inst, stop=MaxIterations(iterations) | NoImprovement(stall))
        assert ran == small.iterations
        assert [r.tolist() for r in solution.routes] == \
            [r.tolist() for r in small.solution.routes]
    assert inst.cost(run.solution) == inst.cost(alone.solution)


def test_exact_distances_scale_loads_too(data_dir):
    # distances scaled by EXACT_SCALE against unscaled loads made a unit of excess load
    # cheaper than driving (PyVRP caps its penalty): overloaded routes on the demo
    from routecli.baselines.hgs import EXACT_SCALE, problem_data
    from routecli.io import read_instance

    inst = read_instance(data_dir.parents[1] / "data" / "demo" / "cvrp-demo-50.vrp", "none")
    data = problem_data(inst)
    assert data.vehicle_type(0).capacity == [inst.capacity * EXACT_SCALE]
    assert data.clients()[0].delivery == [inst.demands[1] * EXACT_SCALE]
    solution = HGS().solve(inst, seed=1, stop=MaxIterations(100))
    assert validate(inst, solution) == []


def test_large_instances_start_from_nearest_neighbour():
    from routecli.baselines.hgs import EXACT_SCALE, NEAREST_START_NODES, nearest_start, problem_data

    small = gen.batch_instances("cvrp", gen.cvrp(1, 30, seed=1))[0]
    assert nearest_start(small, problem_data(small)) is None
    large = gen.batch_instances("tsp", gen.tsp(1, NEAREST_START_NODES, seed=1))[0]
    start = nearest_start(large, problem_data(large))
    assert start is not None and start.is_feasible()
    nearest = large.cost(NearestNeighbour().solve(large))  # PyVRP: integers, EXACT_SCALE
    assert abs(start.distance() / EXACT_SCALE - nearest) < 1e-3 * nearest
