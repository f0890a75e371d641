import numpy as np

from routecli.problems import Metric, Routes, VRPTWInstance, validate


def instance() -> VRPTWInstance:
    xy = np.array([[0, 0], [10, 0], [20, 0]], dtype=float)
    return VRPTWInstance("line", Metric("exact", coords=xy), np.array([0, 1, 1]), 10,
                         ready=np.array([0, 15, 0.]), due=np.array([100, 30, 25.]),
                         service=np.array([0, 5, 5.]))


def test_waiting_is_allowed_and_schedule_is_computed():
    starts, back = instance().schedule(np.array([1, 2]))
    np.testing.assert_allclose(starts, [15, 30])  # wait until 15 at customer 1
    assert back == 30 + 5 + 20
    assert validate(instance(), Routes([[1], [2]])) == []


def test_late_service_names_the_customer():
    problems = validate(instance(), Routes([[1, 2]]))
    assert problems == ["time window of customer 2 violated: service starts 30 > due 25"]


def test_late_return_to_depot():
    inst = instance()
    tight = VRPTWInstance("line", inst.metric, inst.demands, 10, inst.ready,
                          np.array([40, 30, 100.]), inst.service)
    assert validate(tight, Routes([[1, 2]])) == ["route 1 returns to the depot at 55 > 40"]
