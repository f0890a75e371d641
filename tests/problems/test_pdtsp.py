import numpy as np

from routecli.problems import Metric, PDTSPInstance, Tour, validate


def instance() -> PDTSPInstance:
    return PDTSPInstance("pd", Metric("exact", coords=np.random.default_rng(0).random((5, 2))))


def test_precedence_is_checked_per_request():
    assert instance().num_requests == 2
    assert validate(instance(), Tour([0, 1, 2, 3, 4])) == []
    assert validate(instance(), Tour([0, 3, 1, 2, 4])) == ["delivery 3 before pickup 1"]


def test_tour_must_start_at_the_depot():
    assert validate(instance(), Tour([1, 0, 3, 2, 4])) == [
        "tour starts at node 1, not at the depot 0"]
