"""VRP with time windows (PE paper Appendix A, Eq. 2): CVRP plus service start in [a_i, b_i].

Travel time equals distance; a vehicle arriving early waits; service lasts ``service[i]``; every
route leaves the depot at ``ready[0]`` and must be back by ``due[0]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from routecli.problems.base import Routes, check_permutation
from routecli.problems.instance import CapacitatedInstance


@dataclass(frozen=True)
class VRPTWInstance(CapacitatedInstance):
    """CVRP data plus ``ready``, ``due``, ``service`` ``[N+1]`` (index 0 is the depot)."""

    ready: np.ndarray
    due: np.ndarray
    service: np.ndarray
    problem: ClassVar[str] = "vrptw"
    sense: ClassVar[str] = "min"

    def cost(self, solution: Routes) -> float:
        return self.distance(solution)

    def schedule(self, route: np.ndarray) -> tuple[np.ndarray, float]:
        """Service start time at each customer of ``route`` and the return time to the depot."""
        path = np.concatenate([[0], route, [0]])
        legs = self.metric.pairs(path[:-1], path[1:])
        starts = np.empty(len(route))
        t = float(self.ready[0])
        prev_service = float(self.service[0])
        for k, c in enumerate(route):
            t = max(t + prev_service + legs[k], float(self.ready[c]))
            starts[k] = t
            prev_service = float(self.service[c])
        return starts, t + prev_service + legs[-1]

    def validate(self, solution: Routes) -> list[str]:
        problems = self.route_violations(solution)
        problems += check_permutation(solution.visited, np.arange(1, self.num_customers + 1),
                                      "customer")
        for k, route in enumerate(solution.routes):
            if (route < 1).any() or (route > self.num_customers).any():
                continue
            starts, back = self.schedule(route)
            late = starts > self.due[route] + 1e-6
            problems += [
                f"time window of customer {c} violated: service starts {s:g} > due {self.due[c]:g}"
                for c, s in zip(route[late], starts[late])
            ]
            if back > self.due[0] + 1e-6:
                problems.append(f"route {k + 1} returns to the depot at {back:g} > {self.due[0]:g}")
        return problems
