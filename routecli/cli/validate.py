"""``routecli validate INSTANCE SOLUTION``: check a solution from any tool against an instance
file: its cost under the file's distance rule, every constraint it violates, its gap to the
best-known value. Exit 0 if feasible, 1 if not, 2 if either file cannot be read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from routecli.cli.common import ROUND_HELP, Bks, console, fmt_cost, fmt_gap


def validate(
    instance_file: Path = typer.Argument(..., metavar="INSTANCE", help="Instance file (.vrp, "
                                         ".tsp, Solomon .txt)."),
    solution_file: Path = typer.Argument(..., metavar="SOLUTION", help="Solution file: a "
                                         "CVRPLIB .sol (problems with a depot) or a TSPLIB "
                                         ".tour (TSP)."),
    bks: Bks = None,
    rounding: str = typer.Option("file", "--round", metavar="RULE", help=ROUND_HELP),
    json_line: bool = typer.Option(False, "--json", help="Print one JSON object (plain "
                                   "numbers, gap in percent, null for an undefined number) "
                                   "instead of text."),
) -> None:
    """Check a solution: cost under the instance's distance rule, every violated constraint,
    gap to the best-known value. Exit code 0 feasible, 1 infeasible, 2 unreadable input."""
    report = check_solution(instance_file, solution_file, bks, rounding)
    if json_line:
        from routecli.results import strict_json

        print(strict_json.dumps(report), flush=True)
    else:
        print_report(report)
    if not report["feasible"]:
        raise typer.Exit(1)


def check_solution(instance_file: Path, solution_file: Path, bks: float | None,
                   rounding: str) -> dict[str, Any]:
    """What ``validate`` reports, as plain values (the ``--json`` object, with the routecli
    version that checked it, as ``solve --json`` records the one that solved)."""
    from routecli import __version__
    from routecli.io import best_known, read_instance
    from routecli.io.solutions import read_solution_and_cost
    from routecli.problems import cost, gap, validate

    instance = read_instance(instance_file, rounding)
    solution, stated = read_solution_and_cost(solution_file, instance)
    violations = validate(instance, solution)
    value = float(cost(instance, solution))
    reference, source = best_known(instance, instance_file, bks)
    feasible = not violations
    return {"instance": instance.name, "file": str(instance_file),
            "solution_file": str(solution_file), "problem": instance.problem,
            "size": instance.size,
            "rule": instance.metric.rule if hasattr(instance, "metric") else None,  # KP: none
            "cost": value, "stated_cost": stated, "bks": reference,
            "bks_source": source or None,
            # The gap of an infeasible solution compares it with solutions it does not compete with.
            "gap_pct": (gap(value, reference, instance.sense) if feasible and reference is not None
                        else None),
            "feasible": feasible, "violations": violations, "routecli_version": __version__}


def print_report(r: dict[str, Any]) -> None:
    bks = f"{fmt_cost(r['bks'])} ({r['bks_source']})" if r["bks"] is not None else "unknown"
    rule = f"distance {r['rule']}  " if r["rule"] is not None else ""
    console.print(f"[bold]{r['instance']}[/] {r['problem'].upper()} n={r['size']}  "
                  f"{rule}cost={fmt_cost(r['cost'])}  bks={bks}  gap={fmt_gap(r['gap_pct'])}")
    if r["stated_cost"] is not None and abs(r["stated_cost"] - r["cost"]) > 0.01:
        console.print(f"  the file states cost {fmt_cost(r['stated_cost'])}; recomputed under "
                      f"{r['rule']}: {fmt_cost(r['cost'])}", markup=False)
    if r["feasible"]:
        console.print("[green]feasible[/]")
        return
    console.print(f"[red]INFEASIBLE[/]: {len(r['violations'])} violation"
                  f"{'s' if len(r['violations']) != 1 else ''}")
    for violation in r["violations"]:
        console.print(f"  - {violation}", markup=False)
