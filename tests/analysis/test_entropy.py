import numpy as np
import pytest

from routecli.analysis.entropy import angular_entropy, normalised_entropy, position_angles
from routecli.problems import CVRPInstance, Metric, Routes


def star_instance(angles: np.ndarray) -> CVRPInstance:
    xy = np.concatenate([[[0.0, 0.0]], np.stack([np.cos(angles), np.sin(angles)], 1)])
    return CVRPInstance("star", Metric("exact", coords=xy), np.ones(len(xy)), 100.0)


def test_normalised_entropy_limits():
    assert normalised_entropy(np.linspace(-np.pi, np.pi, 1600, endpoint=False), 16) == \
        pytest.approx(1.0)
    assert normalised_entropy(np.full(50, 0.3), 16) == pytest.approx(0.0)
    two = np.concatenate([np.full(10, -3.0), np.full(10, 3.0)])
    assert normalised_entropy(two, 4) == pytest.approx(0.5)
    assert np.isnan(normalised_entropy(np.zeros(0)))


def test_position_k_two_is_the_first_customer():
    angles = np.array([0.1, 0.2, 2.0, 2.1, -1.0])
    inst = star_instance(angles)
    sol = Routes([[1, 2], [3, 4, 5]])
    got = position_angles([inst], [sol], positions=(2, 3, 4, 5))
    assert np.allclose(np.sort(got[2]), np.sort(angles[[0, 2]]))
    assert np.allclose(np.sort(got[3]), np.sort(angles[[1, 3]]))
    assert np.allclose(got[4], angles[[4]]) and len(got[5]) == 0


def test_sectors_per_route_give_full_entropy_only_across_routes():
    # 16 routes, one per sector: the first customers cover every sector exactly once
    angles = -np.pi + (np.arange(32) // 2 + 0.5) * (2 * np.pi / 16)
    inst = star_instance(angles)
    sol = Routes([[2 * r + 1, 2 * r + 2] for r in range(16)])
    result = angular_entropy([inst], [sol], bins=16, positions=(2, 3))
    assert result[2] == (16, pytest.approx(1.0)) and result[3][1] == pytest.approx(1.0)
    one_route = angular_entropy([inst], [Routes([np.arange(1, 33)])], bins=16, positions=(2,))
    assert one_route[2] == (1, pytest.approx(0.0))
