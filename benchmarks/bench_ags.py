"""CVRPLIB AGS (3,000 to 30,000 customers): gap, peak memory, time and feasibility per model.

    .venv/bin/python benchmarks/bench_ags.py --models nn,sisr --time-limit 120 \
        --machine "quiet: nothing else running" --out benchmarks/results/ags_sisr_t120

Each (file, model) runs ``routecli solve``'s library path in a fresh process with one thread
(torch, OpenBLAS, OpenMP), so its peak resident memory (``ru_maxrss``: Python, the kernels and
the search together) is its own; the files run one at a time, largest first. ``--machine``
names the conditions (a loaded machine slows a time-limited search down, so its gaps are
upper bounds), and is stored in every row. ``hgs`` refuses, before any work, a file whose
matrices would not fit in the memory available (its row says so). Writes ``OUT.csv`` (the
schema of :mod:`routecli.results` plus the columns below; resumable) and ``OUT.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

from routecli.results import COLUMNS, Provenance, ResultLog, ResultRow

EXTRA = ["model", "machine", "peak_rss_mb", "cpu_s", "search_s", "search_iterations", "refused"]


def run_case(path: Path, model: str, seconds: float, seed: int) -> dict:
    """Solve ``path`` with ``model`` in this process; returns its row."""
    from routecli.errors import OptionError
    from routecli.io import best_known, read_instance
    from routecli.solvers import make_solver, require_problem, run
    from routecli.stop import MaxRuntime

    instance = read_instance(path)
    reference, _ = best_known(instance, path)
    options = {"threads": 1} if model == "miloop" else {}
    solver = make_solver(model, **options)
    stop = None if model in ("nn", "miloop") else MaxRuntime(seconds)
    try:
        require_problem(solver, instance)
    except OptionError as exc:
        return {"file": str(path), "instance": instance.name, "n": instance.size, "model": model,
                "refused": str(exc), "reference": reference}
    cpu = time.process_time()
    result = run(solver, instance, seed=seed, stop=stop, bks=reference)
    cpu = time.process_time() - cpu
    row = ResultRow.of(result, set_name="cvrplib-ags", file=path, solver=solver.name,
                       settings=getattr(solver, "settings", None), seed=seed, stop=stop,
                       provenance=Provenance.current())
    last = getattr(solver, "last", None)
    return {**asdict(row), "model": model, "refused": "",
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "cpu_s": round(cpu, 1), "search_s": round(getattr(last, "seconds", 0.0), 1) or "",
            "search_iterations": getattr(last, "iterations", "")}


def markdown(rows: list[dict], machine: str) -> str:
    """The table: one line per file, one group of columns per model."""
    models = list(dict.fromkeys(r["model"] for r in rows))
    files = sorted({r["instance"]: int(r["n"]) for r in rows}.items(), key=lambda kv: kv[1])
    head = "| instance | n | " + " | ".join(
        f"{m} gap | {m} peak MB | {m} s | {m} feasible" for m in models) + " |"
    lines = [f"Measured on: {machine}", "", head, "|" + "---|" * (2 + 4 * len(models))]
    for name, n in files:
        cells = []
        for m in models:
            r = next((r for r in rows if r["instance"] == name and r["model"] == m), None)
            if r is None:
                cells += ["", "", "", ""]
            elif r["refused"]:
                need = re.search(r"need[s]? about [0-9.]+ GiB", r["refused"])
                cells += ["refused", need.group() if need else r["refused"], "", ""]
            else:
                cells += [f"{float(r['gap_pct']):.2f}%", str(r["peak_rss_mb"]),
                          f"{float(r['seconds']):.0f}", str(r["feasible"])]
        lines.append(f"| {name} | {n:,} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="nn,sisr")
    parser.add_argument("--time-limit", type=float, default=120.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--files", help="comma list of AGS instance names (default: all 10)")
    parser.add_argument("--data-root", type=Path, default=None)
    parser.add_argument("--machine", required=True,
                        help="the conditions of the run, stored in every row")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/ags_t120"))
    parser.add_argument("--one", help=argparse.SUPPRESS)  # child mode: FILE:MODEL, print JSON
    args = parser.parse_args()
    if args.one:
        path, model = args.one.rsplit(":", 1)
        print(json.dumps(run_case(Path(path), model, args.time_limit, args.seed)))
        return
    from routecli.bench.sets import resolve
    from routecli.io import read_instance

    files = sorted(resolve(["cvrplib-ags"], args.data_root),
                   key=lambda f: -read_instance(f).size)
    if args.files:
        files = [f for f in files if f.stem in args.files.split(",")]
    log = ResultLog(args.out.with_suffix(".csv"), extra=EXTRA)
    rows = log.rows
    done = {(r["instance"], r["model"]) for r in rows}
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    for path in files:
        for model in args.models.split(","):
            if (path.stem, model) in done:
                continue
            child = subprocess.run([sys.executable, __file__, "--one", f"{path}:{model}",
                                    "--time-limit", str(args.time_limit), "--seed",
                                    str(args.seed), "--machine", args.machine],
                                   capture_output=True, text=True, env=env)
            if child.returncode != 0:
                sys.exit(f"{path.name} {model} failed:\n{child.stderr[-3000:]}")
            record = json.loads(child.stdout.strip().splitlines()[-1])
            record = {**{k: "" for k in COLUMNS}, "set": "cvrplib-ags", "solver": model,
                      "seed": args.seed, **record, **asdict(Provenance.current()),
                      "machine": args.machine}
            record["feasible"] = record["feasible"] if record["feasible"] != "" else False
            log.add_row(ResultRow(**{k: record[k] for k in COLUMNS}),
                        **{k: record.get(k, "") for k in EXTRA})
            print(f"{path.stem} {model}: gap {record.get('gap_pct')} peak "
                  f"{record.get('peak_rss_mb')} MB {record.get('refused') or ''}", flush=True)
    args.out.with_suffix(".md").write_text(markdown(log.rows, args.machine))
    print(markdown(log.rows, args.machine))


if __name__ == "__main__":
    main()
