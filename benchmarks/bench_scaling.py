"""MiLoop greedy decoding at scale: time and peak memory with K-nearest candidate sets.

    .venv/bin/python benchmarks/bench_scaling.py \
        --cases tsp:1000:full,tsp:1000,tsp:10000,tsp:100000,cvrp:1000,cvrp:10000 \
        --out benchmarks/results/miloop_scaling_r2

Each case (``problem:N[:full]``; ``full`` decodes without candidate sets) runs in a fresh
process on one seeded uniform instance with the shipped checkpoint, so its peak resident memory
(``ru_maxrss``) is its own. The solution is checked with ``validate``. The TSP cost is also
given relative to the Beardwood-Halton-Hammersley estimate ``0.7124 sqrt(N)`` of the optimal
tour through N uniform points in the unit square (asymptotic; a few percent low at 1k).
Writes ``OUT.csv`` (one row per case in the schema of :mod:`routecli.bench.results` plus the
scaling columns; resumable) and ``OUT.md``.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

from routecli.bench.results import COLUMNS, Provenance, ResultLog, ResultRow

EXTRA = ["candidates", "ms_per_step", "steps", "peak_rss_mb", "model_rss_mb", "bhh_ratio",
         "routes"]
BHH = 0.7124


def run_case(problem: str, n: int, full: bool, seed: int, threads: int) -> dict:
    """Solve one instance in this process through ``--model miloop``; returns its row."""
    from routecli import generate
    from routecli.bench.results import Provenance, ResultRow
    from routecli.generate import batch_instances
    from routecli.miloop.solver import DEFAULT_CANDIDATES
    from routecli.solvers import make_solver, run

    raw = generate.tsp(1, n, seed) if problem == "tsp" else generate.cvrp(1, n, seed)
    instance = batch_instances(problem, raw)[0]
    k = None if full else DEFAULT_CANDIDATES[problem]
    solver = make_solver("miloop", candidates=k or 0, threads=threads)
    solver.policy(problem)  # load the weights before measuring
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result = run(solver, instance, seed=seed)
    steps = n if problem == "tsp" else n + len(result.solution.routes)  # type: ignore[union-attr]
    row = ResultRow.of(result, set_name=f"uniform-{problem}", file=None, solver="miloop",
                       settings=solver.settings, seed=seed, stop=None,
                       provenance=Provenance.current())
    return {**asdict(row), "candidates": k or "all",
            "ms_per_step": round(1000 * result.seconds / steps, 2), "steps": steps,
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "model_rss_mb": round(before),
            "bhh_ratio": round(result.cost / (BHH * math.sqrt(n)), 4) if problem == "tsp" else "",
            "routes": len(result.solution.routes) if problem == "cvrp" else "",  # type: ignore[union-attr]
            }


def markdown(rows: list[dict]) -> str:
    head = ("| problem | N | K | time s | ms/step | peak RSS MB | RSS before decoding MB | cost | "
            "cost / 0.7124 sqrt(N) | routes | feasible |")
    lines = [head, "|" + "---|" * 11]
    for r in rows:
        lines.append(f"| {r['problem']} | {int(r['n']):,} | {r['candidates']} | {float(r['seconds']):.2f} | "
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
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/miloop_scaling_r2"))
    parser.add_argument("--one", help=argparse.SUPPRESS)  # child mode: run one case, print JSON
    args = parser.parse_args()
    if args.one:
        problem, n, *mode = args.one.split(":")
        print(json.dumps(run_case(problem, int(n), mode == ["full"], args.seed, args.threads)))
        return
    log = ResultLog(args.out.with_suffix(".csv"), extra=EXTRA)
    rows = log.rows
    done = {f"{r['problem']}:{r['n']}" + (":full" if r["candidates"] == "all" else "")
            for r in rows}
    for case in args.cases.split(","):
        if case in done:
            continue
        child = subprocess.run([sys.executable, __file__, "--one", case, "--seed", str(args.seed),
                                "--threads", str(args.threads)], capture_output=True, text=True)
        if child.returncode != 0:
            sys.exit(f"{case} failed:\n{child.stderr}")
        record = {**json.loads(child.stdout.strip().splitlines()[-1]),
                  **asdict(Provenance.current())}  # this command, not the child's
        log.add(ResultRow(**{k: record[k] for k in COLUMNS}), **{k: record[k] for k in EXTRA})
        print(markdown(rows[-1:]).splitlines()[-1], flush=True)
    args.out.with_suffix(".md").write_text(markdown(rows))
    print(markdown(rows))


if __name__ == "__main__":
    main()
