"""How an instance measures distance: coordinates under a TSPLIB rule, or an explicit matrix."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from routecli.kernels import distance as kd
from routecli.resources import require_memory


@dataclass(frozen=True)
class Metric:
    """Distance convention of one instance.

    ``coords`` ``[N, 2]`` with ``rule`` in :data:`routecli.kernels.distance.RULES`, or
    ``matrix`` ``[N, N]`` (``rule == "explicit"``). All costs of the instance go through here,
    so a cost is always recomputed on the instance's own scale.
    """

    rule: str
    coords: np.ndarray | None = None
    matrix: np.ndarray | None = None
    _xy: np.ndarray | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.rule == "explicit":
            if self.matrix is None:
                raise ValueError("an explicit metric needs a distance matrix")
            return
        if self.coords is None:
            raise ValueError(f"rule {self.rule!r} needs node coordinates")
        kd.rule_code(self.rule)
        object.__setattr__(self, "_xy", kd.prepare_coords(self.coords, self.rule))

    def pairs(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """Distances ``d(src[k], dst[k])``. ``[E]``."""
        if self.matrix is not None and self.rule == "explicit":
            return np.asarray(self.matrix, np.float64)[np.asarray(src), np.asarray(dst)]
        assert self._xy is not None
        return kd.edge_lengths(self._xy, src, dst, self.rule)

    def tour(self, tour: np.ndarray) -> float:
        """Length of a closed tour."""
        if self.rule == "explicit":
            t = np.asarray(tour, np.int64)
            return float(self.pairs(t, np.roll(t, -1)).sum())
        assert self._xy is not None
        return kd.tour_length(self._xy, tour, self.rule)

    def routes(self, routes: list[np.ndarray], depot: int = 0) -> np.ndarray:
        """Length of each depot-closed route. ``[R]``."""
        if self.rule == "explicit":
            return np.array([self.tour(np.concatenate([[depot], r])) if len(r) else 0.0
                             for r in routes])
        assert self._xy is not None
        return kd.routes_length(self._xy, routes, self.rule, depot)

    def cumulative(self, path: np.ndarray) -> np.ndarray:
        """Distance travelled from ``path[0]`` to each position of ``path``. ``[L]``."""
        if self.rule == "explicit":
            p = np.asarray(path, np.int64)
            return np.concatenate([[0.0], np.cumsum(self.pairs(p[:-1], p[1:]))])
        assert self._xy is not None
        return kd.cumulative_route_distance(self._xy, path, self.rule)

    def full_matrix(self) -> np.ndarray:
        """Dense ``[N, N]`` matrix (small instances only: quadratic memory)."""
        if self.rule == "explicit":
            return np.asarray(self.matrix, np.float64)
        n = len(self.coords)  # type: ignore[arg-type]
        # the pairs (two int64 indices, four float64 coordinates) and the result, at once
        require_memory(n * n * 56, f"a {n:,} x {n:,} distance matrix")
        src, dst = np.divmod(np.arange(n * n), n)
        return self.pairs(src, dst).reshape(n, n)

    @property
    def size(self) -> int:
        return len(self.matrix) if self.rule == "explicit" else len(self.coords)  # type: ignore
