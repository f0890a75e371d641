"""MiLoop ablations (MiLoop Tables 4-5) on a scaled protocol: each variant is trained from
scratch on the same instance stream for the same CPU budget (spent by the first seed; the
other seeds train as many steps as it reached, so that machines of different speed train them
alike), then decoded greedily on fixed test sets of the training size and larger ones (the
paper: TSP100, 1K, 10K).

Variants (:data:`VARIANTS`) switch the components of :class:`routecli.miloop.model.MiLoopConfig`
and the training loss: ``no-update`` keeps the fusion and drops the gate (the memory becomes
the new representation; Table 4's "MiLoop fusion only"), ``no-fusion`` keeps the gated memory
but feeds the embedding alone to attention, ``no-memory`` is a plain dynamic embedding (3 or 6
layers), ``reinforce`` trains the full model with REINFORCE instead of DPO. Table 4's RSE row
(Rec-NCO's residual recurrent state embedding) is a different architecture and is not built.

A run folder per (variant, seed) resumes training from its ``last.pt``; test results go to
the caller's result store (``benchmarks/miloop_ablation.py``: the shared result log, keyed by
variant, seed, test set and settings), so an interrupted study continues where it stopped.
:func:`summarize` gives per variant and test size the mean gap over seeds, its standard
deviation, and the difference from ``full`` with the standard error of that difference
(``|diff| > 2 se``: the budget separates them).
"""

from __future__ import annotations

import json
import math
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from routecli.errors import OptionError
from routecli.miloop.options import Loss


@dataclass(frozen=True)
class Variant:
    """One ablation: the switches of :class:`~routecli.miloop.model.MiLoopConfig` and the
    training loss."""

    fusion: bool = True  # memory fusion before attention (Eq. 4)
    gated: bool = True  # gated memory update (Eq. 6-7)
    memory: bool = True  # memory carried across steps at all
    layers: int = 3
    loss: Loss = "dpo"


VARIANTS: dict[str, Variant] = {
    "full": Variant(),
    "no-update": Variant(gated=False),
    "no-fusion": Variant(fusion=False),
    "no-memory": Variant(fusion=False, gated=False, memory=False),
    "no-memory-6": Variant(fusion=False, gated=False, memory=False, layers=6),
    "reinforce": Variant(loss="reinforce"),
}

# MiLoop Table 5 (greedy): variant -> test set -> (Obj., Gap %)
PAPER_TABLE5: dict[str, dict[str, tuple[float, float]]] = {
    "no-update": {"TSP100": (7.85, 1.17), "TSP1K": (23.79, 2.90), "TSP10K": (74.24, 3.43)},
    "no-fusion": {"TSP100": (7.90, 1.79), "TSP1K": (24.95, 7.93), "TSP10K": (78.86, 9.98)},
    "no-memory": {"TSP100": (7.88, 1.61), "TSP1K": (24.64, 6.59), "TSP10K": (75.82, 5.63)},
    "no-memory-6": {"TSP100": (7.85, 1.18), "TSP1K": (24.45, 5.78), "TSP10K": (74.93, 4.39)},
    "reinforce": {"TSP100": (7.86, 1.26), "TSP1K": (24.23, 4.81), "TSP10K": (74.85, 4.28)},
    "full": {"TSP100": (7.82, 0.84), "TSP1K": (23.56, 1.90), "TSP10K": (73.62, 2.56)},
}
# MiLoop Table 4 (gap %): the RSE row has no variant here
PAPER_TABLE4: dict[str, dict[str, float]] = {
    "RSE (Rec-NCO)": {"TSP100": 0.88, "TSP1K": 9.17},
    "no-update": {"TSP100": 1.17, "TSP1K": 2.90},
    "full": {"TSP100": 0.84, "TSP1K": 1.90},
}
PAPER_SETS = ("TSP100", "TSP1K", "TSP10K")  # the paper's test sets, in order of size


@dataclass(frozen=True)
class Protocol:
    """What every (variant, seed) shares: training on ``train_size``-node TSP instances, ``batch``
    instances x ``rollouts`` starts per step, until ``cpu_minutes`` of CPU time of training
    steps (checked every ``chunk`` steps, each ending with a validation on ``val_instances``);
    testing on ``test_num`` instances of each of ``test_sizes`` (seed ``test_seed``)."""

    train_size: int = 20
    batch: int = 8
    rollouts: int = 20
    lr: float = 3e-4
    cpu_minutes: float = 30.0
    chunk: int = 50
    val_instances: int = 64
    test_sizes: tuple[int, ...] = (20, 50, 100)
    test_num: int = 128
    test_seed: int = 2026
    max_steps: int = 1_000_000  # the curriculum's length: the CPU budget ends a run first

    def __post_init__(self) -> None:
        if min(self.train_size, self.batch, self.chunk, self.val_instances, self.test_num,
               *self.test_sizes) < 1 or self.rollouts < 2 or not self.cpu_minutes > 0:
            raise OptionError(f"ablation protocol needs positive sizes and budgets and >= 2 "
                              f"rollouts, got {self}")

    def settings(self, name: str) -> str:
        """The JSON a result row records: the variant and the protocol."""
        return json.dumps({"variant": name, **asdict(VARIANTS[name]), **asdict(self)},
                          sort_keys=True)


def parse_variants(text: str) -> list[str]:
    names = list(VARIANTS) if text.strip() == "all" else \
        [v.strip() for v in text.split(",") if v.strip()]
    unknown = [v for v in names if v not in VARIANTS]
    if unknown or not names:
        raise OptionError(f"unknown variant {unknown[0] if unknown else text!r}; choose 'all' "
                          f"or from {', '.join(VARIANTS)}")
    return names


def train_config(name: str, seed: int, protocol: Protocol, folder: Path, threads: int = 1,
                 compile: bool = True) -> Any:
    """The :class:`routecli.miloop.train.TrainConfig` of (variant ``name``, ``seed``): one
    DPO (or REINFORCE) stage at a constant learning rate, validated at its own size."""
    from routecli.miloop.train import Stage, TrainConfig

    variant = VARIANTS[name]
    stage = Stage(protocol.train_size, protocol.max_steps, protocol.batch, protocol.rollouts)
    return TrainConfig(problem="tsp", run_dir=str(folder), curriculum=[stage],
                       loss=variant.loss, lr=protocol.lr, decay_at=1.0, seed=seed,
                       val_size=protocol.train_size, val_instances=protocol.val_instances,
                       val_every=protocol.chunk, log_every=protocol.chunk,
                       checkpoint_every=math.inf, threads=threads, compile=compile,
                       layers=variant.layers, fusion=variant.fusion, gated=variant.gated,
                       memory=variant.memory)


def train_variant(name: str, seed: int, protocol: Protocol, folder: Path, threads: int = 1,
                  compile: bool = True, progress: bool = False, steps: int | None = None
                  ) -> dict[str, float]:
    """Train (or resume) (variant, seed) in ``folder`` until the CPU budget is spent, or, with
    ``steps``, until that step; returns its steps and CPU seconds."""
    from routecli.miloop.train import Trainer

    cfg = train_config(name, seed, protocol, folder, threads, compile)
    trainer = Trainer(cfg, resume=(folder / "last.pt").exists(), progress=progress)
    budget = 60.0 * protocol.cpu_minutes
    while (trainer.step < steps if steps is not None
           else trainer.cpu_seconds < budget):  # NaN (a run that did not keep it) stops
        until = trainer.step + protocol.chunk
        if trainer.run(until_step=until if steps is None else min(until, steps)) is not None:
            raise KeyboardInterrupt  # SIGINT/SIGTERM: last.pt is saved; the study resumes there
    return {"steps": trainer.step, "cpu_seconds": trainer.cpu_seconds}


def budget_steps(logs: Path, name: str, first_seed: int) -> int | None:
    """The steps the first seed of variant ``name`` took to spend the CPU budget (the last step
    of its log copied to ``logs``), or None while it has not run. The CPU budget is spent once
    per variant; the other seeds train that many steps, so a seed that runs on another machine
    (a CPU with or without native bfloat16 differs several-fold in speed) trains as much."""
    log = logs / f"{name}-s{first_seed}.jsonl"
    if not log.is_file():
        return None
    steps = [json.loads(line).get("step", 0) for line in log.read_text().splitlines() if line]
    return int(max(steps, default=0)) or None


def set_name(size: int, protocol: Protocol) -> str:
    return f"tsp-{size} s{protocol.test_seed}"


def evaluate_variant(weights: Path, size: int, protocol: Protocol, jobs: int = 1
                     ) -> tuple[np.ndarray, np.ndarray, float]:
    """Greedy costs of the policy in ``weights`` on the test set of ``size``, the PyVRP
    reference costs (cached) and the decoding seconds."""
    import torch

    from routecli import generate
    from routecli.baselines.reference import reference_solutions
    from routecli.miloop.decode import decode
    from routecli.miloop.model import load_policy
    from routecli.problems import cost

    raw = generate.tsp(protocol.test_num, size, protocol.test_seed)
    instances = generate.batch_instances("tsp", raw)
    reference = np.array([cost(i, s) for i, s in zip(
        instances, reference_solutions(instances, jobs=jobs, progress=False), strict=True)])
    started = time.perf_counter()
    result = decode(load_policy(weights), {"locs": torch.as_tensor(raw["locs"],
                                                                     dtype=torch.float32)})
    return result.cost.double().numpy(), reference, time.perf_counter() - started


@dataclass(frozen=True)
class Evaluation:
    """One trained (variant, seed) decoded on the test set of ``size``: per-instance costs and
    PyVRP reference costs, decoding seconds, and what its training took."""

    variant: str
    seed: int
    size: int
    costs: np.ndarray
    reference: np.ndarray
    seconds: float
    train_steps: int
    train_cpu_seconds: float

    @property
    def gaps(self) -> np.ndarray:
        from routecli.problems import gap

        return gap(self.costs, self.reference)


def run_study(names: list[str], seeds: list[int], protocol: Protocol, runs: Path, logs: Path,
              is_done: Callable[[str, int, int], bool], record: Callable[[Evaluation], None],
              threads: int = 1, compile: bool = True, jobs: int = 1,
              log: Callable[[str], None] = print) -> None:
    """Train and test every (variant, seed, test size) that ``is_done`` does not report done,
    seed by seed (an interrupted study has every variant on its first seeds), handing each
    test result to ``record`` (the caller's result store). Run folders are ``runs/<variant>-
    s<seed>``; each trained run's ``log.jsonl`` is copied to ``logs/`` for the learning
    curves."""
    for seed in seeds:
        for name in names:
            missing = [size for size in protocol.test_sizes if not is_done(name, seed, size)]
            if not missing:
                continue
            folder = runs / f"{name}-s{seed}"
            steps = None if seed == seeds[0] else budget_steps(logs, name, seeds[0])
            trained = train_variant(name, seed, protocol, folder, threads, compile, steps=steps)
            log(f"{name} seed {seed}: trained {trained['steps']:.0f} steps, "
                f"{trained['cpu_seconds'] / 60:.1f} CPU-min")
            logs.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(folder / "log.jsonl", logs / f"{name}-s{seed}.jsonl")
            for size in missing:
                costs, reference, seconds = evaluate_variant(folder / "last.pt", size,
                                                             protocol, jobs)
                result = Evaluation(name, seed, size, costs, reference, seconds,
                                    int(trained["steps"]), trained["cpu_seconds"])
                record(result)
                log(f"{name} seed {seed} TSP-{size}: gap {result.gaps.mean():.2f}%")


@dataclass(frozen=True)
class Cell:
    """One variant on one test size: mean gap (%) over seeds, its standard deviation, and the
    difference from ``full`` with the standard error of the difference."""

    seeds: int
    obj: float
    gap: float
    gap_sd: float
    diff: float
    diff_se: float


def seed_gaps(rows: list[dict[str, str]]) -> dict[tuple[str, int, int], tuple[float, float]]:
    """``(variant, seed, size) -> (mean objective, mean gap %)`` over the test instances of
    result rows (``solver`` = variant, ``seed``, ``n``, ``cost``, ``gap_pct``)."""
    groups: dict[tuple[str, int, int], list[tuple[float, float]]] = {}
    for r in rows:
        key = (r["solver"], int(r["seed"]), int(r["n"]))
        groups.setdefault(key, []).append((float(r["cost"]), float(r["gap_pct"])))
    return {k: (float(np.mean([v[0] for v in vs])), float(np.mean([v[1] for v in vs])))
            for k, vs in groups.items()}


def _sd(values: list[float]) -> float:
    return float(np.std(values, ddof=1)) if len(values) > 1 else math.nan


def summarize(rows: list[dict[str, str]]) -> dict[str, dict[int, Cell]]:
    """``{variant: {test size: Cell}}`` from result rows."""
    per_seed = seed_gaps(rows)
    out: dict[str, dict[int, Cell]] = {}
    for name in dict.fromkeys(k[0] for k in per_seed):
        cells = {}
        for size in sorted({k[2] for k in per_seed if k[0] == name}):
            mine = [v for k, v in per_seed.items() if k[0] == name and k[2] == size]
            full = [v[1] for k, v in per_seed.items() if k[0] == "full" and k[2] == size]
            gaps = [v[1] for v in mine]
            gap, sd = float(np.mean(gaps)), _sd(gaps)
            diff = gap - float(np.mean(full)) if full else math.nan
            diff_se = math.hypot(sd / math.sqrt(len(gaps)), _sd(full) / math.sqrt(len(full))) \
                if full and name != "full" else math.nan
            cells[size] = Cell(len(gaps), float(np.mean([v[0] for v in mine])), gap, sd,
                               diff if name != "full" else math.nan, diff_se)
        out[name] = cells
    return out


def _fmt(value: float, digits: int = 2) -> str:
    return "-" if math.isnan(value) else f"{value:.{digits}f}"


def markdown(summary: dict[str, dict[int, Cell]], protocol: Protocol, command: str) -> str:
    """Table 5's layout (components, layers, loss; per test size Obj. (Gap)), ours with the
    seed spread and the difference from ``full``, the paper's row beside (its test set of
    the same rank: TSP100, TSP1K, TSP10K)."""
    sizes = sorted({s for cells in summary.values() for s in cells})
    head = "| Fusion | Update | Looped | Layers | Train | variant | " + " | ".join(
        f"TSP-{s}: Obj. (Gap %) ± sd | diff vs full ± se | paper "
        f"{PAPER_SETS[k] if k < len(PAPER_SETS) else '-'}" for k, s in enumerate(sizes)) + " |"
    lines = [head, "|" + "---|" * (6 + 3 * len(sizes))]
    mark = {True: "✓", False: "×"}
    for name in VARIANTS:
        if name not in summary:
            continue
        v = VARIANTS[name]
        cells = []
        for k, size in enumerate(sizes):
            c = summary[name].get(size)
            paper = PAPER_TABLE5[name].get(PAPER_SETS[k]) if k < len(PAPER_SETS) else None
            ours = "-" if c is None else \
                f"{_fmt(c.obj, 3)} ({_fmt(c.gap)} ± {_fmt(c.gap_sd)}, {c.seeds} seeds)"
            diff = "-" if c is None or math.isnan(c.diff) else \
                f"{c.diff:+.2f} ± {_fmt(c.diff_se)}"
            cells += [ours, diff, "-" if paper is None else f"{paper[0]:.2f} ({paper[1]:.2f}%)"]
        lines.append(f"| {mark[v.fusion and v.memory]} | {mark[v.gated and v.memory]} | "
                     f"{mark[v.memory]} | {v.layers} | {v.loss.upper()} | {name} | "
                     + " | ".join(cells) + " |")
    return (f"TSP, trained on TSP-{protocol.train_size} ({protocol.batch} instances x "
            f"{protocol.rollouts} rollouts per step, lr {protocol.lr:g}) for "
            f"{protocol.cpu_minutes:g} CPU-minutes (the first seed of each variant; the other "
            f"seeds as many steps as it reached); greedy decoding of "
            f"{protocol.test_num} test instances per size (seed {protocol.test_seed}); gap to "
            f"PyVRP. ± sd: over seeds; diff ± se: mean gap minus full's, with the standard "
            f"error of the difference.\n\n" + "\n".join(lines) + f"\n\n```sh\n{command}\n```\n")


def curves(logs: Path) -> dict[str, list[tuple[list[float], list[float]]]]:
    """Validation gap against training CPU-minutes per variant, one curve per seed, from the
    ``<variant>-s<seed>.jsonl`` logs in ``logs``."""
    out: dict[str, list[tuple[list[float], list[float]]]] = {}
    for path in sorted(logs.glob("*.jsonl")):
        name = path.stem.rpartition("-s")[0]
        points = [(r["cpu_seconds"] / 60, r["val_gap"]) for r in map(json.loads, path.open())
                  if "val_gap" in r and "cpu_seconds" in r]
        out.setdefault(name, []).append(([p[0] for p in points], [p[1] for p in points]))
    return out


def plot_curves(logs: Path, path: Path) -> None:
    """Learning curves of :func:`curves`, one colour per variant, one line per seed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from routecli.plots.figure import save_png

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for k, (name, lines) in enumerate(curves(logs).items()):
        for j, (xs, ys) in enumerate(lines):
            ax.plot(xs, ys, "-", color=f"C{k}", lw=1.2, alpha=0.8, label=name if j == 0 else None)
    ax.set_xlabel("training CPU-minutes")
    ax.set_ylabel("greedy validation gap %")
    ax.set_yscale("log")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    save_png(fig, path, dpi=130)
