"""LKH-3 tours of Euclidean TSP instances through ``elkai`` (the optional extra ``lkh``:
``pip install -e ".[lkh]"``).

LKH reads ``EUC_2D`` coordinates and rounds every distance to an integer, so the points are
first scaled to span :data:`LKH_SPAN` units: the rounding then moves an edge of a unit-square
instance by at most 5e-7. LKH's random seed is fixed, so a tour is the same on every run.
"""

from __future__ import annotations

from importlib.util import find_spec

import numpy as np

from routecli.errors import OptionError

LKH_SPAN = 1e6  # the scaled coordinates' larger side, in LKH's integer distance units
INSTALL_HINT = 'pip install -e ".[lkh]"'


def require_elkai(what: str) -> None:
    """Refuse ``what`` in one line, with the install command, when elkai is not installed."""
    if find_spec("elkai") is None:
        raise OptionError(f"{what} needs LKH-3 through the elkai package: {INSTALL_HINT}")


def lkh_tour(coords: np.ndarray, runs: int = 1) -> np.ndarray:
    """The best of ``runs`` LKH-3 runs on the points ``coords`` ``[N, 2]``: a permutation
    ``[N]`` of the node ids (the closing edge back to its first node implied)."""
    import elkai

    xy = np.asarray(coords, np.float64)
    if len(xy) < 3:  # elkai needs three cities; fewer have one tour
        return np.arange(len(xy))
    span = float((xy.max(0) - xy.min(0)).max()) or 1.0
    scaled = (xy - xy.min(0)) * (LKH_SPAN / span)
    order = elkai.Coordinates2D({i: (float(x), float(y)) for i, (x, y) in enumerate(scaled)}
                                ).solve_tsp(runs=runs)
    tour = np.asarray(order[:-1], np.int64)  # elkai closes the tour on its first city
    if not np.array_equal(np.sort(tour), np.arange(len(xy))):
        raise RuntimeError("LKH returned no permutation of the nodes")
    return tour
