"""Can an improvement backbone (DACT, or N2S with ``--backbone n2s``) learn its best-improvement
teacher, given enough updates? Offline imitation on labelled states, with a learning curve.

    .venv/bin/python benchmarks/imitation_fit.py --out data/runs/imitation_fit/cvrp20 \
        --validation data/runs/pe_curve/cvrp20-imitation-c300 --pe ipe_inv_xpe,nope \
        --updates 6000 --eval-every 500 --cpu-minutes 40

The on-policy imitation pilots (``benchmarks/pe_curve.py --budget ...,imitation=K``) take one
gradient step per few moves of 32 instances: under 4,000 updates in their whole budget, where
DACT's recipe takes hundreds of thousands. This script separates the two questions with
:mod:`routecli.improve.imitation` (the ``compare-pe --budget imitation`` training): it labels
states once (``--out/states.pt``) with the epsilon-greedy best-improvement teacher, then per PE
takes ``--updates`` Adam steps on minibatches of them (the same states and minibatches for
every PE); the options are :class:`~routecli.improve.imitation.ImitationConfig`'s. Every
``--eval-every`` updates it measures on held-out states (the last ``--held-out`` instances',
never trained on) the imitation loss and, where some move shortens the tour, how often the
policy's most likely move is the teacher's, as good as it, and shortens the tour; and on the
validation set of a ``benchmarks/pe_curve.py`` folder the gap of ``evaluate`` (its sampled
moves, the curves' measure) to the folder's references (a ``--validation`` folder that does not
exist yet is made: ``--val-size`` instances of the validation seed, PyVRP references, 300 steps).
Rows in ``--out/curve.csv`` (a result store: commit, date, command); the weights, optimizer and
data position are saved after every evaluation, and a rerun resumes. ``--final-eval 1000x8``:
after training, the validation gap at larger budgets (steps x symmetric images), rows in
``--out/final.csv``. One thread.
``--report STEM --out A --out B`` writes ``STEM.md`` and ``STEM.png`` from the folders' rows.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch

from routecli.atomic import atomic_write_text
from routecli.experiments.pe.curve import validation_protocol
from routecli.experiments.pe.pairs import prepare, slug
from routecli.experiments.pe.protocol import BACKBONES, Model, build, make_protocol
from routecli.generate.batch import load_batch
from routecli.improve.env import Instances
from routecli.improve.imitation import (
    TARGETS,
    TRAIN_STATES,
    ImitationConfig,
    fit,
    imitation_loss,
    labelled_states,
    make_optimizer,
    move_costs,
    state_env,
    state_instances,
    trainable,
)
from routecli.improve.moves import as_good_as_best
from routecli.improve.train import evaluate
from routecli.problems import gap
from routecli.results import Provenance, ResultStore, read_csv

DEFAULTS = ImitationConfig()
FINAL_COLUMNS = ("pe", "update", "eval_steps", "augment", "val_gap_pct", "eval_seconds")
COLUMNS = ("pe", "update", "train_cpu_s", "train_loss", "held_loss", "teacher", "tie",
           "improves", "val_gap_pct")


# --------------------------------------------------------------------------------------------
# one PE's curve


@torch.no_grad()
def held_out_metrics(model: Model, data: Instances, states: dict, rows: torch.Tensor,
                     target: str) -> dict[str, float]:
    """On held-out states ``rows``: the imitation loss, and over those where some move
    shortens the tour the shares where the argmax move is the teacher's, as good as it, and
    shortens the tour (at a local optimum the teacher's move is an arbitrary least-worsening
    one, so those states are left out of the shares)."""
    env = state_env(data, states, rows)
    logits = model.move_logits(env.observe()).float().flatten(1)
    improvable = states["improvable"][rows]
    costs = move_costs(env).flatten(1)
    index = logits.argmax(1)
    chosen = costs.gather(1, index[:, None])[:, 0]

    def share(hit: torch.Tensor) -> float:
        return hit[improvable].float().mean().item()

    return {"held_loss": imitation_loss(logits, states, rows, target).item(),
            "teacher": share(index == states["target"][rows]),
            "tie": share(as_good_as_best(costs).gather(1, index[:, None])[:, 0]),
            "improves": share(chosen < env.cost - 1e-6)}


class Validation(NamedTuple):
    """A ``benchmarks/pe_curve.py`` folder's validation set, references and evaluation."""

    problem: str
    batch: dict
    reference: np.ndarray
    steps: int
    seed: int

    @classmethod
    def load(cls, folder: Path) -> Validation:
        problem, batch = load_batch(folder / "test.npz")
        stored = json.loads((folder / "protocol.json").read_text())
        return cls(problem, batch,
                   np.array([float(r["cost"]) for r in read_csv(folder / "reference.csv")]),
                   int(stored["eval_steps"]), int(stored["test_seed"]))

    def gap(self, model: Model, steps: int | None = None, augment: int = 1) -> float:
        """Mean gap (%) of ``evaluate``'s best tours (``steps``: default the folder's)."""
        best, _ = evaluate(model, self.problem, self.batch, steps or self.steps,
                           seed=self.seed, augment=augment)
        return float(gap(best.double().numpy(), self.reference).mean())


def run_pe(pe: str, args: argparse.Namespace, states: dict, stores: tuple[ResultStore, ...],
           validation: Validation, deadline: float) -> bool:
    """Train and evaluate one PE up to ``args.updates``, then evaluate it at each of the
    ``--final-eval`` budgets; False when the CPU budget ran out."""
    store, final = stores
    cfg = settings(args)
    data = state_instances(args.problem, states)
    eligible = trainable(states, cfg)
    held_out = states["instance"][eligible] >= args.instances - args.held_out
    train_rows, held_rows = eligible[~held_out], eligible[held_out]
    model = build(make_protocol(args.problem, args.size, args.backbone, "imitation"), pe,
                  args.seed)
    optimizer = make_optimizer(model, cfg)
    path = args.out / "state" / f"{slug(pe)}-s{args.seed}.pt"
    update, cpu = 0, 0.0
    if path.is_file():
        saved = torch.load(path, weights_only=True)
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        update, cpu = int(saved["update"]), float(saved["cpu"])
    while update < args.updates:
        if time.process_time() > deadline:
            return False
        started = time.process_time()
        stop = min(update + args.eval_every - update % args.eval_every, args.updates)
        losses = fit(model, optimizer, data, states, train_rows, cfg, args.seed, update, stop)
        update = stop
        cpu += time.process_time() - started
        shares = held_out_metrics(model, data, states, held_rows, cfg.target)
        gap = validation.gap(model)
        store.add(pe=pe, update=update, train_cpu_s=round(cpu, 1),
                  train_loss=round(float(np.mean(losses)), 4), val_gap_pct=round(gap, 3),
                  **{k: round(v, 4) for k, v in shares.items()})
        print(f"{pe} update {update}: loss {np.mean(losses):.3f} held-out "
              f"{shares['held_loss']:.3f} teacher {shares['teacher']:.3f} tie "
              f"{shares['tie']:.3f} improves {shares['improves']:.3f} gap {gap:.2f}% "
              f"({cpu / 60:.1f} CPU-min)", flush=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "update": update, "cpu": cpu}, path)
    model.train(False)
    for steps, augment in args.final_eval:
        if final.done(pe=pe, update=update, eval_steps=steps, augment=augment):
            continue
        if time.process_time() > deadline:
            return False
        started = time.perf_counter()
        gap = validation.gap(model, steps, augment)
        final.add(pe=pe, update=update, eval_steps=steps, augment=augment,
                  val_gap_pct=round(gap, 3), eval_seconds=round(time.perf_counter() - started, 1))
        print(f"{pe} after {update} updates, {steps} steps x {augment} images: {gap:.2f}%",
              flush=True)
    return True


def settings(args: argparse.Namespace) -> ImitationConfig:
    """The labelling and fitting settings of the command line."""
    return ImitationConfig(**{k: getattr(args, k) for k in ImitationConfig.__dataclass_fields__})


def budgets(text: str) -> list[tuple[int, int]]:
    """``300x1,1000x8`` -> ``[(300, 1), (1000, 8)]`` (improvement steps x symmetric images)."""
    out = []
    for item in filter(None, text.split(",")):
        steps, _, images = item.partition("x")
        out.append((int(steps), int(images or 1)))
    return out


# --------------------------------------------------------------------------------------------
# report


def report(folders: list[Path], stem: Path) -> str:
    """``STEM.md`` (every row of every folder) and ``STEM.png`` (validation gap and held-out
    loss against updates, a line per folder and PE); returns the markdown."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from routecli.plots.figure import save_png

    lines = ["# Offline imitation of best improvement: learning curves", ""]
    fig, (gap_ax, loss_ax) = plt.subplots(1, 2, figsize=(11, 4.2))
    for folder in folders:
        settings = json.loads((folder / "protocol.json").read_text())
        rows = read_csv(folder / "curve.csv")
        lines += [f"## `{folder}`", "", "Settings: " + ", ".join(
            f"{k} {v}" for k, v in settings.items()) + ".", "",
            "| PE | updates | CPU-min | train loss | held-out loss | argmax = teacher | "
            "argmax as good | argmax improves | validation gap |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for r in rows:
            lines.append(f"| {r['pe']} | {int(r['update']):,} | "
                         f"{float(r['train_cpu_s']) / 60:.1f} | {r['train_loss']} | "
                         f"{r.get('held_loss') or '-'} | {r['teacher']} | {r['tie']} | "
                         f"{r['improves']} | {float(r['val_gap_pct']):.2f}% |")
        if (folder / "final.csv").is_file():
            lines += ["", "After training, the validation gap at larger budgets "
                      "(improvement steps x symmetric images, best over the images):", "",
                      "| PE | updates | steps x images | validation gap | seconds |",
                      "|---|---:|---:|---:|---:|"]
            for r in read_csv(folder / "final.csv"):
                lines.append(f"| {r['pe']} | {int(r['update']):,} | {r['eval_steps']} x "
                             f"{r['augment']} | {float(r['val_gap_pct']):.2f}% | "
                             f"{r['eval_seconds']} |")
        commits = sorted({r["commit"] for r in rows})
        lines += ["", f"Commits: {', '.join(commits)}.", ""]
        for pe in dict.fromkeys(r["pe"] for r in rows):
            mine = [r for r in rows if r["pe"] == pe]
            updates = [int(r["update"]) for r in mine]
            label, color = f"{folder.name} {pe}", f"C{len(gap_ax.lines) % 10}"  # one per run
            gap_ax.plot(updates, [float(r["val_gap_pct"]) for r in mine], "o-", label=label,
                        color=color)
            held = [(u, float(r["held_loss"])) for u, r in zip(updates, mine, strict=True)
                    if r.get("held_loss")]
            if held:
                loss_ax.plot(*zip(*held, strict=True), "o-", label=label, color=color)
    gap_ax.set(xlabel="updates", ylabel="validation gap to PyVRP (%)",
               title="sampled moves, 300 steps")
    loss_ax.set(xlabel="updates", ylabel="held-out imitation loss (nats)",
                title="states never trained on")
    for ax in (gap_ax, loss_ax):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    save_png(fig, stem.with_suffix(".png"))
    text = "\n".join(lines)
    atomic_write_text(stem.with_suffix(".md"), text)
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, action="append",
                        help="the run's folder (with --report: one or more)")
    parser.add_argument("--report", type=Path, default=None,
                        help="write STEM.md and STEM.png from the --out folders, train nothing")
    parser.add_argument("--validation", type=Path,
                        help="a benchmarks/pe_curve.py folder (test.npz, reference.csv)")
    parser.add_argument("--val-size", type=int, default=64,
                        help="instances of a --validation folder made here")
    parser.add_argument("--problem", default="cvrp")
    parser.add_argument("--backbone", choices=BACKBONES, default="dact")
    parser.add_argument("--size", type=int, default=20)
    parser.add_argument("--pe", default="ipe_inv_xpe,nope")
    parser.add_argument("--instances", type=int, default=DEFAULTS.instances)
    parser.add_argument("--held-out", type=int, default=32)
    parser.add_argument("--trajectory", type=int, default=DEFAULTS.trajectory)
    parser.add_argument("--keep-every", type=int, default=DEFAULTS.keep_every)
    parser.add_argument("--epsilon", type=float, default=DEFAULTS.epsilon)
    parser.add_argument("--updates", type=int, default=DEFAULTS.updates)
    parser.add_argument("--batch", type=int, default=DEFAULTS.batch)
    parser.add_argument("--lr", type=float, default=DEFAULTS.lr)
    parser.add_argument("--target", choices=TARGETS, default=DEFAULTS.target,
                        help="the teacher's move, or any move as good as it (depot copies "
                             "make several moves equal)")
    parser.add_argument("--train-states", choices=TRAIN_STATES,
                        default=DEFAULTS.train_states,
                        help="train on every state, or only where some move shortens the tour")
    parser.add_argument("--eval-every", type=int, default=500)
    parser.add_argument("--final-eval", type=budgets, default=[],
                        help="after training, the validation gap at each STEPSxIMAGES budget, "
                             "e.g. 300x1,1000x8 (rows in --out/final.csv)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cpu-minutes", type=float, default=float("inf"))
    args = parser.parse_args(argv)
    if args.report is not None:
        print(report(args.out, args.report))
        return 0
    if len(args.out) != 1 or args.validation is None:
        parser.error("training takes one --out folder and --validation")
    args.out = args.out[0]
    if not 0 < args.held_out < args.instances:
        parser.error("--held-out must be between 0 and --instances")
    torch.set_num_threads(1)
    deadline = time.process_time() + 60.0 * args.cpu_minutes
    args.out.mkdir(parents=True, exist_ok=True)
    stored = {k: getattr(args, k) for k in ("problem", "size", "backbone", "instances",
                                            "held_out", "trajectory", "keep_every", "epsilon",
                                            "batch", "lr", "target", "train_states", "seed")}
    protocol = args.out / "protocol.json"
    # folders of the DACT-only version name no backbone
    if protocol.is_file() and {"backbone": "dact", **json.loads(protocol.read_text())} != stored:
        raise SystemExit(f"error: {protocol} holds other settings; use another --out")
    atomic_write_text(protocol, json.dumps(stored, indent=1) + "\n")
    kind = "pair" if args.backbone == "n2s" else "pairwise"
    states = labelled_states(args.problem, args.size, settings(args), args.seed,
                             cache=args.out / "states.pt", log=lambda line: print(line, flush=True),
                             kind=kind)
    if not (args.validation / "test.npz").is_file():
        prepare(validation_protocol(make_protocol(args.problem, args.size, args.backbone,
                                                  "imitation"), args.val_size), args.validation)
    validation = Validation.load(args.validation)
    store = ResultStore(args.out / "curve.csv", COLUMNS,
                        key=("pe", "update"), provenance=Provenance.current())
    final = ResultStore(args.out / "final.csv", FINAL_COLUMNS,
                        key=("pe", "update", "eval_steps", "augment"),
                        provenance=Provenance.current())
    for pe in args.pe.split(","):
        if not run_pe(pe, args, states, (store, final), validation, deadline):
            print("the CPU budget ran out; rerun the same command to resume")
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
