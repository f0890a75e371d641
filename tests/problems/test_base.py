import numpy as np
import pytest

from routecli.problems import (
    CVRPInstance,
    KPInstance,
    Metric,
    Routes,
    Selection,
    Tour,
    TSPInstance,
    cost,
    gap,
)
from routecli.problems.base import InfeasibleSolutionError, check_permutation


def test_routes_drop_empty_routes_and_concatenate_visits():
    routes = Routes([[1, 2], [], [3]])
    assert len(routes) == 2
    np.testing.assert_array_equal(routes.visited, [1, 2, 3])


def test_check_permutation_summarises_many_missing():
    problems = check_permutation(np.array([], np.int64), np.arange(1, 31), "customer")
    assert problems[-1] == "30 customers missing in all"


def test_gap_sign_follows_the_objective_sense():
    assert gap(110, 100) == 10
    assert gap(90, 100, sense="max") == 10
    assert np.isnan(gap(5, 0))


def test_gap_is_elementwise_on_arrays_and_tensors():
    import torch

    np.testing.assert_allclose(gap(np.array([110.0, 95.0]), np.array([100.0, 100.0])), [10, -5])
    torch.testing.assert_close(gap(torch.tensor([-9.0]), torch.tensor([-10.0])), torch.tensor([10.0]))


def test_cost_takes_the_solution_type_of_the_problem():
    xy = np.array([[0, 0], [3, 4], [0, 4]], dtype=float)
    tsp = TSPInstance("tsp", Metric("euc2d", coords=xy))
    cvrp = CVRPInstance("cvrp", Metric("euc2d", coords=xy), np.array([0, 1, 1]), 2)
    kp = KPInstance("kp", np.array([0.5, 0.4]), np.array([1.0, 2.0]), 1.0)
    assert cost(tsp, Tour([0, 1, 2])) == tsp.cost(Tour([0, 1, 2])) == 12
    assert cost(cvrp, Routes([[1], [2]])) == 18
    assert cost(kp, Selection([1])) == 2.0
    with pytest.raises(TypeError, match="a cvrp instance cannot cost a Tour"):
        cost(cvrp, Tour([0, 1, 2]))
    with pytest.raises(TypeError, match="a tsp instance cannot cost a Routes"):
        cost(tsp, Routes([[1, 2]]))


def test_error_message_lists_first_problems():
    err = InfeasibleSolutionError([f"p{i}" for i in range(7)])
    assert str(err).endswith("(7 in all)")


def test_error_survives_pickling_across_processes():
    import pickle

    err = pickle.loads(pickle.dumps(InfeasibleSolutionError(["customer 3 missing", "x"])))
    assert err.problems == ["customer 3 missing", "x"]
