"""Warm starts (``--init``): ``sisr`` from a MiLoop greedy solution against ``sisr`` from its own
savings start, at equal (short) iteration budgets on CVRPLIB X.

    .venv/bin/python benchmarks/bench_warm_start.py --subset spread:10 \
        --iterations 0,1000,10000 --out benchmarks/results/warm_start_x

For each file: MiLoop greedy (``--model miloop``, shipped weights, one thread) writes a
solution, then ``sisr`` (seed 0) runs each budget from it (``init``) and from its own start.
Iteration budgets make the comparison the same on any machine; 0 iterations is the start
itself (the savings solution after local search, or the MiLoop one). Writes ``OUT.csv`` (the
schema of :mod:`routecli.results` plus the columns below; resumable) and ``OUT.md`` (mean gaps
and per-file wins).
"""

from __future__ import annotations

import argparse
import tempfile
from dataclasses import replace
from pathlib import Path

from routecli.results import Provenance, ResultLog, ResultRow

EXTRA = ["start", "budget", "start_seconds"]


def rows_for(path: Path, budgets: list[int]) -> list[tuple[ResultRow, dict]]:
    from routecli.io import best_known, read_instance, write_solution
    from routecli.solvers import make_solver, run
    from routecli.stop import MaxIterations

    instance = read_instance(path)
    reference, _ = best_known(instance, path)
    neural = run(make_solver("miloop", threads=1), instance, bks=reference)
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        start_file = Path(tmp) / "start.sol"
        write_solution(start_file, instance, neural.solution)
        for budget in budgets:
            for start, init in (("savings", None), ("miloop", str(start_file))):
                solver = make_solver("sisr", init=init)
                stop = MaxIterations(max(budget, 1))
                result = run(solver, instance, seed=0, stop=stop, bks=reference)
                if budget == 0:  # the start itself: the search's first best cost
                    result = replace(result, cost=solver.last.history[0][1])  # type: ignore[attr-defined]
                row = ResultRow.of(result, set_name="cvrplib-x", file=path, solver="sisr",
                                   settings=solver.settings, seed=0,  # type: ignore[attr-defined]
                                   stop=stop, provenance=Provenance.current())
                out.append((row, {"start": start, "budget": budget,
                                  "start_seconds": round(neural.seconds, 2)
                                  if start == "miloop" else ""}))
    return out


def markdown(rows: list[dict]) -> str:
    budgets = sorted({int(r["budget"]) for r in rows})
    lines = ["| iterations | mean gap, savings start | mean gap, MiLoop start | "
             "MiLoop start better / equal / worse |", "|---|---|---|---|"]
    for b in budgets:
        pairs = {}
        for r in rows:
            if int(r["budget"]) == b:
                pairs.setdefault(r["instance"], {})[r["start"]] = float(r["gap_pct"])
        both = [p for p in pairs.values() if len(p) == 2]
        better = sum(p["miloop"] < p["savings"] - 1e-9 for p in both)
        worse = sum(p["miloop"] > p["savings"] + 1e-9 for p in both)
        mean = {k: sum(p[k] for p in both) / len(both) for k in ("savings", "miloop")}
        lines.append(f"| {b:,} | {mean['savings']:.2f}% | {mean['miloop']:.2f}% | "
                     f"{better} / {len(both) - better - worse} / {worse} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subset", default="spread:10")
    parser.add_argument("--iterations", default="0,1000,10000")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/warm_start_x"))
    args = parser.parse_args()
    from routecli.bench.sets import pick_cvrplib_x, resolve

    files = pick_cvrplib_x(resolve(["cvrplib-x"]), args.subset)
    budgets = [int(b) for b in args.iterations.split(",")]
    log = ResultLog(args.out.with_suffix(".csv"), extra=EXTRA)
    done = {r["instance"] for r in log.rows}
    for path in files:
        if path.stem in done:
            continue
        for row, extra in rows_for(path, budgets):
            log.add_row(row, **extra)
        print(path.stem, flush=True)
    args.out.with_suffix(".md").write_text(markdown(log.rows))
    print(markdown(log.rows))


if __name__ == "__main__":
    main()
