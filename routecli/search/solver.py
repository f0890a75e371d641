"""Ruin-and-recreate + simulated annealing as a :class:`routecli.solvers.Solver`.

``make(options)`` builds the non-neural control of the NDS experiments: ``options.policy``
picks the removal policy (``strings``, the default, or ``random``), ``options.polish`` runs
the local search of :mod:`routecli.search.local_search` on the result, and ``options.extra``
may override the search settings (``rollouts``, ``remove``, ``t_start``, ``t_end``; see
:class:`routecli.search.asa.ASAConfig`). The learned policy reuses :class:`SearchSolver` with
its own :class:`routecli.search.ruin.RemovalPolicy`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields, replace
from typing import Any

from routecli.errors import OptionError
from routecli.problems import Instance, Routes
from routecli.search.asa import ASAConfig, ASAResult
from routecli.search.asa import solve as asa_solve
from routecli.search.local_search import polish as polish_routes
from routecli.search.ruin import RemovalPolicy, make_policy
from routecli.search.state import SearchProblem
from routecli.solvers import SolveOptions

DEFAULT_TIME_LIMIT = 10.0


class SearchSolver:
    """ASA with a given removal policy on CVRP, VRPTW and PCVRP.

    ``on_improve(seconds, best_cost)``, when set, is called whenever the best cost improves
    (the CLI's progress line); ``last`` keeps the :class:`ASAResult` of the latest solve.
    """

    problems = ("cvrp", "vrptw", "pcvrp")

    def __init__(self, name: str, policy: RemovalPolicy, config: ASAConfig,
                 polish: bool = False) -> None:
        self.name = name
        self.policy = policy
        self.config = config
        self.polish = polish
        self.on_improve: Callable[[float, float], None] | None = None
        self.last: ASAResult | None = None

    def solve(self, instance: Instance, *, seed: int = 0,
              time_limit: float | None = None) -> Routes:
        problem = SearchProblem.from_instance(instance)  # type: ignore[arg-type]
        limit = time_limit if time_limit is not None else self.config.time_limit
        if limit is None and self.config.iterations is None:
            limit = DEFAULT_TIME_LIMIT
        config = replace(self.config, time_limit=limit)
        self.last = asa_solve(problem, self.policy, config, seed=seed, progress=self.on_improve)
        if self.polish:
            return polish_routes(instance, self.last.solution)  # type: ignore[arg-type]
        return self.last.solution


def config_from_options(options: SolveOptions) -> ASAConfig:
    """:class:`ASAConfig` with the overrides in ``options.extra`` (unknown keys rejected)."""
    known = {f.name: f.type for f in fields(ASAConfig)}
    overrides: dict[str, Any] = {}  # int or float, as the field is typed
    for key, value in options.extra.items():
        if key not in known or key in ("time_limit",):
            raise OptionError(f"unknown search setting {key!r}; expected one of "
                             f"{', '.join(k for k in known if k != 'time_limit')}")
        try:
            overrides[key] = int(value) if "int" in str(known[key]) else float(value)
        except ValueError:
            raise OptionError(f"search setting {key} needs a number, got {value!r}") from None
    return ASAConfig(time_limit=None, **overrides)


def make(options: SolveOptions) -> SearchSolver:
    policy = make_policy(options.policy or "strings")
    return SearchSolver("sisr", policy, config_from_options(options), polish=options.polish)
