import numpy as np

from routecli.problems import Metric, PCVRPInstance, Routes, validate


def instance() -> PCVRPInstance:
    xy = np.array([[0, 0], [3, 4], [0, 10]], dtype=float)
    return PCVRPInstance("p", Metric("exact", coords=xy), np.array([0, 2, 2]), 3,
                         prizes=np.array([0, 12, 1.]))


def test_objective_is_distance_minus_collected_prizes():
    assert instance().cost(Routes([[1]])) == 10 - 12
    assert instance().cost(Routes([])) == 0


def test_unvisited_customers_are_allowed_but_capacity_and_repeats_are_not():
    assert validate(instance(), Routes([[2]])) == []
    problems = validate(instance(), Routes([[1, 2], [1]]))
    assert "customer 1 visited 2 times" in problems
    assert "route 1 over capacity by 1 (load 4 > 3)" in problems
