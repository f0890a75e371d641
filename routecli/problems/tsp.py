"""Travelling salesman problem: visit every node once on a closed tour."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from routecli.problems.base import Tour, check_permutation
from routecli.problems.instance import GraphInstance


@dataclass(frozen=True)
class TSPInstance(GraphInstance):
    """``N`` nodes measured by ``metric``; ``coords`` ``[N, 2]`` (``None`` for matrix-only files)."""

    problem: ClassVar[str] = "tsp"
    sense: ClassVar[str] = "min"

    @property
    def num_nodes(self) -> int:
        return self.metric.size

    @property
    def size(self) -> int:
        """Number of nodes, the ``n`` of benchmark tables."""
        return self.num_nodes

    def cost(self, solution: Tour) -> float:
        return self.metric.tour(solution.order)

    def validate(self, solution: Tour) -> list[str]:
        # named by their TSPLIB ids (1..n), as in the instance and .tour files, not 0-based
        return check_permutation(np.asarray(solution.order) + 1, np.arange(1, self.num_nodes + 1),
                                 "node")
