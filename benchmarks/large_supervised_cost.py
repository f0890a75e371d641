"""What supervised training on large TSP instances through the candidate-set step costs: LKH-3
label seconds per instance, the share of label decisions whose node is not among the K
candidates (visited, not trained on), the shipped weights' teacher-forced NLL there, and the
seconds and peak memory of ``routecli train`` steps with ``--train-candidates K --window W``.

    .venv/bin/python benchmarks/large_supervised_cost.py --sizes 500,1000 --batches 16,32 \\
        --out benchmarks/results/large_supervised_cost.md [--machine TEXT]

Per size: one LKH store chunk (``--labeller lkh``, :data:`routecli.miloop.labels.LKH_CHUNK`
instances) is labelled in this process and timed (wall and CPU); every label of it is replayed
through the candidate sets with the shipped TSP weights; then, per batch size, ``routecli
train`` runs ``--steps`` supervised steps from the shipped weights on that store in its own
process (one thread, the default bf16/compile choices, a token validation on TSP-20), and its log gives the
seconds of each step (the first includes the kernels' compilation) and ``os.wait4`` its peak
resident memory. ``--out`` writes the table with the commit, the command and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from routecli.miloop.labels import LKH_CHUNK, LabelStore
from routecli.miloop.model import load_policy, rollout
from routecli.miloop.train import label_env, pyvrp_budget
from routecli.results import git_commit
from routecli.train.checkpoint import shipped


def label_seconds(store: LabelStore) -> tuple[float, float]:
    """Wall and CPU seconds per label of chunk 0 of ``store``, labelled and written now."""
    wall, cpu = time.perf_counter(), time.process_time()
    arrays = store.label_arrays(0)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    store.write_chunk(0, arrays)
    return wall / store.chunk, cpu / store.chunk


@torch.inference_mode()
def replay_outside(store: LabelStore, candidates: int) -> tuple[int, int, float]:
    """The store's label decisions outside the candidate sets, all its decisions, and the
    shipped weights' NLL per decision on those inside."""
    pool = store.load()
    data, labels = pool.sample(np.arange(len(pool)), np.random.default_rng(0), "cpu")
    model = load_policy(shipped("miloop-tsp.pt"))
    result = rollout(model, label_env("tsp", data, labels, candidates), replay=labels)
    outside = int(result.outside.sum())
    return (outside, outside + int(result.decisions.sum()),
            float(-result.log_prob.sum() / result.decisions.sum()))


def train_steps(size: int, batch: int, args: argparse.Namespace, labels: Path, scratch: Path
                ) -> dict[str, float]:
    """Run ``routecli train`` for ``args.steps`` steps; seconds per step and peak RSS."""
    run = scratch / f"run-{size}-{batch}"
    argv = [sys.executable, "-m", "routecli", "train", "--problem", "tsp",
            "--curriculum", f"{size}:{args.steps}:{batch}:1:supervised",
            "--labeller", "lkh", "--train-candidates", str(args.candidates),
            "--window", str(args.window), "--labels", str(labels),
            "--label-instances", "1", "--init", str(shipped("miloop-tsp.pt")),
            "--val-size", "20", "--val-instances", "2", "--val-time-limit", "0.01",
            "--threads", "1", "--log-every", "1", "--out", str(run)]
    env = {**os.environ, "ROUTECLI_CACHE": str(scratch / "cache")}
    child = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"routecli train failed at N = {size}")
    steps = [r for r in map(json.loads, (run / "log.jsonl").read_text().splitlines())
             if "loss" in r]
    wall = np.diff([0.0] + [r["elapsed"] for r in steps])
    cpu = np.diff([0.0] + [r["cpu_seconds"] for r in steps])
    return {"first": float(wall[0]), "wall": statistics.median(wall[1:]),
            "cpu": statistics.median(cpu[1:]), "outside": float(np.mean(
                [r["label_outside"] for r in steps])),
            "rss_gb": usage.ru_maxrss / 2**20}  # ru_maxrss: KiB on Linux


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="500,1000")
    parser.add_argument("--candidates", type=int, default=200)
    parser.add_argument("--window", type=int, default=100)
    parser.add_argument("--batches", default="16,32")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--machine", default="", help="what else ran, for the result file")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    torch.set_num_threads(1)
    load = os.getloadavg()[0]
    header = ("| N | LKH s/label (wall / CPU) | label decisions outside K | shipped NLL/decision "
              "inside K | batch | first step s | s/step (median of the rest) | CPU s/step | "
              "instances/s | label_outside in training | peak RSS GB |")
    lines = [header, "|" + "---|" * header.count(" | ") + "---|"]
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        for size in (int(s) for s in args.sizes.split(",")):
            store = LabelStore(scratch / "labels", "tsp", "uniform", size, pyvrp_budget(0.1),
                               labeller="lkh")
            wall, cpu = label_seconds(store)
            outside, decisions, nll = replay_outside(store, args.candidates)
            for batch in (int(b) for b in args.batches.split(",")):
                step = train_steps(size, batch, args, scratch / "labels", scratch)
                lines.append(f"| {size:,} | {wall:.2f} / {cpu:.2f} | {outside} of {decisions:,} "
                             f"| {nll:.3f} | {batch} | {step['first']:.1f} | {step['wall']:.1f} "
                             f"| {step['cpu']:.1f} | {batch / step['wall']:.2f} | "
                             f"{100 * step['outside']:.2f}% | {step['rss_gb']:.2f} |")
                print(lines[-1], flush=True)
    table = "\n".join(lines)
    print(table)
    if args.out:
        command = shlex.join(["python", "benchmarks/large_supervised_cost.py", *sys.argv[1:]])
        args.out.write_text(
            "# Supervised training on large TSP instances: what a step costs\n\n"
            f"Commit {git_commit()}; `{command}`; K = {args.candidates} candidates, window "
            f"W = {args.window}, {args.steps} steps from the shipped TSP "
            f"weights, one thread; one chunk of {LKH_CHUNK} LKH labels per size "
            f"(uniform TSP, seed 0). 1-minute load average {load:.1f} at the start, "
            f"{os.getloadavg()[0]:.1f} at the end. {args.machine}\n\n" + table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
