"""MiLoop greedy decoding at scale: time and peak memory with K-nearest candidate sets.

    .venv/bin/python benchmarks/bench_scaling.py \
        --cases tsp:1000:torch,tsp:1000:fused,tsp:10000:torch,tsp:10000,tsp:100000,dimacs:100000 \
        --out benchmarks/results/miloop_scaling_fused

Each case (``problem:N[:mode]``) runs in a fresh process on one seeded uniform instance with the
shipped checkpoint, so its peak resident memory (``ru_maxrss``) is its own. ``mode``: ``full``
decodes without candidate sets, ``torch`` or ``fused`` picks the decoding engine
(:mod:`routecli.miloop.decode`; default ``auto``). Problem ``dimacs`` is the TSP instance
``E<N>.0`` of the 8th DIMACS challenge (:mod:`routecli.generate.portgen`, N one of its sizes),
scaled to the unit square. One thread means one torch thread and one OpenBLAS thread (numba's
matrix products); the fused kernel is compiled before the clock starts. The solution is
checked with ``validate``. The TSP cost is also given relative to the Beardwood-Halton-Hammersley
estimate ``0.7124 sqrt(N)`` of the optimal tour through N uniform points in the unit square
(asymptotic; a few percent low at 1k).
Writes ``OUT.csv`` (one row per case in the schema of :mod:`routecli.results` plus the
scaling columns; resumable) and ``OUT.md``.
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
from dataclasses import asdict
from pathlib import Path

from routecli.results import COLUMNS, Provenance, ResultLog, ResultRow

EXTRA = ["engine", "candidates", "ms_per_step", "steps", "cpu_s", "cpu_ms_per_step", "peak_rss_mb",
         "model_rss_mb", "bhh_ratio", "routes"]
BHH = 0.7124


def uniform_or_dimacs(problem: str, n: int, seed: int) -> dict:
    """The generated batch of one case: ``dimacs`` is ``E<N>.0`` in the unit square."""
    from routecli import generate
    from routecli.generate.portgen import MAXCOORD, e_series_seed, portgen

    if problem == "dimacs":
        return {"locs": portgen(n, e_series_seed(n, 0))[None] / MAXCOORD}
    return generate.tsp(1, n, seed) if problem == "tsp" else generate.cvrp(1, n, seed)


def run_case(problem: str, n: int, mode: str, seed: int, threads: int) -> dict:
    """Solve one instance in this process through ``--model miloop``; returns its row."""
    import torch

    from routecli.generate import batch_instances
    from routecli.miloop.decode import decode
    from routecli.miloop.solver import DEFAULT_CANDIDATES
    from routecli.results import ResultRow
    from routecli.solvers import make_solver, run

    kind = "tsp" if problem == "dimacs" else problem
    instance = batch_instances(kind, uniform_or_dimacs(problem, n, seed))[0]
    k = None if mode == "full" else DEFAULT_CANDIDATES[kind]
    engine = mode if mode in ("torch", "fused") else "auto"
    solver = make_solver("miloop", candidates=k or 0, threads=threads, engine=engine)
    model = solver.policy(kind)  # load the weights before measuring
    if kind == "tsp" and k is not None and engine != "torch":  # compile the fused kernel
        decode(model, {"locs": torch.rand(1, 20, 2)}, candidates=5, engine="fused")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    cpu = time.process_time()
    result = run(solver, instance, seed=seed)
    cpu = time.process_time() - cpu
    steps = n if kind == "tsp" else n + len(result.solution.routes)  # type: ignore[union-attr]
    set_name = f"dimacs-E{n}.0" if problem == "dimacs" else f"uniform-{problem}"
    row = ResultRow.of(result, set_name=set_name, file=None, solver="miloop",
                       settings=solver.settings, seed=seed, stop=None,
                       provenance=Provenance.current())
    return {**asdict(row), "engine": engine, "candidates": k or "all",
            "ms_per_step": round(1000 * result.seconds / steps, 2), "steps": steps,
            "cpu_s": round(cpu, 2), "cpu_ms_per_step": round(1000 * cpu / steps, 2),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "model_rss_mb": round(before),
            "bhh_ratio": round(result.cost / (BHH * math.sqrt(n)), 4) if kind == "tsp" else "",
            "routes": len(result.solution.routes) if kind == "cvrp" else "",  # type: ignore[union-attr]
            }


def case_key(row: dict) -> str:
    """The ``--cases`` entry that produced ``row``."""
    problem = "dimacs" if str(row["set"]).startswith("dimacs") else row["problem"]
    mode = ("full" if row["candidates"] == "all" else
            row["engine"] if row["engine"] in ("torch", "fused") else "")
    return f"{problem}:{row['n']}" + (f":{mode}" if mode else "")


def markdown(rows: list[dict]) -> str:
    head = ("| instance set | N | engine | K | time s | ms/step | CPU s | CPU ms/step | peak RSS MB | "
            "RSS before decoding MB | cost | cost / 0.7124 sqrt(N) | routes | feasible |")
    lines = [head, "|" + "---|" * 14]
    for r in rows:
        lines.append(f"| {r['set']} | {int(r['n']):,} | {r['engine']} | {r['candidates']} | "
                     f"{float(r['seconds']):.2f} | "
                     f"{r['ms_per_step']} | {r['cpu_s']} | {r['cpu_ms_per_step']} | "
                     f"{r['peak_rss_mb']} | {r['model_rss_mb']} | "
                     f"{float(r['cost']):,.2f} | {r['bhh_ratio']} | {r['routes']} | "
                     f"{r['feasible']} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="tsp:1000:torch,tsp:1000:fused,tsp:10000:torch,"
                                           "tsp:10000,tsp:100000,dimacs:100000")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/miloop_scaling_fused"))
    parser.add_argument("--one", help=argparse.SUPPRESS)  # child mode: run one case, print JSON
    args = parser.parse_args()
    if args.one:
        problem, n, *mode = args.one.split(":")
        print(json.dumps(run_case(problem, int(n), mode[0] if mode else "auto", args.seed,
                                  args.threads)))
        return
    log = ResultLog(args.out.with_suffix(".csv"), extra=EXTRA)
    rows = log.rows
    done = {case_key(r) for r in rows}
    for case in args.cases.split(","):
        if case in done:
            continue
        env = {**os.environ, "OPENBLAS_NUM_THREADS": str(args.threads)}
        child = subprocess.run([sys.executable, __file__, "--one", case, "--seed", str(args.seed),
                                "--threads", str(args.threads)], capture_output=True, text=True,
                               env=env)
        if child.returncode != 0:
            sys.exit(f"{case} failed:\n{child.stderr}")
        record = {**json.loads(child.stdout.strip().splitlines()[-1]),
                  **asdict(Provenance.current())}  # this command, not the child's
        log.add_row(ResultRow(**{k: record[k] for k in COLUMNS}), **{k: record[k] for k in EXTRA})
        print(markdown(rows[-1:]).splitlines()[-1], flush=True)
    args.out.with_suffix(".md").write_text(markdown(rows))
    print(markdown(rows))


if __name__ == "__main__":
    main()
