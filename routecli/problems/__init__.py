"""Instance and solution types per problem, with ``cost`` and ``validate``.

Every instance has ``name``, ``problem``, ``sense`` ("min"/"max"), ``size``, ``cost(solution)``
and ``validate(solution) -> list[str]`` (empty when feasible; each entry names one violation).
"""

from __future__ import annotations

from typing import Any, TypeVar, overload

from routecli.problems.base import InfeasibleSolutionError, Routes, Selection, Tour
from routecli.problems.cvrp import CVRPInstance
from routecli.problems.kp import KPInstance
from routecli.problems.metric import Metric
from routecli.problems.pcvrp import PCVRPInstance
from routecli.problems.pdtsp import PDTSPInstance
from routecli.problems.tsp import TSPInstance
from routecli.problems.vrptw import VRPTWInstance

Instance = TSPInstance | CVRPInstance | VRPTWInstance | PCVRPInstance | PDTSPInstance | KPInstance
Solution = Tour | Routes | Selection


def validate(instance: Instance, solution: Solution) -> list[str]:
    """Every constraint ``solution`` breaks on ``instance``, in words (empty when feasible)."""
    expected = Routes if isinstance(solution, Routes) else type(solution)
    if instance.problem in ("tsp", "pdtsp") and expected is not Tour:
        return [f"a {instance.problem} solution must be a tour, got {type(solution).__name__}"]
    if instance.problem in ("cvrp", "vrptw", "pcvrp") and expected is not Routes:
        return [f"a {instance.problem} solution must be routes, got {type(solution).__name__}"]
    return instance.validate(solution)  # type: ignore[arg-type]


def cost(instance: Instance, solution: Solution) -> float:
    """``instance.cost(solution)`` for a solution of the type the problem takes (a tour for
    TSP and PDTSP, routes for the CVRP family, a selection for KP); ``TypeError`` otherwise."""
    if isinstance(instance, TSPInstance | PDTSPInstance):
        if isinstance(solution, Tour):
            return instance.cost(solution)
    elif isinstance(instance, KPInstance):
        if isinstance(solution, Selection):
            return instance.cost(solution)
    elif isinstance(solution, Routes):
        return instance.cost(solution)
    raise TypeError(f"a {instance.problem} instance cannot cost a {type(solution).__name__}")


def check(instance: Instance, solution: Solution) -> None:
    """Raise :class:`InfeasibleSolutionError` if ``solution`` is not feasible for ``instance``."""
    problems = validate(instance, solution)
    if problems:
        raise InfeasibleSolutionError(problems)


Values = TypeVar("Values")  # a number, or a numpy array or torch tensor of them


@overload
def gap(cost: float, reference: float, sense: str = "min") -> float: ...
@overload
def gap(cost: Values, reference: Values | float, sense: str = "min") -> Values: ...
def gap(cost: Any, reference: Any, sense: str = "min") -> Any:
    """Percentage gap of ``cost`` to ``reference`` (positive = worse; ``sense`` "max" for a
    value to maximise): of two numbers (a zero reference has none: nan), or elementwise of
    arrays or tensors."""
    if isinstance(reference, int | float) and reference == 0:
        return float("nan")
    sign = 1.0 if sense == "min" else -1.0
    return 100.0 * sign * (cost - reference) / abs(reference)


__all__ = [
    "CVRPInstance", "InfeasibleSolutionError", "Instance", "KPInstance", "Metric",
    "PCVRPInstance", "PDTSPInstance", "Routes", "Selection", "Solution", "TSPInstance",
    "Tour", "VRPTWInstance", "check", "cost", "gap", "validate",
]
