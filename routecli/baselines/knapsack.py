"""Knapsack references: the exact optimum (``--model exact``, a 0-1 integer program solved by
HiGHS through ``scipy.optimize.milp``) and the value/weight greedy that ``--model nn`` runs on
a knapsack (items by decreasing value per unit weight, each taken when it still fits).

HiGHS stops at a relative MIP gap of 1e-4 by default; the program here asks for a gap of 0, so
the value is the optimum (up to HiGHS's feasibility tolerance, checked after rounding: a
selection that overshoots the capacity by round-off is solved again with the capacity lowered
by that tolerance).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from routecli.errors import OptionError
from routecli.problems import Instance, KPInstance, Selection
from routecli.solvers import Effort, Progress, ProgressFn
from routecli.stop import Criterion, time_limit_only

FEASIBILITY = 1e-7  # HiGHS's primal feasibility tolerance


def greedy_selection(weights: np.ndarray, values: np.ndarray, capacity: float,
                     taken: np.ndarray | None = None) -> np.ndarray:
    """Item ids taken by the value/weight greedy, in the order taken, after the items
    ``taken`` already (which must fit). ``[k]``."""
    order = np.lexsort((np.arange(len(weights)), -values / weights))  # ties: lower id first
    chosen = [] if taken is None else [int(i) for i in taken]
    room = float(capacity) - float(np.sum(weights[chosen]))
    already = set(chosen)
    for i in order:
        if i not in already and weights[i] <= room:
            chosen.append(int(i))
            room -= float(weights[i])
    return np.asarray(chosen, np.int64)


@contextmanager
def quiet_stdout() -> Iterator[None]:
    """Silence file descriptor 1 (HiGHS prints solver-internal notes there, ignoring
    ``disp=False``), so a command's own output stays clean."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def optimum(weights: np.ndarray, values: np.ndarray, capacity: float,
            seconds: float | None = None) -> tuple[np.ndarray, bool]:
    """An optimal selection (item ids) and whether HiGHS proved it optimal. When ``seconds``
    run out first, the better of HiGHS's best selection and the value/weight greedy (HiGHS may
    have none yet: the empty selection is always feasible, so only the limit stops it)."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    n = len(weights)
    options: dict = {"mip_rel_gap": 0.0}
    if seconds is not None:
        options["time_limit"] = max(seconds, 1e-3)
    bound = float(capacity)
    greedy = greedy_selection(weights, values, capacity)
    for _ in range(2):
        with quiet_stdout():
            result = milp(-np.asarray(values, np.float64), integrality=np.ones(n),
                          bounds=Bounds(0, 1),
                          constraints=LinearConstraint(np.asarray(weights, np.float64)[None],
                                                       -np.inf, bound),
                          options=options)
        proven = result.status == 0
        chosen = greedy if result.x is None else np.flatnonzero(np.rint(result.x) > 0)
        if weights[chosen].sum() <= capacity + 1e-9:
            if not proven and values[greedy].sum() > values[chosen].sum():
                chosen = greedy
            return chosen, proven
        bound = capacity - FEASIBILITY
    raise OptionError("HiGHS returned selections over the capacity twice")


class ExactKnapsack:
    name = "exact"
    problems = ("kp",)

    def __init__(self) -> None:
        self.effort: Effort | None = None

    def solve(self, instance: Instance, *, seed: int = 0, stop: Criterion | None = None,
              progress: ProgressFn | None = None) -> Selection:
        if not isinstance(instance, KPInstance):
            raise OptionError(f"exact solves knapsacks, not {instance.problem.upper()}")
        limits = time_limit_only(stop, "exact")
        started = time.perf_counter()
        chosen, proven = optimum(instance.weights, instance.values, instance.capacity,
                                 limits.seconds)
        seconds = time.perf_counter() - started
        self.effort = Effort("programs", 1, 1, seconds, "finished" if proven else "time limit",
                             None if proven else "not proven optimal")
        if progress is not None:
            progress(Progress(seconds, share=1.0))
        return Selection(chosen)


@dataclass(frozen=True)
class Settings:
    """The exact knapsack solver has no settings (``--time-limit`` caps HiGHS)."""


def make(settings: Settings) -> ExactKnapsack:
    return ExactKnapsack()
