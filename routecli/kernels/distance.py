"""Edge lengths under the TSPLIB distance rules: numpy for inputs of up to :data:`SMALL` edges,
the numba kernels of :mod:`routecli.kernels.distance_jit` above that.

Two paths because numba costs about a second before its first result (importing it, loading
its cached machine code) and numpy is six times slower on millions of edges: reading an instance
and re-costing a best-known solution (``routecli info``) stays fast, costing a 10M-node tour too.
Both give the same edge lengths; sums of ``exact`` (float) lengths may differ in the last bits.

Rules (TSPLIB 95 spec, Reinelt 1995), one integer code each so kernels can branch cheaply:

- ``euc2d``  : ``nint(sqrt(dx^2 + dy^2))`` with ``nint(x) = floor(x + 0.5)``
- ``ceil2d`` : ``ceil(sqrt(dx^2 + dy^2))``
- ``att``    : ``r = sqrt((dx^2 + dy^2) / 10)``; ``t = nint(r)``; ``t + 1 if t < r else t``
- ``geo``    : great-circle distance on the TSPLIB sphere (R = 6378.388 km), truncated + 1;
               coordinates must first go through :func:`prepare_coords` (DDD.MM -> radians)
- ``exact``  : plain float Euclidean distance (``--round none``)
"""

from __future__ import annotations

import importlib
from types import ModuleType

import numpy as np

RULES: tuple[str, ...] = ("euc2d", "ceil2d", "att", "geo", "exact")
_EUC2D, _CEIL2D, _ATT, _GEO = range(4)  # and 4, exact: the fall-through
_GEO_RADIUS = 6378.388
SMALL = 100_000  # edges: up to here numpy answers in milliseconds, well before numba could
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


def _jit() -> ModuleType:
    return importlib.import_module("routecli.kernels.distance_jit")


def _edges(xy: np.ndarray, src: np.ndarray, dst: np.ndarray, rule: int) -> np.ndarray:
    """Vectorised ``edge_length`` of the numba kernels, formula for formula."""
    a, b = xy[src], xy[dst]
    if rule == _GEO:
        q1 = np.cos(a[:, 1] - b[:, 1])
        q2 = np.cos(a[:, 0] - b[:, 0])
        q3 = np.cos(a[:, 0] + b[:, 0])
        arg = np.clip(0.5 * ((1.0 + q1) * q2 - (1.0 - q1) * q3), -1.0, 1.0)
        return np.trunc(_GEO_RADIUS * np.arccos(arg) + 1.0)
    dx = a[:, 0] - b[:, 0]
    dy = a[:, 1] - b[:, 1]
    if rule == _ATT:
        r = np.sqrt((dx * dx + dy * dy) / 10.0)
        t = np.floor(r + 0.5)
        return np.where(t < r, t + 1.0, t)
    d = np.sqrt(dx * dx + dy * dy)
    if rule == _EUC2D:
        return np.floor(d + 0.5)
    if rule == _CEIL2D:
        return np.ceil(d)
    return d


def _ints(values: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(values, np.int64)


def edge_lengths(xy: np.ndarray, src: np.ndarray, dst: np.ndarray, rule: str) -> np.ndarray:
    """Lengths of the edges ``src[k] -> dst[k]``; ``xy`` from :func:`prepare_coords`. ``[E]``."""
    src, dst, code = _ints(src), _ints(dst), rule_code(rule)
    if len(src) <= SMALL:
        return _edges(xy, src, dst, code)
    return _jit().edge_lengths(xy, src, dst, code)


def tour_length(xy: np.ndarray, tour: np.ndarray, rule: str) -> float:
    """Length of the closed tour visiting ``tour`` in order and returning to its first node."""
    tour, code = _ints(tour), rule_code(rule)
    if len(tour) <= SMALL:
        return float(_edges(xy, tour, np.roll(tour, -1), code).sum())
    return float(_jit().tour_length(xy, tour, code))


def routes_length(
    xy: np.ndarray, routes: list[np.ndarray], rule: str, depot: int = 0
) -> np.ndarray:
    """Length of each depot-closed route (routes list customers only). ``[R]``."""
    sizes = np.fromiter((len(r) for r in routes), dtype=np.int64, count=len(routes))
    offsets = np.zeros(len(routes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    nodes = np.concatenate([_ints(r) for r in routes]) if routes else np.zeros(0, np.int64)
    if len(nodes) + len(routes) > SMALL:
        return _jit().routes_length(xy, nodes, offsets, depot, rule_code(rule))
    # Each route as a closed path depot -> customers -> depot, all edges in one call.
    lengths = np.zeros(len(routes))
    for r, route in enumerate(routes):
        if len(route):
            path = np.concatenate([[depot], _ints(route), [depot]])
            lengths[r] = _edges(xy, path[:-1], path[1:], rule_code(rule)).sum()
    return lengths


def cumulative_route_distance(xy: np.ndarray, route: np.ndarray, rule: str) -> np.ndarray:
    """Distance travelled from ``route[0]`` up to each position of ``route``. ``[L]``."""
    route, code = _ints(route), rule_code(rule)
    if len(route) > SMALL:
        return _jit().cumulative(xy, route, code)
    return np.concatenate([[0.0], np.cumsum(_edges(xy, route[:-1], route[1:], code))])
