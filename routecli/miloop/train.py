"""The MiLoop training loop: curriculum, K rollouts per instance, DPO/REINFORCE, validation,
resumable checkpoints, a JSONL log, and data-parallel training under ``torchrun``.

Every optimizer step draws a fresh batch of uniform instances whose seed is a function of
``(seed, step, rank)``, so a resumed run sees exactly the data it would have seen. Each
instance is rolled out K times from distinct starting nodes (TSP), first customers (CVRP),
first pickups (PDTSP) or first items that fit (KP); the K sequence log-probabilities keep the
autograd graph of the full rollout, memory included, and feed the loss. A knapsack's cost is
its negated value, so every loss minimises. Labels for the supervised stages and validation
references are PyVRP solutions (TSP, CVRP, PDTSP) or exact optima (KP, HiGHS).

Recipes, one per stage (see :class:`Stage`): the paper's reference-free DPO (or REINFORCE)
on K rollouts per instance; ``imitation``, teacher forcing on PyVRP solutions of each step's
fresh instances, labelled on the spot; ``supervised``, teacher forcing on a pool of labelled
instances built in parallel before the stage and kept on disk for later runs
(:class:`routecli.miloop.labels.LabelStore`), each sample a random suffix of its solution
(the memory at the suffix start is reached by replaying the prefix without gradients, so
one sample costs less than a full rollout and the state matches decoding exactly), or with
``window`` W a window of W consecutive decisions (bounded memory at 1,000+ nodes). With
``train_candidates`` K, a TSP supervised step on more than K nodes shows the policy the K
nearest unvisited nodes of the current node, as decoding does on large instances
(:class:`routecli.envs.base.CandidateSets`, one instance per row); a label's node outside them
is visited but not trained on. ``labeller`` = ``lkh`` labels TSP stores with LKH-3 instead of
PyVRP. A stage may draw its size per step from a range, and ``distribution`` = ``mixed``
trains on instances normalised as files are read, with CVRP routes of 5 to 150 customers.

Speed (CPU): ``precision`` = ``bf16`` runs the policy under a bfloat16 autocast with float32
master weights (``auto``, the default, picks it only where the device multiplies bfloat16
natively: emulated, it is several times slower than float32), ``compile`` fuses its
elementwise work (:mod:`routecli.nn.fused`), and activations are recomputed in backward only
when a step's would exceed ``activation_gb``.

Data parallelism: the rollout calls the policy once per construction step, which does not fit
``DistributedDataParallel``'s one-forward-per-backward hooks, so after ``backward`` gradients
are averaged in one ``all_reduce`` over a flat buffer (:mod:`routecli.train.distributed`; gloo
on CPU, nccl on CUDA, the same arithmetic as DDP).
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from routecli import generate
from routecli.envs import CVRPEnv, KPEnv, PDTSPEnv, TSPEnv
from routecli.envs.base import CandidateSets, path_length
from routecli.errors import OptionError
from routecli.miloop.labels import (
    LabelPool,
    LabelStore,
    equivalent_actions,
    label_sequences,
    require_labeller,
    training_batch,
)
from routecli.miloop.model import (
    KIND,
    MiLoop,
    MiLoopConfig,
    load_policy,
    rollout,
    to_checkpoint,
)
from routecli.miloop.options import (
    BF16_ON_CPU,
    DEFAULT_CURRICULUM,
    DISTRIBUTIONS,
    MAX_CANDIDATES,
    MIXED_PROBLEMS,
    STAGE_RANGES,
    TARGETS,
    Distribution,
    Labeller,
    Loss,
    Targets,
)
from routecli.nn import fused
from routecli.nn.device import resolve_precision
from routecli.problems import Routes, Selection, Tour, gap
from routecli.resources import PrecisionChoice, require_memory, resolve_device
from routecli.train import checkpoint, distributed, runlog
from routecli.train.losses import pair_accuracy, policy_loss
from routecli.train.stopping import StopReason, TrainingStop

if TYPE_CHECKING:  # PyVRP is imported when references are needed
    from routecli.baselines.reference import ReferenceBudget

# PyVRP iterations per second of one quiet core on 100-node instances (CVRP about 2,200, TSP
# about 3,800): the seconds of val_time_limit and label_time_limit are read as iteration
# budgets at this rate, so labels and validation references do not depend on machine load.
PYVRP_ITERATIONS_PER_SECOND = 2_500
KP_VALIDATION_CAPACITIES = (10.0, 25.0, 50.0, 100.0)  # the KP validation set cycles through them
SIZE_STEP = 10  # a stage over a size range trains on the multiples of this in the range
# bytes of activations kept per rollout step and row, bfloat16 (measured: 5.2 GB peak for
# 50 TSP-100 rollouts); float32 keeps twice as much
ACTIVATION_BYTES_PER_ROW = 20_000
# a fresh AdamW moves every weight by about lr per step whatever the gradient: after a resume
# from a compact state (no optimizer moments) the rate ramps up again over this many steps
REWARM_STEPS = 20


@dataclass(frozen=True)
class Stage:
    """One curriculum stage: ``steps`` updates on ``size``-node instances, ``batch`` instances
    per update (per process), ``rollouts`` samples per instance (capped at the start pool).
    With ``low``, each step draws its size from the multiples of :data:`SIZE_STEP` in
    ``[low, size]`` (and ``size``).

    ``imitation`` and ``supervised`` mark the teacher-forcing recipes (module docstring), not
    part of the paper's recipe.
    """

    size: int
    steps: int
    batch: int
    rollouts: int
    imitation: bool = False
    supervised: bool = False
    low: int = 0

    @property
    def sizes(self) -> tuple[int, ...]:
        if not self.low:
            return (self.size,)
        first = -(-self.low // SIZE_STEP) * SIZE_STEP
        return tuple(sorted({self.low, *range(first, self.size, SIZE_STEP), self.size}))

    @property
    def teacher(self) -> bool:
        return self.imitation or self.supervised

    @classmethod
    def parse_list(cls, text: str) -> list[Stage]:
        """``"20:2000:64:20,50:1000:16:1:imitation,20-100:5000:16:1:supervised"`` -> stages
        (size[-size]:steps:batch:rollouts[:imitation|:supervised])."""
        stages = []
        if not text.strip():
            raise ValueError("the curriculum is empty; give at least one stage "
                             "size[-size]:steps:batch:rollouts")
        for part in text.split(","):
            fields = part.strip().split(":")
            recipe = fields[4] if len(fields) == 5 else ""
            try:
                if len(fields) != 4 and recipe not in ("imitation", "supervised"):
                    raise ValueError(part)
                low, _, high = fields[0].rpartition("-")
                size, steps, batch, rollouts = (int(x) for x in [high, *fields[1:4]])
                stage = cls(size, steps, batch, rollouts, recipe == "imitation",
                            recipe == "supervised", int(low) if low else 0)
            except ValueError as err:
                raise ValueError(f"curriculum stage {part!r}: expected size[-size]:steps:"
                                 "batch:rollouts[:imitation|:supervised]") from err
            given = {"size": size, "steps": steps, "batch": batch, "rollouts": rollouts}
            for name, value in given.items():
                least, most = STAGE_RANGES[name]
                if not least <= value <= most:
                    raise ValueError(f"curriculum stage {part!r}: {name} must be from {least} "
                                     f"to {most:,}, got {value}")
            if (rollouts < 2 and not stage.teacher) or not 0 <= stage.low < size:
                raise ValueError(f"curriculum stage {part!r}: a size range must increase and "
                                 "rollouts be >= 2 (a preference needs a pair)")
            stages.append(stage)
        return stages

    def __str__(self) -> str:
        tail = ":imitation" if self.imitation else ":supervised" if self.supervised else ""
        size = f"{self.low}-{self.size}" if self.low else str(self.size)
        return f"{size}:{self.steps}:{self.batch}:{self.rollouts}{tail}"


def curriculum(problem: str, stages: str | None = None, *, size: int | None = None,
               steps: int | None = None, batch: int | None = None,
               rollouts: int | None = None) -> list[Stage]:
    """The stages of a run: ``stages`` (:meth:`Stage.parse_list`), or one stage of ``size``,
    ``steps``, ``batch`` and ``rollouts`` (all four, and not with ``stages``), else the
    problem's :data:`~routecli.miloop.options.DEFAULT_CURRICULUM`."""
    given = {"--size": size, "--steps": steps, "--batch": batch, "--rollouts": rollouts}
    if any(v is not None for v in given.values()):
        if stages is not None:
            raise OptionError(f"{', '.join(k for k, v in given.items() if v is not None)} and "
                              "--curriculum both describe the stages: pass one or the other")
        if missing := [k for k, v in given.items() if v is None]:
            raise OptionError(f"a one-stage curriculum needs --size, --steps, --batch and "
                              f"--rollouts; missing {', '.join(missing)}")
        stages = f"{size}:{steps}:{batch}:{rollouts}"
    try:
        return Stage.parse_list(DEFAULT_CURRICULUM.get(problem, "0") if stages is None else stages)
    except ValueError as err:
        raise OptionError(f"--curriculum: {err}") from err


def kp_capacities(text: str) -> tuple[float, ...]:
    """``"10,25"`` -> the KP training capacities (checked by :class:`TrainConfig`)."""
    try:
        return tuple(float(c) for c in text.split(","))
    except ValueError:
        raise OptionError(f"--kp-capacity: expected positive numbers, got {text!r}") from None


@dataclass
class TrainConfig:
    problem: str = "tsp"
    run_dir: str = "runs/miloop-tsp"
    curriculum: list[Stage] = field(default_factory=lambda: [Stage(100, 1000, 120, 2)])
    loss: Loss = "dpo"
    beta: float = 0.1
    lr: float = 1e-4
    weight_decay: float = 0.01
    grad_clip: float = 1.0
    decay_at: float = 0.918  # fraction of all steps where lr is multiplied by 0.1 (101/110)
    warmup_steps: int = 0  # linear learning-rate warm-up (0: none, the paper's recipe)
    seed: int = 0
    init: str | None = None  # start from this policy's weights (fresh optimizer)
    val_size: int = 100
    val_instances: int = 64
    val_seed: int = 987654
    val_every: int = 200  # steps
    val_time_limit: float = 1.0  # nominal PyVRP seconds per reference (pyvrp_budget)
    label_time_limit: float = 0.1  # nominal PyVRP seconds per imitation label (pyvrp_budget)
    labels: str = "data/labels"  # label stores of supervised stages, shared between runs
    label_instances: int = 1000  # at least this many per size in a supervised stage's pool
    labeller: Labeller = "pyvrp"  # who labels the supervised stages' stores (lkh: TSP)
    label_jobs: int = 1  # processes computing labels and validation references
    distribution: Distribution = "uniform"  # training instances (labels module)
    precision: PrecisionChoice = "auto"  # rollouts; master weights stay float32
    # (auto: bf16 where the device multiplies it natively, see model.native_bf16)
    compile: bool = False  # fuse the policy's elementwise work with torch.compile (CPU; the CLI
    # default)
    activation_gb: float = 8.0  # recompute activations in backward above this estimate
    checkpoint_every: float = 120.0  # seconds
    log_every: int = 10
    threads: int = 0  # 0: leave torch's default
    device: str = "cpu"
    layers: int = 3
    fusion: bool = True
    gated: bool = True
    memory: bool = True
    kp_capacities: tuple[float, ...] = (25.0,)  # KP training capacity, one per step in turn
    targets: Targets = "label"  # teacher forcing towards the label's action or all as good
    train_candidates: int = 0  # supervised TSP steps see the K nearest unvisited nodes (0: all)
    window: int = 0  # supervised steps teacher-force W consecutive decisions (0: a suffix)

    def __post_init__(self) -> None:
        """Refuse combinations no run can train (named by their command-line flags)."""
        if self.problem not in DEFAULT_CURRICULUM:
            raise OptionError(f"--problem: choose {', '.join(DEFAULT_CURRICULUM)}, not "
                              f"{self.problem!r}")
        if not self.kp_capacities or not all(c > 0 for c in self.kp_capacities):
            raise OptionError(f"--kp-capacity: expected positive numbers, got "
                              f"{self.kp_capacities}")
        if self.targets not in TARGETS:
            raise OptionError(f"--targets: choose {', '.join(TARGETS)}, not {self.targets!r}")
        if self.distribution == "mixed" and self.problem not in MIXED_PROBLEMS:
            raise OptionError(f"--distribution: mixed applies to {', '.join(MIXED_PROBLEMS)}")
        supervised = any(stage.supervised for stage in self.curriculum)
        if self.problem == "kp" and supervised:
            raise OptionError("--curriculum: supervised stages label routing problems (KP: use "
                              ":imitation)")
        given = {"--labeller lkh": self.labeller != "pyvrp", "--train-candidates":
                 bool(self.train_candidates), "--window": bool(self.window)}
        if not supervised and (named := [flag for flag, on in given.items() if on]):
            raise OptionError(f"{', '.join(named)}: applies to supervised stages "
                              "(size:steps:batch:1:supervised); the curriculum has none")
        require_labeller(self.problem, self.labeller)
        if not 0 <= self.train_candidates <= MAX_CANDIDATES or self.window < 0:
            raise OptionError(f"--train-candidates and --window take K >= 0 and W >= 0, not "
                              f"{self.train_candidates} and {self.window}")
        if self.train_candidates and self.problem != "tsp":
            raise OptionError(f"--train-candidates: candidate-set teacher forcing is built for "
                              f"TSP, not {self.problem}")
        if self.problem == "pdtsp" and any(size % 2 for stage in self.curriculum
                                           for size in stage.sizes):
            raise OptionError("--curriculum: PDTSP sizes count pickups and deliveries: they "
                              "must be even")
        if self.problem == "pdtsp" and self.val_size % 2:
            raise OptionError("--val-size: PDTSP sizes count pickups and deliveries: it must "
                              "be even")

    @property
    def total_steps(self) -> int:
        return sum(s.steps for s in self.curriculum)

    def stage_at(self, step: int) -> Stage:
        end = 0
        for stage in self.curriculum:
            end += stage.steps
            if step < end:
                return stage
        return self.curriculum[-1]

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["curriculum"] = ",".join(str(s) for s in self.curriculum)
        return out


def sample_batch(problem: str, size: int, batch: int, seed: int, device: str,
                 kp_capacity: float = 25.0, distribution: str = "uniform"
                 ) -> dict[str, torch.Tensor]:
    """Training instances as tensors: ``uniform`` (CVRP capacity 50, the paper's setting; KP
    ``kp_capacity``, 25 in the paper; PDTSP ``size`` pickup and delivery nodes) or ``mixed``
    (TSP, CVRP: :func:`routecli.miloop.labels.training_batch`)."""
    raw = (generate.kp(batch, size, seed, kp_capacity) if problem == "kp"
           else training_batch(problem, distribution, size, batch, seed))
    return {k: torch.as_tensor(v, dtype=torch.float32 if k != "demand" else torch.long,
                               device=device) for k, v in raw.items()}


def expand_rollouts(problem: str, data: dict[str, torch.Tensor], k: int, generator: torch.Generator
                    ) -> tuple[TSPEnv | CVRPEnv | PDTSPEnv | KPEnv, torch.Tensor | None, int]:
    """Repeat each instance K times with distinct random starts (TSP: first node; forced
    first decisions for CVRP: customer, PDTSP: pickup, KP: an item that fits). Returns the
    environment (rows instance-major), the forced first actions and the effective K.
    The random keys are drawn on the generator's device and moved to the data's: a CPU
    generator gives the same starts on every device."""
    if problem == "kp":
        weights = data["weights"]
        batch, items = weights.shape
        fits = weights <= data["capacity"][:, None]
        k = max(1, min(k, int(fits.sum(1).min())))
        noise = torch.rand(batch, items, generator=generator, device=generator.device)
        noise = noise.to(weights.device).masked_fill(~fits, 2.0)
        starts = noise.argsort(1)[:, :k].reshape(-1)  # [B*K] fitting items
        rep = torch.arange(batch, device=weights.device).repeat_interleave(k)
        return KPEnv(weights[rep], data["values"][rep], data["capacity"][rep]), starts, k
    locs = data["locs"]
    batch, nodes = locs.shape[:2]
    pool = {"tsp": nodes, "cvrp": nodes - 1, "pdtsp": (nodes - 1) // 2}[problem]
    k = min(k, pool)
    noise = torch.rand(batch, pool, generator=generator, device=generator.device).to(locs.device)
    starts = noise.argsort(1)[:, :k].reshape(-1)  # [B*K] distinct per instance
    rep = torch.arange(batch, device=locs.device).repeat_interleave(k)
    if problem == "tsp":
        return TSPEnv(locs[rep], starts), None, k
    if problem == "pdtsp":
        return PDTSPEnv(locs[rep]), starts + 1, k
    env = CVRPEnv(locs[rep], data["demand"][rep], data["capacity"][rep])
    return env, starts + 1, k


def label_env(problem: str, data: dict[str, torch.Tensor], labels: torch.Tensor,
              candidates: int = 0) -> TSPEnv | CVRPEnv | PDTSPEnv | KPEnv:
    """The environment that replays ``labels`` ``[B, T]`` on ``data`` (a TSP tour starts where
    its label starts). ``candidates`` K (TSP): each step shows the K nearest unvisited nodes of
    each row's current node, as decoding does (0, or K at least the node count: all nodes)."""
    if problem == "tsp":
        locs = data["locs"]  # [B, N, 2]
        sets = (CandidateSets(locs.double().cpu().numpy(), candidates)
                if 0 < candidates < locs.shape[1] else None)
        return TSPEnv(locs, labels[:, 0], sets)
    env, _, _ = expand_rollouts(problem, data, 1, torch.Generator())
    return env


def label_decisions(problem: str, labels: torch.Tensor) -> int:
    """The fewest decisions of a row of ``labels`` ``[B, T]`` (CVRP paths end with their last
    depot return, then depot padding)."""
    if problem != "cvrp":
        return labels.shape[1] - 1
    last = labels.shape[1] - 1 - (labels.flip(1) != 0).int().argmax(1)  # last customer
    return int(last.min()) + 1


def trained_steps(decisions: int, window: int, rng: np.random.Generator
                  ) -> tuple[int, int | None]:
    """The decisions ``[start, end)`` one supervised sample teacher-forces among its
    ``decisions``: a random suffix (``end`` None), or with ``window`` W, W consecutive ones
    starting uniformly in ``[1 - W, decisions)`` and cut to the label (every decision is in
    the window with the same chance, W / (decisions + W - 1))."""
    if not window:
        return int(rng.integers(decisions)), None
    first = int(rng.integers(1 - window, decisions))
    return max(first, 0), min(first + window, decisions)


def step_rows(stage: Stage, size: int, cfg: TrainConfig) -> int:
    """The most rows one construction step of ``stage`` shows the policy on ``size`` nodes:
    the first and current nodes and every node, or ``train_candidates`` (supervised)."""
    seen = cfg.train_candidates if stage.supervised and cfg.train_candidates else size
    return min(seen, size) + 2


def activation_bytes(stage: Stage, size: int, cfg: TrainConfig) -> int:
    """Estimated activations a training step of ``stage`` on ``size`` nodes keeps for backward:
    a whole rollout per row (``size`` steps over ``size / 2 + 2`` rows on average, fewer with
    candidate sets), or a supervised ``window`` of steps of at most :func:`step_rows` rows."""
    rollouts = stage.batch * (1 if stage.teacher else stage.rollouts)
    rows = step_rows(stage, size, cfg)
    steps, mean_rows = ((min(size, cfg.window), rows) if stage.supervised and cfg.window
                        else (size, min(size // 2 + 2, rows)))
    per_row = ACTIVATION_BYTES_PER_ROW * (2 if cfg.precision == "fp32" else 1)
    return rollouts * steps * mean_rows * per_row


# What a run's state (last.pt, or its compact copy) holds for --resume (a policy checkpoint
# lacks it), and the settings a resumed run may change (resources, not what it learns from).
RESUME_STATE = {"train": dict, "step": int, "instances": int, "elapsed": float,
                "best_gap": float}  # and the optimizer's, but for a compact state
RESUME_FREE = ("run_dir", "init", "threads", "device", "precision", "compile", "activation_gb",
               "checkpoint_every", "log_every", "label_jobs")


def stage_shapes(curriculum: str) -> list[tuple[Any, ...]]:
    """A curriculum without its step counts: what a resumed run must keep (it may train
    longer)."""
    return [(s.low, s.size, s.batch, s.rollouts, s.imitation, s.supervised)
            for s in Stage.parse_list(curriculum)]


def step_bytes(stage: Stage, cfg: TrainConfig) -> int:
    """Peak memory of one step of ``stage``: the activations kept for backward (no more than
    ``activation_gb``, above which they are recomputed) and one construction step's pairwise
    tensors over every rollout."""
    rollouts = stage.batch * (1 if stage.teacher else stage.rollouts)
    kept = min(activation_bytes(stage, stage.size, cfg), int(cfg.activation_gb * 2**30))
    return kept + 32 * rollouts * step_rows(stage, stage.size, cfg) ** 2


class Trainer:
    """Owns model, optimizer and run folder; :meth:`run` trains until the curriculum ends."""

    def __init__(self, cfg: TrainConfig, resume: bool = False, progress: bool = True):
        device = resolve_device(cfg.device)
        cfg = replace(cfg, device=device,
                      precision=resolve_precision(cfg.precision, device, BF16_ON_CPU))
        if cfg.distribution not in DISTRIBUTIONS:
            raise ValueError(f"distribution must be one of {', '.join(DISTRIBUTIONS)}")
        for stage in cfg.curriculum:
            require_memory(step_bytes(stage, cfg), f"a training step of {stage.batch:,} "
                           f"instances x {stage.rollouts:,} rollouts on {stage.size:,} nodes")
        self.cfg = cfg
        self.rank, self.world = distributed.setup(cfg.device)
        if cfg.threads:
            torch.set_num_threads(cfg.threads)
        torch.manual_seed(cfg.seed)
        self.model = MiLoop(MiLoopConfig(problem=cfg.problem, layers=cfg.layers,
                                         fusion=cfg.fusion, gated=cfg.gated,
                                         memory=cfg.memory)).to(cfg.device)
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=cfg.lr,
                                           weight_decay=cfg.weight_decay)
        self.step = 0
        self.instances = 0
        self.elapsed = 0.0  # wall seconds of training steps
        self.cpu_seconds = 0.0  # CPU seconds of this process in training steps (curves in CPU-h)
        self.best_gap = math.inf
        self.best_reference: str | None = None  # the validation references best_gap is against
        self.run_dir = Path(cfg.run_dir)
        self.progress = progress and self.rank == 0
        last, small = self.run_dir / "last.pt", self.run_dir / checkpoint.COMPACT
        self.rewarm_from = 0  # the step a fresh optimizer started at (its learning-rate ramp)
        architecture = self.model.config.to_dict()
        if resume and (last.exists() or small.exists()):
            path = last if last.exists() else small
            state = checkpoint.load(path, KIND, cfg.device, expect=architecture,
                                    needs=RESUME_STATE)
            checkpoint.check_resume(state["train"], cfg.to_dict(), RESUME_FREE, path,
                                    {"curriculum": stage_shapes})
            self.restore(state)
            if self.rank == 0:  # the steps after the checkpoint are trained and logged again
                runlog.rewind(self.run_dir / "log.jsonl", self.step)
        elif cfg.init:
            self.model.load_state_dict(load_policy(cfg.init, cfg.device, architecture).state_dict())
        if self.world > 1:
            distributed.broadcast_parameters(self.model)
        self.validation: tuple[dict[str, torch.Tensor], torch.Tensor] | None = None
        self.pools: dict[int, LabelPool] = {}

    # ----------------------------------------------------------------- state
    def state(self) -> dict[str, Any]:
        return {"kind": KIND, "config": self.model.config.to_dict(), "train": self.cfg.to_dict(),
                "model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
                "step": self.step, "instances": self.instances, "elapsed": self.elapsed,
                "cpu_seconds": self.cpu_seconds, "best_gap": self.best_gap,
                "best_reference": self.best_reference}

    def restore(self, state: dict[str, Any]) -> None:
        """Continue from a full state (``last.pt``) or a compact one (:func:`checkpoint.compact`:
        bfloat16 weights, a fresh optimizer re-warmed over :data:`REWARM_STEPS` steps)."""
        self.model.load_state_dict({k: v.float() if v.is_floating_point() else v
                                    for k, v in state["model"].items()})
        if "optimizer" in state:
            self.optimizer.load_state_dict(state["optimizer"])
        else:
            self.rewarm_from = int(state["step"])
        self.step = int(state["step"])
        self.instances = int(state["instances"])
        self.elapsed = float(state["elapsed"])
        self.cpu_seconds = float(state.get("cpu_seconds", math.nan))  # unknown before it was kept
        self.best_gap = float(state["best_gap"])
        self.best_reference = state.get("best_reference")

    def save(self) -> None:
        """``last.pt`` (everything, for this machine) and its compact copy (what a run folder
        commits so the run outlives the machine)."""
        if self.rank == 0:
            state = self.state()
            checkpoint.save(state, self.run_dir / "last.pt")
            checkpoint.save(checkpoint.compact(state), self.run_dir / checkpoint.COMPACT)

    def log(self, record: dict[str, Any]) -> None:
        if self.rank != 0:
            return
        runlog.append(self.run_dir / "log.jsonl", record)

    # ------------------------------------------------------------ learning
    def learning_rate(self) -> float:
        """The rate of the step about to be taken: ``lr``, ramped linearly over the first
        ``warmup_steps`` steps of the run (and over the first :data:`REWARM_STEPS` or
        ``warmup_steps`` after a resume from a compact state, whose optimizer starts afresh),
        x0.1 after ``decay_at`` of all steps."""
        decayed = self.step >= int(self.cfg.decay_at * self.cfg.total_steps)
        warmup = max(self.cfg.warmup_steps, REWARM_STEPS if self.rewarm_from else 0)
        ramp = min(1.0, (self.step - self.rewarm_from + 1) / warmup) if warmup else 1.0
        return self.cfg.lr * ramp * (0.1 if decayed else 1.0)

    def train_step(self) -> dict[str, float]:
        cfg = self.cfg
        stage = cfg.stage_at(self.step)
        seed = int(np.random.SeedSequence([cfg.seed, self.step, self.rank]).generate_state(1)[0])
        generator = torch.Generator().manual_seed(seed)
        rng = np.random.default_rng(seed)
        size = stage.sizes[int(rng.integers(len(stage.sizes)))] if stage.low else stage.size
        self.model.train()
        run = partial(rollout, self.model, precision=cfg.precision,
                      recompute=activation_bytes(stage, size, cfg) > cfg.activation_gb * 2**30)
        outside = 0.0  # share of the trained label decisions outside the candidate sets
        if stage.supervised:
            pool = self.pool(size)
            data, labels = pool.sample(rng.choice(len(pool), stage.batch), rng, cfg.device)
            start, end = trained_steps(label_decisions(cfg.problem, labels), cfg.window, rng)
            result = run(label_env(cfg.problem, data, labels, cfg.train_candidates),
                         replay=labels, grad_from=start, until=end,
                         replay_sets=self.target_sets(data, labels))
            loss = -result.log_prob.sum() / result.decisions.sum().clamp_min(1)
            outside = float(result.outside.sum() / (result.outside + result.decisions).sum()
                            .clamp_min(1))
            cost = result.cost if end is None else path_length(data["locs"], labels)
            log_prob, cost, k = result.log_prob.detach()[:, None], cost[:, None], 1
        elif stage.imitation:
            data = sample_batch(cfg.problem, size, stage.batch, seed, cfg.device,
                                cfg.kp_capacities[self.step % len(cfg.kp_capacities)],
                                cfg.distribution)
            raw = {k: v.cpu().numpy() for k, v in data.items()}
            labels = reference_actions(cfg.problem, raw, cfg.label_time_limit, generator)
            labels = labels.to(cfg.device)
            env = label_env(cfg.problem, data, labels)
            result = run(env, replay=labels, replay_sets=self.target_sets(data, labels))
            decisions = labels.shape[1] - (not isinstance(env, KPEnv))  # routing: + start node
            loss = -result.log_prob.mean() / decisions
            log_prob, cost, k = result.log_prob.detach()[:, None], result.cost[:, None], 1
        else:
            data = sample_batch(cfg.problem, size, stage.batch, seed, cfg.device,
                                cfg.kp_capacities[self.step % len(cfg.kp_capacities)],
                                cfg.distribution)
            env, forced, k = expand_rollouts(cfg.problem, data, stage.rollouts, generator)
            result = run(env, "sample", first_action=forced,
                         generator=generator if cfg.device == "cpu" else None)
            log_prob = result.log_prob.view(stage.batch, k)
            cost = result.cost.view(stage.batch, k)
            loss = policy_loss(cfg.loss, log_prob, cost, cfg.beta)
        for group in self.optimizer.param_groups:
            group["lr"] = self.learning_rate()
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if self.world > 1:
            distributed.average_gradients(self.model.parameters(), self.world)
        grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), cfg.grad_clip)
        self.optimizer.step()
        self.step += 1
        self.instances += stage.batch * self.world
        stats = {"loss": float(loss.detach()), "cost": float(cost.mean()),
                 "best_cost": float(cost.min(1).values.mean()),
                 "pair_acc": pair_accuracy(log_prob.detach(), cost) if k > 1 else float("nan"),
                 "grad_norm": float(grad_norm), "size": size}
        if cfg.train_candidates:
            stats["label_outside"] = outside
        return stats

    def target_sets(self, data: dict[str, torch.Tensor], labels: torch.Tensor
                    ) -> torch.Tensor | None:
        """The actions a teacher-forced step counts as right (``targets``): the label's alone,
        or every action as good as it (:func:`routecli.miloop.labels.equivalent_actions`)."""
        if self.cfg.targets == "label":
            return None
        return equivalent_actions(self.cfg.problem, labels, data["locs"].shape[1])

    def pool(self, size: int) -> LabelPool:
        """The labels of ``size``: every instance of its :class:`LabelStore`, at least
        ``label_instances`` (rank 0 labels the missing ones with ``label_jobs`` processes
        while the other ranks wait)."""
        if size not in self.pools:
            cfg = self.cfg
            store = LabelStore(Path(cfg.labels), cfg.problem, cfg.distribution, size,
                               pyvrp_budget(cfg.label_time_limit), labeller=cfg.labeller)
            if self.rank == 0:
                self.pools[size] = store.ensure(cfg.label_instances, cfg.label_jobs,
                                                self.progress)
            if self.world > 1:
                distributed.barrier()
            if self.rank != 0:
                self.pools[size] = store.load()
        return self.pools[size]

    # ---------------------------------------------------------- validation
    def validate(self, model: MiLoop | None = None) -> dict[str, float]:
        """Greedy validation gap (%) of ``model`` (default: the one in training) against cached
        PyVRP references on a fixed set."""
        from routecli.miloop.decode import decode

        if self.validation is None:
            self.validation = validation_set(self.cfg)
        data, reference = self.validation
        started = time.perf_counter()
        result = decode((model or self.model).eval(),
                        {k: v.to(self.cfg.device) for k, v in data.items()}, "greedy",
                        precision=self.cfg.precision)
        gaps = gap(result.cost.cpu(), reference)  # KP costs: -values
        return {"val_gap": float(gaps.mean()), "val_cost": float(result.cost.mean()),
                "val_seconds": time.perf_counter() - started}

    def rebase_best(self) -> None:
        """Measure ``best.pt`` against the current validation references when ``best_gap`` was
        measured against others (a run resumed from before references had an iteration budget,
        or with another ``val_time_limit``), so that only a better model replaces it."""
        key = pyvrp_budget(self.cfg.val_time_limit).key
        if self.best_reference == key:
            return
        best = self.run_dir / "best.pt"
        previous = self.best_gap
        self.best_gap = self.validate(load_policy(best, self.cfg.device))["val_gap"] \
            if best.exists() and math.isfinite(previous) else math.inf
        self.best_reference = key
        self.log({"event": "validation references", "step": self.step, "references": key,
                  "best_gap_before": previous, "best_gap": self.best_gap})

    def cpu_record(self) -> dict[str, float]:
        """``cpu_seconds`` for a log record; absent for a run resumed from a checkpoint that
        did not keep it (JSON has no NaN)."""
        return {} if math.isnan(self.cpu_seconds) else {"cpu_seconds": round(self.cpu_seconds, 1)}

    # ----------------------------------------------------------------- loop
    def run(self, until_step: int | None = None,
            time_limit: float | None = None) -> StopReason | None:
        """Train to the end of the curriculum (or to ``until_step``), then save ``last.pt``.
        A SIGINT or SIGTERM, or ``time_limit`` wall seconds, stops it after the step in
        progress (still saving ``last.pt``); returns why it stopped early, if it did."""
        cfg = self.cfg
        total = cfg.total_steps if until_step is None else min(until_step, cfg.total_steps)
        bar = ProgressLine(total, enabled=self.progress)
        self.log({"event": "start" if self.step == 0 else "resume", "step": self.step,
                  "train": cfg.to_dict(), "world": self.world})
        stop = TrainingStop(time_limit, self.world)
        with stop, fused.compiled(cfg.compile):
            reason = self._loop(total, bar, stop)
        self.save()
        bar.close()
        if reason is not None:
            self.log({"event": "stop", "step": self.step, "reason": str(reason)})
        return reason

    def _loop(self, total: int, bar: ProgressLine, stop: TrainingStop) -> StopReason | None:
        cfg = self.cfg
        last_save = time.perf_counter()
        window: list[dict[str, float]] = []
        window_start = time.perf_counter()
        if cfg.compile and self.step < total and str(cfg.device).startswith("cpu"):
            bar.say(COMPILE_NOTE)
        while self.step < total:
            if (reason := stop.reason()) is not None:
                return reason
            tick, cpu_tick = time.perf_counter(), time.process_time()
            stats = self.train_step()
            self.elapsed += time.perf_counter() - tick
            self.cpu_seconds += time.process_time() - cpu_tick
            window.append(stats)
            if self.step % cfg.log_every == 0 or self.step == total:
                seconds = time.perf_counter() - window_start
                stage = cfg.stage_at(self.step - 1)
                record = {"step": self.step, "instances": self.instances,
                          "elapsed": round(self.elapsed, 1), **self.cpu_record(),
                          "inst_per_s": round(len(window) * stage.batch * self.world / seconds, 2),
                          "lr": self.learning_rate(),
                          **{k: round(float(np.mean([w[k] for w in window])), 5)
                             for k in window[0]}}
                self.log(record)
                bar.update(self.step, record)
                window, window_start = [], time.perf_counter()
            if self.rank == 0 and (self.step % cfg.val_every == 0 or self.step == total):
                self.rebase_best()
                val = self.validate()
                record = {"step": self.step, "instances": self.instances,
                          "elapsed": round(self.elapsed, 1), **self.cpu_record(), **val}
                self.log(record)
                bar.note(record)
                self.pools.clear()  # re-read the label stores: they may have grown meanwhile
                if val["val_gap"] < self.best_gap:
                    self.best_gap = val["val_gap"]
                    checkpoint.save(to_checkpoint(
                        self.model, {"step": self.step, "val_gap": val["val_gap"]}),
                        self.run_dir / "best.pt")
            if time.perf_counter() - last_save > cfg.checkpoint_every:
                self.save()
                last_save = time.perf_counter()
        return None


def pyvrp_budget(seconds: float) -> ReferenceBudget:
    """The iteration budget of ``seconds`` nominal PyVRP seconds
    (:data:`PYVRP_ITERATIONS_PER_SECOND`)."""
    from routecli.baselines.reference import ReferenceBudget

    iterations = max(1, round(seconds * PYVRP_ITERATIONS_PER_SECOND))
    return ReferenceBudget(iterations=iterations, no_improvement=iterations)


def reference_actions(problem: str, raw: dict[str, np.ndarray], time_limit: float,
                      generator: torch.Generator) -> torch.Tensor:
    """PyVRP solutions of a batch (``time_limit`` nominal seconds each, see
    :func:`pyvrp_budget`), or optimal knapsacks, as node sequences ``[B, T]`` for teacher
    forcing.

    Routing solutions are randomised as :func:`routecli.miloop.labels.label_sequences` says; a
    knapsack's optimal items come by decreasing value density, padded with the no-op id N.
    """
    if problem == "kp":
        return optimal_item_sequences(raw)
    from routecli.baselines.reference import reference_solutions
    from routecli.generate import batch_instances

    solutions = reference_solutions(batch_instances(problem, raw), pyvrp_budget(time_limit),
                                    progress=False)
    rng = np.random.default_rng(int(torch.randint(0, 2**31, (1,), generator=generator)))
    return label_sequences(problem, solutions, rng)


def optimal_item_sequences(raw: dict[str, np.ndarray]) -> torch.Tensor:
    """``[B, T]`` each knapsack's optimal items by decreasing value density (no-op id N after)."""
    from routecli.baselines.knapsack import optimum

    items = raw["weights"].shape[1]
    sequences = []
    for w, v, c in zip(raw["weights"].astype(np.float64), raw["values"].astype(np.float64),
                       raw["capacity"], strict=True):
        chosen, _ = optimum(w, v, float(c))
        sequences.append(chosen[np.argsort(-v[chosen] / w[chosen], kind="stable")])
    out = np.full((len(sequences), max(len(s) for s in sequences)), items, np.int64)
    for i, seq in enumerate(sequences):
        out[i, :len(seq)] = seq
    return torch.as_tensor(out)


def validation_batch(cfg: TrainConfig) -> dict[str, np.ndarray]:
    """The fixed validation instances (KP: capacities cycling through
    :data:`KP_VALIDATION_CAPACITIES`)."""
    if cfg.problem != "kp":
        return generate.GENERATORS[cfg.problem](cfg.val_instances, cfg.val_size, cfg.val_seed)
    raw = generate.kp(cfg.val_instances, cfg.val_size, cfg.val_seed)
    raw["capacity"] = np.resize(np.asarray(KP_VALIDATION_CAPACITIES), cfg.val_instances)
    for key in ("weights", "values"):  # the numbers the policy sees (float32), exactly
        raw[key] = raw[key].astype(np.float32).astype(np.float64)
    return raw


def validation_set(cfg: TrainConfig) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
    """The fixed validation instances and their reference costs ``[V]`` (PyVRP; KP: the
    negated optimal values)."""
    from routecli.baselines.reference import reference_solutions
    from routecli.generate import batch_instances
    from routecli.problems import cost

    raw = validation_batch(cfg)
    instances = batch_instances(cfg.problem, raw)
    if cfg.problem == "kp":
        labels = optimal_item_sequences(raw).numpy()
        solutions: list[Tour | Routes | Selection] = [Selection(seq[seq < cfg.val_size])
                                                      for seq in labels]
    else:
        solutions = list(reference_solutions(instances, pyvrp_budget(cfg.val_time_limit),
                                             jobs=cfg.label_jobs, progress=False))
    sign = -1.0 if cfg.problem == "kp" else 1.0
    reference = torch.tensor([sign * cost(inst, sol) for inst, sol in zip(instances, solutions)],
                             dtype=torch.float32)
    data = {k: torch.as_tensor(v, dtype=torch.float32 if k != "demand" else torch.long)
            for k, v in raw.items()}
    return data, reference


# What the first steps of a compiled run wait for (benchmarks/results/train_compile_wait.md).
COMPILE_NOTE = ("compiling the fused kernels before the first step (in every process, --resume "
                "too: 15 s or more, over a minute the first time; --no-compile skips it)")


class ProgressLine:
    """A rich progress bar on a terminal; plain lines when the output is a log file."""

    def __init__(self, total: int, enabled: bool):
        self.enabled = enabled
        self.tty = enabled and sys.stdout.isatty()
        self.progress = None
        if self.tty:
            from rich.progress import Progress

            self.progress = Progress()
            self.task = self.progress.add_task("training", total=total)
            self.progress.start()

    def update(self, step: int, record: dict[str, Any]) -> None:
        if not self.enabled:
            return
        text = (f"step {step} size {record['size']} loss {record['loss']:.4f} "
                f"cost {record['cost']:.3f} {record['inst_per_s']} inst/s")
        if self.progress is not None:
            self.progress.update(self.task, completed=step, description=text)
        else:
            print(text, flush=True)

    def note(self, record: dict[str, Any]) -> None:
        self.say(f"step {record['step']} validation gap {record['val_gap']:.2f}%")

    def say(self, text: str) -> None:
        if not self.enabled:
            return
        if self.progress is not None:
            self.progress.console.print(text)
        else:
            print(text, flush=True)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()
