"""How closely every solver keeps ``--time-limit``: X-n1001-k43 and a generated 10,000-node TSP,
each model under ``-t`` 2 and 5 seconds, one process per run.

    .venv/bin/python benchmarks/bench_time_limit.py [--data-root FOLDER] [--limits 2,5]
        [--machine "what else ran"] [--out benchmarks/results/time_limit.md]

Each run is ``routecli solve FILE --model M -t T --json --threads 1 --seed 0`` in a fresh
process; the table shows the search the limit bounds (``search_seconds``) and how far past the
limit it ended, the solve (loading weights and building distance data included), the whole
command's wall clock (start-up and reading too), how much of its plan the model ran and what
stopped it. ``dact`` has no shipped weights: it runs an untrained compare-pe model, which moves
as slowly as a trained one. Each model first solves the instance once with ``-t 0`` (not
measured), so its compiled kernels are in numba's cache as after any first use. A run that
fails or passes ``--give-up`` seconds is reported as such.
Prints a markdown table; ``--out`` also writes it with the commit, the cores, the load average
at the start and the end, and ``--machine`` (what else ran: a loaded machine stretches the
start-up and the solve more than the search, which the clock bounds).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from routecli.io.datasets import data_root
from routecli.results import git_commit

CVRP = "cvrplib/X/X-n1001-k43.vrp"
MODELS = {  # instance kind -> [(label, solve arguments)]
    "cvrp": [("nn", ["-m", "nn"]), ("hgs", ["-m", "hgs"]), ("sisr", ["-m", "sisr"]),
             ("nds", ["-m", "nds"]), ("miloop greedy", ["-m", "miloop"]),
             ("miloop multistart 100", ["-m", "miloop", "--decode", "multistart"]),
             ("dact (untrained)", ["-m", "dact", "--checkpoint", "{dact}"])],
    "tsp": [("nn", ["-m", "nn"]), ("hgs", ["-m", "hgs"]), ("miloop greedy", ["-m", "miloop"]),
            ("miloop multistart 8", ["-m", "miloop", "--decode", "multistart", "--starts", "8"])],
}


def untrained_dact(folder: Path) -> Path:
    import torch

    from routecli.improve.model import DACT, DACTConfig, to_checkpoint
    from routecli.train.checkpoint import save

    torch.manual_seed(0)
    return save(to_checkpoint(DACT(DACTConfig(problem="cvrp", pe="ipe_xpe"))), folder / "dact.pt")


def one_run(path: Path, args: list[str], limit: float, give_up: float) -> dict:
    argv = [sys.executable, "-m", "routecli", "solve", str(path), *args, "-t", f"{limit:g}",
            "--json", "--threads", "1", "--seed", "0"]
    start = time.perf_counter()
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=give_up)
    except subprocess.TimeoutExpired:
        return {"failed": f"still running after {give_up:.0f} s"}
    wall = time.perf_counter() - start
    if done.returncode != 0 or not done.stdout.strip():
        return {"failed": (done.stderr.strip().splitlines() or ["no output"])[-1][:80]}
    return {**json.loads(done.stdout.splitlines()[-1]), "wall": wall}


def row(instance: str, label: str, limit: float, result: dict) -> str:
    if "failed" in result:
        return f"| {instance} | {label} | {limit:g} | failed: {result['failed']} ||||||"
    search = result["search_seconds"]
    planned = result["work_planned"]
    work = (f"{result['work_done']:,}" + ("" if planned is None else f" of {planned:,}")
            + f" {result['work_unit']}")
    gap = "-" if result["gap_pct"] is None else f"{result['gap_pct']:.2f}%"
    return (f"| {instance} | {label} | {limit:g} | {search:.2f} | {search - limit:+.2f} | "
            f"{result['solve_seconds']:.2f} | {result['wall']:.2f} | {work} | "
            f"{result['stopped_by']} | {gap} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-root", type=Path, default=None)
    parser.add_argument("--limits", default="2,5", help="comma list of -t values")
    parser.add_argument("--give-up", type=float, default=300.0, help="seconds per run at most")
    parser.add_argument("--machine", default="nothing said about other jobs",
                        help="the conditions, for the result file")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    root = data_root(args.data_root)
    if root is None or not (root / CVRP).is_file():
        parser.error(f"{CVRP} not found under the data folder (--data-root, routecli data fetch)")
    limits = [float(t) for t in args.limits.split(",")]
    load = os.getloadavg()[0]
    head = ["| instance | model | -t (s) | search (s) | past -t (s) | solve (s) | command (s) | "
            "plan run | stopped by | gap |", "|---|---|---|---|---|---|---|---|---|---|"]
    print("\n".join(head), flush=True)
    lines = []
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        subprocess.run([sys.executable, "-m", "routecli", "generate", "tsp", "--size", "10000",
                        "--seed", "0", "--format", "file", "--out", str(folder / "tsp")],
                       check=True, capture_output=True)
        files = {"cvrp": ("X-n1001-k43", root / CVRP),
                 "tsp": ("TSP-10000 (seed 0)", next((folder / "tsp").glob("*.tsp")))}
        dact = untrained_dact(folder)
        for kind, (name, path) in files.items():
            for label, solve_args in MODELS[kind]:
                argv = [a.replace("{dact}", str(dact)) for a in solve_args]
                one_run(path, argv, 0.0, args.give_up)  # compile on first use, off the clock
                for limit in limits:
                    lines.append(row(name, label, limit,
                                     one_run(path, argv, limit, args.give_up)))
                    print(lines[-1], flush=True)
    if args.out:
        args.out.write_text(
            f"# How solvers keep --time-limit\n\nCommit {git_commit()}; `python "
            f"benchmarks/bench_time_limit.py --limits {args.limits}`; 1-minute load average "
            f"{load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end, {os.cpu_count()} "
            f"cores; {args.machine}.\n\n" + "\n".join(head + lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
