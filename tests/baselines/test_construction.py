import numpy as np
import pytest

from routecli import generate as gen
from routecli.baselines.construction import NearestNeighbour
from routecli.problems import Metric, TSPInstance, validate


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
