"""``--model dact``: a trained improvement policy behind the :class:`routecli.solvers.Solver`
protocol.

Loads a ``routecli compare-pe`` model (``<out>/models/<pe>-s<seed>.pt``: the DACT-style
backbone for CVRP, VRPTW and PDTSP, or N2S for PDTSP; any PE), scales the instance to the unit
square (time windows and service times by the same factor), improves a seeded random tour with
sampled moves, on the 8 symmetric images with ``augment``, and returns the best tour found.
An iteration of the stopping criterion is a move (at most :data:`DEFAULT_STEPS` unless it
bounds iterations); a time limit ends the search at the first move after it. No checkpoint
ships: train one with compare-pe.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import torch

from routecli.errors import OptionError
from routecli.improve.env import PROBLEMS, Env, depot_slots, initial_orders, make_instances, to_solution
from routecli.improve.model import DACT, load_model
from routecli.improve.n2s import N2S, load_n2s
from routecli.problems import CVRPInstance, Instance, PDTSPInstance, Solution, VRPTWInstance
from routecli.problems.geometry import augment8
from routecli.resources import resolve_device
from routecli.solvers import Effort, Progress, ProgressFn, apply_threads
from routecli.stop import Criterion, MaxIterations, Watch
from routecli.train.checkpoint import CheckpointError, load

DEFAULT_STEPS = 1000


@dataclass(frozen=True)
class Settings:
    """Which trained policy and how many images; the move budget is the stopping criterion."""

    checkpoint: str | None = None  #: a compare-pe model file (required)
    augment: bool = False  #: search the 8 symmetric images at once, keep the best
    threads: int | None = None  #: torch CPU threads (None: torch's default)
    device: str = "cpu"  #: torch device (auto: CUDA when present)


def instance_batch(instance: Instance) -> tuple[dict[str, np.ndarray], float]:
    """The one-instance :mod:`routecli.generate` batch of ``instance`` in the unit square, and
    the scale (the larger side of its bounding box)."""
    coords = getattr(instance, "metric", None)
    coords = None if coords is None else coords.coords
    if coords is None:
        raise OptionError(f"{instance.name}: the improvement policies need node coordinates")
    xy = np.asarray(coords, np.float64)
    low = xy.min(axis=0)
    span = float((xy.max(axis=0) - low).max()) or 1.0
    batch = {"locs": ((xy - low) / span)[None]}
    if isinstance(instance, CVRPInstance | VRPTWInstance):
        batch["demand"] = np.asarray(instance.demands, np.float64)[None]
        batch["capacity"] = np.array([float(instance.capacity)])
    if isinstance(instance, VRPTWInstance):  # travel time is distance: same scale
        for key, values in (("ready", instance.ready), ("due", instance.due),
                            ("service", instance.service)):
            batch[key] = np.asarray(values, np.float64)[None] / span
    return batch, span


class ImprovementSolver:
    name = "dact"
    problems = PROBLEMS

    def __init__(self, settings: Settings):
        self.settings = replace(settings, device=resolve_device(settings.device))
        self.model: DACT | N2S | None = None
        self.effort: Effort | None = None

    def policy(self, problem: str) -> DACT | N2S:
        if self.settings.checkpoint is None:
            raise OptionError("--model dact needs --checkpoint FILE: a model trained by "
                              "routecli compare-pe (<out>/models/<pe>-s<seed>.pt)")
        path = Path(self.settings.checkpoint)
        if self.model is None:
            kind = load(path)["kind"]
            model = load_n2s(path) if kind == "n2s" else load_model(path)
            self.model = model.to(self.settings.device)
        trained = "pdtsp" if isinstance(self.model, N2S) else self.model.config.problem
        if trained != problem:
            raise CheckpointError(f"{path} is a {trained.upper()} policy, the instance is "
                                  f"{problem.upper()}")
        return self.model

    def solve(self, instance: Instance, *, seed: int = 0, stop: Criterion | None = None,
              progress: ProgressFn | None = None) -> Solution:
        if not isinstance(instance, CVRPInstance | VRPTWInstance | PDTSPInstance):
            raise OptionError(f"--model dact solves {', '.join(PROBLEMS).upper()}, not "
                              f"{instance.problem.upper()}")
        moves_cap = MaxIterations(DEFAULT_STEPS)
        if stop is None or stop.limits().iterations is None:
            stop = moves_cap if stop is None else stop | moves_cap
        watch = Watch(stop)
        model = self.policy(instance.problem)
        batch, span = instance_batch(instance)
        data = make_instances(instance.problem, batch, depot_slots(instance.problem, batch))
        images = 8 if self.settings.augment else 1
        generator = torch.Generator().manual_seed(seed)
        order = initial_orders(data, generator)
        copies = data.index(torch.zeros(images, dtype=torch.long)).with_coords(
            augment8(data.coords)[:images, 0])
        env = Env(copies, order.expand(images, -1), kind=model.kind, window=data.slots - 1)
        best = float(env.best.min())
        moves = 0
        with torch.no_grad():
            while moves == 0 or not watch.done():
                env.step(model(env.observe(), generator=generator).action)
                moves += 1
                watch.record(moves, float(env.best.min()))
                if progress is not None and watch.best < best:
                    best = watch.best
                    progress(Progress(watch.elapsed, best=best * span))
        self.effort = Effort("moves", moves, watch.limits.iterations, watch.elapsed,
                             watch.stopped_by())
        return to_solution(data, env.best_order[int(env.best.argmin())])


def make(settings: Settings) -> ImprovementSolver:
    apply_threads(settings.threads)
    return ImprovementSolver(settings)
