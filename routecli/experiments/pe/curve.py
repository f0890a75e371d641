"""Learning curves of the controlled PE comparison: the validation gap of every (PE, seed) against
training epochs and CPU-seconds, so a budget is chosen where training has converged.

Every (PE, seed) trains with the comparison's own protocol (:mod:`routecli.experiments.pe.protocol`:
same backbone, schedule, seeded data) and is evaluated every ``val_every`` epochs on a
validation set drawn with another seed than the comparison's test set, so choosing a budget here
does not look at the test instances. After each evaluation the weights and the whole training
state (optimizer, learning-rate schedule, sampling generator, CPU-seconds so far) are saved in
``state/``, just after the row lands in ``curve.csv``, a :class:`routecli.results.ResultStore`
keyed by (PE, seed, epoch) with each row's provenance (commit, date, command): a run stopped at
any point (``cpu_minutes``, a killed session, another machine given the folder) resumes at its
last saved state and continues exactly as an uninterrupted run would (a row torn by the kill is
dropped; a row stored before the kill saved its state is not stored twice). Pairs advance
round-robin, the least-trained first, so an interrupted run has every curve at about the same
length. Processes on one machine share a folder (one core each): each advances the pairs no
other one holds (a :func:`routecli.atomic.claim` per pair, ``state/<pe>-s<seed>.lock``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from routecli.atomic import claim
from routecli.errors import OptionError
from routecli.experiments.pe.pairs import evaluate_row, prepare, slug
from routecli.experiments.pe.protocol import Device, Protocol, build, load, model_checkpoint
from routecli.experiments.pe.summary import fmt
from routecli.improve.train import PPOConfig, train
from routecli.results import ResultStore
from routecli.train import checkpoint as ckpt

VALIDATION_SEED = 2_000_003  # not the comparison's test seed (Protocol.test_seed)
CURVE_FIELDS = ["pe", "seed", "epoch", "instances", "train_cpu_s", "val_obj", "val_gap_pct",
                "eval_seconds"]


def ppo_schedule(protocol: Protocol) -> PPOConfig:
    """The protocol's PPO schedule: these curves follow its epochs."""
    schedule = protocol.schedule
    if not isinstance(schedule, PPOConfig):
        raise OptionError("the PE curves follow PPO's epochs; offline imitation's curves: "
                          "benchmarks/imitation_fit.py")
    return schedule


def validation_protocol(protocol: Protocol, val_size: int) -> Protocol:
    """``protocol`` with its test set replaced by the validation set."""
    return replace(protocol, test_size=val_size, test_seed=VALIDATION_SEED)


def state_path(out: Path, pe: str, seed: int) -> Path:
    return out / "state" / f"{slug(pe)}-s{seed}.pt"


def curve_store(out: Path) -> ResultStore:
    """``out/curve.csv``: one row per evaluation of a (PE, seed), keyed by (PE, seed, epoch).
    A file of the first layout (the commit last, no date or command) reads as it is and is
    rewritten in the store's columns at its next row."""
    return ResultStore(out / "curve.csv", CURVE_FIELDS, ["pe", "seed", "epoch"])


def read_curve(out: Path) -> list[dict[str, str]]:
    return curve_store(out).rows


def epochs_done(out: Path, pe: str, seed: int) -> int:
    """Epochs of ``(pe, seed)`` that are evaluated (the last row's)."""
    return max((int(r["epoch"]) for r in read_curve(out)
                if r["pe"] == pe and int(r["seed"]) == seed), default=0)


def advance(protocol: Protocol, pe: str, seed: int, out: Path, validation: dict,
            reference: np.ndarray, val_every: int,
            log: Callable[[str], None] = print, device: Device = "cpu") -> int:
    """Train ``(pe, seed)`` for ``val_every`` more epochs on ``device`` (from its saved state,
    else from its seeded initial weights), evaluate, store the row (unless stored already:
    a run killed before it saved the state), save; returns the epochs now done."""
    path = state_path(out, pe, seed)
    resume: dict[str, Any] | None = None
    cpu_before = 0.0
    if path.is_file():
        data = ckpt.load(path)
        resume, cpu_before = data["train_state"], float(data["train_state"]["cpu_seconds"])
        model = load(protocol, path, device)
    else:
        model = build(protocol, pe, seed, device)
    schedule = ppo_schedule(protocol)
    target = min(schedule.epochs, int(resume["epoch"] if resume else 0) + val_every)
    started = time.process_time()

    def after_epoch(state: dict[str, Any]) -> bool:
        if state["epoch"] < target:
            return True
        cpu = cpu_before + time.process_time() - started
        _, row = evaluate_row(protocol, model, pe, seed, validation, reference, cpu,
                                      device)
        state = {**state, "cpu_seconds": cpu}
        store = curve_store(out)
        if not store.done(pe=pe, seed=seed, epoch=state["epoch"]):
            store.add(pe=pe, seed=seed, epoch=state["epoch"],
                      instances=state["epoch"] * schedule.batches * schedule.batch_size,
                      train_cpu_s=round(cpu, 1), val_obj=row["obj"], val_gap_pct=row["gap_pct"],
                      eval_seconds=row["eval_seconds"])
        meta = {"pe": pe, "seed": seed, "protocol": asdict(protocol)}
        ckpt.save({**model_checkpoint(model, meta), "train_state": state}, path)
        log(f"{pe} seed {seed} epoch {state['epoch']}/{schedule.epochs}: validation gap "
            f"{row['gap_pct']:.2f}% ({cpu / 60:.1f} CPU-min of training)")
        return False

    path.parent.mkdir(parents=True, exist_ok=True)
    train(model, protocol.problem, protocol.size, schedule, seed, device=device, resume=resume,
          after_epoch=after_epoch)
    return target


@dataclass(frozen=True)
class CurvePlan:
    """What :func:`run_curves` trains: every PE of ``pes`` with every seed of ``seeds``."""

    protocol: Protocol
    pes: tuple[str, ...]
    seeds: tuple[int, ...]
    val_every: int


def run_curves(plan: CurvePlan, out: Path, cpu_minutes: float | None = None,
               log: Callable[[str], None] = print, progress: bool = True,
               device: Device = "cpu") -> bool:
    """Advance the least-trained unfinished pair by ``val_every`` epochs until every pair has
    trained the schedule's epochs or ``cpu_minutes`` of this process are spent (checked
    between chunks). Pairs another process holds (its claim) are left to it. Returns whether
    every curve is complete."""
    validation, reference = prepare(plan.protocol, out, progress)
    total = ppo_schedule(plan.protocol).epochs
    started = time.process_time()
    skipped: set[tuple[str, int]] = set()
    while cpu_minutes is None or time.process_time() - started < 60 * cpu_minutes:
        todo = sorted(((epochs_done(out, pe, seed), k, pe, seed)
                       for k, (pe, seed) in enumerate((p, s) for s in plan.seeds
                                                      for p in plan.pes)
                       if (pe, seed) not in skipped), key=lambda t: (t[0], t[1]))
        todo = [t for t in todo if t[0] < total]
        if not todo:
            return all(epochs_done(out, p, s) >= total for p in plan.pes for s in plan.seeds)
        _, _, pe, seed = todo[0]
        with claim(state_path(out, pe, seed).with_suffix(".lock")) as mine:
            if not mine:
                skipped.add((pe, seed))
                continue
            advance(plan.protocol, pe, seed, out, validation, reference, plan.val_every, log,
                    device)
    return False


def curve_summary(out: Path) -> dict[str, dict[int, list[float]]]:
    """``pe -> epoch -> validation gaps over seeds`` from ``curve.csv``."""
    table: dict[str, dict[int, list[float]]] = {}
    for r in read_curve(out):
        table.setdefault(r["pe"], {}).setdefault(int(r["epoch"]), []).append(
            float(r["val_gap_pct"]))
    return table


def curve_markdown(out: Path, title: str) -> str:
    """Per PE and evaluated epoch: mean validation gap, seed sd, seeds, mean CPU-minutes."""
    rows = read_curve(out)
    cpu: dict[tuple[str, int], list[float]] = {}
    for r in rows:
        cpu.setdefault((r["pe"], int(r["epoch"])), []).append(float(r["train_cpu_s"]) / 60)
    lines = [f"# {title}", "", "| PE | epoch | seeds | validation gap % (mean) | seed sd | "
             "CPU-min of training (mean) |", "|---|---:|---:|---:|---:|---:|"]
    for pe, epochs in curve_summary(out).items():
        for epoch, gaps in sorted(epochs.items()):
            sd = float(np.std(gaps, ddof=1)) if len(gaps) > 1 else float("nan")
            lines.append(f"| {pe} | {epoch} | {len(gaps)} | {np.mean(gaps):.2f} | "
                         f"{fmt(sd)} | {np.mean(cpu[(pe, epoch)]):.1f} |")
    return "\n".join(lines) + "\n"


def curve_plot(out: Path, path: Path, title: str) -> None:
    """Validation gap against training epochs: one thin line per seed, the seed mean bold."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from routecli.plots.figure import save_png

    rows = read_curve(out)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, (pe, epochs) in enumerate(curve_summary(out).items()):
        color = colors[k % len(colors)]
        for seed in sorted({int(r["seed"]) for r in rows if r["pe"] == pe}):
            mine = sorted((int(r["epoch"]), float(r["val_gap_pct"])) for r in rows
                          if r["pe"] == pe and int(r["seed"]) == seed)
            ax.plot(*zip(*mine, strict=True), color=color, alpha=0.35, linewidth=1)
        xs = sorted(epochs)
        ax.plot(xs, [np.mean(epochs[x]) for x in xs], "o-", color=color, linewidth=2,
                label=f"{pe} (mean of seeds)")
    ax.set_xlabel("training epochs")
    ax.set_ylabel("validation gap to PyVRP (%)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    save_png(fig, path)
