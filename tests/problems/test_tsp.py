import numpy as np

from routecli.problems import Metric, Tour, TSPInstance, validate


def square() -> TSPInstance:
    return TSPInstance("square", Metric("exact", coords=np.array([[0, 0], [1, 0], [1, 1], [0, 1.]])))


def test_cost_of_square_tour():
    assert square().cost(Tour([0, 1, 2, 3])) == 4
    assert square().cost(Tour([0, 2, 1, 3])) == 2 + 2 * np.sqrt(2)


def test_validate_names_missing_repeated_and_unknown_nodes():
    problems = validate(square(), Tour([0, 1, 1, 7]))  # 0-based ids; messages use TSPLIB's 1..n
    assert "node 8 does not exist" in problems
    assert "node 2 visited 2 times" in problems
    assert "node 3 missing" in problems and "node 4 missing" in problems
    assert validate(square(), Tour([3, 2, 1, 0])) == []
