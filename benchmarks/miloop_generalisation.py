"""MiLoop's generalisation curve: greedy decoding from 1,000 to 1,000,000 nodes beside nearest
neighbour and a best-known or LKH length, for the shipped weights or any candidate checkpoint.

    .venv/bin/python benchmarks/miloop_generalisation.py --out benchmarks/results/generalisation \
        [--sets tsp-1k,tsp-10k,dimacs-e1m] [--checkpoint-tsp PATH] [--checkpoint-cvrp PATH] \
        [--data-root FOLDER] [--machine TEXT]
    .venv/bin/python benchmarks/miloop_generalisation.py --out ... --report

Sets (:data:`SETS`): uniform TSP of 1K, 10K and 100K nodes and uniform CVRP of 1K customers
(capacity 50) drawn with MiLoop's *test* seed (``routecli.miloop.sets``: nothing was chosen on
them), the DIMACS E-series (E10k.0-2, E31k.0-1, E100k.0-1, E316k.0, E1M.0; ``routecli generate
portgen``), TSPLIB up to 1,000 nodes, CVRPLIB X and AGS. Generated instances are written once as
TSPLIB/CVRPLIB files under ``--instances`` (coordinates scaled by 10^6 and rounded, so the
distance rounding is negligible). Uniform TSP files up to ``--lkh-max`` nodes get an LKH-3 tour
(``elkai``, one run; ``pip install -e ".[lkh]"``) written beside them as ``NAME.tour``, which
``routecli bench`` re-costs, validates and uses as the reference; the library sets use their
best-known values; the rest are compared with nearest neighbour only.

Every (set, solver) pair is one ``routecli bench`` run in its own process with one thread
(``OUT/runs/<set>-<solver>``: ``nn``, or ``miloop-<digest>`` named by the first 8 hex digits of
the checkpoint's tensors, so candidate weights get their own runs and curve), resumable like any
bench run. ``--report`` (also run at the end) writes ``OUT/summary.csv`` (one row per set and
solver, with the commit), ``OUT/report.md`` and ``OUT/curve.png`` (the policy's length over
nearest neighbour's against N, one line per checkpoint).
"""

from __future__ import annotations

import argparse
import csv
import functools
import math
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from routecli.atomic import atomic_write_text
from routecli.baselines.lkh import lkh_tour
from routecli.generate.portgen import e_series_seed, portgen_name
from routecli.io import read_instance
from routecli.io.datasets import data_root
from routecli.miloop.model import load_policy
from routecli.miloop.sets import SEEDS
from routecli.plots.curves import plot_curves
from routecli.problems.tsp import TSPInstance
from routecli.results import git_commit
from routecli.train.checkpoint import shipped, tensor_digest

SCALE = 1_000_000  # generated coordinates: unit square times this, rounded (EUC_2D)
TEST_SEED = SEEDS["test"]


@dataclass(frozen=True)
class InstanceSet:
    """``kind``: ``uniform`` (``routecli generate PROBLEM --size N --num COUNT``), ``dimacs``
    (E-series ``E<N>.<i>`` for each index) or ``library`` (``bench --set NAME``)."""

    problem: str
    kind: str
    size: int = 0
    count: int = 0
    indices: tuple[int, ...] = ()
    library: str = ""
    max_size: int | None = None


SETS: dict[str, InstanceSet] = {
    "tsp-1k": InstanceSet("tsp", "uniform", 1_000, 16),
    "tsp-10k": InstanceSet("tsp", "uniform", 10_000, 4),
    "tsp-100k": InstanceSet("tsp", "uniform", 100_000, 1),
    "dimacs-e10k": InstanceSet("tsp", "dimacs", 10_000, indices=(0, 1, 2)),
    "dimacs-e31k": InstanceSet("tsp", "dimacs", 31_623, indices=(0, 1)),
    "dimacs-e100k": InstanceSet("tsp", "dimacs", 100_000, indices=(0, 1)),
    "dimacs-e316k": InstanceSet("tsp", "dimacs", 316_228, indices=(0,)),
    "dimacs-e1m": InstanceSet("tsp", "dimacs", 1_000_000, indices=(0,)),
    "tsplib-1k": InstanceSet("tsp", "library", library="tsplib", max_size=1_000),
    "cvrp-1k": InstanceSet("cvrp", "uniform", 1_000, 8),
    "cvrplib-x": InstanceSet("cvrp", "library", library="cvrplib-x"),
    "cvrplib-ags": InstanceSet("cvrp", "library", library="cvrplib-ags"),
}
SOLVERS = ("nn", "miloop")
SUMMARY = ["commit", "set", "solver", "weights", "instances", "mean_n", "mean_cost",
           "references", "mean_gap_pct", "vs_nn_pct", "wins_vs_nn", "mean_seconds"]


def routecli(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "routecli", *args], check=True)


def materialise(name: str, spec: InstanceSet, folder: Path) -> Path:
    """The set's instance files (written on first use), ``folder / name``."""
    target = folder / name
    if spec.kind == "uniform":
        if not any(target.glob("*.tsp")) and not any(target.glob("*.vrp")):
            extra = ["--capacity", "miloop"] if spec.problem == "cvrp" else []
            routecli("generate", spec.problem, "--size", str(spec.size), "--num",
                     str(spec.count), "--seed", str(TEST_SEED), "--format", "file",
                     "--scale", str(SCALE), *extra, "-o", str(target))
    elif spec.kind == "dimacs":
        for index in spec.indices:
            seed = e_series_seed(spec.size, index)
            if not (target / f"{portgen_name(spec.size, seed)}.tsp").is_file():
                routecli("generate", "portgen", "--size", str(spec.size), "--seed", str(seed),
                         "--format", "file", "-o", str(target))
    return target


def lkh_tours(folder: Path, max_size: int) -> None:
    """An LKH-3 tour (``elkai``, one run) beside every TSP file of at most ``max_size`` nodes
    that has none, as ``NAME.tour`` (TSPLIB TOUR), with its run time in the comment."""
    for path in sorted(folder.glob("*.tsp")):
        tour_path = path.with_suffix(".tour")
        instance = read_instance(path)
        if tour_path.exists() or instance.size > max_size:
            continue
        assert isinstance(instance, TSPInstance) and instance.coords is not None
        coords = np.asarray(instance.coords, dtype=np.float64)
        started = time.perf_counter()
        order = lkh_tour(coords, runs=1)
        seconds = time.perf_counter() - started
        lines = [f"NAME : {path.stem}.tour",
                 f"COMMENT : LKH-3 via elkai, 1 run, {seconds:.0f} s on one core",
                 "TYPE : TOUR", f"DIMENSION : {instance.size}", "TOUR_SECTION",
                 *[str(i + 1) for i in order], "-1", "EOF", ""]
        atomic_write_text(tour_path, "\n".join(lines))
        print(f"{path.name}: LKH tour in {seconds:.0f} s", flush=True)


@functools.cache
def weights_tag(checkpoint: str | None, problem: str) -> str:
    """``miloop-<digest8>`` of ``checkpoint`` (default: the shipped weights for ``problem``)."""
    model = load_policy(checkpoint or shipped(f"miloop-{problem}.pt"))
    return f"miloop-{tensor_digest(model.state_dict())[:8]}"


def run_set(name: str, spec: InstanceSet, out: Path, instances: Path, data: Path,
            checkpoints: dict[str, str | None], lkh_max: int) -> None:
    inputs = ["--set", spec.library, "--data-root", str(data)] if spec.kind == "library" else \
        [str(materialise(name, spec, instances))]
    if spec.max_size is not None:
        inputs += ["--max-size", str(spec.max_size)]
    if spec.kind == "uniform" and spec.problem == "tsp":
        lkh_tours(Path(inputs[0]), lkh_max)
    for solver in SOLVERS:
        args = ["-m", solver]
        tag = solver
        if solver == "miloop":
            tag = weights_tag(checkpoints[spec.problem], spec.problem)
            if checkpoints[spec.problem]:
                args += ["--checkpoint", str(checkpoints[spec.problem])]
            args += ["--threads", "1"]
        routecli("bench", *inputs, *args, "--workers", "1", "-o",
                 str(out / "runs" / f"{name}-{tag}"))


def read_runs(out: Path) -> dict[tuple[str, str], list[dict[str, str]]]:
    """Feasible bench rows by (set, solver tag)."""
    runs: dict[tuple[str, str], list[dict[str, str]]] = {}
    for results in sorted((out / "runs").glob("*/results.csv")):
        folder = results.parent.name
        name = next((s for s in sorted(SETS, key=len, reverse=True)
                     if folder.startswith(s + "-")), None)
        if name is None:
            continue
        with results.open() as handle:
            rows = [r for r in csv.DictReader(handle) if r["feasible"] == "True"]
        runs[(name, folder[len(name) + 1:])] = rows
    return runs


def summarise(out: Path) -> list[dict[str, str]]:
    runs = read_runs(out)
    commit = git_commit()
    summary = []
    for (name, tag), rows in sorted(runs.items(), key=lambda kv: (SETS[kv[0][0]].size, kv[0])):
        if not rows:
            continue
        nn = {r["instance"]: float(r["cost"]) for r in runs.get((name, "nn"), [])}
        costs = [float(r["cost"]) for r in rows]
        gaps = [float(r["gap_pct"]) for r in rows if r["gap_pct"]]
        ratios = [float(r["cost"]) / nn[r["instance"]] - 1 for r in rows if r["instance"] in nn]
        summary.append({
            "commit": commit, "set": name, "solver": "nn" if tag == "nn" else "miloop",
            "weights": "" if tag == "nn" else tag.removeprefix("miloop-"),
            "instances": str(len(rows)),
            "mean_n": f"{np.mean([int(r['n']) for r in rows]):.0f}",
            "mean_cost": f"{np.mean(costs):.6g}", "references": str(len(gaps)),
            "mean_gap_pct": f"{np.mean(gaps):.2f}" if len(gaps) == len(rows) else "",
            "vs_nn_pct": f"{100 * np.mean(ratios):+.2f}" if ratios and tag != "nn" else "",
            "wins_vs_nn": f"{sum(x < 0 for x in ratios)}/{len(ratios)}"
            if ratios and tag != "nn" else "",
            "mean_seconds": f"{np.mean([float(r['seconds']) for r in rows]):.1f}"})
    return summary


def report(out: Path, machine: str) -> None:
    summary = summarise(out)
    with (out / "summary.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, SUMMARY)
        writer.writeheader()
        writer.writerows(summary)
    lines = ["# MiLoop's generalisation curve: greedy against nearest neighbour", "",
             f"Commit {git_commit()}; {machine}. Rows: `summary.csv`, per instance in "
             "`runs/*/results.csv` (each with its command). Gap: to the best-known value (TSPLIB, "
             "CVRPLIB) or to an LKH-3 tour (uniform TSP up to `--lkh-max` nodes); vs nn: the "
             "policy's length over nearest neighbour's on the same instances, minus 1 (negative: "
             "shorter).", "",
             "| set | mean N | solver | weights | instances | mean gap | vs nn | shorter than nn "
             "| mean time s |", "|---|---|---|---|---|---|---|---|---|"]
    for row in summary:
        gap_text = f"{row['mean_gap_pct']}%" if row["mean_gap_pct"] else "-"
        vs_nn = f"{row['vs_nn_pct']}%" if row["vs_nn_pct"] else "-"
        lines.append(f"| {row['set']} | {int(row['mean_n']):,} | {row['solver']} | "
                     f"{row['weights'] or '-'} | {row['instances']} | {gap_text} | {vs_nn} | "
                     f"{row['wins_vs_nn'] or '-'} | {row['mean_seconds']} |")
    (out / "report.md").write_text("\n".join(lines) + "\n")
    series: dict[str, tuple[list[float], list[float]]] = {}
    for row in summary:
        if row["vs_nn_pct"] and SETS[row["set"]].kind != "library":
            xs, ys = series.setdefault(f"{SETS[row['set']].problem} {row['weights']}", ([], []))
            xs.append(math.log10(float(row["mean_n"])))
            ys.append(float(row["vs_nn_pct"]))
    if series:
        plot_curves(series, out / "curve.png", "log10 N (generated and DIMACS instances)",
                    "greedy length over nearest neighbour's - 1 (%)", baseline=0.0)
    print("\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--sets", default=",".join(SETS), help=f"comma list of {', '.join(SETS)}")
    parser.add_argument("--checkpoint-tsp", default=None)
    parser.add_argument("--checkpoint-cvrp", default=None)
    parser.add_argument("--instances", type=Path, default=Path("data/generated/generalisation"),
                        help="where generated instance files (and their LKH tours) are kept")
    parser.add_argument("--data-root", type=Path, default=None)
    parser.add_argument("--lkh-max", type=int, default=10_000)
    parser.add_argument("--machine", default="machine not described")
    parser.add_argument("--report", action="store_true", help="summarise the runs, run nothing")
    args = parser.parse_args(argv)
    if not args.report:
        names = [s.strip() for s in args.sets.split(",") if s.strip()]
        unknown = [s for s in names if s not in SETS]
        if unknown:
            parser.error(f"unknown sets {', '.join(unknown)}; choose from {', '.join(SETS)}")
        data = args.data_root or data_root()
        checkpoints = {"tsp": args.checkpoint_tsp, "cvrp": args.checkpoint_cvrp}
        for name in names:
            run_set(name, SETS[name], args.out, args.instances, data, checkpoints, args.lkh_max)
    report(args.out, args.machine)
    return 0


if __name__ == "__main__":
    sys.exit(main())
