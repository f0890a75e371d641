"""Gaps of a MiLoop checkpoint on a named evaluation set against PyVRP references.

    .venv/bin/python benchmarks/eval_miloop.py --problem tsp --checkpoint routecli/checkpoints/miloop-tsp.pt \
        --set development --size 100 --decode greedy
    .venv/bin/python benchmarks/eval_miloop.py --problem cvrp ... --decode multistart --starts 100 \
        --augment --first 16

``--set`` names the instances (:mod:`routecli.miloop.sets`): ``development`` to compare
checkpoints and settings, ``test`` only for the final report of weights chosen on the
development set; every row records it. Prints one table row per run (and appends it as JSON to
--out): mean objective, mean gap (%)
to the references, seconds per instance, and the nearest-neighbour gap on the same instances.
References are PyVRP solutions on the deterministic budget of
``routecli.baselines.reference.reference_budget`` (iteration counts, fixed seed: the same on a
busy machine as on a quiet one): shipped with routecli for the evaluation sets
(``routecli/analysis/references/miloop-<problem>-<size>-s<seed>.npz``, written with
``--ship-references``), else cached on disk; the row records their settings. Before the
model runs, the first --check-refs instances are solved again with the budget doubled, and a
stored reference worse than that by more than 0.2% is reported as a warning.

Long runs (M = 100 x8 takes minutes per instance on a CPU) can be spread over several
sessions with ``--per-instance FILE.csv`` (a :class:`routecli.results.ResultStore`):
instances are decoded one block at a time, each finished one is appended to the file keyed by
the SHA-256 of the checkpoint's tensors, the decoding settings and the instance's fingerprint,
and a rerun skips those already there. The summary compares the stored model costs with the
references of this run, so a file decoded against older references gives the current gaps
without decoding again. The file is re-read before each block, so a
second process started with ``--reverse`` on the same file works from the other end and the two
meet in the middle (two cores, half the wall time; the instance where they meet may be decoded
twice). A process that finds all instances in the file prints the summary row.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
import torch

from routecli.analysis.data import references_of
from routecli.analysis.shipped import shipped_path, write_shipped
from routecli.baselines.construction import NearestNeighbour
from routecli.baselines.reference import (
    ReferenceBudget,
    reference_budget,
    reference_solutions,
)
from routecli.generate import batch_instances
from routecli.miloop.decode import decode, to_solution
from routecli.miloop.model import load_policy
from routecli.miloop.sets import EVALUATION_SETS, SEEDS, evaluation_batch
from routecli.problems import Instance, gap, validate
from routecli.problems.fingerprint import fingerprint
from routecli.results import ResultStore, git_commit
from routecli.train import checkpoint

# A stored reference more than this much (%) worse than a run with the budget doubled is not
# near-converged: the budget is too small for these instances, or the cache holds a bad run.
CONSISTENCY_TOLERANCE = 0.2
PER_INSTANCE = ["index", "fingerprint", "checkpoint_sha256", "settings", "cost", "ref_cost",
                "seconds", "reference"]
PER_INSTANCE_KEY = ["checkpoint_sha256", "settings", "fingerprint"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem", choices=["tsp", "cvrp"], required=True)
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--instances", type=int, default=128)
    parser.add_argument("--first", type=int, default=None, help="decode only the first K")
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--set", dest="set_name", choices=EVALUATION_SETS, default="development",
                        help="development: choose checkpoints and settings; test: report only")
    parser.add_argument("--decode", default="greedy", choices=["greedy", "multistart", "sampling"])
    parser.add_argument("--starts", type=int, default=100)
    parser.add_argument("--augment", action="store_true")
    parser.add_argument("--chunk", type=int, default=400, help="rollouts per batched decode")
    parser.add_argument("--ref-budget", type=float, default=1.0,
                        help="multiply the default PyVRP reference budget (iterations) by this")
    parser.add_argument("--check-refs", type=int, default=4,
                        help="re-solve the first K references with the budget doubled (0: skip)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=1, help="processes for PyVRP references")
    parser.add_argument("--ship-references", action="store_true",
                        help="store the references in routecli/analysis/references (one file "
                             "per problem, size and seed) so that no later run computes them")
    parser.add_argument("--out", default=None, help="append the result as a JSON line here")
    parser.add_argument("--per-instance", type=Path, default=None,
                        help="resumable: append one CSV row per decoded instance, skip done ones")
    parser.add_argument("--block", type=int, default=1, help="instances per decode with --per-instance")
    parser.add_argument("--reverse", action="store_true",
                        help="with --per-instance: take the blocks from the last instance down")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    seed = SEEDS[args.set_name]
    raw = evaluation_batch(args.problem, args.size, args.set_name, args.instances)
    instances = batch_instances(args.problem, raw)
    budget = reference_budget(args.problem, args.size).scaled(args.ref_budget)
    name = f"miloop-{args.problem}-{args.size}"
    refs = references_of(name, seed, instances, budget, jobs=args.jobs, progress=False)
    if args.ship_references:
        path = write_shipped(shipped_path(name, seed), name, seed, budget, instances, refs)
        print(f"wrote {path}")
    ref_cost = np.array([inst.cost(sol) for inst, sol in zip(instances, refs, strict=True)])
    consistency = check_references(instances[:args.check_refs], ref_cost, budget)
    digest = checkpoint.load(args.checkpoint)["sha256"][:16]
    k = args.first or args.instances
    starts = args.starts if args.decode != "greedy" else 1
    nn = NearestNeighbour()
    nn_cost = np.array([inst.cost(nn.solve(inst)) for inst in instances[:k]])

    model = load_policy(args.checkpoint)
    batch = {key: torch.as_tensor(v[:k], dtype=torch.long if key == "demand" else torch.float32)
             for key, v in raw.items()}
    def solve(rows: slice) -> tuple[list[float], float]:
        """Decode instances ``rows``; their validated costs and the decoding seconds."""
        part = {key: v[rows] for key, v in batch.items()}
        started = time.perf_counter()
        result = decode(model, part, args.decode, starts=args.starts, augment=args.augment,
                        chunk=args.chunk, generator=torch.Generator().manual_seed(seed))
        seconds = time.perf_counter() - started
        costs = []
        for inst, actions in zip(instances[rows], result.actions, strict=True):
            solution = to_solution(inst, actions)
            problems = validate(inst, solution)
            if problems:
                raise SystemExit(f"{inst.name}: infeasible solution: {problems[:3]}")
            costs.append(inst.cost(solution))
        return costs, seconds

    if args.per_instance is None:
        costs, seconds = solve(slice(0, k))
        cost = np.array(costs)
    else:
        settings = json.dumps({"decode": args.decode, "starts": starts, "augment": args.augment,
                               "seed": seed}, sort_keys=True)
        store = ResultStore(args.per_instance, PER_INSTANCE, key=PER_INSTANCE_KEY)
        prints = [fingerprint(inst) for inst in instances[:k]]

        def stored(i: int) -> dict[str, str] | None:
            return store.get(checkpoint_sha256=digest, settings=settings, fingerprint=prints[i])

        blocks = range(0, k, args.block)
        for lo in reversed(blocks) if args.reverse else blocks:
            store.reload()
            todo = [i for i in range(lo, min(lo + args.block, k)) if stored(i) is None]
            if not todo:
                continue
            costs, took = solve(slice(todo[0], todo[-1] + 1))
            for i, c in zip(range(todo[0], todo[-1] + 1), costs, strict=True):
                store.add(index=i, fingerprint=prints[i], checkpoint_sha256=digest,
                          settings=settings, cost=c, ref_cost=ref_cost[i],
                          seconds=took / len(costs), reference=budget.key)
            finished = sum(stored(i) is not None for i in range(k))
            print(f"{finished}/{k} instances, last block {took:.1f} s", flush=True)
        store.reload()
        rows = [stored(i) for i in range(k)]
        if None in rows:
            print(f"{k - rows.count(None)}/{k} instances in {args.per_instance}; "
                  "the summary comes from the process that completes them", flush=True)
            return
        cost = np.array([float(r["cost"]) for r in rows if r is not None])
        seconds = sum(float(r["seconds"]) for r in rows if r is not None)
    row = {
        "problem": args.problem, "size": args.size, "instances": k, "set": args.set_name,
        "seed": seed,
        "checkpoint": args.checkpoint, "checkpoint_sha256": digest, "decode": args.decode,
        "starts": starts, "augment": args.augment,
        "obj": round(float(cost.mean()), 4), "ref_obj": round(float(ref_cost[:k].mean()), 4),
        "gap": round(float(gap(cost, ref_cost[:k]).mean()), 3),
        "nn_gap": round(float(gap(nn_cost, ref_cost[:k]).mean()), 3),
        "sec_per_instance": round(seconds / k, 3), "threads": args.threads,
        "references": {**budget.describe(), "doubled_budget_check": consistency},
        "commit": git_commit(),
    }
    print("| problem | n | set | instances | decode | M | aug | obj | ref | gap % | NN gap % | "
          "s/inst |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    print(f"| {row['problem']} | {row['size']} | {args.set_name} | {k} | {row['decode']} | "
          f"{row['starts']} | "
          f"{'x8' if args.augment else '-'} | {row['obj']} | {row['ref_obj']} | {row['gap']} | "
          f"{row['nn_gap']} | {row['sec_per_instance']} |")
    if args.out:
        with open(args.out, "a") as fh:
            fh.write(json.dumps(row) + "\n")


def check_references(instances: list[Instance], ref_cost: np.ndarray,
                     budget: ReferenceBudget) -> dict[str, float] | None:
    """Warn when a reference of ``instances`` is worse than PyVRP with the budget doubled by
    more than :data:`CONSISTENCY_TOLERANCE` percent; the mean and largest difference (%)."""
    if not instances:
        return None
    doubled = reference_solutions(instances, budget.scaled(2), progress=False)
    worse = []
    for i, (inst, sol) in enumerate(zip(instances, doubled, strict=True)):
        worse.append(gap(ref_cost[i], inst.cost(sol)))
        if worse[-1] > CONSISTENCY_TOLERANCE:
            warnings.warn(f"{inst.name}: the reference ({ref_cost[i]:.4f}) is {worse[-1]:.2f}% "
                          f"worse than PyVRP with the budget doubled ({inst.cost(sol):.4f})",
                          stacklevel=2)
    print(f"references ({budget.key}) against the budget doubled on the first {len(worse)} "
          f"instances: {np.mean(worse):+.3f}% on average, at most {max(worse):+.3f}%", flush=True)
    return {"instances": len(worse), "mean_percent": round(float(np.mean(worse)), 4),
            "max_percent": round(float(max(worse)), 4)}


if __name__ == "__main__":
    main()
