"""Start-up time of the CLI: the wall clock of whole processes, best of N, next to the cost of
starting Python and importing numpy (which every command pays).

    .venv/bin/python benchmarks/bench_startup.py [--repeat 5] [--out FILE.md]

Run from the repository root (the demo instance is a relative path). Prints a markdown table;
the floor of issue 15 is ``routecli --help`` and ``routecli info`` under 1 s. Best of N, not the
mean: on a shared machine the minimum is the time the command needs, the rest is waiting for a
core.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from routecli.results import git_commit

DEMO = "data/demo/cvrp-demo-50.vrp"
FLOOR = 1.0  # seconds, for the commands marked in COMMANDS


def commands() -> list[tuple[str, list[str], bool]]:
    """(label, argv, held to the floor)."""
    routecli = str(Path(sys.executable).parent / "routecli")
    return [
        ('python -c "import numpy"', [sys.executable, "-c", "import numpy"], False),
        ("routecli --help", [routecli, "--help"], True),
        (f"routecli info {DEMO}", [routecli, "info", DEMO], True),
        (f"routecli solve {DEMO} -m nn", [routecli, "solve", DEMO, "-m", "nn"], False),
    ]


def best_of(argv: list[str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per command (best counts)")
    parser.add_argument("--out", type=Path, default=None,
                        help="also write the table, the commit and the load average here")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    rows = [(label, best_of(argv, args.repeat), floor) for label, argv, floor in commands()]
    baseline = rows[0][1]
    lines = [f"| command (best of {args.repeat}) | seconds | x numpy import | floor {FLOOR:g} s |",
             "|---|---|---|---|"]
    for label, seconds, floor in rows:
        verdict = ("met" if seconds < FLOOR else "MISSED") if floor else ""
        lines.append(f"| `{label}` | {seconds:.2f} | {seconds / baseline:.1f} | {verdict} |")
    print("\n".join(lines))
    if args.out:
        commit = git_commit()
        args.out.write_text(
            f"# CLI start-up\n\nCommit {commit}; `python benchmarks/bench_startup.py --repeat "
            f"{args.repeat}`; 1-minute load average {load:.1f} at the start, "
            f"{os.getloadavg()[0]:.1f} at the end (2 cores).\n\n" + "\n".join(lines) + "\n")
    return 0 if all(s < FLOOR for _, s, floor in rows if floor) else 1


if __name__ == "__main__":
    sys.exit(main())
