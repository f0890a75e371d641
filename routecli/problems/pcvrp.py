"""Prize-collecting VRP (PE paper Appendix A, Eq. 3): serving customer i earns ``prizes[i]``;
customers may stay unserved; objective = travel cost - collected prizes (minimised)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from routecli.problems.base import Routes
from routecli.problems.instance import CapacitatedInstance


@dataclass(frozen=True)
class PCVRPInstance(CapacitatedInstance):
    """CVRP data plus ``prizes`` ``[N+1]``; each customer served at most once."""

    prizes: np.ndarray
    problem: ClassVar[str] = "pcvrp"
    sense: ClassVar[str] = "min"

    def cost(self, solution: Routes) -> float:
        return self.distance(solution) - float(self.prizes[solution.visited].sum())

    def validate(self, solution: Routes) -> list[str]:
        problems = self.route_violations(solution)
        values, counts = np.unique(solution.visited, return_counts=True)
        problems += [f"customer {v} does not exist" for v in values
                     if v < 1 or v > self.num_customers]
        problems += [f"customer {v} visited {c} times" for v, c in zip(values, counts) if c > 1]
        return problems
