"""Ruin-and-recreate search (``sisr``) vs PyVRP on generated CVRP / VRPTW / PCVRP instances.

The PE paper's Table 5 setting in small: instances from :mod:`routecli.generate` (Appendix F
generators, capacity rule of Appendix F), every solver under the same wall-clock limit,
objective (cost; PCVRP: cost minus collected prizes) averaged per problem and the gap to
PyVRP-HGS. Every solution is validated by :func:`routecli.solvers.run`.

    .venv/bin/python benchmarks/bench_search_generated.py --problems vrptw,pcvrp --size 200 \
        --count 3 --time-limit 20
"""

from __future__ import annotations

import argparse
import statistics

from bench_search import solver_for  # sibling script: benchmarks/ is on sys.path

from routecli.generate import GENERATORS, batch_instances
from routecli.solvers import Stop, run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--problems", default="cvrp,vrptw,pcvrp")
    ap.add_argument("--size", type=int, default=200)
    ap.add_argument("--count", type=int, default=3)
    ap.add_argument("--time-limit", type=float, default=20.0)
    ap.add_argument("--solvers", default="strings,random,hgs")
    ap.add_argument("--seed", type=int, default=1234, help="generator seed")
    args = ap.parse_args()

    solvers = args.solvers.split(",")
    rows = []
    for problem in args.problems.split(","):
        batch = GENERATORS[problem](args.count, args.size, args.seed, capacity=None)
        costs: dict[str, list[float]] = {s: [] for s in solvers}
        for instance in batch_instances(problem, batch):
            for name in solvers:
                result = run(solver_for(name), instance, seed=0, stop=Stop(seconds=args.time_limit))
                if not result.feasible:
                    raise SystemExit(f"{name} returned an invalid solution on {instance.name}: "
                                     f"{result.problems[0]}")
                costs[name].append(result.cost)
                print(f"{instance.name:16s} {name:8s} {result.cost:10.4f} "
                      f"{result.seconds:6.1f}s", flush=True)
        rows.append((problem, {s: statistics.mean(c) for s, c in costs.items()}, costs))

    print(f"\n{args.count} instances of size {args.size} per problem, "
          f"{args.time_limit:g} s each, generator seed {args.seed}")
    print("| problem | " + " | ".join(f"{s} obj. | {s} gap to hgs %" for s in solvers) + " |")
    print("|---|" + "---|---|" * len(solvers))
    for problem, mean, costs in rows:
        cells = []
        for s in solvers:
            if "hgs" in costs:
                per = [100 * (a - b) / abs(b) for a, b in zip(costs[s], costs["hgs"])]
                cells.append(f"{mean[s]:.4f} | {statistics.mean(per):+.2f}")
            else:
                cells.append(f"{mean[s]:.4f} | -")
        print(f"| {problem} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
