"""Capacitated VRP (PE paper Appendix A, Eq. 1): depot 0, customers 1..N with demands, capacity."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from routecli.problems.base import Routes, check_permutation
from routecli.problems.metric import Metric


def route_loads(demands: np.ndarray, solution: Routes) -> np.ndarray:
    """Total demand served by each route. ``[R]``."""
    return np.array([demands[r].sum() for r in solution.routes], dtype=np.float64)


def capacity_violations(demands: np.ndarray, capacity: float, solution: Routes) -> list[str]:
    loads = route_loads(demands, solution)
    return [
        f"route {k + 1} over capacity by {load - capacity:g} (load {load:g} > {capacity:g})"
        for k, load in enumerate(loads)
        if load > capacity + 1e-9
    ]


def depot_visits(solution: Routes) -> list[str]:
    return [f"route {k + 1} visits the depot inside the route"
            for k, r in enumerate(solution.routes) if (r == 0).any()]


@dataclass(frozen=True)
class CVRPInstance:
    """Depot 0 and customers 1..N. ``demands`` ``[N+1]`` (depot 0 has demand 0)."""

    name: str
    metric: Metric
    demands: np.ndarray
    capacity: float
    problem: ClassVar[str] = "cvrp"
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

    def distance(self, solution: Routes) -> float:
        return float(self.metric.routes(list(solution.routes)).sum())

    def cost(self, solution: Routes) -> float:
        return self.distance(solution)

    def validate(self, solution: Routes) -> list[str]:
        problems = depot_visits(solution)
        problems += check_permutation(solution.visited, np.arange(1, self.num_customers + 1),
                                      "customer")
        return problems + capacity_violations(self.demands, self.capacity, solution)
