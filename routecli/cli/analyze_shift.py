"""``routecli analyze shift``: trained on uniform instances, tested on shifted ones (PE paper
Appendix J, Table 8), beside the paper's values."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from routecli.cli import choices
from routecli.cli.analyze import OUT_HELP, check_out, command_line, fmt, write_rows
from routecli.cli.common import JOBS_HELP, Device, Threads, console, cpu_device
from routecli.cli.outputs import output_path
from routecli.limits import MAX_FACTOR, MAX_INSTANCES, MAX_JOBS, MAX_NODES, MAX_STEPS, MIN_FACTOR
from routecli.resources import DEFAULT_DEVICE, DEFAULT_THREADS, SEED_MAX

SHIFT_HELP = ("all, or comma-separated shifts from " + ", ".join(choices.SHIFTS) + " (uniform, "
              "the training distribution, is always measured: every change is taken from it).")


def shift(
    shifts: str = typer.Option("all", "--shift", metavar="NAMES", help=SHIFT_HELP),
    problem: str = typer.Option("cvrp", "--problem", metavar="NAME", help="cvrp, vrptw or "
                                "pcvrp (the shipped nds-PROBLEM.pt policy); ignored with "
                                "--compare-pe."),
    size: int = typer.Option(100, "--size", min=2, max=MAX_NODES, metavar="N", help="Customers (the "
                             "paper: 500)."),
    num: int = typer.Option(8, "--num", min=1, max=MAX_INSTANCES, metavar="N", help="Instances per shift."),
    methods: str = typer.Option("learned,strings,random", "--method", metavar="NAMES",
                                help="Removal policies of the NDS search, comma-separated: "
                                "learned (the shipped IPE+XPE policy), strings (SISR-style), "
                                "random; all on the same iterations and seed."),
    iterations: int = typer.Option(100, "--iterations", min=1, max=MAX_STEPS, metavar="N", help="Search "
                                   "iterations per instance (each repairs the paper's 64 "
                                   "removal proposals)."),
    compare_pe: Path = typer.Option(None, "--compare-pe", metavar="FOLDER", help="Instead of "
                                    "the NDS search, evaluate the models a compare-pe run "
                                    "trained (FOLDER/models) on shifted test sets of its size."),
    pe: str = typer.Option(None, "--pe", metavar="NAMES", help="--compare-pe: only these "
                           "encodings (comma-separated, as in the run's rows)."),
    test_size: int = typer.Option(None, "--test-size", min=1, max=MAX_INSTANCES, metavar="N",
                                  help="--compare-pe: "
                                  "test instances per shift (default: the run's)."),
    eval_steps: int = typer.Option(None, "--eval-steps", min=1, max=MAX_STEPS, metavar="N",
                                   help="--compare-pe: "
                                   "improvement steps (default: the run's)."),
    ref_budget: float = typer.Option(1.0, "--ref-budget", min=MIN_FACTOR, max=MAX_FACTOR,
                                     metavar="FACTOR", help="PyVRP "
                                     "reference budget, times the gap-grade one (cached)."),
    seed: int = typer.Option(0, "--seed", min=0, max=SEED_MAX, metavar="N",
                             help="Seed of the instances and the "
                             "search (--compare-pe: the run's test seed)."),
    jobs: int = typer.Option(1, "--jobs", "-j", min=1, max=MAX_JOBS, metavar="N", help=JOBS_HELP),
    threads: Threads = DEFAULT_THREADS,
    device: Device = DEFAULT_DEVICE,
    out: Path = typer.Option(None, "--out", "-o", metavar="FILE", parser=output_path,
                             help=OUT_HELP + " JSON adds "
                             "the per-instance (per-model) rows."),
) -> None:
    """Gap to PyVRP of models trained on uniform instances, on shifted ones (PE paper Table 8):
    low capacity (half the Appendix F capacity), clustered, mixed (half clustered) and
    explosion customers; the change from uniform says how much each method degrades."""
    import torch

    from routecli.analysis.shift import SHIFT_COLUMNS, parse_shifts, shift_study

    cpu_device(device, "analyze shift")
    names = parse_shifts(shifts)
    check_out(out, SHIFT_COLUMNS)
    torch.set_num_threads(threads)

    def log(line: str) -> None:
        console.print(line, markup=False, highlight=False)

    chosen = [p.strip() for p in pe.split(",") if p.strip()] if pe else None
    study = shift_study(names, compare_pe=compare_pe, pes=chosen, test_size=test_size,
                        eval_steps=eval_steps, problem=problem, size=size, num=num, seed=seed,
                        methods=[m.strip() for m in methods.split(",") if m.strip()],
                        iterations=iterations, ref_budget=ref_budget, jobs=jobs,
                        threads=threads, log=log, progress=sys.stderr.isatty())
    print_table(study.title, study.cells, names, study.paper_rows)
    console.print(f"[dim]{command_line()}[/dim]")
    meta: dict[str, Any] = {"command": command_line(), "shifts": names,
                            "ref_budget": ref_budget, **study.meta}
    if out is not None and out.suffix == ".json":
        meta["runs"] = study.runs
    write_rows(out, study.rows(), meta, SHIFT_COLUMNS)


def print_table(title: str, cells: dict, names: list[str], paper_rows: dict[str, str]) -> None:
    """One section per shift, one row per method (Obj., Gap, its change from uniform), the
    paper's Table 8 values (CVRP-500) beside the row that stands for them; the paper's rows
    without a counterpart here follow them."""
    from rich.table import Table

    from routecli.analysis.shift import PAPER_TABLE8

    table = Table(title=title)
    for column in ("shift", "method", "Obj.", "Gap %", "change", "paper Obj.", "paper Gap %"):
        left = column in ("shift", "method")
        table.add_column(column, justify="left" if left else "right", no_wrap=left,
                         overflow="fold")

    def plus_minus(value: float, spread: float) -> str:
        return fmt(value, 2) + ("" if spread != spread or not spread else f"±{fmt(spread, 2)}")

    stand_ins = set(paper_rows.values())
    for name in names:
        shown = False
        for method, per_shift in cells.items():
            cell = per_shift.get(name)
            if cell is None:
                continue
            paper_name = paper_rows.get(method)
            obj, gap = PAPER_TABLE8.get(paper_name or "", {}).get(name, (None, None))
            change = "" if name == "uniform" else plus_minus(cell.change, cell.change_spread)
            label = "PyVRP" if method == "reference" else method
            label += f" ({paper_name})" if paper_name else ""
            table.add_row("" if shown else name, label, fmt(cell.obj, 3),
                          plus_minus(cell.gap, cell.gap_spread), change, fmt(obj, 2),
                          fmt(gap, 2))
            shown = True
        for paper_name, values in PAPER_TABLE8.items():
            if paper_rows and paper_name not in stand_ins and name in values:
                obj, gap = values[name]
                table.add_row("", f"{paper_name}: paper", "", "", "", fmt(obj, 2),
                              fmt(gap, 2))
        table.add_section()
    console.print(table)
