"""Pickup-and-delivery TSP (PE paper Appendix A, Eq. 4; MiLoop Appendix B): depot 0, pickups
1..n, deliveries n+1..2n; request r is pickup r then delivery r+n; one uncapacitated vehicle
starts at the depot, visits every node once and returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from routecli.problems.base import Tour, check_permutation
from routecli.problems.instance import GraphInstance


@dataclass(frozen=True)
class PDTSPInstance(GraphInstance):
    """Depot 0, pickups 1..n, deliveries n+1..2n (``metric.size == 2n + 1``)."""

    problem: ClassVar[str] = "pdtsp"
    sense: ClassVar[str] = "min"

    @property
    def num_requests(self) -> int:
        return (self.metric.size - 1) // 2

    @property
    def size(self) -> int:
        return self.metric.size

    def cost(self, solution: Tour) -> float:
        return self.metric.tour(solution.order)

    def validate(self, solution: Tour) -> list[str]:
        order = solution.order
        problems = check_permutation(order, np.arange(self.metric.size), "node")
        if problems:
            return problems
        if order[0] != 0:
            problems.append(f"tour starts at node {order[0]}, not at the depot 0")
        position = np.empty(len(order), np.int64)
        position[order] = np.arange(len(order))
        n = self.num_requests
        pickups = np.arange(1, n + 1)
        early = position[pickups + n] < position[pickups]
        problems += [f"delivery {p + n} before pickup {p}" for p in pickups[early]]
        return problems
