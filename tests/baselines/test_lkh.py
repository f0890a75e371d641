import itertools
from importlib.util import find_spec

import numpy as np
import pytest

from routecli.baselines import lkh
from routecli.errors import OptionError

needs_elkai = pytest.mark.skipif(find_spec("elkai") is None, reason='pip install -e ".[lkh]"')


def tour_length(xy: np.ndarray, order) -> float:
    points = xy[list(order)]
    return float(np.linalg.norm(points - np.roll(points, -1, 0), axis=1).sum())


@needs_elkai
def test_a_tour_of_eight_points_is_optimal_and_the_same_on_a_rerun():
    xy = np.random.default_rng(3).random((8, 2))
    tour = lkh.lkh_tour(xy)
    assert sorted(tour.tolist()) == list(range(8))
    best = min(tour_length(xy, (0, *rest)) for rest in itertools.permutations(range(1, 8)))
    assert tour_length(xy, tour) == pytest.approx(best, rel=1e-6)
    assert np.array_equal(lkh.lkh_tour(xy), tour)


@needs_elkai
def test_coordinates_in_any_units_are_scaled_before_lkh_rounds_distances():
    """Unit-square points would round every distance to 0 or 1; large ones are scaled down."""
    xy = np.random.default_rng(4).random((60, 2))
    lengths = [tour_length(xy, lkh.lkh_tour(xy * scale + 7.0)) for scale in (1.0, 1e-3, 1e7)]
    assert max(lengths) == pytest.approx(min(lengths), rel=1e-4)


@needs_elkai
def test_fewer_than_three_points_have_one_tour():
    assert lkh.lkh_tour(np.zeros((2, 2))).tolist() == [0, 1]


def test_without_elkai_the_refusal_names_the_install_command(monkeypatch):
    monkeypatch.setattr(lkh, "find_spec", lambda name: None)
    with pytest.raises(OptionError, match=r'pip install -e "\.\[lkh\]"'):
        lkh.require_elkai("--labeller lkh")
