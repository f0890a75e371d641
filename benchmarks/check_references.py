"""Are the default PyVRP reference budgets near-converged? The gain of doubling them.

    .venv/bin/python benchmarks/check_references.py --instances 32 \\
        --rows benchmarks/results/check_references.csv --out benchmarks/results/check_references.md

For each instance set the MiLoop evaluation uses, PyVRP runs on the first
``--instances`` instances with the budget of ``routecli.baselines.reference.reference_budget``
doubled (both the iteration limit and the iterations without improvement). The run is
deterministic and its criterion only watches it, so the run with the plain budget is the same
run stopped earlier: the best cost at the point where the plain budget would have stopped is
read from the doubled run's record of improvements (checked against a separate run with the
plain budget on the first instance of each set). The table gives the mean gain of doubling,
which should be below 0.1%.

One process, one core. ``--rows`` (a :class:`routecli.results.ResultStore`) keeps one line
per finished instance, keyed by set, budget and instance fingerprint, and a rerun skips those
already there, so the check can be spread over several sessions; rows of another budget (a
changed ``reference_budget`` or PyVRP version) or number of instances are refused.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from routecli import generate
from routecli.atomic import atomic_write_text
from routecli.baselines.hgs import Run, search
from routecli.baselines.reference import ReferenceBudget, cache_path, reference_budget, store
from routecli.generate import batch_instances
from routecli.problems import Instance, check, gap
from routecli.problems.fingerprint import fingerprint
from routecli.results import ResultStore, git_commit
from routecli.solvers import Progress

# name: (instances of it, where they come from). The sets whose gaps routecli reports; the
# analyses' references are a measured fraction of this budget (benchmarks/analysis_budget.py).
SETS: dict[str, tuple[Callable[[int], list[Instance]], str]] = {
    # the first of the 128 the MiLoop evaluation uses (a generator draws a whole set at once,
    # so generate.cvrp(32, ...) would be other instances)
    "tsp-100": (lambda num: batch_instances("tsp", generate.tsp(128, 100, 2026))[:num],
                "MiLoop evaluation, generate.tsp(128, 100, 2026)"),
    "cvrp-100": (lambda num: batch_instances("cvrp", generate.cvrp(128, 100, 2026))[:num],
                 "MiLoop evaluation, generate.cvrp(128, 100, 2026), capacity 50 (the analyses' "
                 "capacity rule gives 50 at 100 customers too)"),
}
FIELDS = ["set", "set_size", "index", "fingerprint", "budget", "iterations", "cost",
          "doubled_iterations", "doubled_cost", "cpu_seconds", "timed_out"]
KEY = ["set", "fingerprint", "budget"]


def best_at(improved_at: list[int], costs: list[float], iteration: int) -> float:
    """Best cost after ``iteration`` iterations."""
    return costs[int(np.searchsorted(improved_at, iteration, side="right")) - 1]


def recorded_run(instance: Instance, budget: ReferenceBudget,
                 early: ReferenceBudget | None = None) -> tuple[Run, list[float], float]:
    """One PyVRP run on ``budget`` (and its solution where ``early`` stops it), the best cost
    at each of its improvements, and its CPU seconds."""
    costs: list[float] = []

    def record(progress: Progress) -> None:
        assert progress.best is not None
        costs.append(progress.best)

    started = time.process_time()
    run = search(instance, seed=budget.seed, stop=budget.stop, progress=record,
                 early=[] if early is None else [(early.iterations, early.no_improvement)])
    return run, costs, time.process_time() - started


def check_instance(name: str, size: int, index: int, instance: Instance,
                   verify: bool) -> dict[str, object]:
    """The row of one instance; ``verify``: also run the plain budget and compare. Both
    solutions go to the reference cache (the plain one is the reference every caller uses;
    ``--ref-budget 2`` of the analyses reads the doubled one)."""
    budget = reference_budget(instance.problem, instance.size)
    doubled = budget.scaled(2)
    run, costs, cpu = recorded_run(instance, doubled, early=budget)
    (plain,), (plain_iterations,) = run.early, run.early_iterations
    check(instance, run.solution)
    check(instance, plain)
    if not run.timed_out:
        store(cache_path(instance, doubled), instance, run.solution)
        store(cache_path(instance, budget), instance, plain)
    plain_cost = best_at(run.improved_at, costs, plain_iterations)
    if verify:
        direct, direct_costs, _ = recorded_run(instance, budget)
        if (direct.iterations, direct_costs[-1]) != (plain_iterations, plain_cost) or \
                instance.cost(direct.solution) != instance.cost(plain):
            raise SystemExit(f"{name} #{index}: the plain budget stopped at iteration "
                             f"{direct.iterations} with {direct_costs[-1]}, the doubled run says "
                             f"{plain_iterations} with {plain_cost}: the run is not deterministic")
    return {"set": name, "set_size": size, "index": index, "fingerprint": fingerprint(instance),
            "budget": budget.key,
            "iterations": plain_iterations, "cost": plain_cost,
            "doubled_iterations": run.iterations, "doubled_cost": costs[-1],
            "cpu_seconds": round(cpu, 2), "timed_out": int(run.timed_out)}


def gain_of(row: dict[str, str]) -> float:
    """How much better (%) the doubled budget's reference is."""
    return gap(float(row["cost"]), float(row["doubled_cost"]))


def table(rows: list[dict[str, str]]) -> str:
    """The markdown table, one line per set."""
    lines = ["| set | instances | budget: iterations / without improvement | iterations run "
             "(mean) | CPU s at the budget (mean, est.) | gain of doubling, mean % | max % | "
             "instances > 0.1% |",
             "|---|---|---|---|---|---|---|---|"]
    for name in SETS:
        sel = [r for r in rows if r["set"] == name]
        if not sel:
            continue
        budget = sel[0]["budget"].split("-")
        gain = np.array([gain_of(r) for r in sel])
        iters = np.array([int(r["iterations"]) for r in sel])
        cpu = np.array([float(r["cpu_seconds"]) * int(r["iterations"])
                        / max(1, int(r["doubled_iterations"])) for r in sel])
        capped = sum(int(r["timed_out"]) for r in sel)
        lines.append(f"| {name} | {len(sel)} | {budget[1][1:]} / {budget[2][1:]} | "
                     f"{iters.mean():,.0f} | {cpu.mean():.1f} | {gain.mean():.3f} | "
                     f"{gain.max():.3f} | {(gain > 0.1).sum()} |"
                     + (f" ({capped} hit the safety cap)" if capped else ""))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=32, help="per set")
    parser.add_argument("--sets", default=",".join(SETS),
                        help="comma list of: " + ", ".join(SETS))
    parser.add_argument("--rows", type=Path, required=True, help="resumable per-instance CSV")
    parser.add_argument("--table", action="store_true",
                        help="compute nothing: print the table of all rows in --rows")
    parser.add_argument("--out", type=Path, default=None,
                        help="write the table with the command and git commit here (.md)")
    args = parser.parse_args()
    names = [n.strip() for n in args.sets.split(",")]
    unknown = [n for n in names if n not in SETS]
    if unknown:
        raise SystemExit(f"unknown set {unknown[0]!r}; choose from {', '.join(SETS)}")

    store = ResultStore(args.rows, FIELDS, KEY)
    for name in [] if args.table else names:
        instances = SETS[name][0](args.instances)
        key = reference_budget(instances[0].problem, instances[0].size).key
        mine = [r for r in store.rows if r["set"] == name]
        if any((r["budget"], int(r["set_size"])) != (key, args.instances) for r in mine):
            raise SystemExit(f"{args.rows} holds {name} rows of another budget or number of "
                             f"instances than {key} on {args.instances}")
        for index, instance in enumerate(instances):
            if store.done(set=name, fingerprint=fingerprint(instance), budget=key):
                continue
            stored = store.add(**check_instance(name, args.instances, index, instance,
                                                verify=index == 0))
            print(f"{name} #{index}: {stored['iterations']} iterations, gain of doubling "
                  f"{gain_of(stored):.3f}% ({stored['cpu_seconds']} CPU s doubled)", flush=True)

    rows = store.rows
    rows = [r for r in rows if r["set"] in names]
    text = table(rows)
    print(text)
    if args.out is not None:
        commit = git_commit()
        sources = "\n".join(f"- {name}: {SETS[name][1]}" for name in names)
        atomic_write_text(args.out, f"# Gain of doubling the PyVRP reference budget\n\n"
                          f"`{' '.join(['python', *sys.argv])}` at commit {commit}; one process; "
                          f"CPU seconds are process time (wall time was longer: the 2-core machine "
                          f"was shared with a training run and other jobs).\n\n"
                          f"Instances (the first of each set, as many as the table says):"
                          f"\n\n{sources}\n\n{text}\n")


if __name__ == "__main__":
    main()
