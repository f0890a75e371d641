"""The uniform instances of the 8th DIMACS Implementation Challenge (TSP), as ``portgen`` makes them.

``portgen N seed`` (Lyle McGeoch, 1999) draws integer coordinates ``x, y`` uniform in
``0 .. 999999`` from Knuth's portable subtractive generator: 55 lagged values modulo 10^9,
``a_n = a_{n-55} - a_{n-24} mod 10^9``, seeded by a fixed shuffle of the seed and warmed up by
165 draws; each coordinate is ``draw // 1000``, x then y per city. The challenge's E-series
files (``E1k.0`` ... ``E10M.0``) are ``portgen N seed`` with ``seed = N`` for instance 0 and
``10 N + i`` for instance ``i`` (:data:`E_SERIES`, :func:`e_series_seed`).
"""

from __future__ import annotations

import numba as nb
import numpy as np

PRANDMAX = 1_000_000_000  # the generator's modulus
MAXCOORD = 1_000_000  # coordinates lie in 0 .. MAXCOORD - 1
LAG_LONG, LAG_SHORT = 55, 24
WARM_UP = 165
# E-series sizes by name: 10^(k/2) cities rounded
E_SERIES = {"1k": 1_000, "3k": 3_162, "10k": 10_000, "31k": 31_623, "100k": 100_000,
            "316k": 316_228, "1M": 1_000_000, "3M": 3_162_278, "10M": 10_000_000}


def e_series_seed(n: int, index: int) -> int:
    """The portgen seed of E-series instance ``index`` with ``n`` cities."""
    return n if index == 0 else 10 * n + index


def e_series_name(n: int, seed: int) -> str | None:
    """``E<size>.<i>`` when ``portgen n seed`` is an E-series instance, else None."""
    for label, size in E_SERIES.items():
        if size == n:
            index = 0 if seed == n else seed - 10 * n
            if 0 <= index <= 9 and e_series_seed(n, index) == seed:
                return f"E{label}.{index}"
    return None


@nb.njit(cache=True)
def _coordinates(n: int, seed: int) -> np.ndarray:
    state = np.zeros(LAG_LONG, np.int64)
    state[0] = last = seed
    following = 1
    for i in range(1, LAG_LONG):
        slot = (21 * i) % LAG_LONG
        state[slot] = following
        following = last - following
        if following < 0:
            following += PRANDMAX
        last = state[slot]
    a, b = 0, LAG_SHORT
    out = np.empty((n, 2), np.int64)
    for draw in range(-WARM_UP, 2 * n):
        a = LAG_LONG - 1 if a == 0 else a - 1
        b = LAG_LONG - 1 if b == 0 else b - 1
        value = state[a] - state[b]
        if value < 0:
            value += PRANDMAX
        state[a] = value
        if draw >= 0:
            out[draw // 2, draw % 2] = value // (PRANDMAX // MAXCOORD)
    return out


def check(n: int, seed: int) -> None:
    """Raise ValueError unless ``portgen n seed`` is defined."""
    if n < 1:
        raise ValueError(f"portgen needs at least one city, got {n}")
    if not 0 <= seed < PRANDMAX:
        raise ValueError(f"portgen seeds lie in 0 .. {PRANDMAX - 1}, got {seed}")


def portgen(n: int, seed: int) -> np.ndarray:
    """Integer coordinates ``[n, 2]`` of ``portgen n seed``."""
    check(n, seed)
    return _coordinates(n, seed)


def portgen_name(n: int, seed: int) -> str:
    """The file name stem: the E-series name, else ``portgen-<n>-<seed>`` (portgen's NAME)."""
    return e_series_name(n, seed) or f"portgen-{n}-{seed}"
