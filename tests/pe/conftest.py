"""Small multi-route solutions shared by the PE tests."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from routecli.pe import RouteBatch


def sweep_routes(coords: np.ndarray, per_route: int) -> list[np.ndarray]:
    """Customers sorted by depot angle, cut into routes of ``per_route`` (a sweep heuristic)."""
    rel = coords[1:] - coords[0]
    order = np.argsort(np.arctan2(rel[:, 1], rel[:, 0])) + 1
    return [order[i : i + per_route] for i in range(0, len(order), per_route)]


def make_batch(sizes: tuple[int, ...], per_route: int = 5, seed: int = 0):
    """Node-layout batch of sweep solutions of random instances with ``sizes`` customers."""
    rng = np.random.default_rng(seed)
    coords, demands = [], []
    for n in sizes:  # instance by instance, so a prefix of ``sizes`` gives the same instances
        coords.append(rng.random((n + 1, 2)))
        demands.append(np.concatenate([[0], rng.integers(1, 10, n)]))
    routes = [sweep_routes(c, per_route) for c in coords]
    return RouteBatch.from_routes(coords, routes, demands), coords, routes, demands


@pytest.fixture
def multi_route():
    """Two instances of different size (so the first row is padded): (batch, coords, routes,
    demands)."""
    return make_batch((13, 17))


@pytest.fixture
def walk() -> RouteBatch:
    """Three closed walks of 12 visits, random coordinates."""
    gen = torch.Generator().manual_seed(0)
    points = torch.rand(3, 12, 2, generator=gen)
    return RouteBatch.from_walk(torch.cat([points, points[:, :1]], 1))


def reverse_walk(batch: RouteBatch) -> RouteBatch:
    """The same closed walks traversed backwards."""
    return RouteBatch.from_walk(batch.coords.flip(1))
