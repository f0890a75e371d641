"""Fuzz the input side: run cases of every strategy in tests/fuzz/strategies.py
(mutated benchmark files, --bks and --seed values, PDTSP layouts, malformed solution files,
solution ids, unused fields, fleet and TYPE, JSON strictness, blank-line padding, output paths,
torn results files, concurrent bench, edited checkpoint configurations) through the CLI entry
point and count what happens (outcomes: tests/fuzz/harness.py).

    .venv/bin/python benchmarks/fuzz_inputs.py --cases 300 --seed 0 [--strategies "seeds,bks values"]

Case k uses strategy k mod S (S strategies chosen), with the generator seeded by (seed, k). It
prints a markdown table (strategy by outcome) and stores one row per run (the input, the
routecli invocation, the outcome and its detail; the commit, date and this command) in
``benchmarks/results/fuzz_inputs_s<seed>_n<cases>.csv``, the one result store: a killed run
resumes at its first case without all its rows.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
# The fuzzer is test tooling (tests/fuzz, which the tests also run); a script sees its own
# folder on sys.path, not the checkout's root, whose routecli is the one to fuzz (not another
# checkout's installed in the environment).
sys.path.insert(0, str(ROOT))
from routecli.cli.app import main as routecli_main  # noqa: E402
from routecli.results import ResultStore  # noqa: E402
from tests.fuzz.harness import Runner, run_case, table  # noqa: E402
from tests.fuzz.mutations import load_seeds  # noqa: E402
from tests.fuzz.strategies import STRATEGIES  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "benchdata"
FIELDS = ["case", "runs_in_case", "strategy", "input", "invocation", "expect", "outcome", "exit",
          "seconds", "detail"]
KEY = ["case", "invocation"]


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
    out = args.out or ROOT / "benchmarks" / "results" / f"fuzz_inputs_s{args.seed}_n{args.cases}.csv"
    seeds = load_seeds(args.data_root)
    store = ResultStore(out, FIELDS, KEY)
    stored = Counter(r["case"] for r in store.rows)
    complete = {case for case, n in stored.items()
                if n == int(store.find(case=case)["runs_in_case"])}  # type: ignore[index]
    runner = Runner(routecli_main, args.timeout)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="routecli-fuzz-") as tmp:
        for number in range(args.cases):
            if str(number) in complete:
                continue
            rng = np.random.default_rng([args.seed, number])
            case = STRATEGIES[names[number % len(names)]](rng, seeds)
            rows = run_case(runner, case, number, Path(tmp))
            for row in rows:
                if not store.done(case=number, invocation=row["invocation"]):
                    store.add(**row, runs_in_case=len(rows))
            if (number + 1) % 50 == 0:
                print(f"{number + 1}/{args.cases} cases, {time.perf_counter() - start:.0f} s",
                      file=sys.stderr, flush=True)
    runner.close()
    rows = [r for r in store.rows if int(r["case"]) < args.cases]
    commits = ", ".join(sorted({r["commit"] for r in rows}))
    print(f"`{rows[0]['command'] if rows else ''}` (commit {commits}, {args.cases} cases, "
          f"{len(rows)} runs)\n")
    print(table(rows, names))
    print(f"\nper-run rows: {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}")


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    os.nice(10)
    main()
