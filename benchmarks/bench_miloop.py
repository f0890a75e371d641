"""Training and decoding throughput of MiLoop per CPU-second, before and after the fast path.

    .venv/bin/python benchmarks/bench_miloop.py --threads 1 --repeats 2 \
        --out benchmarks/results/miloop_throughput.md

Times are CPU seconds of this process (``time.process_time``), so a machine shared with
other jobs slows the wall clock, not the numbers (caches and memory bandwidth are shared all
the same: repeat, and compare rows measured together). For each problem and size:

- DPO (the paper's recipe): ``batch`` instances x K sampled rollouts, full backward through
  the rollouts; *before* = float32, eager, activations recomputed from N = 50 (the previous
  defaults), *after* = ``routecli train``'s defaults: compiled kernels, no recomputation and
  the ``auto`` precision (a bfloat16 autocast where the CPU multiplies bfloat16 natively,
  float32 where it emulates it; the table's header says which). The first step compiles
  and is not timed.
- supervised: teacher forcing of 16 labelled instances per step on a random suffix of their
  solutions (the prefix replayed without gradients), fast path; label time excluded (PyVRP
  labels are computed ahead of time and cached; here the policy's own samples stand in).
- greedy decoding rollouts per CPU-second, float32 and bfloat16 (eager, as ``routecli solve``).

The two floors of issue 16 at N = 100 are checked at the end: DPO rollouts/s after >= 3x
before, supervised instances/s >= 5x DPO instances/s before.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from routecli.miloop.decode import decode
from routecli.miloop.model import MiLoop, MiLoopConfig, rollout
from routecli.miloop.train import expand_rollouts, label_env, sample_batch
from routecli.nn import fused
from routecli.nn.device import resolve_precision
from routecli.results import git_commit
from routecli.train.losses import dpo_loss

ROWS = [  # problem, size, DPO batch, rollouts (the default curriculum's stages)
    ("tsp", 20, 8, 20), ("tsp", 50, 4, 25), ("tsp", 100, 2, 25),
    ("cvrp", 20, 8, 20), ("cvrp", 50, 4, 25), ("cvrp", 100, 2, 25),
]
SUPERVISED_BATCH = 16
BEFORE = {"precision": "fp32", "compiled": False}
AFTER = {"precision": resolve_precision("auto"), "compiled": True}


def cpu_seconds(fn: Callable[[], object]) -> float:
    started = time.process_time()
    fn()
    return time.process_time() - started


def dpo_step(model: MiLoop, problem: str, size: int, batch: int, k: int, seed: int,
             precision: str, compiled: bool, recompute: bool) -> float:
    """CPU seconds of one DPO step (rollouts, loss, backward)."""
    data = sample_batch(problem, size, batch, seed, "cpu")
    generator = torch.Generator().manual_seed(seed)
    env, forced, k = expand_rollouts(problem, data, k, generator)

    def step() -> None:
        result = rollout(model, env, "sample", first_action=forced, generator=generator,
                         recompute=recompute, precision=precision)
        dpo_loss(result.log_prob.view(batch, k), result.cost.view(batch, k)).backward()

    with fused.compiled(compiled):
        return cpu_seconds(step)


def supervised_step(model: MiLoop, problem: str, size: int, seed: int) -> float:
    """CPU seconds of one supervised step. The labels are the policy's own sampled solutions
    (the throughput does not depend on their quality; PyVRP's are computed ahead of time)."""
    data = sample_batch(problem, size, SUPERVISED_BATCH, seed, "cpu")
    env, forced, _ = expand_rollouts(problem, data, 1, torch.Generator().manual_seed(seed))
    with torch.no_grad():
        labels = rollout(model, env, "sample", first_action=forced,
                         precision=AFTER["precision"]).actions
    start = int(np.random.default_rng(seed).integers(size - 1))

    def step() -> None:
        result = rollout(model, label_env(problem, data, labels), replay=labels,
                         grad_from=start, precision=AFTER["precision"])
        (-result.log_prob.sum() / result.decisions.sum().clamp_min(1)).backward()

    with fused.compiled(True):
        return cpu_seconds(step)


def decode_rate(model: MiLoop, problem: str, size: int, precision: str) -> float:
    data = sample_batch(problem, size, 32, 1234, "cpu")
    return len(data["locs"]) / cpu_seconds(lambda: decode(model.eval(), data, "greedy",
                                                          precision=precision))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--sizes", default="20,50,100")
    parser.add_argument("--problems", default="tsp,cvrp")
    parser.add_argument("--out", default=None, help="also write the table to this markdown file")
    parser.add_argument("--precision", default="auto", choices=["auto", "bf16", "fp32"],
                        help="the after columns' precision (auto: routecli train's rule)")
    args = parser.parse_args()
    AFTER["precision"] = resolve_precision(args.precision)
    torch.set_num_threads(args.threads)
    sizes = {int(s) for s in args.sizes.split(",")}
    problems = args.problems.split(",")
    lines = [f"threads={args.threads}, d=128, 3 layers, FF 512 (paper configuration); CPU "
             f"seconds of this process, min over repeats; after = {AFTER['precision']}, "
             "compiled\n",
             "| problem | N | DPO batch x K | DPO before: s/step | rollouts/s | after: s/step "
             "| rollouts/s | speed-up | supervised inst/s (x16) | vs DPO before inst/s "
             "| greedy decode rollouts/s fp32 | bf16 |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    floors = []
    for problem, size, batch, k in ROWS:
        if size not in sizes or problem not in problems:
            continue
        torch.manual_seed(0)
        model = MiLoop(MiLoopConfig(problem=problem))
        for setting in (BEFORE, AFTER):  # warm-up: oneDNN kernels, the compiled kernels
            dpo_step(model, problem, size, batch, k, 99, recompute=False, **setting)
        supervised_step(model, problem, size, 99)
        before, after = [], []
        for i in range(args.repeats):  # interleaved, so both see the same machine
            before.append(dpo_step(model, problem, size, batch, k, i, recompute=size >= 50,
                                   **BEFORE))
            after.append(dpo_step(model, problem, size, batch, k, i, recompute=False, **AFTER))
        sup = min(supervised_step(model, problem, size, i) for i in range(args.repeats))
        t0, t1 = min(before), min(after)
        rollouts = batch * min(k, size)
        sup_rate, dpo_rate = SUPERVISED_BATCH / sup, batch / t0
        row = (f"| {problem} | {size} | {batch} x {k} | {t0:.2f} | {rollouts / t0:.2f} | "
               f"{t1:.2f} | {rollouts / t1:.2f} | {t0 / t1:.2f}x | {sup_rate:.2f} | "
               f"{sup_rate / dpo_rate:.0f}x | {decode_rate(model, problem, size, 'fp32'):.1f} | "
               f"{decode_rate(model, problem, size, 'bf16'):.1f} |")
        lines.append(row)
        print(row, flush=True)
        if size == 100:
            floors.append(f"{problem.upper()}-100: DPO {t0 / t1:.2f}x (floor 3x), supervised "
                          f"{sup_rate / dpo_rate:.0f}x DPO-before instances/s (floor 5x)")
    lines += ["", *floors]
    print("\n".join(["", *floors]))
    if args.out:
        commit = git_commit()
        command = "python " + " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]])
        Path(args.out).write_text(
            f"# MiLoop training throughput\n\nCommit {commit}; `{command}`\n\n"
            + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
