import numpy as np
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
    from routecli.baselines.hgs import NEAREST_START_NODES, nearest_start, search

    small = gen.batch_instances("cvrp", gen.cvrp(1, 30, seed=1))[0]
    assert nearest_start(small) is None
    large = gen.batch_instances("tsp", gen.tsp(1, NEAREST_START_NODES, seed=1))[0]
    nearest = NearestNeighbour().solve(large)
    assert nearest_start(large).order.tolist() == nearest.order.tolist()
    run = search(large, stop=MaxIterations(1))  # its start, then one iteration's improvement
    assert run.improved_at == [0] or large.cost(run.solution) < large.cost(nearest)
    assert large.cost(run.solution) <= large.cost(nearest) + 1e-6


def test_hgs_solves_a_geo_file_whose_rule_gives_a_nonzero_diagonal(data_dir):
    # GEO's d(i, i) = 1 (truncation + 1), which PyVRP refuses; the optimum is 3323 (TSPLIB)
    from routecli.io import read_instance

    inst = read_instance(data_dir / "geo_burma14.tsp")
    assert inst.metric.pairs(np.array([0]), np.array([0]))[0] == 1
    solution = HGS().solve(inst, stop=MaxIterations(2000))
    assert validate(inst, solution) == [] and inst.cost(solution) == 3323


@pytest.mark.parametrize("rule,scale", [("euc2d", 1.0), ("exact", 10_000.0)])
def test_block_filled_matrices_are_the_rounded_full_ones(rule, scale, monkeypatch):
    import numpy as np

    from routecli.baselines import hgs
    from routecli.problems import CVRPInstance, Metric

    monkeypatch.setattr(hgs, "BLOCK_PAIRS", 7 * 50)  # 7 rows a block, the last one short
    coords = np.random.default_rng(0).uniform(0, 100, (50, 2))
    inst = CVRPInstance("m", Metric(rule, coords=coords), np.ones(50), 10.0)
    distances, durations = hgs.integer_matrices(inst, scale)
    full = inst.metric.full_matrix() * scale
    np.testing.assert_array_equal(distances, np.rint(full))
    np.testing.assert_array_equal(durations, np.ceil(full - 1e-9))
    assert (durations is distances) == (rule == "euc2d")  # integers: one matrix serves both


@pytest.mark.parametrize("problem,nodes", [("tsp", 90), ("cvrp", 90), ("cvrp", 2), ("tsp", 3)])
def test_the_neighbour_lists_are_pyvrps_ties_and_blocks_included(problem, nodes, monkeypatch):
    from pyvrp.search import compute_neighbours

    from routecli.baselines import hgs
    from routecli.problems import CVRPInstance, Metric, TSPInstance

    monkeypatch.setattr(hgs, "BLOCK_PAIRS", 7 * nodes)  # 7 rows a block, the last one short
    # a 6 x 6 grid: many clients at the same distance, ties across the 50th neighbour
    coords = np.random.default_rng(0).integers(0, 6, (nodes, 2)).astype(float)
    metric = Metric("euc2d", coords=coords)
    inst = (TSPInstance("grid", metric) if problem == "tsp"
            else CVRPInstance("grid", metric, np.ones(nodes), 10.0))
    data = hgs.problem_data(inst)

    def indices(lists):
        return {a.idx: [b.idx for b in near] for a, near in lists.items()}

    assert indices(hgs.granular_neighbours(inst, data)) == indices(compute_neighbours(data))


def test_an_instance_too_large_for_the_memory_is_refused_before_solving(monkeypatch):
    from routecli import resources
    from routecli.baselines import hgs
    from routecli.errors import OptionError
    from routecli.solvers import require_problem

    inst = gen.batch_instances("cvrp", gen.cvrp(1, 30, seed=2))[0]
    need = hgs.memory_needed(inst)
    monkeypatch.setattr(resources, "available_memory", lambda: need)  # all of it: too tight
    with pytest.raises(OptionError, match=r"31 nodes, in PyVRP's dense matrices; .*\) needs "
                                          r"about [0-9.]+ GB of memory, more than 80% of the "
                                          r"[0-9.]+ GB available here"):
        require_problem(HGS(), inst)
    monkeypatch.setattr(resources, "available_memory",
                        lambda: int(need / resources.MEMORY_SHARE) + 1)
    require_problem(HGS(), inst)


def test_a_warm_start_is_where_the_search_begins(tmp_path):
    from dataclasses import replace

    from routecli.io import write_solution
    from routecli.problems import Metric

    inst = gen.batch_instances("cvrp", gen.cvrp(1, 40, seed=3))[0]
    inst = replace(inst, metric=Metric("euc2d", coords=(inst.metric.coords * 1000).round()))
    start = NearestNeighbour().solve(inst)
    write_solution(tmp_path / "start.sol", inst, start)
    seen = []
    solution = HGS(init=str(tmp_path / "start.sol")).solve(
        inst, stop=MaxIterations(50), progress=lambda p: seen.append(p.best))
    assert seen[0] == inst.cost(start)  # the first best PyVRP reports is the start's cost
    assert validate(inst, solution) == [] and inst.cost(solution) <= inst.cost(start)


def test_a_warm_start_tour_is_read_too(tmp_path):
    from routecli.io import write_solution

    inst = gen.batch_instances("tsp", gen.tsp(1, 30, seed=3))[0]
    start = NearestNeighbour().solve(inst)
    write_solution(tmp_path / "start.tour", inst, start)
    tour = HGS(init=str(tmp_path / "start.tour")).solve(inst, stop=MaxIterations(1))
    assert validate(inst, tour) == [] and inst.cost(tour) <= inst.cost(start)


def test_fractional_demands_are_never_truncated_into_an_overloaded_route(tmp_path):
    # demands 2.9, capacity 5.5: no two customers share a route (5.8 > 5.5), though truncated
    # to integers (2 + 2 <= 5) PyVRP would pair them
    from routecli.io import read_instance

    rows = "".join(f"{i + 1} {x} 0\n" for i, x in enumerate([0, 1, 2, 3, 4]))
    demands = "".join(f"{i + 1} {d}\n" for i, d in enumerate([0, 2.9, 2.9, 2.9, 2.9]))
    (tmp_path / "f.vrp").write_text(
        "NAME : f\nTYPE : CVRP\nDIMENSION : 5\nEDGE_WEIGHT_TYPE : EUC_2D\nCAPACITY : 5.5\n"
        f"NODE_COORD_SECTION\n{rows}DEMAND_SECTION\n{demands}DEPOT_SECTION\n1\n-1\nEOF\n")
    inst = read_instance(tmp_path / "f.vrp")
    solution = HGS().solve(inst, stop=MaxIterations(200))
    assert validate(inst, solution) == [] and len(solution.routes) == 4
