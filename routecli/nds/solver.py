"""``--model nds``: augmented simulated annealing driven by the learned deconstruction policy.

Solves CVRP, VRPTW and PCVRP. Loads the shipped ``nds-<problem>.pt`` (``nds-<problem>-<pe>.pt``
when ``pe`` names an encoding other than the shipped one), or ``Settings.checkpoint``; the
checkpoint's problem and PE must match the request. ``policy`` = ``random`` or ``strings``
swaps the learned policy for a non-neural control under the same search settings.

Two variants (``Settings.variant``):

- ``paper``: the published method (PE paper Appendix E, Table 7): every iteration encodes the
  current solution (fp32, on the 8 symmetric images unless ``images=1``), samples ``rollouts``
  removal sets of ``remove`` customers, repairs them all and lets the best compete under the
  annealing rule;
- ``hybrid``: ``sisr``'s iterations (one string removal of ``string_remove`` customers on
  average, compiled) with one learned iteration as above after every ``every`` of them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from routecli.errors import OptionError
from routecli.nds.options import POLICIES, VARIANTS, Policy, Variant
from routecli.nds.policy import default_pe, load_policy
from routecli.nds.removal import HybridRemoval, LearnedRemoval
from routecli.pe.registry import PE_REGISTRY, canonical_pe
from routecli.problems import Instance, Routes
from routecli.resources import PRECISION_CHOICES, PrecisionChoice, resolve_device
from routecli.search.asa import ASAConfig, ASAResult
from routecli.search.ruin import RemovalPolicy, make_policy
from routecli.search.solver import SearchSettings, SearchSolver
from routecli.solvers import Effort, ProgressFn, apply_threads
from routecli.stop import Criterion
from routecli.train.checkpoint import CheckpointError, shipped, tensor_digest

# The learned policy's size limit: the dense [V, V] distance bias alone takes 400 MB here, and
# the encoder's attention as much per head and image.
LEARNED_MAX_NODES = 10_000


@dataclass(frozen=True)
class Settings(SearchSettings):
    """The PE paper's NDS search (Table 7) by default: 64 rollouts of 15 removals per
    iteration, read on the 8 symmetric images of the instance; ``rollouts``, ``remove``,
    ``images`` and ``precision`` shape the learned iterations of either variant."""

    policy: Policy = "learned"  #: learned, or a non-neural control: random, strings
    rollouts: int = 64  #: removal proposals per iteration, spread over the images
    remove: int = 15  #: customers per proposal
    pe: str | None = None  #: positional encoding (None: the shipped one for the problem)
    checkpoint: str | None = None  #: policy weights (None: the shipped nds-<problem>.pt)
    images: int = 8  #: 8: the paper's augmented images; 1: the instance only (8x cheaper)
    threads: int | None = None  #: torch CPU threads (None: torch's default)
    device: str = "cpu"  #: torch device (auto: CUDA when present)
    variant: Variant = "paper"  #: paper: every iteration learned; hybrid: strings + learned
    every: int = 5000  #: hybrid: string iterations before each learned one
    string_remove: int = 10  #: hybrid: mean customers per string removal (sisr's default)
    precision: PrecisionChoice = "auto"  #: the encoder's arithmetic (auto: bf16 on a GPU only)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.variant not in VARIANTS:
            raise OptionError(f"variant must be one of {', '.join(VARIANTS)}, got {self.variant!r}")
        if self.every < 1 or self.string_remove < 1:
            raise OptionError("every and string_remove must be >= 1")
        if self.precision not in PRECISION_CHOICES:
            raise OptionError(f"--precision must be one of {', '.join(PRECISION_CHOICES)}, "
                              f"got {self.precision!r}")
        if self.policy not in POLICIES:
            raise OptionError(f"--policy must be one of {', '.join(POLICIES)} for nds, "
                              f"got {self.policy!r}")
        if self.pe is not None and canonical_pe(self.pe) not in PE_REGISTRY:
            raise OptionError(f"unknown positional encoding {self.pe!r}; choose from "
                              f"{', '.join(PE_REGISTRY)}")
        if self.images not in (1, 8):
            raise OptionError(f"images must be 1 or 8, got {self.images}")

    def asa_config(self, stop: Criterion | None) -> ASAConfig:
        config = super().asa_config(stop)
        if self.variant == "paper" or self.policy != "learned":
            return config
        # the engine's rollouts and removal count size the hybrid's string iterations (sisr's);
        # its learned iterations take theirs from the policy object
        return replace(config, rollouts=1, remove=self.string_remove)


def default_checkpoint(problem: str, pe: str | None = None) -> Path:
    """Shipped weights for ``problem`` (and a non-default ``pe``)."""
    if pe is None or canonical_pe(pe) == default_pe(problem):
        return shipped(f"nds-{problem}.pt")
    return shipped(f"nds-{problem}-{canonical_pe(pe)}.pt")


class NDSSolver:
    """Loads one policy per problem on first use and runs ASA with it."""

    problems = ("cvrp", "vrptw", "pcvrp")

    def __init__(self, settings: Settings):
        self.settings = replace(settings, device=resolve_device(settings.device))
        # the label says which removal ran: nds (learned) or nds-random / nds-strings
        self.name = "nds" if settings.policy == "learned" else f"nds-{settings.policy}"
        self._policies: dict[str, RemovalPolicy] = {}
        self.digests: dict[str, str] = {}
        self.last: ASAResult | None = None
        self.effort: Effort | None = None

    def policy(self, problem: str) -> RemovalPolicy:
        """The removal policy for ``problem`` (cached)."""
        if problem in self._policies:
            return self._policies[problem]
        s = self.settings
        if s.policy != "learned":
            policy = make_policy(s.policy)
        else:
            path = Path(s.checkpoint) if s.checkpoint else default_checkpoint(problem, s.pe)
            if not path.exists():
                pe_flag = f" --pe {s.pe}" if s.pe else ""
                raise CheckpointError(f"NDS checkpoint not found: {path} (train one with "
                                      f"routecli train-nds --problem {problem}{pe_flag})")
            model = load_policy(path).to(s.device)
            if model.config.problem != problem:
                raise CheckpointError(f"{path} is an NDS-{model.config.problem.upper()} "
                                      f"checkpoint, the instance is {problem.upper()}")
            if s.pe is not None and canonical_pe(s.pe) != model.config.pe:
                raise CheckpointError(f"{path} was trained with PE {model.config.pe!r}, "
                                      f"not {s.pe!r}")
            self.digests[problem] = tensor_digest(model.state_dict())
            learned = LearnedRemoval(model, augment=s.images == 8, precision=s.precision)
            policy = learned if s.variant == "paper" else \
                HybridRemoval(learned, s.every, s.rollouts, s.remove)
        self._policies[problem] = policy
        return policy

    def check(self, instance: Instance) -> None:
        """Refuse, before any solving, an instance too large for the learned policy (its
        encoder attends over all nodes and its decoder reads a dense distance bias: memory
        grows with ``N^2``) and a warm start that does not fit."""
        self._check_size(instance)
        self._inner(instance).check(instance)

    def _check_size(self, instance: Instance) -> None:
        if self.settings.policy == "learned" and instance.size + 1 > LEARNED_MAX_NODES:
            raise OptionError(f"nds: {instance.name} has {instance.size + 1} nodes; the learned "
                              f"policy takes at most {LEARNED_MAX_NODES} (its memory grows with "
                              "the square of the size); --policy strings runs at any size")

    def _inner(self, instance: Instance) -> SearchSolver:
        return SearchSolver(self.name, self.policy(instance.problem), self.settings)

    def checkpoint_digest(self, problem: str) -> str | None:
        """SHA-256 of the weights that solved ``problem`` (once they are loaded)."""
        return self.digests.get(problem)

    def solve(self, instance: Instance, *, seed: int = 0, stop: Criterion | None = None,
              progress: ProgressFn | None = None) -> Routes:
        self._check_size(instance)
        inner = self._inner(instance)
        solution = inner.solve(instance, seed=seed, stop=stop, progress=progress)
        self.last, self.effort = inner.last, inner.effort
        return solution


def make(settings: Settings) -> NDSSolver:
    apply_threads(settings.threads)
    return NDSSolver(settings)
