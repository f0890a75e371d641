"""``--model miloop``: the MiLoop policy behind the :class:`routecli.solvers.Solver` protocol.

Loads the shipped ``miloop-{tsp,cvrp,pdtsp,kp}.pt`` (package data, see
:func:`routecli.train.checkpoint.shipped`) or ``Settings.checkpoint``, feeds the instance's
coordinates scaled to the unit square (the policy normalises every step anyway; only float
precision is at stake), or a knapsack's weights and values as they are (its features are
ratios), and returns the best decoded solution; its cost is recomputed on the instance's own
scale by the caller.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import torch

from routecli.errors import OptionError
from routecli.miloop.decode import decode, to_solution
from routecli.miloop.model import MiLoop, load_policy
from routecli.miloop.options import DECODES, ENGINES, MAX_CANDIDATES, Decode, Engine
from routecli.problems import CVRPInstance, Instance, KPInstance, PDTSPInstance, Solution, TSPInstance
from routecli.problems.geometry import unit_square
from routecli.resources import PRECISION_CHOICES, PrecisionChoice, resolve_device
from routecli.solvers import Effort, Progress, ProgressFn, apply_threads
from routecli.stop import Criterion, Watch, time_limit_only
from routecli.train.checkpoint import CheckpointError, shipped, tensor_digest

# Above this many nodes each step sees only the K nearest allowed nodes (MiLoop Section 4.1):
# 200 for TSP, 400 for CVRP, whose capacity rules out part of the neighbourhood, 200 feasible
# nodes for PDTSP (its size counts pickups and deliveries, not the depot). Knapsack steps always
# see every unselected item.
FULL_DECODING_LIMIT = 1000
DEFAULT_CANDIDATES = {"tsp": 200, "cvrp": 400, "pdtsp": 200}


@dataclass(frozen=True)
class Settings:
    """MiLoop decoding (Section 4.1): greedy, sampling or multi-start, optional x8 images."""

    decode: Decode = "greedy"
    starts: int = 100  #: multi-start M (distinct first nodes, pickups or items), or samples
    augment: bool = False  #: also decode the 8 symmetric images, keep the best (routing)
    checkpoint: str | None = None  #: weights file (None: the shipped miloop-<problem>.pt)
    candidates: int | None = None  #: K nearest allowed nodes per step (None: automatic; 0: all)
    device: str = "cpu"  #: torch device (auto: CUDA when present)
    threads: int | None = None  #: torch CPU threads (None: torch's default)
    engine: Engine = "auto"  #: decoding step: auto | torch | fused (routecli.miloop.decode)
    precision: PrecisionChoice = "fp32"  #: fp32 | bf16 | auto (routecli.miloop.decode)

    def unused(self) -> tuple[str, ...]:
        """Settings that do not shape this decode (results leave them out): greedy has no
        starts."""
        return ("starts",) if self.decode == "greedy" else ()

    def __post_init__(self) -> None:
        if self.decode not in DECODES:
            raise OptionError(f"--decode must be one of {', '.join(DECODES)}, got {self.decode!r}")
        if self.starts < 1:
            raise OptionError(f"--starts must be >= 1, got {self.starts}")
        if self.candidates is not None and self.candidates < 0:
            raise OptionError(f"--candidates must be >= 0, got {self.candidates}")
        if self.candidates is not None and self.candidates > MAX_CANDIDATES:
            raise OptionError(f"--candidates must be at most {MAX_CANDIDATES:,} (0: all nodes), "
                              f"got {self.candidates}")
        if self.engine not in ENGINES:
            raise OptionError(f"engine must be one of {', '.join(ENGINES)}, got {self.engine!r}")
        if self.precision not in PRECISION_CHOICES:
            raise OptionError(f"precision must be one of {', '.join(PRECISION_CHOICES)}, "
                              f"got {self.precision!r}")


def candidate_count(problem: str, num_nodes: int, requested: int | None) -> int | None:
    """K for an instance of ``num_nodes`` nodes (depot included): ``requested`` (0, or at
    least every node: full decoding), else automatic by size."""
    if problem == "kp":
        if requested:
            raise OptionError("--candidates applies to routing problems: a knapsack step sees "
                              "every unselected item")
        return None
    if requested is not None:
        return requested if 0 < requested < num_nodes else None
    size = num_nodes - 1 if problem == "pdtsp" else num_nodes
    return DEFAULT_CANDIDATES[problem] if size > FULL_DECODING_LIMIT else None


def instance_batch(instance: TSPInstance | CVRPInstance | PDTSPInstance | KPInstance
                   ) -> dict[str, torch.Tensor]:
    """One-instance tensor batch: coordinates in the unit square, or a knapsack's items."""
    if isinstance(instance, KPInstance):
        return {"weights": torch.as_tensor(instance.weights, dtype=torch.float64)[None],
                "values": torch.as_tensor(instance.values, dtype=torch.float64)[None],
                "capacity": torch.tensor([float(instance.capacity)], dtype=torch.float64)}
    if instance.coords is None:
        raise OptionError(f"{instance.name}: MiLoop needs node coordinates "
                          "(explicit distance matrices are not supported)")
    batch = {"locs": torch.as_tensor(unit_square(instance.coords), dtype=torch.float32)[None]}
    if isinstance(instance, CVRPInstance):
        batch["demand"] = torch.as_tensor(np.asarray(instance.demands), dtype=torch.long)[None]
        batch["capacity"] = torch.tensor([float(instance.capacity)])
    return batch


class MiLoopSolver:
    name = "miloop"
    problems = ("tsp", "cvrp", "pdtsp", "kp")

    def __init__(self, settings: Settings):
        self.settings = replace(settings, device=resolve_device(settings.device))
        self.models: dict[str, MiLoop] = {}
        self.digests: dict[str, str] = {}
        self.effort: Effort | None = None

    def policy(self, problem: str) -> MiLoop:
        if problem not in self.models:
            path = Path(self.settings.checkpoint or shipped(f"miloop-{problem}.pt"))
            model = load_policy(path, self.settings.device)
            if model.config.problem != problem:
                raise CheckpointError(f"{path} is a {model.config.problem.upper()} checkpoint, "
                                      f"the instance is {problem.upper()}")
            self.models[problem] = model
            self.digests[problem] = tensor_digest(model.state_dict())
        return self.models[problem]

    def checkpoint_digest(self, problem: str) -> str | None:
        """SHA-256 of the weights that solved ``problem`` (once they are loaded)."""
        return self.digests.get(problem)

    def solve(self, instance: Instance, *, seed: int = 0, stop: Criterion | None = None,
              progress: ProgressFn | None = None) -> Solution:
        if not isinstance(instance, TSPInstance | CVRPInstance | PDTSPInstance | KPInstance):
            raise OptionError("MiLoop solves TSP, CVRP, PDTSP and KP, not "
                              f"{instance.problem.upper()}")
        time_limit_only(stop, "MiLoop is constructive: it")
        watch = Watch(stop)
        model = self.policy(instance.problem)
        generator = torch.Generator().manual_seed(seed)
        batch = instance_batch(instance)
        report = None if progress is None else (
            lambda share: progress(Progress(watch.elapsed, share=share)))
        s = self.settings
        if s.augment and isinstance(instance, KPInstance):
            raise OptionError("--augment applies to routing problems, not to a knapsack")
        size = batch["weights" if isinstance(instance, KPInstance) else "locs"].shape[1]
        result = decode(model, {k: v.to(s.device) for k, v in batch.items()}, s.decode,
                        starts=s.starts, augment=s.augment, samples=s.starts, generator=generator,
                        candidates=candidate_count(instance.problem, size, s.candidates),
                        progress=report, watch=watch, precision=s.precision, engine=s.engine)
        note = None
        if result.completed:
            unit = "items" if isinstance(instance, KPInstance) else "nodes"
            cause = "the time limit" if watch.out_of_time() else "an interruption"
            note = (f"nearest neighbour placed the last {result.completed:,} {unit} of the "
                    f"first rollout, which {cause} cut")
        self.effort = Effort("rollouts", result.finished, result.planned, watch.elapsed,
                             watch.stopped_by() if result.finished < result.planned
                             else "finished", note)
        return to_solution(instance, result.actions[0])


def make(settings: Settings) -> MiLoopSolver:
    apply_threads(settings.threads)
    return MiLoopSolver(settings)
