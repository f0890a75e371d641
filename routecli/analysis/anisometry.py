"""Anisometry of routes (PE paper Section 3.1, Table 1, Appendix C).

For a closed route ``v_0 = depot, v_1 .. v_m, v_L = depot`` (``L = m + 1`` edges) with edge
lengths ``e_1 .. e_L`` and cumulative distances ``d_0 = 0 .. d_L``:

- ``cv``: coefficient of variation of the edge lengths, ``std(e) / mean(e)`` (population std);
- ``max_min``: ``max(e) / min(e)`` (routes with a zero-length edge are left out of its mean);
- ``mad``: the median absolute deviation ``median(|r - median(r)|)`` of the residuals ``r`` of
  the least-squares line ``d_i ~ a + b i``, in units of ``mean(e)``. The fit runs over the
  departure from the depot and the customers, ``i = 0..L-1``; the return to the depot
  (``i = L``) is left out unless ``include_return``. The paper does not say which; leaving the
  return out reproduces its CVRP-100 value (0.37 vs 0.37; with the return: 0.48).

A solution's routes are pooled over all instances and each statistic is averaged over routes
(``summary`` also gives medians). Euclidean distances of the instance coordinates are used.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import stats

from routecli.problems import Routes, Tour

STATS = ("cv", "max_min", "mad")

# Table 1 of the PE paper (LKH/HGS solutions, 1,000 instances each): set -> (CV, max/min, MAD).
PAPER_TABLE1 = {
    "cvrp-100": (0.81, 26.6, 0.37),
    "cvrp-200": (0.93, 42.1, 0.44),
    "cvrp-500": (1.12, 72.3, 0.53),
    "vrptw-100": (0.78, 24.0, 0.33),
    "pdtsp-51": (0.78, 68.9, 1.24),
}


def closed_paths(instances: Sequence, solutions: Sequence[Routes | Tour]) -> list[np.ndarray]:
    """Coordinates ``[L + 1, 2]`` of every closed route (depot first and last), all instances."""
    paths = []
    for inst, sol in zip(instances, solutions, strict=True):
        xy = np.asarray(inst.coords, np.float64)
        if isinstance(sol, Tour):
            order = np.roll(sol.order, -int(np.flatnonzero(sol.order == 0)[0]))
            routes = [order[1:]]
        else:
            routes = list(sol.routes)
        paths += [xy[np.concatenate([[0], r, [0]])] for r in routes]
    return paths


def route_statistics(paths: Sequence[np.ndarray], include_return: bool = False
                     ) -> dict[str, np.ndarray]:
    """Per-route ``cv``, ``max_min`` and ``mad`` (see module docstring). Each ``[R]``."""
    count = len(paths)
    width = max(len(p) for p in paths)
    xy = np.full((count, width, 2), np.nan)
    for r, p in enumerate(paths):
        xy[r, : len(p)] = p
    edges = np.linalg.norm(np.diff(xy, axis=1), axis=-1)  # [R, W-1], NaN past the route's end
    valid = ~np.isnan(edges)
    num_edges = valid.sum(1)
    mean = np.nanmean(edges, axis=1)
    cv = stats.variation(edges, axis=1, nan_policy="omit")
    lo = np.nanmin(edges, axis=1)
    with np.errstate(divide="ignore"):
        max_min = np.where(lo > 0, np.nanmax(edges, axis=1) / lo, np.nan)
    cum = np.concatenate([np.zeros((count, 1)), np.cumsum(np.nan_to_num(edges), axis=1)], 1)
    index = np.arange(width, dtype=np.float64)[None].repeat(count, 0)
    on = np.concatenate([np.ones((count, 1), bool), valid], 1)  # positions 0..L
    if not include_return:
        on[np.arange(count), num_edges] = False
    cum, index = np.where(on, cum, np.nan), np.where(on, index, np.nan)
    i_bar = np.nanmean(index, axis=1, keepdims=True)
    d_bar = np.nanmean(cum, axis=1, keepdims=True)
    slope = (np.nansum((index - i_bar) * (cum - d_bar), axis=1, keepdims=True)
             / np.nansum((index - i_bar) ** 2, axis=1, keepdims=True))
    resid = cum - (d_bar + slope * (index - i_bar))
    mad = stats.median_abs_deviation(resid, axis=1, nan_policy="omit") / mean
    assert (num_edges >= 2).all()
    return {"cv": cv, "max_min": max_min, "mad": mad}


def anisometry(instances: Sequence, solutions: Sequence[Routes | Tour],
               include_return: bool = False) -> dict[str, float]:
    """Table 1 statistics of the solutions: route count, and the mean and median over routes
    of ``cv``, ``max_min`` and ``mad``."""
    stats = route_statistics(closed_paths(instances, solutions), include_return)
    out: dict[str, float] = {"routes": float(len(stats["cv"]))}
    for key in STATS:
        out[key] = float(np.nanmean(stats[key]))
        out[f"{key}_median"] = float(np.nanmedian(stats[key]))
    return out
