"""Prize-collecting VRP (PE paper Appendix A, Eq. 3): serving customer i earns ``prizes[i]``;
customers may stay unserved; objective = travel cost - collected prizes (minimised)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from routecli.problems.base import Routes
from routecli.problems.cvrp import capacity_violations, depot_visits
from routecli.problems.metric import Metric


@dataclass(frozen=True)
class PCVRPInstance:
    name: str
    metric: Metric
    demands: np.ndarray
    capacity: float
    prizes: np.ndarray
    problem: ClassVar[str] = "pcvrp"
    sense: ClassVar[str] = "min"

    @property
    def coords(self) -> np.ndarray | None:
        return self.metric.coords

    @property
    def num_customers(self) -> int:
        return self.metric.size - 1

    @property
    def size(self) -> int:
        return self.num_customers

    def cost(self, solution: Routes) -> float:
        distance = float(self.metric.routes(list(solution.routes)).sum())
        return distance - float(self.prizes[solution.visited].sum())

    def validate(self, solution: Routes) -> list[str]:
        problems = depot_visits(solution)
        visited = solution.visited
        values, counts = np.unique(visited, return_counts=True)
        problems += [f"customer {v} does not exist" for v in values
                     if v < 1 or v > self.num_customers]
        problems += [f"customer {v} visited {c} times" for v, c in zip(values, counts, strict=False) if c > 1]
        return problems + capacity_violations(self.demands, self.capacity, solution)
