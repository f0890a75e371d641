"""Per-step candidate sets for large-instance decoding (MiLoop Section 4.1, "candidate sets").

At every decoding step each rollout only attends to the ``K`` nearest nodes it may still
choose (unvisited and feasible), so attention cost stays ``O(K)`` per step whatever ``N`` is.

Two stages, both exact:

1. the static k-nearest-neighbour list of the current node (``knn``, sorted by distance): if it
   holds at least ``K`` allowed nodes, the first ``K`` of them are the ``K`` nearest allowed;
2. otherwise (the neighbourhood has been visited), a uniform grid over all nodes is searched in
   rings around the current cell until ``K`` allowed nodes are found and no unsearched cell can
   hold a closer one.

A node ``j`` is allowed for rollout ``r`` when ``not visited[r, j]`` and, with demands,
``demand[j] <= remaining[r]`` (CVRP: only customers that still fit are candidates). ``always``
(the CVRP depot) bypasses those rules: it is put first in the candidate set of every rollout
whose ``always_open[r]`` is set. Taking ``visited`` rather than an allowed mask lets a decoder
pass its state as is, so a step costs ``O(K)``-ish rather than ``O(N)``.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from routecli.kernels.knn import knn as static_knn

# A NodeGrid as numba kernels take it: (xy, start, nodes, cell, x0, y0, nx, ny).
GridView = tuple[np.ndarray, np.ndarray, np.ndarray, float, float, float, int, int]


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
def grid_cell(x: float, y: float, cell: float, x0: float, y0: float, nx: int, ny: int):
    """Column and row of the grid cell holding point ``(x, y)`` (clamped into the grid)."""
    return (min(nx - 1, max(0, int((x - x0) / cell))),
            min(ny - 1, max(0, int((y - y0) / cell))))


@nb.njit(cache=True)
def ring_cell(cx: int, cy: int, ring: int, t: int, nx: int, ny: int) -> int:
    """The ``t``-th of the ``max(8 ring, 1)`` cells at Chebyshev distance ``ring`` from cell
    ``(cx, cy)``: its id, or -1 when it lies outside the grid."""
    gx, gy = cx, cy
    if ring > 0:
        row = 2 * ring + 1  # the top and bottom rows, corners included
        if t < row:
            gx, gy = cx - ring + t, cy - ring
        elif t < 2 * row:
            gx, gy = cx - ring + t - row, cy + ring
        else:  # the columns between them, left then right
            u = t - 2 * row
            side = 2 * ring - 1
            gx = cx - ring if u < side else cx + ring
            gy = cy - ring + 1 + (u if u < side else u - side)
    if 0 <= gx < nx and 0 <= gy < ny:
        return gy * nx + gx
    return -1


@nb.njit(cache=True, inline="always")
def ring_span(start, cx, cy, ring, t, nx, ny):  # noqa: ANN001, ANN201
    """Where the nodes of the ``t``-th cell of ring ``ring`` lie in the grid's ``nodes``:
    ``(lo, hi)``, empty for a cell outside the grid."""
    c = ring_cell(cx, cy, ring, t, nx, ny)
    if c < 0:
        return 0, 0
    return start[c], start[c + 1]


@nb.njit(cache=True)
def grid_nearest(xy, cur, visited_row, demand, room, skip, k, start, nodes, cell, x0, y0, nx, ny,
                 dist, idx):
    """The ``k`` nearest allowed nodes of node ``cur`` (not ``skip``, not visited, demand within
    ``room``) by a ring search of the grid: sorted by distance (ties by id) into ``dist`` and
    ``idx``; returns how many were found."""
    px, py = xy[cur, 0], xy[cur, 1]
    cx, cy = grid_cell(px, py, cell, x0, y0, nx, ny)
    count = 0
    ring = 0
    max_ring = max(nx, ny)
    while ring <= max_ring:
        for t in range(max(8 * ring, 1)):
            lo, hi = ring_span(start, cx, cy, ring, t, nx, ny)
            for p in range(lo, hi):
                j = nodes[p]
                if j == skip or visited_row[j] or demand[j] > room:
                    continue
                dx = xy[j, 0] - px
                dy = xy[j, 1] - py
                count = _insert(dist, idx, count, k, math.sqrt(dx * dx + dy * dy), j)
        # every point of ring + 1 and beyond is at least ring * cell away
        if count == k and dist[k - 1] <= ring * cell:
            break
        ring += 1
    return count


# Serial on purpose: numba's parallel workers spin after a prange and starve the torch thread
# that runs the policy between two queries (measured: 50 ms instead of 14 ms per step).
@nb.njit(cache=True)
def _query(xy, knn, current, visited, demand, remaining, k, always, always_open, start, nodes,
           cell, x0, y0, nx, ny):
    r_count = current.shape[0]
    out = np.full((r_count, k), -1, np.int64)
    sizes = np.zeros(r_count, np.int64)
    for r in range(r_count):
        cur = current[r]
        room = remaining[r]
        offset = 0
        if always >= 0 and always_open[r]:
            out[r, 0] = always
            offset = 1
        want = k - offset
        found = 0
        row = knn[cur]
        for t in range(row.shape[0]):
            j = row[t]
            if j != always and not visited[r, j] and demand[j] <= room:
                out[r, offset + found] = j
                found += 1
                if found == want:
                    break
        if found < want:
            dist = np.empty(want, np.float64)
            idx = np.empty(want, np.int64)
            found = grid_nearest(xy, cur, visited[r], demand, room, always, want, start, nodes,
                                 cell, x0, y0, nx, ny, dist, idx)
            for t in range(found):
                out[r, offset + t] = idx[t]
        sizes[r] = offset + found
    return out, sizes


class NodeGrid:
    """A uniform grid over coordinates ``[N, 2]`` (float64), about two nodes per cell: the
    nodes of cell ``c`` are ``nodes[start[c]:start[c + 1]]``; ``view`` is what kernels take."""

    def __init__(self, xy: np.ndarray):
        self.xy = np.ascontiguousarray(xy, np.float64)
        xy = self.xy
        n = len(xy)
        lo, hi = xy.min(axis=0), xy.max(axis=0)
        span = np.maximum(hi - lo, 1e-12)
        # about two nodes per cell; at least span / n, so nodes on a line make n cells, not n^2
        self.cell = float(max(math.sqrt(span[0] * span[1] * 2.0 / max(n, 1)),
                              span.max() / max(n, 1), 1e-12))
        self.nx = int(span[0] / self.cell) + 1
        self.ny = int(span[1] / self.cell) + 1
        self.x0, self.y0 = float(lo[0]), float(lo[1])
        self.start, self.nodes = _build_grid(xy, self.cell, self.x0, self.y0, self.nx, self.ny)

    @property
    def view(self) -> GridView:
        """``(xy, start, nodes, cell, x0, y0, nx, ny)`` for numba kernels."""
        return (self.xy, self.start, self.nodes, self.cell, self.x0, self.y0, self.nx,
                self.ny)


class CandidateIndex:
    """Static neighbour lists and a grid over one instance's coordinates ``[N, 2]``.

    ``list_size`` neighbours are stored per node (default ``2 K``-ish, capped at ``N - 1``);
    longer lists make the grid fallback rarer at the price of memory ``N * list_size``.
    """

    def __init__(self, coords: np.ndarray, list_size: int = 64):
        self.xy = np.ascontiguousarray(coords, np.float64)
        n = len(self.xy)
        self.knn = static_knn(self.xy, list_size)
        self.grid = NodeGrid(self.xy)
        self.no_demand = np.zeros(n)  # built once: queries run at every decoding step

    def query(self, current: np.ndarray, visited: np.ndarray, k: int, *, always: int = -1,
              always_open: np.ndarray | None = None, demand: np.ndarray | None = None,
              remaining: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``K`` nearest allowed nodes of each rollout's current node.

        ``current`` ``[R]``, ``visited`` ``[R, N]`` bool; optional ``demand`` ``[N]`` with
        ``remaining`` ``[R]`` (a node is allowed only if its demand fits), ``always`` a node put
        first where ``always_open`` ``[R]`` is set. Returns ``candidates`` ``[R, K]`` (sorted by
        distance after ``always``, ``-1`` padding) and ``sizes`` ``[R]``.
        """
        rows = len(current)
        if demand is None:
            demand, remaining = self.no_demand, np.zeros(rows)
        elif remaining is None:
            raise ValueError("demand needs remaining")
        if always_open is None:
            always_open = np.zeros(rows, np.bool_)
        return _query(self.xy, self.knn, np.ascontiguousarray(current, np.int64),
                      np.ascontiguousarray(visited, np.bool_),
                      np.ascontiguousarray(demand, np.float64),
                      np.ascontiguousarray(remaining, np.float64), k, always,
                      np.ascontiguousarray(always_open, np.bool_), self.grid.start,
                      self.grid.nodes, self.grid.cell, self.grid.x0, self.grid.y0,
                      self.grid.nx, self.grid.ny)
