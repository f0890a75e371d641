"""Per-step candidate sets for large-instance decoding (MiLoop Section 4.1, "candidate sets").

At every decoding step each rollout only attends to the ``K`` nearest nodes it may still
choose (unvisited and feasible), so attention cost stays ``O(K)`` per step whatever ``N`` is.

Two stages, both exact:

1. the static k-nearest-neighbour list of the current node (``knn``, sorted by distance): if it
   holds at least ``K`` allowed nodes, the first ``K`` of them are the ``K`` nearest allowed;
2. otherwise (the neighbourhood has been visited), a uniform grid over all nodes is searched in
   rings around the current cell until ``K`` allowed nodes are found and no unsearched cell can
   hold a closer one.

``always`` (the CVRP depot) is put in every candidate set, first, when it is allowed.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from routecli.kernels.knn import knn as static_knn


@nb.njit(cache=True)
def _build_grid(xy: np.ndarray, cell: float, x0: float, y0: float, nx: int, ny: int):
    n = xy.shape[0]
    cell_of = np.empty(n, np.int64)
    counts = np.zeros(nx * ny + 1, np.int64)
    for i in range(n):
        cx = min(nx - 1, int((xy[i, 0] - x0) / cell))
        cy = min(ny - 1, int((xy[i, 1] - y0) / cell))
        cell_of[i] = cy * nx + cx
        counts[cell_of[i] + 1] += 1
    start = np.cumsum(counts)
    fill = start[:-1].copy()
    nodes = np.empty(n, np.int64)
    for i in range(n):
        nodes[fill[cell_of[i]]] = i
        fill[cell_of[i]] += 1
    return start, nodes


@nb.njit(cache=True, inline="always")
def _insert(dist: np.ndarray, idx: np.ndarray, count: int, k: int, d: float, j: int) -> int:
    """Keep the ``k`` smallest (d, j) pairs sorted in ``dist``/``idx``; returns the new count."""
    if count == k and (d > dist[k - 1] or (d == dist[k - 1] and j > idx[k - 1])):
        return count
    pos = count if count < k else k - 1
    while pos > 0 and (dist[pos - 1] > d or (dist[pos - 1] == d and idx[pos - 1] > j)):
        dist[pos] = dist[pos - 1]
        idx[pos] = idx[pos - 1]
        pos -= 1
    dist[pos] = d
    idx[pos] = j
    return min(count + 1, k)


@nb.njit(cache=True)
def _grid_search(xy, cur, allowed_row, skip, k, start, nodes, cell, x0, y0, nx, ny, dist, idx):
    px, py = xy[cur, 0], xy[cur, 1]
    cx = min(nx - 1, max(0, int((px - x0) / cell)))
    cy = min(ny - 1, max(0, int((py - y0) / cell)))
    count = 0
    ring = 0
    max_ring = max(nx, ny)
    while ring <= max_ring:
        for gy in range(cy - ring, cy + ring + 1):
            if gy < 0 or gy >= ny:
                continue
            on_edge_row = gy == cy - ring or gy == cy + ring
            step = 1 if on_edge_row else 2 * ring
            gx = cx - ring
            while gx <= cx + ring:
                if 0 <= gx < nx:
                    c = gy * nx + gx
                    for p in range(start[c], start[c + 1]):
                        j = nodes[p]
                        if j == skip or not allowed_row[j]:
                            continue
                        dx = xy[j, 0] - px
                        dy = xy[j, 1] - py
                        count = _insert(dist, idx, count, k, math.sqrt(dx * dx + dy * dy), j)
                if step == 0:
                    break
                gx += step
        # every point of ring + 1 and beyond is at least ring * cell away
        if count == k and dist[k - 1] <= ring * cell:
            break
        ring += 1
    return count


@nb.njit(cache=True, parallel=True)
def _query(xy, knn, current, allowed, k, always, start, nodes, cell, x0, y0, nx, ny):
    r_count = current.shape[0]
    out = np.full((r_count, k), -1, np.int64)
    sizes = np.zeros(r_count, np.int64)
    for r in nb.prange(r_count):
        cur = current[r]
        offset = 0
        if always >= 0 and allowed[r, always]:
            out[r, 0] = always
            offset = 1
        want = k - offset
        found = 0
        row = knn[cur]
        for t in range(row.shape[0]):
            j = row[t]
            if j != always and allowed[r, j]:
                out[r, offset + found] = j
                found += 1
                if found == want:
                    break
        if found < want:
            dist = np.empty(want, np.float64)
            idx = np.empty(want, np.int64)
            found = _grid_search(xy, cur, allowed[r], always, want, start, nodes, cell,
                                 x0, y0, nx, ny, dist, idx)
            for t in range(found):
                out[r, offset + t] = idx[t]
        sizes[r] = offset + found
    return out, sizes


class CandidateIndex:
    """Static neighbour lists and a grid over one instance's coordinates ``[N, 2]``.

    ``list_size`` neighbours are stored per node (default ``2 K``-ish, capped at ``N - 1``);
    longer lists make the grid fallback rarer at the price of memory ``N * list_size``.
    """

    def __init__(self, coords: np.ndarray, list_size: int = 64):
        self.xy = np.ascontiguousarray(coords, np.float64)
        n = len(self.xy)
        self.knn = static_knn(self.xy, list_size)
        lo, hi = self.xy.min(axis=0), self.xy.max(axis=0)
        span = np.maximum(hi - lo, 1e-12)
        # about two nodes per cell
        self.cell = float(max(math.sqrt(span[0] * span[1] * 2.0 / max(n, 1)), 1e-12))
        self.nx = int(span[0] / self.cell) + 1
        self.ny = int(span[1] / self.cell) + 1
        self.x0, self.y0 = float(lo[0]), float(lo[1])
        self.start, self.nodes = _build_grid(self.xy, self.cell, self.x0, self.y0, self.nx,
                                             self.ny)

    def query(self, current: np.ndarray, allowed: np.ndarray, k: int,
              always: int = -1) -> tuple[np.ndarray, np.ndarray]:
        """``K`` nearest allowed nodes of each rollout's current node.

        ``current`` ``[R]``, ``allowed`` ``[R, N]`` bool. Returns ``candidates`` ``[R, K]``
        (sorted by distance, ``always`` first when allowed, ``-1`` padding) and ``sizes`` ``[R]``.
        """
        return _query(self.xy, self.knn, np.ascontiguousarray(current, np.int64),
                      np.ascontiguousarray(allowed, np.bool_), k, always, self.start, self.nodes,
                      self.cell, self.x0, self.y0, self.nx, self.ny)
