"""The headline analyses from a fresh clone with an empty cache: wall clock of each command.

    .venv/bin/python benchmarks/bench_analyses.py --out benchmarks/results/analyses_fresh.md

Clones the committed ``HEAD`` of this repository into a temporary folder and runs, from there,
``routecli analyze anisometry``, ``routecli analyze entropy`` and ``routecli probe --pe all`` on
their defaults, with an empty reference cache (``ROUTECLI_CACHE``) and an empty numba cache
(``NUMBA_CACHE_DIR``), through this interpreter (its packages; the clone's source first on
``PYTHONPATH``). A command that had to compute PyVRP references (it announces them) is
reported as such. The floor of issue 20 is two minutes per command. Prints a markdown table;
``--out`` also writes it with the commit and the load average.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from routecli.results import git_commit

FLOOR = 120.0  # seconds
COMMANDS = (["analyze", "anisometry"], ["analyze", "entropy"], ["probe", "--pe", "all"])
COMPUTING = "PyVRP references to compute"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    repo = Path(__file__).resolve().parents[1]
    commit = git_commit()
    load = os.getloadavg()[0]
    lines = [f"| command (fresh clone of {commit}, empty caches) | seconds | references "
             f"computed | floor {FLOOR:.0f} s |", "|---|---|---|---|"]
    passed = True
    with tempfile.TemporaryDirectory() as tmp:
        clone = Path(tmp) / "routecli"
        subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
        env = {**os.environ, "PYTHONPATH": str(clone), "ROUTECLI_CACHE": str(Path(tmp) / "cache"),
               "NUMBA_CACHE_DIR": str(Path(tmp) / "numba"), "COLUMNS": "120"}
        for argv in COMMANDS:
            started = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "routecli", *argv], cwd=tmp, env=env,
                                  capture_output=True, text=True)
            seconds = time.perf_counter() - started
            if done.returncode != 0:
                raise SystemExit(f"routecli {' '.join(argv)} failed:\n{done.stderr}")
            computed = COMPUTING in done.stdout + done.stderr
            ok = seconds < FLOOR and not computed
            passed &= ok
            lines.append(f"| `routecli {' '.join(argv)}` | {seconds:.0f} | "
                         f"{'yes' if computed else 'no'} | {'met' if ok else 'MISSED'} |")
            print(done.stdout, flush=True)
    table = "\n".join(lines)
    print(table)
    if args.out:
        args.out.write_text(
            f"# Headline analyses from a fresh clone\n\nCommit {commit}; `python "
            f"benchmarks/bench_analyses.py`; 1-minute load average {load:.1f} at the start, "
            f"{os.getloadavg()[0]:.1f} at the end (2 cores).\n\n{table}\n")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
