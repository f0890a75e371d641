"""The search's distance provider: on-demand edges equal the dense matrix under every rule."""

from __future__ import annotations

import numba as nb
import numpy as np
import pytest

from routecli.kernels.provider import DistanceProvider, edge
from routecli.problems import Metric

RULES = ["euc2d", "ceil2d", "att", "geo", "exact"]


def _coords(rule: str, n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if rule == "geo":  # DDD.MM latitudes and longitudes
        return np.round(rng.uniform(-80, 80, (n, 2)), 2)
    return np.round(rng.uniform(0, 5000, (n, 2)), 1)


@nb.njit
def _all_edges(dist, n) -> np.ndarray:  # noqa: ANN001
    out = np.empty((n, n))
    for a in range(n):
        for b in range(n):
            out[a, b] = edge(dist, a, b)
    return out


# 40 nodes: the matrix comes from numpy's formulas; 400: from the numba kernel (distance.SMALL)
@pytest.mark.parametrize("n", [40, 400])
@pytest.mark.parametrize("rule", RULES)
def test_on_demand_edges_equal_the_dense_matrix_bit_for_bit(rule: str, n: int) -> None:
    metric = Metric(rule, coords=_coords(rule, n))
    dense = metric.full_matrix()
    provider = DistanceProvider.on_demand(metric.coords, rule)  # type: ignore[arg-type]
    assert not provider.is_dense
    np.testing.assert_array_equal(_all_edges(provider.view, n), dense)  # inside a kernel
    src, dst = np.divmod(np.arange(n * n), n)
    np.testing.assert_array_equal(provider.pairs(src, dst).reshape(n, n), dense)
    assert edge(provider.view, 3, 7) == dense[3, 7]  # from Python


def test_a_dense_provider_reads_its_matrix() -> None:
    matrix = np.array([[0.0, 2.5, 4.0], [2.5, 0.0, 1.0], [4.0, 1.0, 0.0]])
    provider = DistanceProvider.dense(matrix)
    assert provider.is_dense and provider.size == 3
    np.testing.assert_array_equal(_all_edges(provider.view, 3), matrix)
    assert list(provider.pairs(np.array([0, 2]), np.array([1, 1]))) == [2.5, 1.0]


def test_memory_is_the_coordinates_alone() -> None:
    provider = DistanceProvider.on_demand(np.zeros((30_001, 2)), "euc2d")
    assert provider.nbytes == 30_001 * 2 * 8
