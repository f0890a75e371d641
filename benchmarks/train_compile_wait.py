"""What ``torch.compile`` of the fused kernels costs a short training command: the wall clock of
``routecli train`` (a fresh run of 2 steps, then ``--resume`` to 4) with the compiler's cache
empty, warm, and with ``--no-compile``.

    .venv/bin/python benchmarks/train_compile_wait.py [--out FILE.md]

Each command runs in a fresh process on one thread, with its own run folder, reference cache
and inductor cache (``TORCHINDUCTOR_CACHE_DIR``) in a temporary folder. Prints a markdown table;
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

TINY = ["--problem", "tsp", "--val-size", "20", "--val-instances", "2", "--val-every", "100",
        "--val-time-limit", "0.05", "--threads", "1"]


def timed(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "routecli", *argv], check=True, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        env = {**os.environ, "ROUTECLI_CACHE": f"{scratch}/cache",
               "TORCHINDUCTOR_CACHE_DIR": f"{scratch}/inductor"}
        for label, flags in (("compiled", []), ("--no-compile", ["--no-compile"])):
            run = f"{scratch}/run{len(rows)}"
            fresh = timed(["train", *TINY, "--curriculum", "20:2:4:4", "--out", run, *flags], env)
            resumed = timed(["train", *TINY, "--curriculum", "20:4:4:4", "--out", run,
                             "--resume", *flags], env)
            rows.append((label, fresh, resumed))
    lines = ["| kernels | fresh run, 2 steps (s) | --resume, 2 more steps (s) |", "|---|---|---|"]
    lines += [f"| {label} | {fresh:.1f} | {resumed:.1f} |" for label, fresh, resumed in rows]
    print("\n".join(lines))
    if args.out:
        args.out.write_text(
            f"# The compile wait of a short training command\n\nCommit {git_commit()}; "
            f"`python benchmarks/train_compile_wait.py`; 1-minute load average {load:.1f} at "
            f"the start, {os.getloadavg()[0]:.1f} at the end (2 cores). The fresh compiled run "
            "starts with an empty inductor cache; --resume finds it warm.\n\n"
            + "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
