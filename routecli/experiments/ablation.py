"""MiLoop ablations (MiLoop Tables 4-5) on a scaled protocol: each variant is trained from
scratch on the same instance stream for the same number of updates (``steps``; or, with
``steps`` 0, for the CPU budget its first seed spends, the other seeds as many steps as it
reached), then decoded greedily on fixed test sets of the training size and larger ones (the
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
deviation, and the test against ``full`` of :mod:`routecli.experiments.stats`: the difference
with its 95% interval (seeds and test instances resampled), Welch's p over the per-seed gaps,
Holm-corrected over every (variant, test size) of the table, and the verdict it allows.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from routecli.atomic import atomic_write_text
from routecli.errors import OptionError
from routecli.experiments import stats
from routecli.miloop.options import Loss
from routecli.tasks import Executor, Inline, Task, run_tasks, task_key


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
    instances x ``rollouts`` starts per step, for ``steps`` updates (0: until ``cpu_minutes``
    of CPU time of training steps, checked every ``chunk`` steps, each ending with a validation
    on ``val_instances``); testing on ``test_num`` instances of each of ``test_sizes`` (seed
    ``test_seed``)."""

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
    steps: int = 0  # updates per (variant, seed); 0: the CPU budget decides

    def __post_init__(self) -> None:
        if min(self.train_size, self.batch, self.chunk, self.val_instances, self.test_num,
               *self.test_sizes) < 1 or self.rollouts < 2 or not self.cpu_minutes > 0 \
                or self.steps < 0:
            raise OptionError(f"ablation protocol needs positive sizes and budgets and >= 2 "
                              f"rollouts, got {self}")

    def settings(self, name: str) -> str:
        """The JSON a result row records: the variant and the protocol (``steps`` only when it
        is set, so rows of a CPU-budget study keep their settings)."""
        fields = asdict(self)
        if not self.steps:
            del fields["steps"]
        return json.dumps({"variant": name, **asdict(VARIANTS[name]), **fields}, sort_keys=True)


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
    reference costs (cached; computed on ``jobs`` processes when missing) and the decoding
    seconds."""
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


def train_and_test(name: str, seed: int, protocol: Protocol, folder: Path, sizes: list[int],
                   threads: int = 1, compile: bool = True, steps: int | None = None
                   ) -> tuple[list[Evaluation], str]:
    """Train (or resume) (variant ``name``, ``seed``) in ``folder`` and test it on ``sizes``
    (a task): the evaluations and the training log's text."""
    trained = train_variant(name, seed, protocol, folder, threads, compile, steps=steps)
    results = []
    for size in sizes:
        costs, reference, seconds = evaluate_variant(folder / "last.pt", size, protocol)
        results.append(Evaluation(name, seed, size, costs, reference, seconds,
                                  int(trained["steps"]), trained["cpu_seconds"]))
    return results, (folder / "log.jsonl").read_text()


def run_study(names: list[str], seeds: list[int], protocol: Protocol, runs: Path, logs: Path,
              is_done: Callable[[str, int, int], bool], record: Callable[[Evaluation], None],
              threads: int = 1, compile: bool = True, jobs: int = 1,
              log: Callable[[str], None] = print, executor: Executor | None = None) -> None:
    """Train and test every (variant, seed, test size) that ``is_done`` does not report done,
    each (variant, seed) a task on ``executor`` (default: this process), handing each test
    result to ``record`` (the caller's result store) as its task finishes. Without a step
    budget (``protocol.steps``) the first seed of every variant runs first (it spends the CPU
    budget, :func:`budget_steps`), then the other seeds; an interrupted study has every
    variant on its first seeds. Run folders are
    ``runs/<variant>-s<seed>``; each trained run's ``log.jsonl`` is copied to ``logs/`` for
    the learning curves. The PyVRP references of the test sets are computed first, on
    ``jobs`` processes."""
    from routecli import generate
    from routecli.baselines.reference import reference_solutions

    for size in protocol.test_sizes:
        raw = generate.tsp(protocol.test_num, size, protocol.test_seed)
        reference_solutions(generate.batch_instances("tsp", raw), jobs=jobs, progress=False)

    def keep(task: Task, result: tuple[list[Evaluation], str]) -> None:
        evaluations, text = result
        name, seed = task.args[0], task.args[1]
        logs.mkdir(parents=True, exist_ok=True)
        atomic_write_text(logs / f"{name}-s{seed}.jsonl", text)
        for evaluation in evaluations:
            record(evaluation)
            log(f"{name} seed {seed} TSP-{evaluation.size}: trained "
                f"{evaluation.train_steps} steps, {evaluation.train_cpu_seconds / 60:.1f} "
                f"CPU-min; gap {evaluation.gaps.mean():.2f}%")

    with executor or Inline() as engine:
        for wave in ([seeds] if protocol.steps else [[seeds[0]], seeds[1:]]):
            tasks = []
            for seed in wave:
                for name in names:
                    missing = [s for s in protocol.test_sizes if not is_done(name, seed, s)]
                    if not missing:
                        continue
                    steps = protocol.steps or (None if seed == seeds[0]
                                               else budget_steps(logs, name, seeds[0]))
                    tasks.append(Task(
                        task_key("ablation", f"{name}-s{seed}", variant=name, seed=seed,
                                 settings=protocol.settings(name), sizes=missing, steps=steps),
                        train_and_test, (name, seed, protocol, runs / f"{name}-s{seed}",
                                         missing, threads, compile, steps)))
            run_tasks(tasks, engine, keep)


@dataclass(frozen=True)
class Cell:
    """One variant on one test size: mean objective and gap (%) over seeds, the gap's standard
    deviation, and (not for ``full``) the test against ``full``."""

    seeds: int
    obj: float
    gap: float
    gap_sd: float
    versus_full: stats.Comparison | None = None


def instance_gaps(rows: list[dict[str, str]]) -> dict[tuple[str, int], dict[int, np.ndarray]]:
    """``(variant, size) -> seed -> gap (%) per test instance`` (in instance order) of result
    rows (``solver`` = variant, ``seed``, ``n``, ``instance``, ``gap_pct``)."""
    groups: dict[tuple[str, int], dict[int, dict[int, float]]] = {}
    for r in rows:
        seeds = groups.setdefault((r["solver"], int(r["n"])), {})
        seeds.setdefault(int(r["seed"]), {})[int(r["instance"])] = float(r["gap_pct"])
    return {key: {seed: np.array([g for _, g in sorted(gaps.items())])
                  for seed, gaps in seeds.items()} for key, seeds in groups.items()}


def summarize(rows: list[dict[str, str]],
              correction: stats.Correction = "holm") -> dict[str, dict[int, Cell]]:
    """``{variant: {test size: Cell}}`` from result rows; every variant tested against
    ``full`` at every size, the p-values corrected together."""
    gaps = instance_gaps(rows)
    objs: dict[tuple[str, int], list[float]] = {}
    for r in rows:
        objs.setdefault((r["solver"], int(r["n"])), []).append(float(r["cost"]))
    pairs = [(("full", size), (name, size)) for name, size in gaps
             if name != "full" and ("full", size) in gaps]
    arrays = {f"{name}@{size}": np.stack([g for _, g in sorted(seeds.items())])
              for (name, size), seeds in gaps.items()}
    tests = stats.compare(arrays, [(f"{a[0]}@{a[1]}", f"{b[0]}@{b[1]}") for a, b in pairs],
                          correction)
    versus = {b: test for (_, b), test in zip(pairs, tests, strict=True)}
    out: dict[str, dict[int, Cell]] = {}
    for (name, size), seeds in gaps.items():
        per_seed = [float(g.mean()) for g in seeds.values()]
        out.setdefault(name, {})[size] = Cell(
            len(per_seed), float(np.mean(objs[(name, size)])), float(np.mean(per_seed)),
            float(np.std(per_seed, ddof=1)) if len(per_seed) > 1 else math.nan,
            versus.get((name, size)))
    return {name: dict(sorted(cells.items())) for name, cells in out.items()}


def _fmt(value: float, digits: int = 2) -> str:
    return "-" if math.isnan(value) else f"{value:.{digits}f}"


VERDICT_WORDS = {"a": "full better", "b": "variant better", "not separated": "not separated",
                 "pending": "pending"}


def markdown(summary: dict[str, dict[int, Cell]], protocol: Protocol, command: str) -> str:
    """Table 5's layout (components, layers, loss; per test size Obj. (Gap)), ours with the
    seed spread and the test against ``full``, the paper's row beside (its test set of the same
    rank: TSP100, TSP1K, TSP10K)."""
    sizes = sorted({s for cells in summary.values() for s in cells})
    head = "| Fusion | Update | Looped | Layers | Train | variant | " + " | ".join(
        f"TSP-{s}: Obj. (Gap %) ± sd | vs full: diff [95% CI], Holm p | verdict | paper "
        f"{PAPER_SETS[k] if k < len(PAPER_SETS) else '-'}" for k, s in enumerate(sizes)) + " |"
    lines = [head, "|" + "---|" * (6 + 4 * len(sizes))]
    mark = {True: "✓", False: "×"}
    tested = 0
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
            t = None if c is None else c.versus_full
            diff = "-" if t is None else \
                f"{t.effect:+.2f} [{t.ci_low:+.2f}, {t.ci_high:+.2f}], {stats.fmt_p(t.p_adjusted)}"
            tested += t is not None
            cells += [ours, diff, "-" if t is None else VERDICT_WORDS[t.verdict],
                      "-" if paper is None else f"{paper[0]:.2f} ({paper[1]:.2f}%)"]
        lines.append(f"| {mark[v.fusion and v.memory]} | {mark[v.gated and v.memory]} | "
                     f"{mark[v.memory]} | {v.layers} | {v.loss.upper()} | {name} | "
                     + " | ".join(cells) + " |")
    budget = (f"{protocol.steps:,} updates each" if protocol.steps else
              f"{protocol.cpu_minutes:g} CPU-minutes (the first seed of each variant; the other "
              f"seeds as many steps as it reached)")
    return (f"TSP, trained on TSP-{protocol.train_size} ({protocol.batch} instances x "
            f"{protocol.rollouts} rollouts per step, lr {protocol.lr:g}) for {budget}; greedy "
            f"decoding of {protocol.test_num} test instances per size (seed "
            f"{protocol.test_seed}); gap to PyVRP. ± sd: over seeds; vs full: the variant's mean "
            f"gap minus full's with its 95% interval (seeds and instances resampled) and Welch's "
            f"p over the per-seed gaps, Holm-corrected over the table's {tested} tests; a verdict "
            f"needs a corrected p below {stats.ALPHA}, an interval without 0 and at least "
            f"{stats.MIN_SEEDS} seeds a side.\n\n" + "\n".join(lines)
            + f"\n\n```sh\n{command}\n```\n")


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
