"""Reading times of the largest benchmark files (TSPLIB, CVRPLIB AGS, X), as a table.

    .venv/bin/python benchmarks/bench_io.py [--data-root ../shared/benchdata] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from routecli.io import read_instance, read_solution

FILES = ["tsplib/pla85900.tsp", "tsplib/pla33810.tsp", "tsplib/usa13509.tsp",
         "cvrplib/AGS/Flanders2.vrp", "cvrplib/AGS/Brussels2.vrp", "cvrplib/X/X-n1001-k43.vrp"]


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data-root", type=Path,
                        default=Path(__file__).resolve().parents[2] / "shared" / "benchdata")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    read_instance(args.data_root / FILES[-1])  # warm the numba cache outside the timings
    table = Table(title=f"routecli: instance reading (best of {args.repeat})")
    for col in ("file", "n", "read (s)", "re-cost solution (s)"):
        table.add_column(col, justify="right" if col != "file" else "left")
    for rel in FILES:
        path = args.data_root / rel
        inst = read_instance(path)
        read_s = best_of(lambda p=path: read_instance(p), args.repeat)
        sol_path = next((p for p in (path.with_suffix(".sol"), path.with_suffix(".opt.tour"))
                         if p.exists()), None)
        cost_s = "-"
        if sol_path is not None:
            def recost(i=inst, sp=sol_path) -> float:
                return i.cost(read_solution(sp, i))

            cost_s = f"{best_of(recost, args.repeat):.3f}"
        table.add_row(rel, str(inst.size), f"{read_s:.3f}", cost_s)
    Console().print(table)


if __name__ == "__main__":
    main()
