"""Fields and checks shared by the instance types: a named node set under a metric, and the
depot + customers + capacity core of the CVRP family."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from routecli.problems.base import Routes
from routecli.problems.metric import Metric


@dataclass(frozen=True)
class GraphInstance:
    """``name`` and the ``metric`` that measures every edge."""

    name: str
    metric: Metric

    @property
    def coords(self) -> np.ndarray | None:
        return self.metric.coords


@dataclass(frozen=True)
class CapacitatedInstance(GraphInstance):
    """Depot 0 and customers 1..N with ``demands`` ``[N+1]`` (depot 0) and vehicle ``capacity``;
    ``vehicles`` limits the number of routes when the file declares a fleet (``None``: any)."""

    demands: np.ndarray
    capacity: float
    vehicles: int | None = field(default=None, kw_only=True)

    @property
    def num_customers(self) -> int:
        return self.metric.size - 1

    @property
    def size(self) -> int:
        """Number of customers, the ``n`` of CVRPLIB tables."""
        return self.num_customers

    def distance(self, solution: Routes) -> float:
        return float(self.metric.routes(list(solution.routes)).sum())

    def route_loads(self, solution: Routes) -> np.ndarray:
        """Total demand served by each route. ``[R]``."""
        return np.array([self.demands[r].sum() for r in solution.routes], dtype=np.float64)

    def route_violations(self, solution: Routes) -> list[str]:
        """Depot visits inside a route, capacity excess route by route, and a fleet too small."""
        problems = [f"route {k + 1} visits the depot inside the route"
                    for k, r in enumerate(solution.routes) if (r == 0).any()]
        problems += [
            f"route {k + 1} over capacity by {load - self.capacity:g} "
            f"(load {load:g} > {self.capacity:g})"
            for k, load in enumerate(self.route_loads(solution))
            if load > self.capacity + 1e-9
        ]
        if self.vehicles is not None and len(solution.routes) > self.vehicles:
            problems.append(f"{len(solution.routes)} routes, but the fleet has "
                            f"{self.vehicles} vehicle{'s' if self.vehicles != 1 else ''}")
        return problems
