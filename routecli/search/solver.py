"""Ruin-and-recreate + simulated annealing as a :class:`routecli.solvers.Solver` (``sisr``).

The non-neural control of the NDS experiments: :class:`Settings` picks the removal policy
(``strings``, the default, or ``random``), the annealing knobs of
:class:`routecli.search.asa.ASAConfig` and an optional local-search polish. The learned
policy (``routecli.nds``) reuses :class:`SearchSolver` with its own
:class:`routecli.search.ruin.RemovalPolicy`.
"""

from __future__ import annotations

from dataclasses import dataclass

from routecli.errors import OptionError
from routecli.problems import Instance, Routes
from routecli.search.asa import ASAConfig, ASAResult
from routecli.search.asa import solve as asa_solve
from routecli.search.local_search import polish as polish_routes
from routecli.search.options import REMOVALS, Removal
from routecli.search.repair import BLINK_RATE
from routecli.search.ruin import RemovalPolicy, make_policy
from routecli.search.state import SearchProblem
from routecli.solvers import Effort, Progress, ProgressFn, read_start
from routecli.stop import Criterion, search_budget


@dataclass(frozen=True)
class SearchSettings:
    """The annealed ruin-and-recreate search (PE paper Appendix E, ASA)."""

    policy: str = "strings"  #: removal policy: strings (SISR-style) or random; nds adds learned
    rollouts: int = 1  #: removal proposals repaired per iteration (the best one competes)
    remove: int = 10  #: customers removed per proposal (the mean for string removal)
    t_start: float | None = None  #: initial temperature in mean edge lengths (None: per problem)
    t_end: float | None = None  #: final temperature (None: t_start / 30)
    blink: float = BLINK_RATE  #: SISR blink rate of the greedy repair
    polish: bool = False  #: local search on the final solution
    init: str | None = None  #: warm start: a solution file (any tool's), validated first

    def __post_init__(self) -> None:
        if self.rollouts < 1 or self.remove < 1:
            raise OptionError("rollouts and remove must be >= 1")
        if not 0.0 <= self.blink < 1.0:
            raise OptionError(f"blink must be in [0, 1), got {self.blink}")

    def asa_config(self, stop: Criterion | None) -> ASAConfig:
        """The engine's configuration under ``stop`` (:func:`routecli.stop.search_budget`)."""
        return ASAConfig(stop=search_budget(stop), rollouts=self.rollouts, remove=self.remove,
                         t_start=self.t_start, t_end=self.t_end, blink=self.blink)


@dataclass(frozen=True)
class Settings(SearchSettings):
    """``--model sisr``: string (or random) removal in the annealed search."""

    policy: Removal = "strings"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.policy not in REMOVALS:
            raise OptionError(f"--policy must be one of {', '.join(REMOVALS)} for sisr, "
                              f"got {self.policy!r}")


class SearchSolver:
    """ASA with a given removal policy on CVRP, VRPTW and PCVRP, from the savings start or
    the ``init`` file of the settings; ``last`` keeps the :class:`ASAResult` of the latest
    solve."""

    problems = ("cvrp", "vrptw", "pcvrp")

    def __init__(self, name: str, policy: RemovalPolicy, settings: SearchSettings) -> None:
        self.name = name
        self.policy = policy
        self.settings = settings
        self.last: ASAResult | None = None
        self.effort: Effort | None = None

    def check(self, instance: Instance) -> None:
        """Refuse, before any solving, a warm start that is not a solution of ``instance``."""
        self.start(instance)

    def start(self, instance: Instance) -> Routes | None:
        """The warm start of ``instance`` (None: the savings start)."""
        if self.settings.init is None:
            return None
        routes = read_start(instance, self.settings.init)
        assert isinstance(routes, Routes)  # CVRP, VRPTW and PCVRP solutions are routes
        return routes

    def solve(self, instance: Instance, *, seed: int = 0, stop: Criterion | None = None,
              progress: ProgressFn | None = None) -> Routes:
        initial = self.start(instance)
        problem = SearchProblem.from_instance(instance)  # type: ignore[arg-type]
        report = None if progress is None else (
            lambda seconds, best: progress(Progress(seconds, best=best)))
        config = self.settings.asa_config(stop)
        last = self.last = asa_solve(problem, self.policy, config, seed=seed, initial=initial,
                                     progress=report)
        self.effort = Effort("iterations", last.iterations, config.stop.limits().iterations,
                             last.seconds, last.stopped_by)
        if self.settings.polish:
            return polish_routes(instance, self.last.solution)  # type: ignore[arg-type]
        return self.last.solution


def make(settings: Settings) -> SearchSolver:
    return SearchSolver("sisr", make_policy(settings.policy), settings)
