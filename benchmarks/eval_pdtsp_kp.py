"""MiLoop's Table 9 (PDTSP) and Table 10 (knapsack) shapes on seeded uniform instances.

    .venv/bin/python benchmarks/eval_pdtsp_kp.py pdtsp --sizes 100,200,500,1000 --instances 128 \
        --methods nn,greedy,m100 --csv benchmarks/results/miloop_pdtsp.csv
    .venv/bin/python benchmarks/eval_pdtsp_kp.py kp --sizes 200,500,1000 --capacities 10,25,50,100 \
        --instances 128 --methods nn,greedy --csv benchmarks/results/miloop_kp.csv

Instances: ``generate.pdtsp(instances, size, seed)`` (``size`` pickup and delivery nodes plus
the depot, exact Euclidean costs) and ``generate.kp(instances, size, seed, capacity)``.
References: PyVRP on the deterministic budget of ``routecli.baselines.reference`` (the paper's
PDTSP reference is LKH3) and the exact knapsack optimum (HiGHS; the paper's is OR-Tools), whose
solve time is recorded as the ``exact`` rows. Methods: ``nn`` (nearest neighbour, or the
value/weight greedy on a knapsack), ``greedy`` (MiLoop, one rollout), ``m100`` (MiLoop
multi-start from M = 100 distinct pickups / densest items), ``m100x8`` (the same on the 8
symmetric images, PDTSP). Every solution is validated; gaps are (ours - ref) / ref for PDTSP
and (opt - ours) / opt for the knapsack, in percent.

Resumable: ``--csv`` is a :class:`routecli.results.ResultStore` with one row per
(problem, size, capacity, instance fingerprint, method, weights, references); a rerun skips the
rows already there (rows of other weights, told apart by the SHA-256 of the checkpoint's
tensors, are refused), so a long table can be filled over several sessions. A row names its
instance by :func:`routecli.problems.fingerprint.fingerprint`, never by its index alone:
instance i of a seeded batch depends on the batch size (the knapsack draws all weights, then
all values), so index 0 of ``--instances 1`` is not index 0 of 128. PyVRP references come
from the reference cache of :mod:`routecli.baselines.reference`. Instances are decoded
``--block`` at a time; the seconds of a block are shared equally by its instances. The summary
(markdown) is printed from whatever rows the file holds.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import torch

from routecli import generate
from routecli.baselines.construction import NearestNeighbour
from routecli.baselines.knapsack import optimum
from routecli.baselines.reference import reference_budget, reference_solutions
from routecli.generate import batch_instances
from routecli.miloop.decode import decode, to_solution
from routecli.miloop.model import load_policy
from routecli.problems import Instance, cost, gap, validate
from routecli.problems.fingerprint import fingerprint
from routecli.results import ResultStore
from routecli.train import checkpoint

FIELDS = ["problem", "size", "capacity", "index", "fingerprint", "method", "checkpoint_sha256",
          "cost", "reference", "gap_pct", "seconds", "reference_settings"]
KEY = ["problem", "size", "capacity", "fingerprint", "method", "checkpoint_sha256",
       "reference_settings"]
KP_REFERENCE = "exact (HiGHS, zero MIP gap)"
DECODE = {"greedy": ("greedy", 1, False), "m100": ("multistart", 100, False),
          "m100x8": ("multistart", 100, True)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problem", choices=["pdtsp", "kp"])
    parser.add_argument("--checkpoint", default=None, help="default: the shipped miloop-PROBLEM.pt")
    parser.add_argument("--sizes", default="100")
    parser.add_argument("--capacities", default="25", help="KP capacities")
    parser.add_argument("--instances", type=int, default=128)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--methods", default="nn,greedy")
    parser.add_argument("--block", type=int, default=16, help="instances per decode call")
    parser.add_argument("--ref-budget", type=float, default=1.0,
                        help="PDTSP: multiply the default PyVRP reference budget by this; 0: "
                        "no references (where PyVRP is too slow: objectives and the comparison "
                        "with nearest neighbour only)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--csv", type=Path, required=True)
    parser.add_argument("--summary-only", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    from routecli.train.checkpoint import shipped

    path = args.checkpoint or str(shipped(f"miloop-{args.problem}.pt"))
    neural = any(m in DECODE for m in args.methods.split(","))
    digest = checkpoint.load(path)["sha256"][:16] if neural else ""
    store = ResultStore(args.csv, FIELDS, KEY)
    if neural and (other := {r["checkpoint_sha256"] for r in store.rows} - {"", digest}):
        raise SystemExit(f"{args.csv} holds results of other weights ({other.pop()}, this one "
                         f"is {digest})")
    if not args.summary_only:
        model = load_policy(path) if neural else None
        capacities = [float(c) for c in args.capacities.split(",")] if args.problem == "kp" else [0.0]
        for size in (int(s) for s in args.sizes.split(",")):
            for capacity in capacities:
                run_cell(args, store, model, digest, size, capacity)
    summary(store.rows, args.problem)


def cell_batch(problem: str, instances: int, size: int, seed: int,
               capacity: float) -> dict[str, np.ndarray]:
    if problem == "kp":
        return generate.kp(instances, size, seed, capacity)
    return generate.pdtsp(instances, size, seed)


def references(problem: str, insts: list[Instance], raw: dict[str, np.ndarray],
               size: int, factor: float = 1.0) -> tuple[np.ndarray, np.ndarray, str]:
    """Reference costs, the seconds each took (KP: HiGHS; PDTSP: not timed, cached) and their
    settings."""
    if problem == "kp":
        values, seconds = [], []
        for w, v, c in zip(raw["weights"], raw["values"], raw["capacity"], strict=True):
            started = time.perf_counter()
            chosen, proved = optimum(w, v, float(c))
            seconds.append(time.perf_counter() - started)
            if not proved:
                raise SystemExit("HiGHS did not prove an optimum")
            values.append(float(v[chosen].sum()))
        return np.array(values), np.array(seconds), KP_REFERENCE
    if factor == 0:
        return np.full(len(insts), np.nan), np.full(len(insts), np.nan), "none"
    budget = reference_budget("pdtsp", size + 1).scaled(factor)
    sols = reference_solutions(insts, budget, progress=True)
    return (np.array([cost(i, s) for i, s in zip(insts, sols, strict=True)]),
            np.full(len(insts), np.nan), f"pyvrp {budget.key}")


def expected_settings(problem: str, size: int, args: argparse.Namespace) -> str:
    """The ``reference_settings`` text that :func:`references` would record for this cell."""
    if problem == "kp":
        return KP_REFERENCE
    if args.ref_budget == 0:
        return "none"
    return f"pyvrp {reference_budget('pdtsp', size + 1).scaled(args.ref_budget).key}"


def run_cell(args: argparse.Namespace, store: ResultStore, model: torch.nn.Module | None,
             digest: str, size: int, capacity: float) -> None:
    problem = args.problem
    raw = cell_batch(problem, args.instances, size, args.seed, capacity)
    insts = batch_instances(problem, raw)
    ids = [fingerprint(inst) for inst in insts]
    settings = expected_settings(problem, size, args)
    key = (problem, size, capacity)
    methods = ["exact"] * (problem == "kp") + [m for m in args.methods.split(",") if m]

    def done(i: int, method: str) -> bool:
        return store.done(problem=problem, size=size, capacity=capacity, fingerprint=ids[i],
                          method=method, reference_settings=settings,
                          checkpoint_sha256=digest if method in DECODE else "")

    todo = {m: [i for i in range(args.instances) if not done(i, m)] for m in methods}
    if not any(todo.values()):
        return
    needed = sorted({i for block in todo.values() for i in block})
    sub = {k: v[needed] for k, v in raw.items()}
    found, found_seconds, _ = references(problem, [insts[i] for i in needed], sub, size,
                                         args.ref_budget)
    ref = dict(zip(needed, found, strict=True))
    ref_seconds = dict(zip(needed, found_seconds, strict=True))
    sense = "max" if problem == "kp" else "min"
    for i in todo.get("exact", []):
        store.add(**row(key, i, ids[i], "exact", digest, ref[i], ref[i], 0.0, ref_seconds[i],
                        settings))
    for method in methods[1 if problem == "kp" else 0:]:
        for lo in range(0, len(todo[method]), args.block):
            block = todo[method][lo:lo + args.block]
            costs, seconds = solve(method, model, insts, raw, block)
            for i, c in zip(block, costs, strict=True):
                store.add(**row(key, i, ids[i], method, digest, c, ref[i],
                                gap(c, ref[i], sense), seconds / len(block), settings))
            print(f"{problem}-{size} C={capacity:g} {method}: {lo + len(block)}/"
                  f"{len(todo[method])}", flush=True)


def solve(method: str, model: torch.nn.Module | None, insts: list[Instance],
          raw: dict[str, np.ndarray], block: list[int]) -> tuple[list[float], float]:
    """Validated costs of ``block`` under ``method`` and the seconds the block took."""
    started = time.perf_counter()
    if method == "nn":
        solutions = [NearestNeighbour().solve(insts[i]) for i in block]
    else:
        how, starts, augment = DECODE[method]
        assert model is not None
        index = np.asarray(block)
        batch = {k: torch.as_tensor(v[index], dtype=torch.float32) for k, v in raw.items()}
        if "weights" in batch:  # the knapsack bookkeeping runs in float64
            batch = {k: torch.as_tensor(v[index], dtype=torch.float64) for k, v in raw.items()}
        result = decode(model, batch, how, starts=starts, augment=augment, chunk=256)
        solutions = [to_solution(insts[i], a) for i, a in zip(block, result.actions, strict=True)]
    seconds = time.perf_counter() - started
    costs = []
    for i, solution in zip(block, solutions, strict=True):
        problems = validate(insts[i], solution)
        if problems:
            raise SystemExit(f"{insts[i].name} ({method}): infeasible: {problems[:3]}")
        costs.append(cost(insts[i], solution))
    return costs, seconds


def row(key: tuple, index: int, instance: str, method: str, digest: str, value: float,
        reference: float, gap_pct: float, seconds: float, settings: str) -> dict:
    problem, size, capacity = key
    return {"problem": problem, "size": size, "capacity": capacity, "index": index,
            "fingerprint": instance, "method": method,
            "checkpoint_sha256": digest if method in DECODE else "",
            "cost": value, "reference": reference, "gap_pct": gap_pct, "seconds": seconds,
            "reference_settings": settings}


def summary(rows: list[dict[str, str]], problem: str) -> None:
    """Mean objective, gap and seconds per instance by cell and method, and on how many
    instances a method beats the cell's ``nn`` rows (better objective)."""
    cells: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        if r["problem"] == problem:
            cells[(int(r["size"]), float(r["capacity"]), r["method"])].append(r)
    print(f"| {problem} size | C | method | instances | obj | ref obj | gap % | s / instance | "
          "beats nn |")
    print("|---|---|---|---|---|---|---|---|---|")
    sign = -1.0 if problem == "kp" else 1.0  # lower is better after the sign
    for (size, capacity, method), rs in sorted(cells.items()):
        mean = {k: float(np.mean([float(r[k]) for r in rs]))
                for k in ("cost", "reference", "gap_pct", "seconds")}
        nn = {r["fingerprint"]: sign * float(r["cost"])
              for r in cells.get((size, capacity, "nn"), [])}
        paired = [sign * float(r["cost"]) < nn[r["fingerprint"]] for r in rs
                  if r["fingerprint"] in nn]
        beats = f"{sum(paired)}/{len(paired)}" if paired and method != "nn" else ""
        cap = f"{capacity:g}" if problem == "kp" else "-"
        print(f"| {size} | {cap} | {method} | {len(rs)} | {mean['cost']:.4f} | "
              f"{mean['reference']:.4f} | {mean['gap_pct']:.3f} | {mean['seconds']:.3f} | "
              f"{beats} |")


if __name__ == "__main__":
    main()
