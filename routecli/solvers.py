"""One solver protocol, one registry, one runner that validates and times every solve.

A new model is one module with a factory ``make(options: SolveOptions) -> Solver`` plus one
line in :data:`REGISTRY`. Modules are imported lazily so ``routecli --help`` stays fast and
torch is loaded only by the models that need it.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from routecli.errors import OptionError
from routecli.problems import Instance, Solution, cost, gap, validate

DECODES = ("greedy", "sampling", "multistart")  # constructive decodings (torch-free here)


@dataclass(frozen=True)
class SolveOptions:
    """Every option a solver may read; each solver uses the ones that concern it."""

    decode: str = "greedy"  # greedy | sampling | multistart
    starts: int = 100  # multi-start M
    augment: bool = False  # 8-fold symmetry augmentation
    checkpoint: str | None = None
    candidates: int | None = None  # KNN candidate set size; None = automatic
    pe: str | None = None
    policy: str | None = None  # nds: learned | random | strings
    polish: bool = False
    device: str = "cpu"
    threads: int | None = None  # torch CPU threads; None keeps torch's default (all cores)
    extra: dict[str, str] = field(default_factory=dict)


class Solver(Protocol):
    name: str
    problems: tuple[str, ...]

    def solve(self, instance: Instance, *, seed: int = 0,
              time_limit: float | None = None) -> Solution: ...


REGISTRY: dict[str, tuple[str, str]] = {
    # name: (module, one-line description)
    "nn": ("routecli.baselines.construction", "nearest-neighbour construction (sanity baseline)"),
    "hgs": ("routecli.baselines.hgs", "PyVRP hybrid genetic search (classical reference)"),
    "miloop": ("routecli.models.miloop_solver",
               "MiLoop constructive policy (selective memory propagation)"),
    "sisr": ("routecli.search.solver",
             "ruin-and-recreate with string removal + simulated annealing (non-neural control)"),
    "nds": ("routecli.models.nds_solver",
            "neural deconstruction search: learned removal policy (IPE+XPE) in annealed ruin-and-recreate"),
}


class UnknownSolverError(OptionError):
    """No such model, or the model does not solve the instance's problem."""


def make_solver(name: str, options: SolveOptions | None = None) -> Solver:
    if name not in REGISTRY:
        raise UnknownSolverError(f"unknown model {name!r}; choose from {', '.join(REGISTRY)}")
    if options is not None and options.threads is not None:
        import torch

        # On a shared machine the default (one thread per core) can oversubscribe badly.
        torch.set_num_threads(options.threads)
    module = importlib.import_module(REGISTRY[name][0])
    factory: Callable[[SolveOptions], Solver] = module.make
    return factory(options or SolveOptions())


@dataclass(frozen=True)
class SolveResult:
    instance: str
    problem: str
    size: int
    model: str
    cost: float
    seconds: float
    feasible: bool
    problems: list[str]
    solution: Solution
    bks: float | None = None

    @property
    def gap(self) -> float | None:
        return None if self.bks is None else gap(self.cost, self.bks)


def run(solver: Solver, instance: Instance, *, seed: int = 0, time_limit: float | None = None,
        bks: float | None = None) -> SolveResult:
    """Solve, time, re-cost on the instance's own scale and validate."""
    if instance.problem not in solver.problems:
        raise UnknownSolverError(
            f"model {solver.name!r} does not solve {instance.problem.upper()} "
            f"(it solves {', '.join(p.upper() for p in solver.problems)})")
    start = time.perf_counter()
    solution = solver.solve(instance, seed=seed, time_limit=time_limit)
    seconds = time.perf_counter() - start
    problems = validate(instance, solution)
    return SolveResult(instance.name, instance.problem, instance.size, solver.name,
                       cost(instance, solution), seconds, not problems, problems, solution, bks)
