import numpy as np
import pytest

from routecli.problems import Metric


def test_explicit_and_coordinate_metrics_agree():
    xy = np.array([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0]])
    coord = Metric("euc2d", coords=xy)
    matrix = Metric("explicit", matrix=coord.full_matrix())
    tour = np.array([0, 2, 1])
    assert coord.tour(tour) == matrix.tour(tour) == 20
    routes = [np.array([1]), np.array([2, 1])]
    np.testing.assert_array_equal(coord.routes(routes), matrix.routes(routes))
    np.testing.assert_array_equal(coord.cumulative(tour), matrix.cumulative(tour))


def test_metric_needs_its_data():
    with pytest.raises(ValueError):
        Metric("explicit")
    with pytest.raises(ValueError):
        Metric("euc2d")
