"""MiLoop's fused greedy TSP step (routecli.miloop.fused_greedy): CPU time per step, where one
step's time goes, and bfloat16 tour lengths against float32.

    .venv/bin/python benchmarks/bench_fused_step.py speed --sizes 1000,10000,100000 \\
        --precisions fp32,bf16 --out benchmarks/results/miloop_fused_step_speed.md
    .venv/bin/python benchmarks/bench_fused_step.py profile --size 10000 --steps 2000 \\
        --out benchmarks/results/miloop_fused_step_profile.md
    .venv/bin/python benchmarks/bench_fused_step.py quality --sizes 1000,2000,5000,10000 \\
        --seeds 20,10,5,5 --torch-max 1000 --torch-seeds 5 \\
        --out benchmarks/results/miloop_fused_step_quality.md
    .venv/bin/python benchmarks/bench_fused_step.py candidates --sizes 2000,10000 --seeds 10,5 \
        --candidates 50,100,150 --out benchmarks/results/miloop_fused_step_candidates.md

Instances are ``generate.tsp(1, N, seed)`` (uniform), the policy the shipped ``miloop-tsp.pt``,
K = 200, one torch / MKL thread. Times are CPU seconds of the decoding process
(``time.process_time``): on a machine shared with other jobs, wall time says more about the
neighbours than about the code. ``speed`` decodes each whole tour in a fresh process (so that
its peak RSS, ``ru_maxrss``, is its own). ``profile`` times every kernel and matrix product of
the step with ``time.process_time`` around each call, over ``--steps`` steps after 50 warm-up
steps; "between calls" is the rest of the step (Python). ``quality`` compares tour lengths:
bf16 against fp32, and fp32 against the torch engine up to ``--torch-max`` nodes (on the first
``--torch-seeds`` instances). ``candidates`` decodes the same instances with smaller candidate
sets than K = 200 (float32) and gives each K's tour length against K = 200's and its CPU time
per step: the step's work is linear in K.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import torch

from routecli import generate
from routecli.kernels.candidates import NodeGrid
from routecli.miloop import fused_greedy
from routecli.miloop.decode import decode
from routecli.miloop.model import load_policy
from routecli.nn.device import native_bf16
from routecli.problems import gap
from routecli.results import Provenance
from routecli.train.checkpoint import shipped

K = 200
KERNELS = ("_candidates", "_subproblem", "_fuse_rows", "_attention_inputs", "_attend",
           "_relu_bias", "_ff_out", "_update")


def instance(n: int, seed: int) -> np.ndarray:
    return np.asarray(generate.tsp(1, n, seed)["locs"][0], np.float32)


def tour_length(xy: np.ndarray, tour: np.ndarray) -> float:
    p = xy.astype(np.float64)[tour]
    return float(np.sqrt(((p - np.roll(p, -1, 0)) ** 2).sum(1)).sum())


def speed_case(n: int, precision: str, seed: int) -> dict:
    """One whole greedy decode in this process."""
    torch.set_num_threads(1)
    policy = load_policy(shipped("miloop-tsp.pt"))
    xy = instance(n, seed)
    fused_greedy.greedy_tour(policy, xy[:50], 10, bf16=precision == "bf16")  # compile, load
    cpu, wall = time.process_time(), time.perf_counter()
    tour = fused_greedy.greedy_tour(policy, xy, K, bf16=precision == "bf16")
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return {"n": n, "precision": precision, "cpu_s": cpu, "cpu_ms_per_step": 1000 * cpu / (n - 1),
            "wall_s": wall, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "length": tour_length(xy, tour), "valid": sorted(tour.tolist()) == list(range(n))}


def speed(args: argparse.Namespace) -> str:
    rows = []
    for n in args.sizes:
        for precision in args.precisions:
            child = subprocess.run([sys.executable, __file__, "speed-case", str(n), precision,
                                    "--seed", str(args.seed)], capture_output=True, text=True,
                                   env={**os.environ, "OMP_NUM_THREADS": "1",
                                        "MKL_NUM_THREADS": "1"})
            if child.returncode != 0:
                sys.exit(f"{n} {precision} failed:\n{child.stderr}")
            row = json.loads(child.stdout.strip().splitlines()[-1])
            rows.append(row)
            print(row, flush=True)
    lines = ["| N | products | CPU s | CPU ms/step | wall s | peak RSS MB | tour length | "
             "length / 0.7124 sqrt(N) | valid |", "|" + "---|" * 9]
    for r in rows:
        lines.append(f"| {r['n']:,} | {r['precision']} | {r['cpu_s']:.1f} | "
                     f"{r['cpu_ms_per_step']:.3f} | {r['wall_s']:.1f} | {r['peak_rss_mb']:.0f} | "
                     f"{r['length']:.4f} | {r['length'] / (0.7124 * math.sqrt(r['n'])):.4f} | "
                     f"{r['valid']} |")
    return "\n".join(lines)


def run_steps(step: fused_greedy.GreedyStep, xy: np.ndarray, steps: int, measure_from: int,
              on_measure: Callable[[], None] = lambda: None) -> float:
    """CPU seconds of steps ``measure_from .. steps`` of the greedy decode from node 0;
    ``on_measure()`` is called when the measurement starts."""
    n = len(xy)
    xy64 = step.xy.astype(np.float64)
    grid = NodeGrid(xy64)
    dist, idx = np.empty(K), np.empty(K, np.int64)
    visited, tour, no_demand = np.zeros(n, np.bool_), np.zeros(n, np.int64), np.zeros(n)
    visited[0] = True
    started = 0.0
    for t in range(1, steps + 1):
        if t == measure_from:
            on_measure()
            started = time.process_time()
        rows = fused_greedy._candidates(xy64, tour[t - 1], 0, visited, no_demand, K,
                                        grid.start, grid.nodes, grid.cell, grid.x0, grid.y0,
                                        grid.nx, grid.ny, dist, idx, step.nodes)
        choice = step.nodes[2 + step(rows, t == 1).argmax()]
        visited[choice] = True
        tour[t] = choice
    return time.process_time() - started


def profile(args: argparse.Namespace) -> str:
    torch.set_num_threads(1)
    policy = load_policy(shipped("miloop-tsp.pt"))
    xy = instance(args.size, args.seed)
    lines = []
    for precision in args.precisions:
        lines += profile_steps(policy, xy, precision == "bf16", args.steps)
    return "\n".join(lines)


def profile_steps(policy, xy: np.ndarray, bf16: bool, steps: int) -> list[str]:
    """Per-call timers around the step's kernels and products (the module's globals)."""
    seconds: dict[str, float] = defaultdict(float)
    calls: Counter[str] = Counter()

    def timed(name: str, fn: Callable, label: Callable | None = None) -> Callable:
        def wrapper(*a, **kw):
            key = label(kw["out"]) if label else name
            started = time.process_time()
            out = fn(*a, **kw)
            seconds[key] += time.process_time() - started
            calls[key] += 1
            return out
        return wrapper

    with torch.inference_mode(), fused_greedy.matmul_precision(bf16):
        plain = run_steps(fused_greedy.GreedyStep(policy, xy, K), xy, steps + 50, 51) / steps
        step = fused_greedy.GreedyStep(policy, xy, K)
        # products are told apart by their output buffer
        outputs = {"h": "fuse", "qkv": "qkv", "both": "pair @ packed", "hidden": "ff1",
                   "ff": "ff2", "gate": "gate"}
        product = {step.flat[buffer].ctypes.data: f"product {name}"
                   for buffer, name in outputs.items()}
        originals = {name: getattr(fused_greedy, name) for name in KERNELS}
        try:  # the step's globals: its kernels, and torch for torch.mm
            for name in KERNELS:
                setattr(fused_greedy, name, timed(name.lstrip("_"), originals[name]))
            fused_greedy.torch = SimpleNamespace(  # type: ignore[assignment]
                mm=timed("", torch.mm, lambda out: product[out.data_ptr()]))
            wrapped = run_steps(step, xy, steps + 50, 51,
                                lambda: (seconds.clear(), calls.clear())) / steps
        finally:
            fused_greedy.torch = torch
            for name, fn in originals.items():
                setattr(fused_greedy, name, fn)
    lines = [f"**{'bf16' if bf16 else 'fp32'}**, N = {len(xy):,}, {steps} steps: "
             f"{1000 * plain:.3f} CPU ms per step unprofiled, {1000 * wrapped:.3f} profiled; "
             f"{sum(calls.values()) / steps:.0f} calls per step", "",
             "| part | calls / step | us / step | share |", "|---|---|---|---|"]
    parts = {key: seconds[key] / steps for key in seconds}
    parts["between calls (Python)"] = wrapped - sum(parts.values())
    for key, value in sorted(parts.items(), key=lambda item: -item[1]):
        lines.append(f"| {key} | {calls[key] / steps:.0f} | {1e6 * value:.0f} | "
                     f"{100 * value / wrapped:.1f}% |")
    return [*lines, ""]


def quality(args: argparse.Namespace) -> str:
    torch.set_num_threads(1)
    policy = load_policy(shipped("miloop-tsp.pt"))
    lines = ["| N | seed | fp32 length | bf16 length | bf16 / fp32 - 1 | torch length | "
             "fp32 / torch - 1 |", "|" + "---|" * 7]
    ratios: dict[int, list[float]] = defaultdict(list)
    for n, seeds in zip(args.sizes, args.seeds, strict=True):
        for seed in range(seeds):
            xy = instance(n, seed)
            fp32 = tour_length(xy, fused_greedy.greedy_tour(policy, xy, K))
            bf16 = tour_length(xy, fused_greedy.greedy_tour(policy, xy, K, bf16=True))
            ratios[n].append(bf16 / fp32 - 1)
            torch_cells = " | "
            if n <= args.torch_max and seed < args.torch_seeds:
                batch = {"locs": torch.as_tensor(xy)[None]}
                reference = tour_length(xy, decode(policy, batch, "greedy", candidates=K,
                                                   engine="torch").actions[0].numpy())
                torch_cells = f"{reference:.4f} | {gap(fp32, reference):+.3f}%"
            lines.append(f"| {n:,} | {seed} | {fp32:.4f} | {bf16:.4f} | "
                         f"{gap(bf16, fp32):+.3f}% | {torch_cells} |")
            print(lines[-1], flush=True)
    lines += ["", "| N | instances | bf16 / fp32 - 1: mean | standard error | min | max |",
              "|" + "---|" * 6]
    every = [x for r in ratios.values() for x in r]
    for n, r in [*ratios.items(), ("all", every)]:
        error = np.std(r, ddof=1) / math.sqrt(len(r)) if len(r) > 1 else float("nan")
        lines.append(f"| {n if n == 'all' else f'{n:,}'} | {len(r)} | {100 * np.mean(r):+.3f}% | "
                     f"{100 * error:.3f}% | {100 * min(r):+.3f}% | {100 * max(r):+.3f}% |")
    return "\n".join(lines)


def candidates(args: argparse.Namespace) -> str:
    torch.set_num_threads(1)
    policy = load_policy(shipped("miloop-tsp.pt"))
    fused_greedy.greedy_tour(policy, instance(50, 0), 10)  # compile before timing
    sizes = [K, *args.candidates]
    lines = ["| N | seed | " + " | ".join(f"K = {k}: length, CPU ms/step" for k in sizes) + " |",
             "|" + "---|" * (2 + len(sizes))]
    ratios: dict[tuple[int, int], list[float]] = defaultdict(list)
    times: dict[int, list[float]] = defaultdict(list)
    for n, seeds in zip(args.sizes, args.seeds, strict=True):
        for seed in range(seeds):
            xy = instance(n, seed)
            cells, base = [], math.nan
            for k in sizes:
                started = time.process_time()
                length = tour_length(xy, fused_greedy.greedy_tour(policy, xy, k))
                per_step = 1000 * (time.process_time() - started) / (n - 1)
                base = length if k == K else base
                ratios[(n, k)].append(length / base - 1)
                times[k].append(per_step)
                cells.append(f"{length:.4f}, {per_step:.2f}")
            lines.append(f"| {n:,} | {seed} | " + " | ".join(cells) + " |")
            print(lines[-1], flush=True)
    lines += ["", "| N | K | instances | length / length at K = 200 - 1: mean | standard error | "
              "min | max |", "|" + "---|" * 7]
    for (n, k), r in ratios.items():
        if k == K:
            continue
        error = np.std(r, ddof=1) / math.sqrt(len(r)) if len(r) > 1 else float("nan")
        lines.append(f"| {n:,} | {k} | {len(r)} | {100 * np.mean(r):+.3f}% | {100 * error:.3f}% | "
                     f"{100 * min(r):+.3f}% | {100 * max(r):+.3f}% |")
    lines += ["", "| K | CPU ms per step, mean over all instances |", "|---|---|"]
    lines += [f"| {k} | {np.mean(times[k]):.2f} |" for k in sizes]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    ints = lambda text: [int(x) for x in text.split(",")]  # noqa: E731
    words = lambda text: text.split(",")  # noqa: E731
    for name in ("speed", "profile", "quality", "candidates"):
        p = sub.add_parser(name)
        p.add_argument("--seed", type=int, default=2026)
        p.add_argument("--out", type=Path)
        p.add_argument("--precisions", type=words, default=["fp32", "bf16"])
        if name == "profile":
            p.add_argument("--size", type=int, default=10_000)
            p.add_argument("--steps", type=int, default=2000)
        else:
            p.add_argument("--sizes", type=ints, default=[1000, 2000, 5000, 10_000]
                           if name in ("quality", "candidates") else [1000, 10_000, 100_000])
        if name == "candidates":
            p.add_argument("--seeds", type=ints, default=[10, 5, 5, 5],
                           help="instances (seeds 0, 1, ...) per size")
            p.add_argument("--candidates", type=ints, default=[50, 100, 150])
        if name == "quality":
            p.add_argument("--seeds", type=ints, default=[20, 10, 5, 5],
                           help="instances (seeds 0, 1, ...) per size")
            p.add_argument("--torch-max", type=int, default=1000)
            p.add_argument("--torch-seeds", type=int, default=5)
    case = sub.add_parser("speed-case")  # child of speed: one decode, prints JSON
    case.add_argument("n", type=int)
    case.add_argument("precision")
    case.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    if args.command == "speed-case":
        print(json.dumps(speed_case(args.n, args.precision, args.seed)))
        return
    table = {"speed": speed, "profile": profile, "quality": quality,
             "candidates": candidates}[args.command](args)
    source = Provenance.current()
    text = (f"{table}\n\ncommit {source.commit}, {source.date}, native bf16: {native_bf16()}, "
            f"`{source.command}`\n")
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
