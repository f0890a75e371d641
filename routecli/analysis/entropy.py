"""Angular entropy at a fixed within-route position (PE paper Section 3.1, "Hierarchy").

The paper indexes a route ``v_1 = depot, v_2, ..``, so position ``k = 2`` is the first customer.
For each ``k`` the depot-relative polar angles ``theta = atan2(y - y_0, x - x_0)`` of the
customers at position ``k`` of every route of every instance are pooled into ``bins`` equal
sectors of ``[-pi, pi)``; the normalised entropy is ``H / log(bins)`` with
``H = -sum_b p_b log p_b``. A value of 1 means that knowing ``k`` says nothing about where around
the depot the node lies. ``bins`` defaults to 16, the number of sectors XPE resolves with
``K = 4`` bands (Appendix M).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import stats

from routecli.analysis.anisometry import closed_paths
from routecli.problems import Routes, Tour

DEFAULT_BINS = 16
# Cells (set, k) with fewer customers are shown but left out of the grid mean and minimum: the
# plug-in entropy of n samples is biased low by about (bins - 1) / (2 n log bins), 0.03 at n = 100.
DEFAULT_MIN_COUNT = 100
DEFAULT_SETS = ("cvrp-100", "cvrp-200", "cvrp-500", "vrptw-100")
# Section 3.1: over CVRP-{100,200,500} and VRPTW-100 and k = 2..15, the mean and the minimum.
PAPER_MEAN, PAPER_MIN = 0.992, 0.953
POSITIONS = tuple(range(2, 16))  # k = 2..15, as in the paper


def position_angles(instances: Sequence, solutions: Sequence[Routes | Tour],
                    positions: Sequence[int] = POSITIONS) -> dict[int, np.ndarray]:
    """Depot-relative angles of the customers at each paper position ``k`` (pooled)."""
    paths = closed_paths(instances, solutions)
    width = max(len(p) for p in paths)
    rel = np.full((len(paths), width, 2), np.nan)
    for r, p in enumerate(paths):
        rel[r, : len(p) - 1] = p[:-1] - p[0]  # drop the return to the depot
    theta = np.arctan2(rel[..., 1], rel[..., 0])  # [R, W]; column c is paper position c + 1
    out = {}
    for k in positions:
        column = theta[:, k - 1] if k - 1 < width else np.zeros(0)
        out[k] = column[~np.isnan(column)]
    return out


def normalised_entropy(angles: np.ndarray, bins: int = DEFAULT_BINS) -> float:
    """``H / log(bins)`` of the sector histogram of ``angles`` (NaN when empty)."""
    if len(angles) == 0:
        return float("nan")
    counts, _ = np.histogram(angles, bins=bins, range=(-np.pi, np.pi))
    return max(0.0, float(stats.entropy(counts, base=bins)))  # H / log(bins)


def angular_entropy(instances: Sequence, solutions: Sequence[Routes | Tour],
                    bins: int = DEFAULT_BINS,
                    positions: Sequence[int] = POSITIONS) -> dict[int, tuple[int, float]]:
    """``{k: (number of customers at k, normalised entropy)}``."""
    angles = position_angles(instances, solutions, positions)
    return {k: (len(a), normalised_entropy(a, bins)) for k, a in angles.items()}
