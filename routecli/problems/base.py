"""Shared solution types and the validation error."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


class InfeasibleSolutionError(ValueError):
    """A solution broke a constraint; ``problems`` lists each violation in words."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        shown = "; ".join(problems[:5]) + (f"; ... ({len(problems)} in all)" if len(problems) > 5 else "")
        super().__init__(shown)

    def __reduce__(self):  # noqa: ANN204 - survive pickling across process pools
        return (self.__class__, (self.problems,))


@dataclass(frozen=True)
class Tour:
    """A closed tour: a sequence of node indices (0-based), each node once."""

    order: np.ndarray

    def __post_init__(self) -> None:
        object.__setattr__(self, "order", np.asarray(self.order, dtype=np.int64))


@dataclass(frozen=True)
class Routes:
    """Depot-closed routes; each lists customer indices (1..N), the depot (0) omitted."""

    routes: tuple[np.ndarray, ...]

    def __init__(self, routes) -> None:  # noqa: ANN001 - any iterable of int sequences
        cleaned = tuple(np.asarray(r, dtype=np.int64) for r in routes)
        object.__setattr__(self, "routes", tuple(r for r in cleaned if len(r)))

    @property
    def visited(self) -> np.ndarray:
        return np.concatenate(self.routes) if self.routes else np.zeros(0, np.int64)

    def __len__(self) -> int:
        return len(self.routes)


@dataclass(frozen=True)
class Selection:
    """Chosen items of a knapsack (0-based indices)."""

    items: np.ndarray

    def __post_init__(self) -> None:
        object.__setattr__(self, "items", np.asarray(self.items, dtype=np.int64))


def check_permutation(seq: np.ndarray, expected: np.ndarray, what: str) -> list[str]:
    """Violations of "``seq`` holds every element of ``expected`` exactly once"."""
    problems: list[str] = []
    values, counts = np.unique(seq, return_counts=True)
    unknown = np.setdiff1d(values, expected)
    problems += [f"{what} {v} does not exist" for v in unknown[:10]]
    problems += [f"{what} {v} visited {c} times" for v, c in zip(values, counts, strict=False) if c > 1][:10]
    missing = np.setdiff1d(expected, values)
    problems += [f"{what} {v} missing" for v in missing[:10]]
    if len(missing) > 10:
        problems.append(f"{len(missing)} {what}s missing in all")
    return problems
