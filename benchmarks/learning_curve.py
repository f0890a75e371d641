"""What an hour of CPU buys: greedy validation gap against training CPU-hours, per recipe.

    .venv/bin/python benchmarks/learning_curve.py --problem tsp --cpu-minutes 60 \
        --eval-every 10 --out benchmarks/results/learning_curve_tsp

Every recipe starts from the same weights (``--init``, default the shipped checkpoint) with a
fresh AdamW (``--lr``), trains one optimizer step at a time on one thread, and is validated
every ``--eval-every`` CPU-minutes on the fixed validation set of ``routecli train`` (greedy,
against PyVRP references; validation time is not counted). CPU time is this process's
(``time.process_time``), so other jobs on the machine do not stretch it. Recipes:

- ``dpo-before``: the paper's DPO (N = 100, 2 instances x 25 rollouts) with the previous
  defaults: float32, eager, activations recomputed;
- ``dpo``: the same DPO on the fast path (bfloat16 autocast, compiled kernels);
- ``supervised``: teacher forcing of 16 instances per step on random suffixes of PyVRP
  solutions of uniform N = 100 instances (a label pool of ``--label-instances``);
- ``supervised-mixed``: the same on the ``mixed`` distribution, sizes 20 to N.

The label pools are built before the clock starts; their PyVRP time (CPU seconds of the
labelling processes, or the wall clock times ``--label-jobs``) is reported apart in the table.
Every validation appends its row to ``OUT.csv`` (the one result store, keyed by recipe,
protocol and step) and saves the recipe's ``last.pt`` under ``--work``, so a killed run
resumes where it stopped. Then writes ``OUT.md`` and ``OUT.png`` from the stored rows.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from routecli.miloop.train import Stage, TrainConfig, Trainer
from routecli.plots import plot_curves
from routecli.results import ResultStore, git_commit
from routecli.train.checkpoint import shipped


@dataclass
class Recipe:
    name: str
    curriculum: str
    settings: dict[str, object] = field(default_factory=dict)


RECIPES = {r.name: r for r in (  # curricula for N = --size
    Recipe("dpo-before", "{n}:1000000:2:25", {"precision": "fp32", "compile": False,
                                                "activation_gb": 0.0}),
    Recipe("dpo", "{n}:1000000:2:25"),
    Recipe("supervised", "{n}:1000000:16:1:supervised"),
    Recipe("supervised-mixed", "{low}-{n}:1000000:16:1:supervised", {"distribution": "mixed"}),
)}


FIELDS = ["recipe", "protocol", "cpu_hours", "steps", "instances", "val_gap", "label_cpu_hours"]
KEY = ["recipe", "protocol", "steps"]


def protocol(args: argparse.Namespace) -> str:
    """What makes two runs of a recipe comparable (the store's key beside recipe and step)."""
    return (f"{args.problem}-{args.size} lr={args.lr} seed={args.seed} init={args.init or 'shipped'}"
            f" val={args.val_instances}x{args.val_time_limit}s labels={args.label_instances}"
            f"x{args.label_time_limit}s")


def run_recipe(recipe: Recipe, args: argparse.Namespace, store: ResultStore) -> None:
    """Train ``recipe`` to ``--cpu-minutes``, one stored row (CPU-hours, steps, instances,
    gap) per validation, resuming from the run folder's ``last.pt`` and the stored rows."""
    cfg = TrainConfig(problem=args.problem, run_dir=f"{args.work}/{recipe.name}",
                      curriculum=Stage.parse_list(recipe.curriculum.format(
                          n=args.size, low=min(20, args.size - 1))), lr=args.lr,
                      decay_at=1.0, seed=args.seed,
                      init=args.init or str(shipped(f"miloop-{args.problem}.pt")),
                      val_size=args.size, val_instances=args.val_instances,
                      val_time_limit=args.val_time_limit,
                      labels=args.labels, label_instances=args.label_instances,
                      label_jobs=args.label_jobs, label_time_limit=args.label_time_limit,
                      threads=1, **{"compile": True, **recipe.settings})
    key = {"recipe": recipe.name, "protocol": protocol(args)}
    trainer = Trainer(cfg, resume=True, progress=False)
    here = store.get(**key, steps=trainer.step)
    if trainer.step and here is None:
        raise SystemExit(f"error: {cfg.run_dir}/last.pt is at step {trainer.step}, which "
                         f"{store.path} has no row of; remove the run folder to start over")
    if here is None:  # a fresh start: the pools first, off the clock
        label_seconds = 0.0
        stage = cfg.curriculum[0]
        if stage.supervised:
            wall, started = time.perf_counter(), time.process_time()
            for size in stage.sizes:
                trainer.pool(size)
            label_seconds = (time.process_time() - started if args.label_jobs == 1
                             else (time.perf_counter() - wall) * args.label_jobs)
        here = store.add(**key, cpu_hours=0.0, steps=0, instances=0,
                         val_gap=trainer.validate()["val_gap"],
                         label_cpu_hours=label_seconds / 3600)
        print(here, flush=True)
    cpu = float(here["cpu_hours"]) * 3600
    label_cpu_hours = float(here["label_cpu_hours"])
    next_eval = (cpu // (60 * args.eval_every) + 1) * 60 * args.eval_every
    while cpu < 60 * args.cpu_minutes:
        started = time.process_time()
        trainer.train_step()
        cpu += time.process_time() - started
        if cpu >= next_eval or cpu >= 60 * args.cpu_minutes:
            gap = trainer.validate()["val_gap"]
            if not store.done(**key, steps=trainer.step):  # stored before a kill, then redone
                print(store.add(**key, cpu_hours=cpu / 3600, steps=trainer.step,
                                instances=trainer.instances, val_gap=gap,
                                label_cpu_hours=label_cpu_hours), flush=True)
            trainer.save()
            next_eval += 60 * args.eval_every


def main(argv: list[str] | None = None) -> list[dict[str, str]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem", default="tsp", choices=("tsp", "cvrp"))
    parser.add_argument("--recipes", default=",".join(RECIPES))
    parser.add_argument("--size", type=int, default=100, help="training and validation N")
    parser.add_argument("--cpu-minutes", type=float, default=60.0, help="per recipe")
    parser.add_argument("--eval-every", type=float, default=10.0, help="CPU-minutes")
    parser.add_argument("--init", default=None)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--val-instances", type=int, default=64)
    parser.add_argument("--val-time-limit", type=float, default=1.0)
    parser.add_argument("--labels", default="runs/labels")
    parser.add_argument("--label-instances", type=int, default=1000)
    parser.add_argument("--label-time-limit", type=float, default=0.2)
    parser.add_argument("--label-jobs", type=int, default=1)
    parser.add_argument("--work", default="runs/learning-curve", help="run folders")
    parser.add_argument("--out", default="benchmarks/results/learning_curve")
    args = parser.parse_args(argv)
    names = args.recipes.split(",")
    if unknown := [n for n in names if n not in RECIPES]:
        parser.error(f"unknown recipes {unknown}; choose from {', '.join(RECIPES)}")
    out = Path(args.out)
    store = ResultStore(out.with_suffix(".csv"), FIELDS, KEY)
    for name in names:
        run_recipe(RECIPES[name], args, store)
    rows = sorted((r for r in store.rows if r["recipe"] in names and r["protocol"] == protocol(args)),
                  key=lambda r: (names.index(r["recipe"]), int(r["steps"])))
    commit = git_commit()
    command = "python " + " ".join([Path(sys.argv[0]).as_posix(), *(argv or sys.argv[1:])])
    lines = [f"# MiLoop learning curve, {args.problem.upper()}-{args.size} greedy validation "
             "gap\n",
             f"Commit {commit}; `{command}`\n",
             "| recipe | label CPU-h (before the clock) | CPU-h | steps | instances | val gap % |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {r['recipe']} | {float(r['label_cpu_hours']):.2f} | "
              f"{float(r['cpu_hours']):.3f} | {r['steps']} | {r['instances']} | "
              f"{float(r['val_gap']):.2f} |" for r in rows]
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    recipes = list(dict.fromkeys(r["recipe"] for r in rows))
    plot_curves({name: ([float(r["cpu_hours"]) for r in rows if r["recipe"] == name],
                        [float(r["val_gap"]) for r in rows if r["recipe"] == name])
                 for name in recipes},
                out.with_suffix(".png"), "training CPU-hours (one core)",
                f"greedy gap to PyVRP, {args.problem.upper()}-{args.size} (%)")
    return rows


if __name__ == "__main__":
    main()
