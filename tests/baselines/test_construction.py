import numpy as np
import pytest

from routecli import generate as gen
from routecli.baselines.construction import NearestNeighbour
from routecli.problems import Metric, Routes, Tour, TSPInstance, validate


@pytest.mark.parametrize("problem", ["tsp", "cvrp", "vrptw", "pcvrp", "pdtsp"])
def test_nearest_neighbour_is_feasible(problem):
    for inst in gen.batch_instances(problem, gen.GENERATORS[problem](4, 40, seed=1)):
        assert validate(inst, NearestNeighbour().solve(inst)) == []


def test_nearest_neighbour_tsp_follows_the_nearest_node():
    xy = np.array([[0, 0], [10, 0], [1, 0], [3, 0]], dtype=float)
    tour = NearestNeighbour().solve(TSPInstance("line", Metric("exact", coords=xy)))
    np.testing.assert_array_equal(tour.order, [0, 2, 3, 1])


def test_nearest_neighbour_on_explicit_matrix(data_dir):
    from routecli.io import read_instance

    inst = read_instance(data_dir / "explicit5.tsp")
    assert validate(inst, NearestNeighbour().solve(inst)) == []


def test_completion_continues_a_tour_by_the_nearest_node():
    from routecli.baselines.construction import complete_nearest

    xy = np.array([[0, 0], [10, 0], [1, 0], [3, 0], [2, 0]], dtype=float)
    assert complete_nearest(xy, np.array([0, 1])).tolist() == [0, 1, 3, 4, 2]


def test_completion_respects_capacity_and_pickup_order():
    from routecli.baselines.construction import complete_nearest

    for inst in gen.batch_instances("cvrp", gen.cvrp(3, 60, seed=2)):
        share = np.asarray(inst.demands, float) / inst.capacity
        path = complete_nearest(inst.coords, np.array([0, 5, 9, 0, 17]), share, depot=True)
        solution = Routes(piece[piece != 0] for piece in np.split(path, np.flatnonzero(path == 0)))
        assert validate(inst, solution) == [] and path[:5].tolist() == [0, 5, 9, 0, 17]
    for inst in gen.batch_instances("pdtsp", gen.pdtsp(3, 40, seed=2)):
        r = inst.num_requests
        tour = complete_nearest(inst.coords, np.array([0, 1, 2, r + 1]), requests=r, depot=True)
        assert validate(inst, Tour(tour)) == []


def test_nearest_neighbour_says_a_time_limit_does_not_change_it(data_dir):
    from routecli.io import read_instance
    from routecli.stop import MaxRuntime

    inst = read_instance(data_dir / "tiny.vrp")
    nn = NearestNeighbour()
    nn.solve(inst)
    assert nn.effort is not None and nn.effort.complete and nn.effort.note is None
    nn.solve(inst, stop=MaxRuntime(5))
    assert nn.effort is not None and not nn.effort.complete
    assert "--time-limit does not change it" in str(nn.effort)
