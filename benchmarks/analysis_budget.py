"""How large a PyVRP budget do the route analyses need? Table 1 against the reference budget.

    .venv/bin/python benchmarks/analysis_budget.py --instances 16 \\
        --rows benchmarks/results/analysis_budget.csv --out benchmarks/results/analysis_budget.md

The analyses (anisometry, angular entropy, the PE probe) measure the shape of near-optimal
routes, not their cost, on 1,000 instances per set. The gap-grade reference budget
(``routecli.baselines.reference.reference_budget``, doubling it gains < 0.1%) costs 14 s
(VRPTW-100) to 190 s (CVRP-500) per instance on one core here, which is 90 CPU-hours for the
five Table 1 sets. This measures what a smaller budget changes: on the first ``--instances``
instances of each analysis set (generator seed 0, the instances the analyses use), one PyVRP
run on ``--high`` times the reference budget also yields, at no extra cost, the solutions of
every smaller ``--factors`` budget (the stopping criterion only watches the search, see
``routecli.baselines.hgs.search``). For each budget the table gives the cost above the
``--high`` run and the Table 1 statistics with their change from the ``--high`` run (paired by
instance: mean and standard error of the per-instance change of the per-route mean).

One process, one core. ``--rows`` (a :class:`routecli.results.ResultStore`) keeps one
line per finished instance and budget, keyed by set, budget and instance fingerprint, and a
rerun skips those already there; every solution also goes to the reference cache, so the
analyses reuse them.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from routecli.analysis.anisometry import STATS, anisometry, closed_paths, route_statistics
from routecli.analysis.data import default_budget, instance_set
from routecli.atomic import atomic_write_text
from routecli.baselines.hgs import search
from routecli.baselines.reference import (
    ReferenceBudget,
    cache_path,
    reference_solutions,
    store,
)
from routecli.problems import Instance, check
from routecli.problems.fingerprint import fingerprint
from routecli.results import ResultStore, git_commit

SETS = ("cvrp-100", "cvrp-200", "cvrp-500", "vrptw-100", "pdtsp-51")
FIELDS = ["set", "index", "fingerprint", "factor", "budget", "iterations", "cost", "cpu_seconds"]
KEY = ["set", "fingerprint", "factor", "budget"]


def solve_instance(name: str, index: int, instance: Instance, high: float,
                   factors: list[float]) -> list[dict[str, object]]:
    """One run on ``high`` times the reference budget; a row per budget (``factors`` and
    ``high``), each solution checked and cached. CPU seconds of a smaller budget are the run's,
    pro rata of the iterations it made."""
    top = default_budget(name, high)
    budgets = [default_budget(name, f) for f in factors]
    started = time.process_time()
    run = search(instance, seed=top.seed, stop=top.stop,
                 early=[(b.iterations, b.no_improvement) for b in budgets])
    cpu = time.process_time() - started
    if run.timed_out:
        raise SystemExit(f"{name} #{index}: the safety cap cut the run; rerun on a quieter core")
    rows = []
    for factor, budget, solution, iterations in zip(
            [*factors, high], [*budgets, top], [*run.early, run.solution],
            [*run.early_iterations, run.iterations], strict=True):
        check(instance, solution)
        store(cache_path(instance, budget), instance, solution)
        rows.append({"set": name, "index": index, "fingerprint": fingerprint(instance),
                     "factor": factor, "budget": budget.key,
                     "iterations": iterations, "cost": instance.cost(solution),
                     "cpu_seconds": round(cpu * iterations / max(run.iterations, 1), 2)})
    return rows


def instance_means(instances: list[Instance], solutions: list) -> dict[str, np.ndarray]:
    """Per instance, the mean over its routes of each Table 1 statistic. Each ``[I]``."""
    out: dict[str, list[float]] = {key: [] for key in STATS}
    for instance, solution in zip(instances, solutions, strict=True):
        per_route = route_statistics(closed_paths([instance], [solution]))
        for key in STATS:
            out[key].append(float(np.nanmean(per_route[key])))
    return {key: np.array(values) for key, values in out.items()}


def set_table(name: str, count: int, high: float, factors: list[float],
              rows: list[dict[str, str]]) -> list[str]:
    """Markdown lines of one set: a line per budget."""
    instances = instance_set(name, 1000, 0)[:count]
    lines = []
    by_factor: dict[float, dict[str, object]] = {}
    for factor in [*factors, high]:
        budget = default_budget(name, factor)
        solutions = reference_solutions(instances, budget, progress=False)
        mine = sorted((r for r in rows if r["set"] == name and float(r["factor"]) == factor),
                      key=lambda r: int(r["index"]))
        by_factor[factor] = {"budget": budget, "solutions": solutions,
                             "cost": np.array([float(r["cost"]) for r in mine]),
                             "cpu": np.mean([float(r["cpu_seconds"]) for r in mine]),
                             "iterations": np.mean([int(r["iterations"]) for r in mine]),
                             "table": anisometry(instances, solutions),
                             "means": instance_means(instances, solutions)}
    top = by_factor[high]
    for factor in [*factors, high]:
        entry = by_factor[factor]
        budget = entry["budget"]
        assert isinstance(budget, ReferenceBudget)
        above = 100 * np.mean(entry["cost"] / top["cost"] - 1)  # type: ignore[operator]
        cells = [name, f"{factor:g}", f"{budget.iterations:,} / {budget.no_improvement:,}",
                 f"{entry['iterations']:,.0f}", f"{entry['cpu']:.1f}", f"{above:.2f}"]
        for key in STATS:
            value = entry["table"][key]  # type: ignore[index]
            change = entry["means"][key] - top["means"][key]  # type: ignore[index]
            se = change.std(ddof=1) / np.sqrt(len(change)) if len(change) > 1 else float("nan")
            cells.append(f"{value:.3f} ({change.mean():+.3f} ± {se:.3f})")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--instances", type=int, default=16)
    parser.add_argument("--high", type=float, default=0.25)
    parser.add_argument("--factors", default="0.005,0.01,0.02,0.05,0.1")
    parser.add_argument("--rows", type=Path, required=True)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    names = [s.strip() for s in args.sets.split(",")]
    factors = sorted(float(f) for f in args.factors.split(","))
    if not all(0 < f < args.high for f in factors):
        raise SystemExit("--factors must lie between 0 and --high")
    results = ResultStore(args.rows, FIELDS, KEY)
    for name in names:
        instances = instance_set(name, 1000, 0)[: args.instances]
        for index, instance in enumerate(instances):
            if all(results.done(set=name, fingerprint=fingerprint(instance), factor=factor,
                                budget=default_budget(name, factor).key)
                   for factor in [*factors, args.high]):
                continue
            new = solve_instance(name, index, instance, args.high, factors)
            for row in new:
                if not results.done(**row):
                    results.add(**row)
            print(f"{name} #{index}: {new[-1]['cpu_seconds']} CPU s", flush=True)
    rows = results.rows
    commit = git_commit()
    lines = [f"Table 1 statistics against the PyVRP budget, first {args.instances} instances of "
             f"each analysis set (seed 0), commit {commit}. Budget: times the reference "
             "budget; cost: mean % above the run on the largest budget; each statistic: the "
             "mean over routes (its paired change from the largest budget: mean ± standard "
             "error over instances).", "",
             "| set | budget factor | iterations / without improvement | iterations run "
             "(mean) | CPU s per instance (mean) | cost above largest % | CV | max/min | MAD |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name in names:
        lines += set_table(name, args.instances, args.high, factors, rows)
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        atomic_write_text(args.out, text)


if __name__ == "__main__":
    main()
