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

Resumable: one CSV row per (problem, size, capacity, instance, method); a rerun skips the rows
already there (rows of other weights, told apart by the SHA-256 of the checkpoint's tensors,
are refused), so a long table can be filled over several sessions. Instances are decoded
``--block`` at a time; the seconds of a block are shared equally by its instances. The summary
(markdown) is printed from whatever rows the file holds.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import torch

from routecli import generate
from routecli.atomic import append_csv_rows, atomic_write_text
from routecli.baselines.construction import NearestNeighbour
from routecli.baselines.knapsack import optimum
from routecli.baselines.reference import reference_budget, reference_solutions
from routecli.bench.results import git_commit
from routecli.generate import batch_instances
from routecli.miloop.decode import decode, to_solution
from routecli.miloop.model import load_policy
from routecli.problems import Instance, cost, gap, validate
from routecli.train import checkpoint

FIELDS = ("problem", "size", "capacity", "index", "instance_sha256", "method",
          "checkpoint_sha256", "cost", "reference", "gap_pct", "seconds", "reference_settings",
          "commit")  # rows of files older than instance_sha256 match no instance: redone
COMMIT = git_commit()  # of the code that made the rows this process appends
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
    add_new_columns(args.csv)  # the summary and the resumed rows both read instance_sha256
    if not args.summary_only:
        model = load_policy(path) if neural else None
        capacities = [float(c) for c in args.capacities.split(",")] if args.problem == "kp" else [0.0]
        for size in (int(s) for s in args.sizes.split(",")):
            for capacity in capacities:
                run_cell(args, model, digest, size, capacity)
    summary(args.csv, args.problem)


def cell_batch(problem: str, instances: int, size: int, seed: int,
               capacity: float) -> dict[str, np.ndarray]:
    if problem == "kp":
        return generate.kp(instances, size, seed, capacity)
    return generate.pdtsp(instances, size, seed)


def instance_digests(raw: dict[str, np.ndarray]) -> list[str]:
    """One digest per instance of a batch. A row is matched to an instance by it, never by its
    index alone: instance i of a seeded batch depends on the batch size (the knapsack draws all
    weights, then all values), so index 0 of ``--instances 1`` is not index 0 of 128."""
    count = len(next(iter(raw.values())))
    out = []
    for i in range(count):
        h = hashlib.sha256()
        for name in sorted(raw):
            h.update(name.encode())
            h.update(np.ascontiguousarray(raw[name][i], dtype=np.float64).tobytes())
        out.append(h.hexdigest()[:16])
    return out


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


def stored_references(path: Path, digests: list[str],
                      settings: str) -> tuple[np.ndarray, np.ndarray, str] | None:
    """The references of every instance (by digest) as an earlier run of the same settings
    stored them (reference cost per row; a knapsack's HiGHS seconds from its ``exact`` rows),
    or None when any instance lacks one. Saves recomputing references on a fresh machine
    (PDTSP-100: about a minute of PyVRP each)."""
    if not path.exists() or settings == "none":
        return None
    where = {d: i for i, d in enumerate(digests)}
    ref = np.full(len(digests), np.nan)
    seconds = np.full(len(digests), np.nan)
    for r in csv.DictReader(path.open()):
        i = where.get(r.get("instance_sha256", ""))
        if i is None or r["reference_settings"] != settings:
            continue
        ref[i] = float(r["reference"])
        if r["method"] == "exact":
            seconds[i] = float(r["seconds"])
    if np.isnan(ref).any():
        return None
    return ref, seconds, settings


def run_cell(args: argparse.Namespace, model: torch.nn.Module | None, digest: str, size: int,
             capacity: float) -> None:
    problem = args.problem
    raw = cell_batch(problem, args.instances, size, args.seed, capacity)
    insts = batch_instances(problem, raw)
    ids = instance_digests(raw)
    done = read_rows(args.csv, digest)
    key = (problem, size, capacity)
    methods = [m for m in args.methods.split(",") if m]
    if all((ids[i], m) in done for i in range(args.instances) for m in methods):
        return
    ref, ref_seconds, settings = (stored_references(args.csv, ids,
                                                    expected_settings(problem, size, args))
                                  or references(problem, insts, raw, size, args.ref_budget))
    sense = "max" if problem == "kp" else "min"
    rows: list[dict] = []
    if problem == "kp":
        rows += [row(key, i, ids[i], "exact", digest, ref[i], ref[i], 0.0, ref_seconds[i],
                     settings) for i in range(args.instances) if (ids[i], "exact") not in done]
    for method in methods:
        todo = [i for i in range(args.instances) if (ids[i], method) not in done]
        for lo in range(0, len(todo), args.block):
            block = todo[lo:lo + args.block]
            costs, seconds = solve(method, model, insts, raw, block)
            rows += [row(key, i, ids[i], method, digest, c, ref[i], gap(c, ref[i], sense),
                         seconds / len(block), settings) for i, c in zip(block, costs, strict=True)]
            append(args.csv, rows)
            rows = []
            print(f"{problem}-{size} C={capacity:g} {method}: {lo + len(block)}/{len(todo)}",
                  flush=True)
    append(args.csv, rows)


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
            "instance_sha256": instance, "method": method,
            "checkpoint_sha256": digest if method not in ("nn", "exact") else "",
            "cost": value, "reference": reference, "gap_pct": gap_pct, "seconds": seconds,
            "reference_settings": settings, "commit": COMMIT}


def read_rows(path: Path, digest: str) -> set[tuple]:
    if not path.exists():
        return set()
    done = set()
    for r in csv.DictReader(path.open()):
        if r["checkpoint_sha256"] not in ("", digest):
            raise SystemExit(f"{path} holds results of other weights ({r['checkpoint_sha256']}, "
                             f"this one is {digest})")
        done.add((r.get("instance_sha256", ""), r["method"]))
    return done


def add_new_columns(path: Path) -> None:
    """Give a results file of an older version the columns it lacks (empty), once per run,
    before anything is appended to it."""
    if not path.exists():
        return
    with path.open() as fh:
        header = fh.readline().strip().split(",")
    if header == list(FIELDS):
        return
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=FIELDS, restval="")
    writer.writeheader()
    writer.writerows(csv.DictReader(path.open()))
    atomic_write_text(path, buffer.getvalue())


def append(path: Path, rows: list[dict]) -> None:
    """Append under a lock: processes running other cells may share the file."""
    if rows:
        path.parent.mkdir(parents=True, exist_ok=True)
        append_csv_rows(path, FIELDS, rows)


def summary(path: Path, problem: str) -> None:
    """Mean objective, gap and seconds per instance by cell and method, and on how many
    instances a method beats the cell's ``nn`` rows (better objective)."""
    cells: dict[tuple, list[dict]] = defaultdict(list)
    for r in csv.DictReader(path.open()):
        if r["problem"] == problem:
            cells[(int(r["size"]), float(r["capacity"]), r["method"])].append(r)
    print(f"| {problem} size | C | method | instances | obj | ref obj | gap % | s / instance | "
          "beats nn |")
    print("|---|---|---|---|---|---|---|---|---|")
    sign = -1.0 if problem == "kp" else 1.0  # lower is better after the sign
    for (size, capacity, method), rs in sorted(cells.items()):
        mean = {k: float(np.mean([float(r[k]) for r in rs]))
                for k in ("cost", "reference", "gap_pct", "seconds")}
        nn = {r["instance_sha256"]: sign * float(r["cost"])
              for r in cells.get((size, capacity, "nn"), []) if r["instance_sha256"]}
        paired = [sign * float(r["cost"]) < nn[r["instance_sha256"]] for r in rs
                  if r["instance_sha256"] in nn]
        beats = f"{sum(paired)}/{len(paired)}" if paired and method != "nn" else ""
        cap = f"{capacity:g}" if problem == "kp" else "-"
        print(f"| {size} | {cap} | {method} | {len(rs)} | {mean['cost']:.4f} | "
              f"{mean['reference']:.4f} | {mean['gap_pct']:.3f} | {mean['seconds']:.3f} | "
              f"{beats} |")


if __name__ == "__main__":
    main()
