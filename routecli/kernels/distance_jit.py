"""The numba kernels behind :mod:`routecli.kernels.distance` for large inputs (see there for the
rules). A module of its own so that importing the distance rules does not import numba: numba
and loading its cached machine code take about a second, more than ``routecli info`` may."""

from __future__ import annotations

import math

import numba as nb
import numpy as np

# Rule codes, as routecli.kernels.distance.RULES orders the rules.
_EUC2D, _CEIL2D, _ATT, _GEO = range(4)  # and 4, exact: the fall-through
_GEO_RADIUS = 6378.388


@nb.njit(cache=True, inline="always")
def edge_length(ax: float, ay: float, bx: float, by: float, rule: int) -> float:
    if rule == _GEO:
        q1 = math.cos(ay - by)
        q2 = math.cos(ax - bx)
        q3 = math.cos(ax + bx)
        arg = 0.5 * ((1.0 + q1) * q2 - (1.0 - q1) * q3)
        arg = min(1.0, max(-1.0, arg))
        return float(int(_GEO_RADIUS * math.acos(arg) + 1.0))
    dx = ax - bx
    dy = ay - by
    if rule == _ATT:
        r = math.sqrt((dx * dx + dy * dy) / 10.0)
        t = math.floor(r + 0.5)
        return t + 1.0 if t < r else t
    d = math.sqrt(dx * dx + dy * dy)
    if rule == _EUC2D:
        return math.floor(d + 0.5)
    if rule == _CEIL2D:
        return math.ceil(d)
    return d


@nb.njit(cache=True)
def edge_lengths(xy: np.ndarray, src: np.ndarray, dst: np.ndarray, rule: int) -> np.ndarray:
    out = np.empty(src.shape[0], dtype=np.float64)
    for k in range(src.shape[0]):
        a = src[k]
        b = dst[k]
        out[k] = edge_length(xy[a, 0], xy[a, 1], xy[b, 0], xy[b, 1], rule)
    return out


@nb.njit(cache=True)
def tour_length(xy: np.ndarray, tour: np.ndarray, rule: int) -> float:
    n = tour.shape[0]
    total = 0.0
    for k in range(n):
        a = tour[k]
        b = tour[(k + 1) % n]
        total += edge_length(xy[a, 0], xy[a, 1], xy[b, 0], xy[b, 1], rule)
    return total


@nb.njit(cache=True)
def routes_length(
    xy: np.ndarray, nodes: np.ndarray, offsets: np.ndarray, depot: int, rule: int
) -> np.ndarray:
    num_routes = offsets.shape[0] - 1
    out = np.zeros(num_routes, dtype=np.float64)
    for r in range(num_routes):
        prev = depot
        for k in range(offsets[r], offsets[r + 1]):
            cur = nodes[k]
            out[r] += edge_length(xy[prev, 0], xy[prev, 1], xy[cur, 0], xy[cur, 1], rule)
            prev = cur
        if offsets[r + 1] > offsets[r]:
            out[r] += edge_length(xy[prev, 0], xy[prev, 1], xy[depot, 0], xy[depot, 1], rule)
    return out


@nb.njit(cache=True)
def cumulative(xy: np.ndarray, route: np.ndarray, rule: int) -> np.ndarray:
    out = np.zeros(route.shape[0], dtype=np.float64)
    for k in range(1, route.shape[0]):
        a = route[k - 1]
        b = route[k]
        out[k] = out[k - 1] + edge_length(xy[a, 0], xy[a, 1], xy[b, 0], xy[b, 1], rule)
    return out
