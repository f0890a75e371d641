"""``--model miloop``: the MiLoop policy behind the :class:`routecli.solvers.Solver` protocol.

Loads ``checkpoints/miloop-{tsp,cvrp}.pt`` (or ``options.checkpoint``), feeds the instance's
coordinates scaled to the unit square (the policy normalises every step anyway; only float
precision is at stake) and returns the best decoded solution; its cost is recomputed on the
instance's own scale by the caller.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from routecli.problems import CVRPInstance, Instance, Solution, TSPInstance
from routecli.solvers import SolveOptions

CHECKPOINT_DIR = Path(__file__).resolve().parents[2] / "checkpoints"
# Above this many nodes each step sees only the K nearest allowed nodes (MiLoop Section 4.1):
# 200 for TSP, 400 for CVRP, whose capacity rules out part of the neighbourhood.
FULL_DECODING_LIMIT = 1000
DEFAULT_CANDIDATES = {"tsp": 200, "cvrp": 400}


def candidate_count(problem: str, num_nodes: int, requested: int | None) -> int | None:
    """K for an instance: ``requested`` (0 = full decoding), else automatic by size."""
    if requested is not None:
        return requested or None
    return DEFAULT_CANDIDATES[problem] if num_nodes > FULL_DECODING_LIMIT else None


def default_checkpoint(problem: str) -> Path:
    return CHECKPOINT_DIR / f"miloop-{problem}.pt"


def instance_batch(instance: TSPInstance | CVRPInstance) -> dict[str, torch.Tensor]:
    """One-instance tensor batch with coordinates shifted and scaled into the unit square."""
    if instance.coords is None:
        raise ValueError(f"{instance.name}: MiLoop needs node coordinates "
                         "(explicit distance matrices are not supported)")
    xy = np.asarray(instance.coords, np.float64)
    xy = (xy - xy.min(0)) / max(float(np.ptp(xy, axis=0).max()), 1e-12)
    batch = {"locs": torch.as_tensor(xy, dtype=torch.float32)[None]}
    if isinstance(instance, CVRPInstance):
        batch["demand"] = torch.as_tensor(np.asarray(instance.demands), dtype=torch.long)[None]
        batch["capacity"] = torch.tensor([float(instance.capacity)])
    return batch


class MiLoopSolver:
    name = "miloop"
    problems = ("tsp", "cvrp")

    def __init__(self, options: SolveOptions):
        self.options = options
        self.models: dict[str, torch.nn.Module] = {}
        self.on_progress: Callable[[float], None] | None = None  # share of the decoding done

    def policy(self, problem: str):  # noqa: ANN201 - MiLoop, imported lazily
        from routecli.train.checkpoint import load_policy

        if problem not in self.models:
            path = Path(self.options.checkpoint or default_checkpoint(problem))
            if not path.exists():
                raise FileNotFoundError(f"MiLoop checkpoint not found: {path}")
            model = load_policy(path, self.options.device)
            if model.config.problem != problem:
                raise ValueError(f"{path} is a {model.config.problem.upper()} checkpoint, "
                                 f"the instance is {problem.upper()}")
            self.models[problem] = model
        return self.models[problem]

    def solve(self, instance: Instance, *, seed: int = 0,
              time_limit: float | None = None) -> Solution:
        from routecli.search.decode import decode, to_solution

        if not isinstance(instance, TSPInstance | CVRPInstance):
            raise ValueError(f"MiLoop solves TSP and CVRP, not {instance.problem.upper()}")
        model = self.policy(instance.problem)
        generator = torch.Generator().manual_seed(seed)
        batch = instance_batch(instance)
        result = decode(model, {k: v.to(self.options.device) for k, v in batch.items()},
                        self.options.decode, starts=self.options.starts, augment=self.options.augment,
                        samples=self.options.starts, generator=generator,
                        candidates=candidate_count(instance.problem, batch["locs"].shape[1],
                                                   self.options.candidates),
                        progress=self.on_progress)
        return to_solution(instance, result.actions[0])


def make(options: SolveOptions) -> MiLoopSolver:
    return MiLoopSolver(options)
