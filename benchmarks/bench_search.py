"""Ruin-and-recreate search (``sisr``) vs PyVRP on CVRPLIB X, same wall-clock limit each.

Gap to the best-known value of every instance (``bks.csv`` of the benchmark data), for the
string-removal policy, the random-removal control and PyVRP's HGS; every returned solution
is validated by :func:`routecli.solvers.run`. Results go to a CSV as they come (a rerun skips
finished rows) and a markdown table is printed at the end.

    .venv/bin/python benchmarks/bench_search.py --subset spread:10 --time-limit 60 \
        --solvers strings,random,hgs --out benchmarks/results/search_x.csv

``--subset`` is ``all``, ``spread:K`` (K instances evenly spaced over the size-sorted set) or
a comma-separated list of instance names.
"""

from __future__ import annotations

import argparse
import csv
import statistics
from pathlib import Path

from routecli.bench.sets import data_root
from routecli.bench.sets import pick_cvrplib_x as pick
from routecli.io import read_instance
from routecli.problems import gap
from routecli.solvers import Stop, make_solver, run

DATA = data_root() or Path("../shared/benchdata")  # --data-root rule of routecli bench
FIELDS = ["instance", "n", "solver", "seed", "time_limit", "cost", "bks", "gap", "seconds",
          "feasible"]


def solver_for(name: str):  # noqa: ANN201 - a routecli Solver
    if name == "hgs":
        return make_solver("hgs")
    return make_solver("sisr", policy=name)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--subset", default="spread:10")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--solvers", default="strings,random,hgs",
                    help="comma list of: strings, random (sisr policies), hgs (PyVRP)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/search_x.csv"))
    args = ap.parse_args()

    x_dir = DATA / "cvrplib" / "X"
    with open(DATA / "bks.csv") as fh:
        bks = {r["instance"]: float(r["bks"]) for r in csv.DictReader(fh)}
    files = pick(sorted(x_dir.glob("X-*.vrp")), args.subset)
    solvers = args.solvers.split(",")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    done: dict[tuple[str, str], dict] = {}
    if args.out.exists():
        with open(args.out) as fh:
            for row in csv.DictReader(fh):
                if float(row["time_limit"]) == args.time_limit and int(row["seed"]) == args.seed:
                    done[(row["instance"], row["solver"])] = row
    fresh = not args.out.exists()
    with open(args.out, "a", newline="") as fh:
        writer = csv.DictWriter(fh, FIELDS)
        if fresh:
            writer.writeheader()
        for f in files:
            instance = read_instance(f)
            for name in solvers:
                if (instance.name, name) in done:
                    continue
                result = run(solver_for(name), instance, seed=args.seed,
                             stop=Stop(seconds=args.time_limit), bks=bks[instance.name])
                row = {"instance": instance.name, "n": instance.size, "solver": name,
                       "seed": args.seed, "time_limit": args.time_limit, "cost": result.cost,
                       "bks": bks[instance.name], "gap": result.gap,
                       "seconds": round(result.seconds, 2), "feasible": result.feasible}
                writer.writerow(row)
                fh.flush()
                done[(instance.name, name)] = row
                print(f"{instance.name:14s} {name:8s} cost {result.cost:10.0f} "
                      f"gap {result.gap:6.3f}%  {result.seconds:6.1f}s  "
                      f"{'valid' if result.feasible else 'INVALID: ' + result.problems[0]}",
                      flush=True)

    names = [f.stem for f in files]
    header = "| instance | n | BKS | " + " | ".join(f"{s} gap %" for s in solvers) + " |"
    print(header)
    print("|" + "---|" * (3 + len(solvers)))
    for name in names:
        cells = [done.get((name, s)) for s in solvers]
        n = next((c["n"] for c in cells if c), "")
        print(f"| {name} | {n} | {bks[name]:.0f} | " + " | ".join(
            f"{gap(float(c['cost']), bks[name]):.2f}" if c else "-" for c in cells) + " |")
    means = []
    for s in solvers:
        gaps = [gap(float(done[(n, s)]["cost"]), bks[n]) for n in names if (n, s) in done]
        means.append(f"{statistics.mean(gaps):.2f}" if gaps else "-")
    print("| **mean** | | | " + " | ".join(means) + " |")
    invalid = [k for k, r in done.items() if str(r["feasible"]) != "True"]
    print(f"invalid solutions: {len(invalid)}")


if __name__ == "__main__":
    main()
