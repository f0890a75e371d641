import numpy as np
import pytest

from routecli.problems import (
    CVRPInstance,
    InfeasibleSolutionError,
    Metric,
    Routes,
    Tour,
    check,
    validate,
)


def instance() -> CVRPInstance:
    xy = np.array([[0, 0], [3, 4], [6, 8], [-3, 4], [0, 10], [5, 0]], dtype=float)
    return CVRPInstance("tiny", Metric("euc2d", coords=xy), np.array([0, 4, 5, 3, 6, 2]), 10)


def test_cost_counts_depot_legs():
    assert instance().cost(Routes([[1, 2], [3, 4], [5]])) == 20 + 22 + 10


def test_validate_reports_capacity_excess_per_route():
    problems = validate(instance(), Routes([[1, 2, 5], [3, 4]]))
    assert problems == ["route 1 over capacity by 1 (load 11 > 10)"]


def test_validate_reports_missing_duplicate_and_depot_visits():
    problems = validate(instance(), Routes([[1, 0, 2], [2, 3]]))
    assert "route 1 visits the depot inside the route" in problems
    assert "customer 2 visited 2 times" in problems
    assert "customer 4 missing" in problems and "customer 5 missing" in problems


def test_check_raises_and_wrong_solution_type_is_named():
    with pytest.raises(InfeasibleSolutionError, match="customer 5 missing"):
        check(instance(), Routes([[1, 2], [3, 4]]))
    assert validate(instance(), Tour([0, 1])) == ["a cvrp solution must be routes, got Tour"]
