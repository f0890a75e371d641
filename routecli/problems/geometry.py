"""Coordinates as the neural models see them: the unit square and its 8 symmetries.

Models read normalised float copies of the coordinates; costs stay on the instance's own
scale (:mod:`routecli.problems.metric`). Both helpers take a numpy array or a torch tensor and
return the same kind, so MiLoop's decoding (torch) and the NDS search (numpy) share them.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def unit_square(coords: np.ndarray) -> np.ndarray:
    """Shift to the origin and scale by the larger side (aspect kept) into ``[0, 1]^2``.
    ``[V, 2]`` -> ``[V, 2]`` float64; a single point (or all equal) maps to the origin."""
    xy = np.asarray(coords, np.float64)
    lo = xy.min(axis=0)
    span = float((xy.max(axis=0) - lo).max()) or 1.0
    return (xy - lo) / span


def augment8(coords: Any) -> Any:
    """The 8 dihedral images of unit-square coordinates: ``(x, y)``, ``(y, x)`` and their
    reflections through ``1 - .``. ``[..., V, 2] -> [8, ..., V, 2]``; image 0 is the input.
    Every Euclidean distance, hence every solution cost, is the same on all 8."""
    x, y = coords[..., 0], coords[..., 1]
    pairs = [(x, y), (y, x), (1 - x, y), (1 - y, x), (x, 1 - y), (y, 1 - x),
             (1 - x, 1 - y), (1 - y, 1 - x)]
    if isinstance(coords, np.ndarray):
        return np.stack([np.stack(p, axis=-1) for p in pairs])
    import torch

    return torch.stack([torch.stack(p, dim=-1) for p in pairs])
