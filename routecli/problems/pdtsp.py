"""Pickup-and-delivery TSP (PE paper Appendix A, Eq. 4; MiLoop Appendix B): depot 0, pickups
1..n, deliveries n+1..2n; request r is pickup r then delivery r+n; one uncapacitated vehicle
starts at the depot, visits every node once and returns.

A file may number its nodes otherwise (any consistent pairing); its reader renumbers them into
this layout and keeps ``file_ids``, so that tours are read, written and reported in the file's
own numbering.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from routecli.problems.base import Tour, check_permutation
from routecli.problems.instance import GraphInstance


@dataclass(frozen=True)
class PDTSPInstance(GraphInstance):
    """Depot 0, pickups 1..n, deliveries n+1..2n (``metric.size == 2n + 1``); ``file_ids``
    ``[2n + 1]`` is each node's id in the file it came from (``None``: ids 1..2n+1 in order)."""

    file_ids: np.ndarray | None = field(default=None, compare=False)
    problem: ClassVar[str] = "pdtsp"
    sense: ClassVar[str] = "min"

    @property
    def num_requests(self) -> int:
        return (self.metric.size - 1) // 2

    @property
    def size(self) -> int:
        return self.metric.size

    @property
    def node_ids(self) -> np.ndarray:
        """The file's id of each node (1-based, as ``.tour`` files write them). ``[2n + 1]``"""
        if self.file_ids is None:
            return np.arange(1, self.metric.size + 1)
        return np.asarray(self.file_ids, np.int64)

    def cost(self, solution: Tour) -> float:
        return self.metric.tour(solution.order)

    def validate(self, solution: Tour) -> list[str]:
        """Violations, naming nodes by their file ids."""
        order = solution.order
        outside = order[(order < 0) | (order >= self.metric.size)]
        if outside.size:
            return [f"node index {v} does not exist" for v in outside[:10]]
        ids = self.node_ids
        problems = check_permutation(ids[order], ids, "node")
        if problems:
            return problems
        if order[0] != 0:
            problems.append(f"tour starts at node {ids[order[0]]}, not at the depot {ids[0]}")
        position = np.empty(len(order), np.int64)
        position[order] = np.arange(len(order))
        n = self.num_requests
        pickups = np.arange(1, n + 1)
        early = position[pickups + n] < position[pickups]
        problems += [f"delivery {ids[p + n]} before pickup {ids[p]}" for p in pickups[early]]
        return problems
