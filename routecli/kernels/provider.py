"""The distances a search asks for: a dense matrix, or coordinates and an edge computed on demand.

A dense ``[N, N]`` float64 matrix answers in one read but takes ``8 N^2`` bytes (800 MB at
10,000 nodes, 7.2 GB at 30,000); coordinates take ``16 N`` and answer with the TSPLIB formula
of :mod:`routecli.kernels.distance_jit`, the very kernel that fills the dense matrix of a
large instance, so both give the same float64 value for every edge (tested for each rule).
An explicit matrix (``EDGE_WEIGHT_TYPE : EXPLICIT``) has no coordinates and stays a matrix.

Numba kernels take the provider's :attr:`DistanceProvider.view`, the matrix itself or a tuple
``(xy, rule)``, and read an edge with :func:`edge`; numba compiles each kernel once per kind
of view, so the matrix mode runs exactly the code of a plain matrix read.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import types
from numba.extending import overload

from routecli.kernels.distance import prepare_coords, rule_code
from routecli.kernels.distance_jit import edge_length, edge_lengths

# The numba view of a provider: the matrix [N, N], or (xy [N, 2], rule code).
DistanceView = np.ndarray | tuple[np.ndarray, int]


def edge(dist: DistanceView, a: int, b: int) -> float:
    """Length of edge ``a -> b`` under the provider view ``dist`` (:data:`DistanceView`);
    numba kernels compile one version per kind of view (:func:`_edge_kernel`)."""
    if isinstance(dist, np.ndarray):
        return float(dist[a, b])
    xy, rule = dist
    return float(edge_lengths(xy, np.array([a]), np.array([b]), rule)[0])


@overload(edge)
def _edge_kernel(dist, a, b):  # noqa: ANN001, ANN202
    """:func:`edge` inside numba: a matrix read, or the rule's formula on two coordinates."""
    if isinstance(dist, types.Array):
        return lambda dist, a, b: dist[a, b]

    def from_coords(dist, a, b):  # noqa: ANN001, ANN202
        xy, rule = dist
        return edge_length(xy[a, 0], xy[a, 1], xy[b, 0], xy[b, 1], rule)

    return from_coords


@dataclass(frozen=True)
class DistanceProvider:
    """Edge lengths of one instance, from ``matrix`` ``[N, N]`` or, when that is empty, from
    ``xy`` ``[N, 2]`` (coordinates prepared for ``rule``, :func:`prepare_coords`)."""

    matrix: np.ndarray
    xy: np.ndarray
    rule: int
    size: int

    @classmethod
    def dense(cls, matrix: np.ndarray) -> DistanceProvider:
        """A provider reading ``matrix`` ``[N, N]`` (computed, or an explicit file's)."""
        m = np.ascontiguousarray(matrix, dtype=np.float64)
        return cls(m, np.zeros((0, 2)), 0, m.shape[0])

    @classmethod
    def on_demand(cls, coords: np.ndarray, rule: str) -> DistanceProvider:
        """A provider computing each edge from ``coords`` ``[N, 2]`` under ``rule``."""
        xy = np.ascontiguousarray(prepare_coords(coords, rule), dtype=np.float64)
        return cls(np.zeros((0, 0)), xy, rule_code(rule), xy.shape[0])

    @property
    def is_dense(self) -> bool:
        return self.matrix.shape[0] != 0

    @property
    def view(self) -> DistanceView:
        """What numba kernels take (read edges with :func:`edge`)."""
        return self.matrix if self.is_dense else (self.xy, self.rule)

    @property
    def nbytes(self) -> int:
        """Memory the provider holds."""
        return int(self.matrix.nbytes + self.xy.nbytes)

    def pairs(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """Lengths of the edges ``src[k] -> dst[k]``. ``[E]``."""
        src = np.ascontiguousarray(src, np.int64)
        dst = np.ascontiguousarray(dst, np.int64)
        if self.is_dense:
            return self.matrix[src, dst]
        return edge_lengths(self.xy, src, dst, self.rule)
