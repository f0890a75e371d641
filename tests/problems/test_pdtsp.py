import numpy as np

from routecli.problems import Metric, PDTSPInstance, Tour, validate


def instance() -> PDTSPInstance:
    return PDTSPInstance("pd", Metric("exact", coords=np.random.default_rng(0).random((5, 2))))


def test_precedence_is_checked_per_request():
    assert instance().num_requests == 2
    assert validate(instance(), Tour([0, 1, 2, 3, 4])) == []
    # nodes are named by their file ids (1-based, as .tour files write them)
    assert validate(instance(), Tour([0, 3, 1, 2, 4])) == ["delivery 4 before pickup 2"]


def test_tour_must_start_at_the_depot():
    assert validate(instance(), Tour([1, 0, 3, 2, 4])) == [
        "tour starts at node 2, not at the depot 1"]


def test_a_renumbered_instance_names_nodes_by_their_file_ids():
    # file order: depot 1, then pickup 2 -> delivery 3, pickup 4 -> delivery 5
    renumbered = PDTSPInstance("pd", instance().metric, file_ids=np.array([1, 2, 4, 3, 5]))
    assert validate(renumbered, Tour([0, 3, 1, 2, 4])) == ["delivery 3 before pickup 2"]
    assert validate(renumbered, Tour([0, 1, 1, 2, 4])) == ["node 2 visited 2 times",
                                                            "node 3 missing"]
    assert validate(renumbered, Tour([0, 1, 9, 2, 4])) == ["node index 9 does not exist"]
