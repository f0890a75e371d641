"""``--model nds``: augmented simulated annealing driven by the learned deconstruction policy.

``make(options)`` returns a solver for CVRP, VRPTW and PCVRP. It loads
``checkpoints/nds-<problem>.pt`` for the instance's problem (``checkpoints/nds-<problem>-<pe>.pt``
when ``--pe`` names an encoding other than the shipped one), or ``options.checkpoint``; the
checkpoint's problem and PE must match the request. ``options.policy`` = ``random`` or
``strings`` swaps the learned policy for a non-neural control under the same search settings;
``options.polish`` runs the local-search polish; ``options.extra`` overrides the search settings
(``rollouts``, ``remove``, ``t_start``, ``t_end``, ``blink``) and ``images`` (8, the default: the
policy reads the 8 symmetric images of the instance, as in the paper's ASA; 1: only the
instance itself, 8 times cheaper per iteration on a CPU). ``on_improve(seconds, best)``, when
set, is called whenever the best cost improves (the CLI's progress line).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from routecli.errors import OptionError
from routecli.problems import Instance, Routes
from routecli.solvers import SolveOptions

if TYPE_CHECKING:  # the search (numba) is imported on first use
    from routecli.search.asa import ASAResult

CHECKPOINT_DIR = Path(__file__).resolve().parents[2] / "checkpoints"
ROLLOUTS = 64  # per ASA iteration, spread over the 8 augmented images
REMOVE = 15  # customers per rollout (Table 7)


def canonical_pe(name: str) -> str:
    return name.lower().replace("-", "_").replace("+", "_")


def default_checkpoint(problem: str, pe: str | None = None) -> Path:
    """Shipped weights for ``problem`` (and a non-default ``pe``)."""
    from routecli.models.nds import default_pe

    if pe is None or canonical_pe(pe) == default_pe(problem):
        return CHECKPOINT_DIR / f"nds-{problem}.pt"
    return CHECKPOINT_DIR / f"nds-{problem}-{canonical_pe(pe)}.pt"


class NDSSolver:
    """Loads one policy per problem on first use and runs ASA with it."""

    name = "nds"
    problems = ("cvrp", "vrptw", "pcvrp")

    def __init__(self, options: SolveOptions):
        from routecli.search.solver import config_from_options

        if options.policy not in (None, "learned", "random", "strings"):
            raise OptionError(f"--policy must be learned, random or strings for nds, "
                              f"got {options.policy!r}")
        if options.pe is not None:
            from routecli.pe.registry import PE_REGISTRY

            if canonical_pe(options.pe) not in PE_REGISTRY:
                raise OptionError(f"unknown positional encoding {options.pe!r}; choose from "
                                  f"{', '.join(PE_REGISTRY)}")
        self.options = options
        extra = {"rollouts": str(ROLLOUTS), "remove": str(REMOVE), **options.extra}
        images = extra.pop("images", "8")
        if images not in ("1", "8"):
            raise OptionError(f"images must be 1 or 8, got {images!r}")
        self.augment = images == "8"
        try:
            self.config = config_from_options(replace(options, extra=extra))
        except ValueError as err:
            raise OptionError(str(err)) from err
        self.on_improve: Callable[[float, float], None] | None = None
        self._policies: dict[str, object] = {}
        self.last: ASAResult | None = None

    def policy(self, problem: str) -> object:
        """The removal policy for ``problem`` (cached)."""
        if problem in self._policies:
            return self._policies[problem]
        if self.options.policy in ("random", "strings"):
            from routecli.search.ruin import make_policy

            policy: object = make_policy(self.options.policy)
        else:
            from routecli.models.nds import LearnedRemoval, load_policy

            path = Path(self.options.checkpoint or default_checkpoint(problem, self.options.pe))
            if not path.exists():
                pe_flag = f" --pe {self.options.pe}" if self.options.pe else ""
                raise OptionError(f"NDS checkpoint not found: {path} (train one with "
                                  f"python -m routecli.cli.train_nds --problem {problem}{pe_flag})")
            try:
                model = load_policy(path)
            except (ValueError, RuntimeError, KeyError) as err:
                raise OptionError(f"{path}: {err}") from err
            if model.config.problem != problem:
                raise OptionError(f"{path} is an NDS-{model.config.problem.upper()} checkpoint, "
                                  f"the instance is {problem.upper()}")
            if self.options.pe is not None and canonical_pe(self.options.pe) != model.config.pe:
                raise OptionError(f"{path} was trained with PE {model.config.pe!r}, "
                                  f"not {self.options.pe!r}")
            policy = LearnedRemoval(model, augment=self.augment)
        self._policies[problem] = policy
        return policy

    def solve(self, instance: Instance, *, seed: int = 0,
              time_limit: float | None = None) -> Routes:
        from routecli.search.solver import SearchSolver

        inner = SearchSolver("nds", self.policy(instance.problem),  # type: ignore[arg-type]
                             self.config, polish=self.options.polish)
        inner.on_improve = self.on_improve
        solution = inner.solve(instance, seed=seed, time_limit=time_limit)
        self.last = inner.last
        return solution


def make(options: SolveOptions) -> NDSSolver:
    return NDSSolver(options)
