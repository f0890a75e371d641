"""Capacitated VRP (PE paper Appendix A, Eq. 1): depot 0, customers 1..N with demands, capacity."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from routecli.problems.base import Routes, check_permutation
from routecli.problems.instance import CapacitatedInstance


@dataclass(frozen=True)
class CVRPInstance(CapacitatedInstance):
    """Every customer served exactly once; each route's load within ``capacity``."""

    problem: ClassVar[str] = "cvrp"
    sense: ClassVar[str] = "min"

    def cost(self, solution: Routes) -> float:
        return self.distance(solution)

    def validate(self, solution: Routes) -> list[str]:
        customers = np.arange(1, self.num_customers + 1)
        return (self.route_violations(solution)
                + check_permutation(solution.visited, customers, "customer"))
