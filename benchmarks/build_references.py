"""Rebuild the reference solutions shipped for the analysis sets (routecli/analysis/references).

    .venv/bin/python benchmarks/build_references.py --sets cvrp-100,cvrp-200,cvrp-500,vrptw-100,pdtsp-51 \\
        --num 1000 --workers 2

Each set's first ``--num`` instances (generator seed ``--seed``) are solved on the default
reference budget (``routecli.baselines.reference.reference_budget``) through the same
``reference_set`` the analyses use, so shipped, cached and computed references are one thing;
the file is then rewritten from them. Each instance is a task (``--executor``, ``--workers``,
``--scheduler``: a local pool by default; Dask for a cluster), cached here as it finishes. A
file holds one number of instances (the generators draw a set at once, so a larger ``--num``
is another set of instances).
"""

from __future__ import annotations

import argparse
import time

from routecli.analysis.data import default_budget, reference_set
from routecli.analysis.shipped import shipped_path, write_shipped
from routecli.tasks import add_executor_options, executor_of


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="cvrp-100,cvrp-200,cvrp-500,vrptw-100,pdtsp-51")
    parser.add_argument("--num", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    add_executor_options(parser)
    args = parser.parse_args()
    for name in (s.strip() for s in args.sets.split(",")):
        started = time.perf_counter()
        budget = default_budget(name)
        instances, solutions = reference_set(name, args.num, seed=args.seed, budget=budget,
                                             executor=executor_of(args))
        path = write_shipped(shipped_path(name, args.seed), name, args.seed, budget, instances,
                             solutions)
        print(f"{name}: {len(solutions)} references ({budget.key}) in "
              f"{time.perf_counter() - started:.0f} s -> {path} ({path.stat().st_size:,} bytes)",
              flush=True)


if __name__ == "__main__":
    main()
