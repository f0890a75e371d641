"""Fuzz the input side: run cases of every strategy in routecli/bench/fuzz/strategies.py
(mutated benchmark files, --bks and --seed values, PDTSP layouts, malformed solution files,
solution ids, unused fields, fleet and TYPE, JSON strictness, blank-line padding, output paths,
torn results files, concurrent bench, edited checkpoint configurations) through the CLI entry
point and count what happens (outcomes: routecli/bench/fuzz/harness.py).

    .venv/bin/python benchmarks/fuzz_inputs.py --cases 300 --seed 0 [--strategies "seeds,bks values"]

Case k uses strategy k mod S (S strategies chosen), with the generator seeded by (seed, k). It
prints a markdown table (strategy by outcome) and writes one CSV row per run (the git commit,
the input, the command, the outcome and its detail) to
``benchmarks/results/fuzz_inputs_s<seed>_n<cases>.csv``.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from routecli.bench.fuzz.harness import Runner, run_case, table
from routecli.bench.fuzz.mutations import load_seeds
from routecli.bench.fuzz.strategies import STRATEGIES
from routecli.cli.app import main as routecli_main
from routecli.store import git_commit

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "benchdata"
FIELDS = ["commit", "case", "strategy", "input", "command", "expect", "outcome", "exit",
          "seconds", "detail"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=300, help="cases (one to three runs each)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--strategies", default=",".join(STRATEGIES),
                        help="comma-separated names (default: all)")
    parser.add_argument("--data-root", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per run")
    parser.add_argument("--out", type=Path, default=None, help="CSV path")
    args = parser.parse_args()
    if not (args.data_root / "tsplib").is_dir():
        parser.error(f"no benchmark files under {args.data_root}")
    names = [name.strip() for name in args.strategies.split(",") if name.strip()]
    unknown = [name for name in names if name not in STRATEGIES]
    if unknown:
        parser.error(f"unknown strategies {unknown}; choose from {', '.join(STRATEGIES)}")
    command_line = "python benchmarks/fuzz_inputs.py " + " ".join(sys.argv[1:])
    commit = git_commit()
    out = args.out or ROOT / "benchmarks" / "results" / f"fuzz_inputs_s{args.seed}_n{args.cases}.csv"
    seeds = load_seeds(args.data_root)
    runner = Runner(routecli_main, args.timeout)
    rows: list[dict] = []
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="routecli-fuzz-") as tmp, out.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS)
        writer.writeheader()
        for number in range(args.cases):
            rng = np.random.default_rng([args.seed, number])
            case = STRATEGIES[names[number % len(names)]](rng, seeds)
            for row in run_case(runner, case, number, Path(tmp)):
                rows.append(row)
                writer.writerow({"commit": commit, **row})
            if (number + 1) % 50 == 0:
                fh.flush()
                print(f"{number + 1}/{args.cases} cases, {time.perf_counter() - start:.0f} s",
                      file=sys.stderr, flush=True)
    runner.close()
    print(f"`{command_line}` (commit {commit}, {args.cases} cases, {len(rows)} runs)\n")
    print(table(rows, names))
    print(f"\nper-run rows: {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}")


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    os.nice(10)
    main()
