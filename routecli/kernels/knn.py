"""Static k-nearest-neighbour lists.

A KD-tree (scipy's cKDTree) answers all queries in O(N log N); the lists exclude the node
itself and are sorted by increasing Euclidean distance (ties broken by index).
"""

from __future__ import annotations

import numpy as np


def knn(coords: np.ndarray, k: int, workers: int = -1) -> np.ndarray:
    """Indices of the ``k`` nearest other nodes of every node. ``[N, 2] -> [N, min(k, N-1)]``."""
    # Imported here: scipy.spatial takes half a second, which every command that reads an
    # instance would pay at start-up although only the solvers need neighbour lists.
    from scipy.spatial import cKDTree

    xy = np.asarray(coords, dtype=np.float64)
    n = xy.shape[0]
    k = min(k, n - 1)
    if k <= 0:
        return np.zeros((n, 0), dtype=np.int64)
    _, idx = cKDTree(xy).query(xy, k=k + 1, workers=workers)
    idx = np.asarray(idx, dtype=np.int64).reshape(n, k + 1)
    # The query point itself is normally first, but duplicates can put it elsewhere.
    own = idx == np.arange(n)[:, None]
    no_self = ~own.any(axis=1)
    own[no_self, -1] = True
    return idx[~own].reshape(n, k)
