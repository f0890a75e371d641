"""The solver protocol, progress reports, one registry, the options a command passes to any
model, one runner.

A solver is a module with a settings dataclass ``Settings`` (defaults and docstrings) and a
factory ``make(settings) -> Solver``, plus one entry in :data:`REGISTRY` (with the torch-free
module declaring its command-line options, :class:`CliOption`); it stops as a
:mod:`routecli.stop` criterion says. Modules are imported
lazily, so ``routecli --help`` stays fast and torch is loaded only by models that need it.
Every command solves through :func:`run`, which times the solve, re-costs the solution on the
instance's own scale and validates it.
"""

from __future__ import annotations

import importlib
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, Protocol

from routecli.errors import OptionError
from routecli.stop import Criterion

if TYPE_CHECKING:  # routecli.problems loads the numba kernels; --help needs only REGISTRY
    from routecli.problems import Instance, Solution


@dataclass(frozen=True)
class Progress:
    """A progress report: ``share`` of the work done (constructions) or the ``best`` cost so
    far (searches), ``seconds`` after the solve started."""

    seconds: float
    share: float | None = None
    best: float | None = None


ProgressFn = Callable[[Progress], None]


STOPPED_BY = {"time limit": "the time limit", "iteration limit": "the iteration limit",
              "no improvement": "the no-improvement limit", "interrupted": "an interruption"}


@dataclass(frozen=True)
class Effort:
    """How much of its plan a solve carried out: ``done`` of ``planned`` ``unit`` (rollouts,
    iterations, moves; ``planned`` is None where only the clock bounds the count) in
    ``seconds`` of search, the part ``--time-limit`` bounds, and what stopped it
    (:meth:`routecli.stop.Watch.stopped_by`: ``finished`` when the plan ran out first).
    ``note``: anything else the result depends on, in words."""

    unit: str
    done: int
    planned: int | None
    seconds: float
    stopped_by: str = "finished"
    note: str | None = None

    @property
    def complete(self) -> bool:
        """The whole plan ran (a search bounded only by time has none to complete)."""
        return self.note is None and (self.stopped_by == "finished" or (
            self.planned is not None and self.done >= self.planned))

    def __str__(self) -> str:
        count = f"{self.done:,}" if self.planned is None else f"{self.done:,} of {self.planned:,}"
        text = f"ran {count} {self.unit} in {self.seconds:.2f}s"
        if self.stopped_by != "finished":
            text += ", stopped by " + STOPPED_BY.get(self.stopped_by, self.stopped_by)
        return text if self.note is None else f"{text}; {self.note}"


class Solver(Protocol):
    """``effort``: the latest solve's :class:`Effort` (None before the first)."""

    name: str
    problems: tuple[str, ...]
    effort: Effort | None

    def solve(self, instance: Instance, *, seed: int = 0, stop: Criterion | None = None,
              progress: ProgressFn | None = None) -> Solution: ...


class Entry(NamedTuple):
    """A model of the registry: its solver module (``Settings``, ``make``), a one-line
    description, and the torch-free module whose ``CLI_OPTIONS`` are the settings it offers on
    the command line (None: none)."""

    module: str
    description: str
    options: str | None = None


REGISTRY: dict[str, Entry] = {
    "nn": Entry("routecli.baselines.construction",
                "nearest-neighbour construction (sanity baseline)"),
    "hgs": Entry("routecli.baselines.hgs", "PyVRP hybrid genetic search (classical reference)",
                 "routecli.baselines.hgs_options"),
    "exact": Entry("routecli.baselines.knapsack", "exact knapsack optimum (HiGHS 0-1 program)"),
    "miloop": Entry("routecli.miloop.solver",
                    "MiLoop constructive policy (selective memory propagation)",
                    "routecli.miloop.options"),
    "sisr": Entry("routecli.search.solver",
                  "ruin-and-recreate with string removal + simulated annealing (non-neural "
                  "control)", "routecli.search.options"),
    "nds": Entry("routecli.nds.solver",
                 "neural deconstruction search: learned removal policy (IPE+XPE) in annealed "
                 "ruin-and-recreate", "routecli.nds.options"),
    "dact": Entry("routecli.improve.solver",
                  "learned improvement moves (compare-pe's DACT-style or N2S policy)",
                  "routecli.improve.options"),
}


@dataclass(frozen=True)
class CliOption:
    """A setting a model offers on the command line of ``solve`` and ``bench``, declared once
    in the model's ``options`` module (:class:`Entry`): the ``Settings`` field, what it does
    for this model (``help``: a phrase, the default included), and its values: ``choices``
    (named values), else a ``kind`` (``int``, ``str``, ``bool``: a flag, ``"path"``: a file);
    an ``int`` states its range (``min``, ``max``), as every numeric option of every command
    does. Models offering the same setting share one option."""

    setting: str
    help: str
    metavar: str = ""
    choices: tuple[str, ...] = ()
    kind: str = "str"
    min: int | None = None
    max: int | None = None


# The warm start every search offers (``--init``; :func:`read_start`).
WARM_START = CliOption("init", "start the search from this solution (a .sol or .tour from any "
                       "tool, a neural model's included), checked against the instance before "
                       "solving; one instance", "FILE", kind="path")


def cli_options() -> dict[str, list[tuple[str, CliOption]]]:
    """Every model's command-line options, by setting: ``(model, option)`` in registry order
    (the options modules are torch-free, so ``--help`` stays fast)."""
    offered: dict[str, list[tuple[str, CliOption]]] = {}
    for name, entry in REGISTRY.items():
        if entry.options is not None:
            for option in importlib.import_module(entry.options).CLI_OPTIONS:
                offered.setdefault(option.setting, []).append((name, option))
    return offered


class UnknownSolverError(OptionError):
    """No such model, or the model does not solve the instance's problem."""


def _module(name: str) -> Any:
    if name not in REGISTRY:
        raise UnknownSolverError(f"unknown model {name!r}; choose from {', '.join(REGISTRY)}")
    return importlib.import_module(REGISTRY[name].module)


class SolverSettings(Protocol):
    """A model's ``Settings``: a frozen dataclass."""

    __dataclass_fields__: ClassVar[dict[str, Any]]


def settings_type(name: str) -> type[SolverSettings]:
    """The settings dataclass of the model ``name``."""
    settings: type[SolverSettings] = _module(name).Settings
    return settings


def make_settings(name: str, options: Mapping[str, Any] | None = None, *,
                  resources: Mapping[str, Any] | None = None, **values: Any) -> SolverSettings:
    """The ``Settings`` of model ``name``.

    From a command: ``options`` are its model options by setting name, None or False when not
    given; a given one the model does not take is refused, named as its flag, with the flags
    of every command-line option the model declares. ``resources`` (threads, device) apply to every model: one
    whose settings lack them does not use them. From library code: settings ``values``
    (``rollouts=32``)."""
    cls = settings_type(name)
    known = {f.name for f in fields(cls)}
    if options is None and resources is None:
        unknown = sorted(set(values) - known)
        if unknown:
            raise OptionError(f"model {name!r} has no setting {unknown[0]!r} (its settings: "
                              f"{', '.join(sorted(known)) or 'none'})")
        return cls(**values)
    if values:
        raise TypeError("pass options and resources, or settings values, not both")
    chosen = {k: v for k, v in (resources or {}).items() if k in known}
    for key, value in (options or {}).items():
        if value is None or value is False:
            continue
        if key not in known:
            takes = [_flag(setting) for setting, offers in cli_options().items()
                     if any(model == name for model, _ in offers)]
            raise OptionError(f"{_flag(key)} does not apply to model {name!r} (its own "
                              f"options: {', '.join(takes) or 'none'})")
        chosen[key] = value
    return cls(**chosen)


def _flag(setting: str) -> str:
    return "--" + setting.replace("_", "-")


def make_solver(name: str, settings: SolverSettings | None = None, **values: Any) -> Solver:
    """The solver ``name`` with ``settings`` (its ``Settings``), or settings built from
    ``values`` as in :func:`make_settings`."""
    module = _module(name)
    if settings is None:
        settings = make_settings(name, **values)
    elif values:
        raise TypeError("pass settings or options, not both")
    elif not isinstance(settings, module.Settings):
        raise TypeError(f"model {name!r} takes {module.Settings.__name__}, "
                        f"not {type(settings).__name__}")
    solver: Solver = module.make(settings)
    return solver


def ran_with(solver: Solver, settings: SolverSettings) -> SolverSettings:
    """The settings ``solver`` runs with: its own where it keeps them (the device resolved by
    its constructor), else ``settings``; what results record."""
    kept: SolverSettings = getattr(solver, "settings", settings)
    return kept


def apply_threads(threads: int | None) -> None:
    """Set torch's CPU threads (None: leave torch's default of one per core, which can be
    many times slower on a machine shared with other jobs), and OpenBLAS's (numba's matrix
    products) where it is not loaded yet and its environment variable is unset."""
    if threads is not None:
        import torch

        os.environ.setdefault("OPENBLAS_NUM_THREADS", str(threads))
        torch.set_num_threads(threads)


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
    sense: str = "min"  # "max" for a knapsack: the gap is then (bks - cost) / bks
    # (seconds since the solve started, best cost) at each improvement a search reported,
    # ending with the returned solution's cost; empty for a solver that reports no costs
    trajectory: tuple[tuple[float, float], ...] = ()
    effort: Effort | None = None  # the solver's account of the solve

    @property
    def gap(self) -> float | None:
        from routecli.problems import gap

        return None if self.bks is None else gap(self.cost, self.bks, self.sense)


def require_problem(solver: Solver, instance: Instance) -> None:
    """Refuse an instance ``solver`` will not solve: one of a problem it does not solve, or
    one its optional ``check(instance)`` refuses (too large for the memory here, a warm start
    that does not fit). Commands check every input before solving the first."""
    if instance.problem not in solver.problems:
        raise UnknownSolverError(
            f"model {solver.name!r} does not solve {instance.problem.upper()} "
            f"(it solves {', '.join(p.upper() for p in solver.problems)})")
    check: Callable[[Instance], None] | None = getattr(solver, "check", None)
    if check is not None:
        check(instance)


def read_start(instance: Instance, path: str | Path) -> Solution:
    """The warm start in ``path`` (``--init``: a solution from any tool) for ``instance``,
    read and validated; a file that does not read, or is not a feasible solution of the
    instance, is an :class:`OptionError` naming what is wrong."""
    from routecli.errors import RoutecliError, display_path
    from routecli.io import read_solution
    from routecli.problems import validate

    where = display_path(path)
    if not os.path.isfile(path):
        raise OptionError(f"--init {where}: no such file")
    try:
        start = read_solution(path, instance)
    except RoutecliError as exc:
        raise OptionError(f"--init {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise OptionError(f"--init {where}: cannot read ({type(exc).__name__})") from None
    violations = validate(instance, start)
    if violations:
        raise OptionError(f"--init {where} is not a feasible solution of {instance.name}: "
                          f"{violations[0]}")
    return start


class Trajectory:
    """The improvement trajectory of one solve, from the progress reports that carry a best
    cost (hgs, sisr, nds report each improvement), timed on the search's own clock: the one
    its time limit bounds (compiling kernels on first use comes before it)."""

    def __init__(self, forward: ProgressFn | None = None):
        self.forward = forward
        self.points: list[tuple[float, float]] = []

    def __call__(self, report: Progress) -> None:
        if report.best is not None and (not self.points or report.best < self.points[-1][1]):
            self.points.append((report.seconds, report.best))
        if self.forward is not None:
            self.forward(report)

    def final(self, seconds: float, cost: float) -> tuple[tuple[float, float], ...]:
        """The points with the returned solution's cost last: better than the last report
        (a polish after the search), it is a point at ``seconds``; else it is the last
        report's solution in the instance's own measure (PyVRP's costs are integers)."""
        if not self.points:
            return ()
        at, best = self.points[-1]
        if cost < best:
            return (*self.points, (seconds, cost))
        return (*self.points[:-1], (at, cost))


def run(solver: Solver, instance: Instance, *, seed: int = 0, stop: Criterion | None = None,
        bks: float | None = None, progress: ProgressFn | None = None) -> SolveResult:
    """Solve, time, re-cost on the instance's own scale and validate; the result carries the
    improvement trajectory the solver reported."""
    from routecli.problems import cost, validate

    require_problem(solver, instance)
    start = time.perf_counter()
    trajectory = Trajectory(progress)
    solution = solver.solve(instance, seed=seed, stop=stop, progress=trajectory)
    seconds = time.perf_counter() - start
    problems = validate(instance, solution)
    value = cost(instance, solution)
    return SolveResult(instance.name, instance.problem, instance.size, solver.name,
                       value, seconds, not problems, problems, solution, bks,
                       instance.sense, trajectory.final(seconds, value), solver.effort)
