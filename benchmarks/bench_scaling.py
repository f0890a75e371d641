"""MiLoop greedy decoding at scale: time and peak memory with K-nearest candidate sets.

    .venv/bin/python benchmarks/bench_scaling.py \
        --cases tsp:1000:full,tsp:1000,tsp:10000,tsp:100000,cvrp:1000,cvrp:10000 \
        --out benchmarks/results/miloop_scaling

Each case (``problem:N[:full]``; ``full`` decodes without candidate sets) runs in a fresh
process on one seeded uniform instance with the shipped checkpoint, so its peak resident memory
(``ru_maxrss``) is its own. The solution is checked with ``validate``. The TSP cost is also
given relative to the Beardwood-Halton-Hammersley estimate ``0.7124 sqrt(N)`` of the optimal
tour through N uniform points in the unit square (asymptotic; a few percent low at 1k).
Writes ``OUT.csv`` (one row per case, resumable) and ``OUT.md``.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import resource
import subprocess
import sys
import time
from pathlib import Path

FIELDS = ["problem", "n", "candidates", "seconds", "ms_per_step", "steps", "peak_rss_mb",
          "model_rss_mb", "cost", "bhh_ratio", "routes", "feasible"]
BHH = 0.7124


def run_case(problem: str, n: int, full: bool, seed: int, threads: int) -> dict:
    """Decode one instance in this process and return its row."""
    import numpy as np
    import torch

    from routecli import generate
    from routecli.generate import batch_instances
    from routecli.miloop.decode import decode, to_solution
    from routecli.miloop.model import load_policy
    from routecli.miloop.solver import DEFAULT_CANDIDATES
    from routecli.problems import validate
    from routecli.train.checkpoint import shipped

    torch.set_num_threads(threads)
    raw = generate.tsp(1, n, seed) if problem == "tsp" else generate.cvrp(1, n, seed)
    model = load_policy(shipped(f"miloop-{problem}.pt"), "cpu")
    batch = {k: torch.as_tensor(v) for k, v in raw.items()}
    k = None if full else DEFAULT_CANDIDATES[problem]
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    start = time.perf_counter()
    result = decode(model, batch, "greedy", candidates=k)
    seconds = time.perf_counter() - start
    instance = batch_instances(problem, raw)[0]
    solution = to_solution(instance, result.actions[0])
    cost = instance.cost(solution)
    routes = int(np.count_nonzero(result.actions[0].numpy() == 0)) if problem == "cvrp" else 0
    steps = len(result.actions[0])
    return {"problem": problem, "n": n, "candidates": k or "all", "seconds": round(seconds, 2),
            "ms_per_step": round(1000 * seconds / steps, 2), "steps": steps,
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "model_rss_mb": round(before), "cost": round(cost, 3),
            "bhh_ratio": round(cost / (BHH * math.sqrt(n)), 4) if problem == "tsp" else "",
            "routes": routes or "", "feasible": validate(instance, solution) == []}


def markdown(rows: list[dict]) -> str:
    head = ("| problem | N | K | time s | ms/step | peak RSS MB | RSS before decoding MB | cost | "
            "cost / 0.7124 sqrt(N) | routes | feasible |")
    lines = [head, "|" + "---|" * 11]
    for r in rows:
        lines.append(f"| {r['problem']} | {int(r['n']):,} | {r['candidates']} | {r['seconds']} | "
                     f"{r['ms_per_step']} | {r['peak_rss_mb']} | {r['model_rss_mb']} | "
                     f"{float(r['cost']):,.2f} | {r['bhh_ratio']} | {r['routes']} | "
                     f"{r['feasible']} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="tsp:1000:full,tsp:1000,tsp:10000,tsp:100000,"
                                           "cvrp:1000,cvrp:10000")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/miloop_scaling"))
    parser.add_argument("--one", help=argparse.SUPPRESS)  # child mode: run one case, print JSON
    args = parser.parse_args()
    if args.one:
        problem, n, *mode = args.one.split(":")
        print(json.dumps(run_case(problem, int(n), mode == ["full"], args.seed, args.threads)))
        return
    csv_path = args.out.with_suffix(".csv")
    rows = list(csv.DictReader(csv_path.open())) if csv_path.exists() else []
    done = {f"{r['problem']}:{r['n']}" + (":full" if r["candidates"] == "all" else "")
            for r in rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    for case in args.cases.split(","):
        if case in done:
            continue
        child = subprocess.run([sys.executable, __file__, "--one", case, "--seed", str(args.seed),
                                "--threads", str(args.threads)], capture_output=True, text=True)
        if child.returncode != 0:
            sys.exit(f"{case} failed:\n{child.stderr}")
        rows.append(json.loads(child.stdout.strip().splitlines()[-1]))
        print(markdown(rows[-1:]).splitlines()[-1], flush=True)
        with csv_path.open("w", newline="") as fh:
            writer = csv.DictWriter(fh, FIELDS)
            writer.writeheader()
            writer.writerows(rows)
    args.out.with_suffix(".md").write_text(markdown(rows))
    print(markdown(rows))


if __name__ == "__main__":
    main()
