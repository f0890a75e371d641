"""The search's two distance providers, a dense matrix and on-demand edges, at equal iterations:
CPU time per iteration and whether the runs agree.

    .venv/bin/python benchmarks/bench_search_distances.py \
        --files X/X-n101-k25,X/X-n502-k39,X/X-n1001-k43,AGS/Leuven1,AGS/Antwerp1 \
        --iterations 20000 --out benchmarks/results/search_distances

For each CVRPLIB file (under the data root's ``cvrplib/``) the same ``sisr`` search (string
removal, seed 0) runs ``--iterations`` iterations from the same start once with a dense matrix
and once with on-demand edges, ``--repeats`` times each, interleaved; the time is CPU time per
iteration (the least over the repeats, the start and compilation excluded), which a loaded
machine disturbs less than wall time. ``same`` says whether the two runs returned identical
routes. Writes ``OUT.csv`` (one row per file and provider; the schema of
:mod:`routecli.results` plus the columns below) and ``OUT.md``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from routecli.results import Provenance, ResultLog, ResultRow

EXTRA = ["provider", "cpu_us_per_iteration", "same", "machine"]
SMALLEST, LARGEST = 0, 10**9  # dense_max that forces on-demand edges, or a matrix


def measure(path: Path, iterations: int, repeats: int, machine: str) -> list[dict]:
    from routecli.io import best_known, read_instance
    from routecli.search.asa import ASAConfig, initial_solution, solve
    from routecli.search.ruin import make_policy
    from routecli.search.state import SearchProblem
    from routecli.solvers import SolveResult
    from routecli.stop import MaxIterations

    instance = read_instance(path)
    reference, _ = best_known(instance, path)
    problems = {"matrix": SearchProblem.from_instance(instance, dense_max=LARGEST),
                "on demand": SearchProblem.from_instance(instance, dense_max=SMALLEST)}
    start = initial_solution(problems["matrix"]).to_routes()

    def run(name: str, n: int) -> tuple[float, object]:
        cpu = time.process_time()
        result = solve(problems[name], make_policy("strings"), ASAConfig(stop=MaxIterations(n)),
                       seed=0, initial=start)
        return time.process_time() - cpu, result

    for name in problems:
        run(name, 10)  # compile
    best = {name: float("inf") for name in problems}
    results = {}
    for _ in range(repeats):
        for name in problems:
            short, _ = run(name, 10)
            long, results[name] = run(name, iterations)
            best[name] = min(best[name], (long - short) / (iterations - 10))
    same = [list(map(list, r.solution.routes)) for r in results.values()]  # type: ignore[attr-defined]
    rows = []
    for name, result in results.items():
        solved = SolveResult(instance.name, instance.problem, instance.size, "sisr",
                             result.cost, result.seconds, True, [], result.solution,  # type: ignore[attr-defined]
                             reference)
        row = ResultRow.of(solved, set_name=path.parent.name, file=path, solver="sisr",
                           settings=None, seed=0, stop=MaxIterations(iterations),
                           provenance=Provenance.current())
        rows.append({"row": row, "provider": name,
                     "cpu_us_per_iteration": round(1e6 * best[name], 2),
                     "same": same[0] == same[1], "machine": machine})
    return rows


def markdown(rows: list[dict], machine: str) -> str:
    lines = [f"Measured on: {machine}", "",
             "| instance | nodes | matrix: CPU us / iteration | on demand: CPU us / iteration "
             "| same solution |", "|---|---|---|---|---|"]
    for name in dict.fromkeys(r["instance"] for r in rows):
        pair = {r["provider"]: r for r in rows if r["instance"] == name}
        lines.append(f"| {name} | {int(pair['matrix']['n']) + 1:,} | "
                     f"{pair['matrix']['cpu_us_per_iteration']} | "
                     f"{pair['on demand']['cpu_us_per_iteration']} | {pair['matrix']['same']} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", default="X/X-n101-k25,X/X-n502-k39,X/X-n1001-k43,"
                                           "AGS/Leuven1,AGS/Antwerp1")
    parser.add_argument("--iterations", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--machine", required=True, help="the conditions, stored in every row")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/search_distances"))
    args = parser.parse_args()
    from routecli.io.files import data_root

    root = data_root()
    if root is None:
        raise SystemExit("no data root: set $ROUTECLI_DATA")
    log = ResultLog(args.out.with_suffix(".csv"), extra=EXTRA)
    done = {r["instance"] for r in log.rows}
    for name in args.files.split(","):
        path = Path(root) / "cvrplib" / f"{name}.vrp"
        if path.stem in done:
            continue
        for r in measure(path, args.iterations, args.repeats, args.machine):
            log.add_row(r["row"], **{k: r[k] for k in EXTRA})
        print(markdown(log.rows, args.machine).splitlines()[-1], flush=True)
    args.out.with_suffix(".md").write_text(markdown(log.rows, args.machine))
    print(markdown(log.rows, args.machine))


if __name__ == "__main__":
    main()
