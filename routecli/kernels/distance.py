"""Edge lengths under the TSPLIB distance rules, as numba kernels.

Rules (TSPLIB 95 spec, Reinelt 1995), one integer code each so kernels can branch cheaply:

- ``euc2d``  : ``nint(sqrt(dx^2 + dy^2))`` with ``nint(x) = floor(x + 0.5)``
- ``ceil2d`` : ``ceil(sqrt(dx^2 + dy^2))``
- ``att``    : ``r = sqrt((dx^2 + dy^2) / 10)``; ``t = nint(r)``; ``t + 1 if t < r else t``
- ``geo``    : great-circle distance on the TSPLIB sphere (R = 6378.388 km), truncated + 1;
               coordinates must first go through :func:`prepare_coords` (DDD.MM -> radians)
- ``exact``  : plain float Euclidean distance (``--round none``)
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

RULES: tuple[str, ...] = ("euc2d", "ceil2d", "att", "geo", "exact")
_EUC2D, _CEIL2D, _ATT, _GEO, _EXACT = range(5)
_GEO_RADIUS = 6378.388
_GEO_PI = 3.141592


def rule_code(rule: str) -> int:
    """Integer code of a distance rule name (see module docstring)."""
    try:
        return RULES.index(rule)
    except ValueError:
        raise ValueError(f"unknown distance rule {rule!r}; expected one of {', '.join(RULES)}") from None


def prepare_coords(coords: np.ndarray, rule: str) -> np.ndarray:
    """Return float64 coordinates ready for the kernels: GEO's DDD.MM become radians."""
    xy = np.ascontiguousarray(coords, dtype=np.float64)
    if rule != "geo":
        return xy
    degrees = np.trunc(xy)
    minutes = xy - degrees
    return _GEO_PI * (degrees + 5.0 * minutes / 3.0) / 180.0


@nb.njit(cache=True, inline="always")
def _edge(ax: float, ay: float, bx: float, by: float, rule: int) -> float:
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
def _edge_lengths(xy: np.ndarray, src: np.ndarray, dst: np.ndarray, rule: int) -> np.ndarray:
    out = np.empty(src.shape[0], dtype=np.float64)
    for k in range(src.shape[0]):
        a = src[k]
        b = dst[k]
        out[k] = _edge(xy[a, 0], xy[a, 1], xy[b, 0], xy[b, 1], rule)
    return out


@nb.njit(cache=True)
def _tour_length(xy: np.ndarray, tour: np.ndarray, rule: int) -> float:
    n = tour.shape[0]
    total = 0.0
    for k in range(n):
        a = tour[k]
        b = tour[(k + 1) % n]
        total += _edge(xy[a, 0], xy[a, 1], xy[b, 0], xy[b, 1], rule)
    return total


@nb.njit(cache=True)
def _routes_length(
    xy: np.ndarray, nodes: np.ndarray, offsets: np.ndarray, depot: int, rule: int
) -> np.ndarray:
    num_routes = offsets.shape[0] - 1
    out = np.zeros(num_routes, dtype=np.float64)
    for r in range(num_routes):
        prev = depot
        for k in range(offsets[r], offsets[r + 1]):
            cur = nodes[k]
            out[r] += _edge(xy[prev, 0], xy[prev, 1], xy[cur, 0], xy[cur, 1], rule)
            prev = cur
        if offsets[r + 1] > offsets[r]:
            out[r] += _edge(xy[prev, 0], xy[prev, 1], xy[depot, 0], xy[depot, 1], rule)
    return out


@nb.njit(cache=True)
def _cumulative(xy: np.ndarray, route: np.ndarray, rule: int) -> np.ndarray:
    out = np.zeros(route.shape[0], dtype=np.float64)
    for k in range(1, route.shape[0]):
        a = route[k - 1]
        b = route[k]
        out[k] = out[k - 1] + _edge(xy[a, 0], xy[a, 1], xy[b, 0], xy[b, 1], rule)
    return out


def edge_lengths(xy: np.ndarray, src: np.ndarray, dst: np.ndarray, rule: str) -> np.ndarray:
    """Lengths of the edges ``src[k] -> dst[k]``; ``xy`` from :func:`prepare_coords`. ``[E]``."""
    return _edge_lengths(
        xy, np.ascontiguousarray(src, np.int64), np.ascontiguousarray(dst, np.int64), rule_code(rule)
    )


def tour_length(xy: np.ndarray, tour: np.ndarray, rule: str) -> float:
    """Length of the closed tour visiting ``tour`` in order and returning to its first node."""
    return float(_tour_length(xy, np.ascontiguousarray(tour, np.int64), rule_code(rule)))


def routes_length(
    xy: np.ndarray, routes: list[np.ndarray], rule: str, depot: int = 0
) -> np.ndarray:
    """Length of each depot-closed route (routes list customers only). ``[R]``."""
    sizes = np.fromiter((len(r) for r in routes), dtype=np.int64, count=len(routes))
    offsets = np.zeros(len(routes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    nodes = (
        np.concatenate([np.asarray(r, np.int64) for r in routes])
        if routes
        else np.zeros(0, np.int64)
    )
    return _routes_length(xy, nodes, offsets, depot, rule_code(rule))


def cumulative_route_distance(xy: np.ndarray, route: np.ndarray, rule: str) -> np.ndarray:
    """Distance travelled from ``route[0]`` up to each position of ``route``. ``[L]``."""
    return _cumulative(xy, np.ascontiguousarray(route, np.int64), rule_code(rule))
