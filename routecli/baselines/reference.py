"""Reference solutions by PyVRP, on a deterministic budget, computed in parallel and cached.

Analyses, the PE probe, MiLoop's evaluation and its training validation all need near-optimal
solutions of the same synthetic instances. A wall-clock budget made them depend on how busy
the machine was (a 5-second CVRP-100 reference under load was 1.5% worse on average than on a
quiet core), so a reference stops on iteration counts with a fixed seed
(:class:`ReferenceBudget`, chosen per problem and size by :func:`reference_budget`); the wall
clock is only a safety cap. Each is solved once per (instance data, solver, PyVRP version,
budget, seed) and stored as a small ``.npz`` under the cache directory (``$ROUTECLI_CACHE`` or
``~/.cache/routecli``, subfolder ``references``).
"""

from __future__ import annotations

import os
import time
import warnings
from dataclasses import dataclass, replace
from functools import cache
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np
from rich.progress import (
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from routecli.atomic import atomic_write
from routecli.baselines.hgs import search
from routecli.errors import OptionError
from routecli.problems import Instance, Routes, Solution, Tour, check, cost
from routecli.problems.fingerprint import fingerprint
from routecli.stop import Criterion, FirstOf, MaxIterations, MaxRuntime, NoImprovement
from routecli.tasks import Executor, Task, make_executor, run_tasks, task_key

SOLVER = "hgs"


@cache
def pyvrp_version() -> str:
    return version("pyvrp")


@dataclass(frozen=True)
class ReferenceBudget:
    """How long PyVRP searches for one reference: at most ``iterations`` iterations, stopping
    earlier after ``no_improvement`` iterations without a better solution, with PyVRP's
    ``seed``. Both criteria count iterations, so the reference is the same on a busy machine
    as on a quiet one; ``safety_seconds`` of wall clock only cut a run that would otherwise
    take far longer than planned (such a run is returned with a warning and not cached).
    """

    iterations: int
    no_improvement: int
    seed: int = 0
    safety_seconds: float = 900.0

    def __post_init__(self) -> None:
        if self.iterations < 1 or self.no_improvement < 1:
            raise OptionError(f"reference budget needs >= 1 iteration, got {self}")
        if not self.safety_seconds > 0:
            raise OptionError(f"safety cap must be > 0 seconds, got {self.safety_seconds}")

    def scaled(self, factor: float) -> ReferenceBudget:
        """Both iteration counts times ``factor`` (2: the doubled budget of the convergence
        check)."""
        return replace(self, iterations=max(1, round(self.iterations * factor)),
                       no_improvement=max(1, round(self.no_improvement * factor)),
                       safety_seconds=self.safety_seconds * max(1.0, factor))

    @property
    def stop(self) -> Criterion:
        """The run's stopping criterion: the iteration counts, and the safety cap."""
        return FirstOf(MaxIterations(self.iterations), NoImprovement(self.no_improvement),
                       MaxRuntime(self.safety_seconds))

    @property
    def key(self) -> str:
        """What the solution depends on, for cache file names: solver, its version, the
        criterion and the seed (not the safety cap, which a cached run never reached)."""
        return (f"{SOLVER}{pyvrp_version()}-i{self.iterations}-n{self.no_improvement}"
                f"-s{self.seed}")

    def describe(self) -> dict[str, Any]:
        """The settings as result files record them."""
        return {"solver": SOLVER, "pyvrp": pyvrp_version(), "iterations": self.iterations,
                "no_improvement": self.no_improvement, "seed": self.seed,
                "safety_seconds": self.safety_seconds}


# Iterations without improvement and at most, by problem, at 100 nodes; a budget grows with
# the fourth root of the size (PyVRP's search improved at similar iteration counts on CVRP-100
# and CVRP-200 trajectories; a linear rule would make CVRP-500 references take many minutes
# each). Chosen on 2-4 instance trajectories so that doubling the budget gains under 0.1% on
# average, and checked on 32 instances per set (benchmarks/check_references.py, results in
# benchmarks/results/check_references.md). The first CVRP choice (20,000 / 50,000) gained
# 0.085% on average from doubling on 32 CVRP-100 instances, but 0.27-0.65% on 4 of them (long
# stalls before a late improvement), more than the 0.2% the MiLoop evaluation's consistency
# check tolerates; CVRP's limits are twice that.
# The safety cap: a PyVRP iteration takes 0.3-0.8 ms on one quiet core here, so a run cut at
# 10 ms per iteration was slowed more than ten-fold.
SAFETY_SECONDS_PER_ITERATION = 0.01
_AT_100: dict[str, tuple[int, int]] = {
    "tsp": (10_000, 40_000),
    "cvrp": (40_000, 100_000),
    "vrptw": (10_000, 30_000),
    "pcvrp": (40_000, 100_000),  # as CVRP (not measured: no result uses PCVRP references)
    "pdtsp": (3_000, 15_000),
}


def reference_budget(problem: str, size: int) -> ReferenceBudget:
    """The default budget of a ``problem`` instance with ``size`` nodes (customers for the
    capacitated problems), see :data:`_AT_100`."""
    if problem not in _AT_100:
        raise OptionError(f"no reference budget for {problem!r}; PyVRP references exist for "
                          f"{', '.join(_AT_100)}")
    scale = (size / 100) ** 0.25
    stall, most = _AT_100[problem]
    iterations = max(1, round(most * scale / 100) * 100)
    return ReferenceBudget(iterations=iterations,
                           no_improvement=max(1, round(stall * scale / 100) * 100),
                           safety_seconds=iterations * SAFETY_SECONDS_PER_ITERATION)


def default_cache_dir() -> Path:
    root = os.environ.get("ROUTECLI_CACHE")
    return (Path(root) if root else Path.home() / ".cache" / "routecli") / "references"


def encode(solution: Solution) -> dict[str, np.ndarray]:
    """A solution as integer arrays: a tour, or the visited nodes and the route sizes."""
    if isinstance(solution, Tour):
        return {"tour": solution.order}
    assert isinstance(solution, Routes)
    sizes = np.array([len(r) for r in solution.routes], np.int64)
    return {"nodes": solution.visited, "sizes": sizes}


def decode(data: dict[str, np.ndarray]) -> Tour | Routes:
    """Inverse of :func:`encode`."""
    if "tour" in data:
        return Tour(data["tour"])
    return Routes(np.split(data["nodes"], np.cumsum(data["sizes"])[:-1]))


def solve_reference(instance: Instance, budget: ReferenceBudget) -> tuple[Tour | Routes, bool]:
    """PyVRP's solution of ``instance`` on ``budget``, checked feasible, and whether the safety
    cap cut the run."""
    run = search(instance, seed=budget.seed, stop=budget.stop)
    check(instance, run.solution)
    return run.solution, run.timed_out


def cache_path(instance: Instance, budget: ReferenceBudget,
               cache_dir: str | Path | None = None) -> Path:
    """Where the reference of ``instance`` on ``budget`` is cached."""
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    return root / f"{fingerprint(instance)}-{budget.key}.npz"


def store(path: str | Path, instance: Instance, solution: Tour | Routes) -> None:
    """Cache ``solution`` of ``instance`` at ``path`` (see :func:`cache_path`)."""
    # Any: numpy >= 2.1 types savez's allow_pickle as bool, which ** of arrays could bind
    arrays: dict[str, Any] = encode(solution)
    atomic_write(path, lambda fh: np.savez(fh, cost=cost(instance, solution), **arrays))


def _rate(instance: Instance, seed: int, iterations: int = 200) -> float:
    """PyVRP iterations per second on ``instance`` right now (a short run; the iteration
    budget of a reference is deterministic, its time depends on the machine's load)."""
    started = time.perf_counter()
    search(instance, seed=seed, stop=MaxIterations(iterations))
    return iterations / max(time.perf_counter() - started, 1e-9)


def reference_solutions(instances: list[Instance], budget: ReferenceBudget | None = None,
                        jobs: int = 1, cache_dir: str | Path | None = None,
                        progress: bool = True, executor: Executor | None = None
                        ) -> list[Tour | Routes]:
    """PyVRP solutions of ``instances`` on ``budget`` (default: :func:`reference_budget` of
    each instance's problem and size), from the cache when present; the missing ones are
    tasks on ``executor`` (default: a local pool of ``jobs`` processes), cached by this
    process as each finishes.

    With ``progress``, references still to compute are announced with an upper bound on the
    time they take at the current speed (every run ending at its iteration limit), then shown
    as a bar with the number done and the time left.
    """
    budgets = [budget or reference_budget(inst.problem, inst.size) for inst in instances]
    paths = [str(cache_path(inst, b, cache_dir)) for inst, b in zip(instances, budgets, strict=True)]
    out: list[Tour | Routes | None] = [None] * len(instances)
    todo = []
    for i, path in enumerate(paths):
        if os.path.exists(path):
            with np.load(path) as data:
                out[i] = decode(dict(data))
        else:
            todo.append(i)
    capped = 0
    if todo:
        # identical instances share a cache file: one task solves them
        groups: dict[str, list[int]] = {}
        for i in todo:
            groups.setdefault(paths[i], []).append(i)
        tasks = [Task(task_key("reference", instances[group[0]].name, path=path),
                      solve_reference, (instances[group[0]], budgets[group[0]]))
                 for path, group in groups.items()]
        where = {task.key: path for task, path in zip(tasks, groups, strict=True)}
        columns = (*Progress.get_default_columns()[:-1], MofNCompleteColumn(), TimeElapsedColumn(),
                   TextColumn("left"), TimeRemainingColumn())
        with Progress(*columns, disable=not progress, transient=True) as bar, \
                executor or make_executor("pool", jobs) as engine:
            if progress:
                rate = _rate(instances[todo[0]], budgets[todo[0]].seed)
                most = sum(budgets[i].iterations for i in todo) / rate / max(1, engine.workers)
                cached = len(instances) - len(todo)
                bar.console.print(f"{len(todo)} PyVRP references to compute ({cached} cached): "
                                  f"at most {_duration(most)} at the current {rate:,.0f} "
                                  "iterations/s, usually much less", highlight=False)
            shown = bar.add_task("PyVRP references", total=len(todo))

            def record(task: Task, result: tuple[Tour | Routes, bool]) -> None:
                nonlocal capped
                solution, timed_out = result
                path = where[task.key]
                if not timed_out:  # a capped run depends on machine load: solve it next time
                    store(path, instances[groups[path][0]], solution)
                for i in groups[path]:
                    out[i] = solution
                capped += timed_out * len(groups[path])
                bar.advance(shown, len(groups[path]))

            run_tasks(tasks, engine, record)
    if capped:
        warnings.warn(f"{capped} of {len(todo)} PyVRP references hit their wall-clock safety "
                      "cap before their iteration budget; they depend on machine load and were "
                      "not cached", stacklevel=2)
    return [s for s in out if s is not None]


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
