"""Neural deconstruction search (``--model nds``) vs its random-removal control vs PyVRP.

Two tables, every solver under the same wall-clock limit per instance, every solution
validated by :func:`routecli.solvers.run`:

1. CVRPLIB X (PE paper Appendix K, Table 9): gap to the best-known value, average over the
   chosen instances, next to the paper's averages over all 84 X instances (NDS 4.11%,
   NDS + IPE+XPE 2.83%, 60 s on an A100).
2. Synthetic CVRP / VRPTW / PCVRP (Appendix F generators, ``capacity=None`` = the paper's
   capacity rule; Table 5's shape): objective, gap to PyVRP-HGS run for the same time on the
   same instance, and time, next to the paper's Table 5 rows for N = 500. routecli's PCVRP
   cost is route length minus collected prizes; the table adds the instance's total prize
   (``offset``) to report the paper's form, route length plus uncollected prizes, and takes
   the gap on that.

``learned`` is NDS with the shipped checkpoint (``nds-<problem>.pt``), ``random`` the
same search (same rollouts per iteration, same removal count) with uniformly random removals,
``hgs`` PyVRP, ``sisr`` the string-removal search with its own settings (``sisr:policy=random``
its random-removal control). Rows go to a CSV in the shared schema of :mod:`routecli.results` as
they come (a rerun skips finished rows; files of the round-1 layout are refused). Under each table, the
first solver is compared with each other one on the same instances (wins, paired Wilcoxon test).

    .venv/bin/python benchmarks/bench_nds.py --part x --subset all --time-limit 60
    .venv/bin/python benchmarks/bench_nds.py --part synthetic --instances 16 --time-limit 60

``--subset`` (X) is ``all``, ``spread:K`` (K instances evenly spaced over the size-sorted
set) or a comma-separated list of names; ``--instances`` (synthetic) is the number of seeded
instances per problem.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import time
from pathlib import Path
from typing import Any

from scipy.stats import wilcoxon

from routecli import generate
from routecli.bench.sets import data_root
from routecli.bench.sets import pick_cvrplib_x as pick
from routecli.generate import batch_instances
from routecli.io import read_instance
from routecli.problems import gap
from routecli.results import Provenance, ResultLog, ResultRow
from routecli.solvers import make_solver, run
from routecli.stop import Criterion, MaxIterations, MaxRuntime
from routecli.train.checkpoint import shipped

DATA = data_root() or Path("../shared/benchdata")  # --data-root rule of routecli bench
PAPER_X = {"NDS (paper, all 84 X)": 4.110, "NDS + IPE+XPE (paper, all 84 X)": 2.828}
# the 16 X instances (of the 100) that the paper's Table 9 does not list: its 84 are the rest
NOT_IN_TABLE9 = {"X-n298-k31", "X-n303-k21", "X-n308-k13", "X-n313-k71", "X-n317-k53",
                 "X-n322-k28", "X-n327-k20", "X-n331-k15", "X-n336-k84", "X-n344-k43",
                 "X-n351-k40", "X-n359-k29", "X-n367-k17", "X-n376-k94", "X-n384-k52",
                 "X-n393-k38"}
# Table 5, N = 500: (objective, gap to the HGS reference in %), 60 s per instance.
PAPER_TABLE5 = {
    "cvrp": {"HGS (paper, N=500)": (36.66, 0.0), "NDS (paper, N=500)": (36.57, -0.20),
             "NDS + IPE+XPE (paper, N=500)": (36.54, -0.30)},
    "vrptw": {"PyVRP-HGS (paper, N=500)": (49.01, 0.0), "NDS (paper, N=500)": (47.94, -2.17),
              "NDS + IPE+XPE (paper, N=500)": (47.90, -2.27)},
    "pcvrp": {"PyVRP-HGS (paper, N=500)": (44.97, 0.0), "NDS (paper, N=500)": (43.12, -4.12),
              "NDS + IPE+XPE (paper, N=500)": (43.13, -4.09)},
}


def solver_for(spec: str, pe: str | None, seconds: float) -> tuple[Any, Criterion]:
    """``hgs``, ``sisr`` or an NDS policy with optional search settings, e.g.
    ``learned:images=1:rollouts=16`` or ``sisr:policy=random``
    (``polish=1`` adds the local-search polish, ``checkpoint=PATH`` other weights,
    ``iterations=N`` an iteration budget, see :func:`spec_stop`); the spec is the CSV's solver
    column. Returns the solver and its stopping criterion."""
    name, *settings = spec.split(":")
    extra: dict[str, Any] = dict(item.split("=", 1) for item in settings)
    extra.pop("iterations", None)
    stop = spec_stop(spec, seconds)
    if name == "hgs":
        return make_solver("hgs"), stop
    extra["polish"] = extra.pop("polish", "0") == "1"
    for key in ("rollouts", "remove", "images", "every", "string_remove"):
        if key in extra:
            extra[key] = int(extra[key])
    if extra.get("bf16") == "1":  # the spelling of committed runs: precision=bf16
        extra["precision"] = "bf16"
    extra.pop("bf16", None)
    for key in ("t_start", "t_end", "blink"):
        if key in extra:
            extra[key] = float(extra[key])
    if name == "sisr":
        return make_solver("sisr", **extra), stop
    return make_solver("nds", policy=name, pe=pe, **extra), stop


def spec_stop(spec: str, seconds: float) -> Criterion:
    """The stopping criterion of a solver spec: its ``iterations=N`` alone when it has one (no
    wall clock, so the run, and the annealing schedule that follows the budget, are the same
    on a loaded machine as on a quiet one), else ``seconds``."""
    budget = [item.split("=", 1)[1] for item in spec.split(":")[1:] if item.startswith("iterations=")]
    return MaxIterations(int(budget[0])) if budget else MaxRuntime(seconds)


def solve_row(rec: ResultLog, part: str, instance, spec: str, args,  # noqa: ANN001
              ref: float | None, provenance: Provenance,
              file: Path | None = None) -> dict[str, str]:
    """Solve ``instance`` with the solver ``spec`` and log the row (``set`` = the part)."""
    solver, stop = solver_for(spec, args.pe, args.time_limit)
    cpu = time.process_time()
    result = run(solver, instance, seed=args.seed, stop=stop, bks=ref)
    cpu = time.process_time() - cpu  # less sensitive than wall clock to other jobs' load
    last = getattr(solver, "last", None)  # the ASAResult, or PyVRP's Run: both count iterations
    row = ResultRow.of(result, set_name=part, file=file, solver=spec,
                       settings=getattr(solver, "settings", None), seed=args.seed, stop=stop,
                       provenance=provenance)
    shown = "-" if result.gap is None else f"{result.gap:.3f}%"
    print(f"{part} {instance.name:>16} {spec:>8} cost {result.cost:12.3f} gap {shown} "
          f"{result.seconds:6.1f}s feasible={result.feasible}", flush=True)
    extra = {"offset": float(instance.prizes.sum()) if instance.problem == "pcvrp" else 0.0,
             "iterations_run": last.iterations if last is not None else "",
             "cpu_seconds": round(cpu, 3)}
    return rec.add_row(row, **{k: v for k, v in extra.items() if k in rec.columns})


def extra_columns(path: Path) -> list[str]:
    """The columns this script adds to the shared schema; a file started before
    ``iterations_run`` and ``cpu_seconds`` existed keeps its header (its rows go without)."""
    wanted = ["offset", "iterations_run", "cpu_seconds"]
    if not path.exists():
        return wanted
    with open(path, newline="") as fh:
        header = next(csv.reader(fh), [])
    return [c for c in wanted if c in header]


def done(rec: ResultLog, part: str, instance: str, spec: str, args) -> dict[str, str] | None:  # noqa: ANN001
    return rec.find(set=part, instance=instance, solver=spec, seed=args.seed,
                    time_limit=spec_stop(spec, args.time_limit).limits().seconds)


def x_part(args, rec: ResultLog, provenance: Provenance) -> None:  # noqa: ANN001
    x_dir = DATA / "cvrplib" / "X"
    if not x_dir.is_dir():
        print(f"skipping CVRPLIB X: {x_dir} not found")
        return
    with open(DATA / "bks.csv") as fh:
        bks = {r["instance"]: float(r["bks"]) for r in csv.DictReader(fh)}
    for f in pick(sorted(x_dir.glob("X-*.vrp")), args.subset):
        instance = read_instance(f)
        for name in args.solvers:
            if done(rec, "x", instance.name, name, args) is None:
                solve_row(rec, "x", instance, name, args, bks.get(instance.name), provenance, f)


def synthetic_part(args, rec: ResultLog, provenance: Provenance) -> None:  # noqa: ANN001
    for problem in args.problems:
        gen = getattr(generate, problem)
        data = gen(args.instances, args.size, seed=args.data_seed, capacity=None)
        for instance in batch_instances(problem, data, prefix="bench-"):
            order = ["hgs"] + [s for s in args.solvers if s != "hgs"]  # the reference first
            ref = None
            for name in order:
                row = done(rec, "synthetic", instance.name, name, args)
                if row is None:
                    if name.startswith("learned") and not shipped(f"nds-{problem}.pt").exists():
                        continue
                    row = solve_row(rec, "synthetic", instance, name, args, ref, provenance)
                if name == "hgs":  # the reference of its own instance (its own gap is 0)
                    ref = float(row["cost"])


def mean(values: list[float]) -> float:
    return statistics.fmean(values) if values else float("nan")


def per_wall_second(rows: list[dict], column: str) -> list[float]:
    """``column`` over the wall-clock seconds of each row that has it (rows older than the
    column leave it empty)."""
    return [float(r[column]) / float(r["seconds"]) for r in rows
            if r.get(column) and float(r["seconds"]) > 0]


def rate(rows: list[dict]) -> str:
    """Mean iterations per second of wall clock over ``rows`` ("-" where the rows predate the
    column). A PyVRP iteration (crossover, local search of the offspring) is far more work
    than a ruin-and-recreate one; compare rates within a family."""
    runs = per_wall_second(rows, "iterations_run")
    return f"{mean(runs):,.0f}" if runs else "-"


def cpu_share(rows: list[dict]) -> str:
    """The smallest share of its wall clock a solver got on a CPU over ``rows``: near 100%
    says it had its core to itself on every instance (a starved run shows far less)."""
    shares = per_wall_second(rows, "cpu_seconds")
    return f"{100 * min(shares):.0f}%" if shares else "-"


def paired(value: dict[tuple[str, str], float], solvers: list[str]) -> list[str]:
    """The first solver against each other one on the instances all solvers finished (``value``
    maps (instance, solver); lower is better): wins and the two-sided paired Wilcoxon
    signed-rank p-value of the differences."""
    first = solvers[0]
    complete = [n for n, s in value if s == first and all((n, o) in value for o in solvers)]
    out = []
    for other in solvers[1:]:
        diff = [value[n, first] - value[n, other] for n in complete]
        if any(diff):
            out.append(f"{first} better than {other} on {sum(d < 0 for d in diff)} of {len(diff)} "
                       f"(paired Wilcoxon p = {wilcoxon(diff).pvalue:.4f})")
    return out


def x_table(rows: list[dict], solvers: list[str]) -> str:
    rows = [r for r in rows if r["set"] == "x" and r["gap_pct"] != ""]
    names = sorted({r["instance"] for r in rows}, key=lambda s: int(s.split("-")[1][1:]))
    out = ["| instance | " + " | ".join(f"{s} gap %" for s in solvers) + " |",
           "|---" * (len(solvers) + 1) + "|"]
    by = {(r["instance"], r["solver"]): r for r in rows}
    for name in names:
        cells = [f"{float(by[name, s]['gap_pct']):.2f}" if (name, s) in by else "-" for s in solvers]
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    complete = [n for n in names if all((n, s) in by for s in solvers)]
    avg = [f"{mean([float(by[n, s]['gap_pct']) for n in complete]):.2f}" for s in solvers]
    out.append(f"| **average ({len(complete)} instances)** | " + " | ".join(avg) + " |")
    listed = [n for n in complete if n not in NOT_IN_TABLE9]
    avg = [f"{mean([float(by[n, s]['gap_pct']) for n in listed]):.2f}" for s in solvers]
    out.append(f"| **average, the {len(listed)} in the paper's Table 9** | " + " | ".join(avg)
               + " |")
    out.append("| iterations / s (mean over the instances) | "
               + " | ".join(rate([by[n, s] for n in complete]) for s in solvers) + " |")
    out.append("| least CPU share of the wall clock | "
               + " | ".join(cpu_share([by[n, s] for n in complete]) for s in solvers) + " |")
    for label, value in PAPER_X.items():
        out.append(f"| {label} | {value:.2f} |" + " |" * (len(solvers) - 1))
    out += paired({key: float(r["gap_pct"]) for key, r in by.items()}, solvers)
    return "\n".join(out)


def synthetic_table(rows: list[dict], solvers: list[str], problems: list[str]) -> str:
    rows = [r for r in rows if r["set"] == "synthetic"]
    out = []
    for problem in problems:
        mine = [r for r in rows if r["problem"] == problem]
        if not mine:
            continue
        size = mine[0]["n"]
        out += [f"\n{problem.upper()}-{size} ({len({r['instance'] for r in mine})} instances)",
                "| method | Obj. | Gap % | Time (s) | iterations / s | least CPU share |",
                "|---|---|---|---|---|---|"]
        for label, (obj, g) in PAPER_TABLE5[problem].items():
            out.append(f"| {label} | {obj:.2f} | {g:+.2f} | 60 | | |")
        for s in solvers:
            sel = [r for r in mine if r["solver"] == s and r["feasible"] == "True"]
            if not sel:
                continue
            objs = [float(r["cost"]) + float(r["offset"]) for r in sel]
            ref = {r["instance"]: float(r["cost"]) for r in mine if r["solver"] == "hgs"}
            gaps = [gap(float(r["cost"]) + float(r["offset"]), ref[r["instance"]] + float(r["offset"]))
                    for r in sel if r["instance"] in ref]
            out.append(f"| {s} (ours) | {mean(objs):.2f} | {mean(gaps):+.2f} | "
                       f"{mean([float(r['seconds']) for r in sel]):.1f} | {rate(sel)} | {cpu_share(sel)} |")
        out += paired({(r["instance"], r["solver"]): float(r["cost"]) for r in mine}, solvers)
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--part", choices=["x", "synthetic", "both"], default="both")
    ap.add_argument("--subset", default="all", help="X instances: all, spread:K or names")
    ap.add_argument("--instances", type=int, default=16, help="synthetic instances per problem")
    ap.add_argument("--size", type=int, default=500, help="synthetic customers")
    ap.add_argument("--problems", default="cvrp,vrptw,pcvrp")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--solvers", default="learned,random,hgs",
                    help="comma list of learned, random, strings (nds policies), hgs (PyVRP); "
                         "an nds policy may carry settings: learned:images=1:rollouts=16:polish=1")
    ap.add_argument("--pe", default=None, help="positional encoding of the learned policy")
    ap.add_argument("--seed", type=int, default=0, help="solver seed")
    ap.add_argument("--data-seed", type=int, default=2026, help="synthetic instance seed")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0 = default)")
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/nds.csv"))
    ap.add_argument("--table-only", action="store_true",
                    help="solve nothing: print the tables of --solvers from the rows in --out "
                         "(the first solver is paired with each other one)")
    args = ap.parse_args()
    args.solvers = args.solvers.split(",")
    args.problems = args.problems.split(",")
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    rec = ResultLog(args.out, extra=extra_columns(args.out))
    provenance = Provenance.current()
    if args.part in ("x", "both") and not args.table_only:
        x_part(args, rec, provenance)
    if args.part in ("synthetic", "both") and not args.table_only:
        synthetic_part(args, rec, provenance)
    if args.part in ("x", "both"):
        print(f"\nCVRPLIB X, {args.time_limit:g} s per instance (gap to BKS, %)")
        print(x_table(rec.rows, args.solvers))
    if args.part in ("synthetic", "both"):
        print(f"\nSynthetic, {args.time_limit:g} s per instance "
              "(gap to PyVRP-HGS at the same time, %)")
        print(synthetic_table(rec.rows, args.solvers, args.problems))


if __name__ == "__main__":
    main()
