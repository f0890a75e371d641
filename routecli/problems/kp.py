"""0-1 knapsack (MiLoop Appendix B): choose items maximising value with total weight <= capacity."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from routecli.problems.base import Selection


@dataclass(frozen=True)
class KPInstance:
    name: str
    weights: np.ndarray
    values: np.ndarray
    capacity: float
    problem: ClassVar[str] = "kp"
    sense: ClassVar[str] = "max"

    @property
    def size(self) -> int:
        return len(self.weights)

    def cost(self, solution: Selection) -> float:
        """Total value of the chosen items (the objective, maximised)."""
        return float(self.values[solution.items].sum())

    def validate(self, solution: Selection) -> list[str]:
        items = solution.items
        problems = [f"item {i} does not exist" for i in items if i < 0 or i >= self.size]
        if problems:
            return problems
        values, counts = np.unique(items, return_counts=True)
        problems += [f"item {v} chosen {c} times" for v, c in zip(values, counts, strict=False) if c > 1]
        weight = float(self.weights[items].sum())
        if weight > self.capacity + 1e-9:
            problems.append(f"items over capacity by {weight - self.capacity:g} "
                            f"(weight {weight:g} > {self.capacity:g})")
        return problems
