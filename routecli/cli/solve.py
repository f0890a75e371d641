"""``routecli solve FILE|FOLDER... --model NAME``: solve instance files, report cost, gap and
time, for people (a line per instance, a summary table) or for scripts (``--json``, ``--csv``).
"""

from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from routecli.cli import command_started
from routecli.cli.common import (
    Bks,
    Rounding,
    console,
    err_console,
    fmt_cost,
    fmt_gap,
)
from routecli.cli.model_options import RunOptions, run_options
from routecli.cli.outputs import check_replaceable, output_path, solution_targets, write_target
from routecli.cli.progress_bar import node_bar, wants_bar
from routecli.errors import OptionError
from routecli.results import strict_json
from routecli.stop import Interruption, signal_exit_code

if TYPE_CHECKING:
    from rich.table import Table

    from routecli.problems import Instance
    from routecli.solvers import Progress, Solver, SolveResult
    from routecli.stop import Criterion

# Seconds between two progress lines of a search when stderr is a file, not a terminal (the
# status line shows only on a terminal).
PROGRESS_EVERY = 30.0


@run_options
def solve(
    files: list[Path] = typer.Argument(..., metavar="INPUT", help="Instance files (.vrp, .tsp, "
                                       "Solomon .txt) or folders (every instance file in "
                                       "them)."),
    out: Path | None = typer.Option(None, "--out", "-o", metavar="PATH", parser=output_path,
                                    help="Solution file for one input (.sol for problems with "
                                    "a depot, .tour for TSP), or a folder; checked before "
                                    "solving. An existing file is replaced only if routecli "
                                    "wrote it."),
    force: bool = typer.Option(False, "--force", help="Let --out and --csv replace a file "
                               "routecli did not write, such as a published best-known .sol."),
    json_lines: bool = typer.Option(False, "--json", help="Print one JSON object per instance "
                                    "(plain numbers, gap in percent) instead of text."),
    csv_file: Path | None = typer.Option(None, "--csv", metavar="FILE", parser=output_path,
                                         help="Also write a "
                                         "summary .csv, one row per instance (the --json "
                                         "fields); an existing file is replaced only if routecli wrote it."),
    bks: Bks = None,
    rounding: Rounding = "file",
    *,
    options: RunOptions,
) -> None:
    """Solve instances and print cost, best-known value, gap, time and feasibility."""
    from routecli.io import expand_inputs, read_instance
    from routecli.solvers import make_solver, require_problem

    if csv_file is not None:
        check_csv(csv_file, force)
    paths = expand_inputs(list(files))
    if bks is not None and len(paths) > 1:
        raise OptionError("--bks applies to a single instance; pass one file")
    if "init" in options.given and len(paths) > 1:
        raise OptionError("--init applies to a single instance; pass one file")
    stop = options.stop()
    settings = options.settings()
    solver = make_solver(options.model, settings)
    instances = [read_instance(p, rounding) for p in paths]  # every input read before solving
    for instance in instances:
        require_problem(solver, instance)
    targets = solution_targets(out, paths, [i.problem for i in instances], force)
    written = {p.absolute() for p in [out, *targets] if p is not None}
    if csv_file is not None and csv_file.absolute() in written:
        raise OptionError(f"--csv {csv_file} is also where --out writes; name another file")
    rows: list[dict[str, Any]] = []
    mark = command_started()
    with Interruption() as interruption:  # the first signal: keep the best so far, then exit
        for path, instance, target in zip(paths, instances, targets, strict=True):
            row = solve_one(solver, path, instance, target, seed=options.seed, stop=stop,
                            bks=bks, machine=json_lines, settings=settings, since=mark)
            rows.append(row)
            mark += row["seconds"]
            if interruption.signal is not None:
                break
    if csv_file is not None:
        from routecli.results import write_solve_csv

        write_solve_csv(csv_file, rows)
    if len(rows) > 1 and not json_lines:
        console.print(summary_table(rows))
    if interruption.signal is not None:
        left = len(paths) - len(rows)
        err_console.print(f"interrupted ({signal.Signals(interruption.signal).name}): the "
                          "best solution found so far is reported above"
                          + (f"; {left} input{'s' * (left > 1)} not solved" if left else ""),
                          markup=False)
        raise typer.Exit(signal_exit_code(interruption.signal))
    if not all(row["feasible"] for row in rows):
        raise typer.Exit(1)


def check_csv(path: Path, force: bool) -> None:
    if path.suffix != ".csv":
        raise OptionError(f"--csv must name a .csv file, got {path}")
    check_replaceable(path, force, "--csv", csv_written_by_routecli)


def csv_written_by_routecli(path: Path) -> bool:
    """Whether ``path`` starts with the header of ``solve --csv``: routecli's mark."""
    from routecli.results import SOLVE_FIELDS

    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.readline().rstrip("\r\n") == ",".join(SOLVE_FIELDS)
    except OSError:
        return False


def solve_one(solver: Solver, path: Path, instance: Instance, target: Path | None, *, seed: int,
              stop: Criterion | None, bks: float | None, machine: bool,
              settings: Any = None, since: float | None = None) -> dict[str, Any]:
    """Solve one instance, report it (text or a JSON line), write its solution if feasible;
    returns its row (:data:`routecli.results.SOLVE_FIELDS`; its ``seconds`` count from the
    ``time.perf_counter()`` value ``since``, default: the solve's start)."""
    from routecli.io import best_known
    from routecli.results import solve_record
    from routecli.solvers import ran_with, run

    since = time.perf_counter() if since is None else since
    reference, source = best_known(instance, path, bks)

    def describe(progress: Progress) -> str:
        return progress_text(progress, reference)

    if machine:
        result = run(solver, instance, seed=seed, stop=stop, bks=reference)
    elif wants_bar(instance.size):
        with node_bar(f"{instance.name} ({instance.size}) with {solver.name}",
                      instance.size, describe) as show_bar:
            result = run(solver, instance, seed=seed, stop=stop, bks=reference, progress=show_bar)
    else:
        label = f"solving {instance.name} ({instance.size}) with {solver.name}"
        logged = [0.0]  # when the last progress line went to a non-terminal stderr
        with console.status(label) as line:

            def show(progress: Progress) -> None:
                line.update(f"{label}: {describe(progress)}")
                if (not err_console.is_terminal and progress.best is not None
                        and progress.seconds - logged[0] >= PROGRESS_EVERY):
                    logged[0] = progress.seconds
                    err_console.print(f"{label}: {describe(progress)}", markup=False)

            result = run(solver, instance, seed=seed, stop=stop, bks=reference, progress=show)
    written = None
    if result.feasible and target is not None:
        written = write_target(target, instance, result.solution)
    row = solve_record(path, result, source, written, seed,
                       provenance(solver, ran_with(solver, settings), instance.problem),
                       time.perf_counter() - since)
    if machine:
        print(strict_json.dumps(row), flush=True)
    else:
        print_result(result, written, row)
    if not result.feasible:
        err_console.print(f"error: {instance.name}: {solver.name} returned an infeasible "
                          f"solution: {'; '.join(result.problems[:3])}", markup=False)
    return row


def provenance(solver: Solver, settings: Any, problem: str) -> dict[str, Any]:
    """How a result was made: the model's settings, the digest of the weights that solved
    ``problem`` (neural models) and the routecli version."""
    from dataclasses import asdict, is_dataclass

    from routecli import __version__

    digest = getattr(solver, "checkpoint_digest", lambda _: None)(problem)
    shown = asdict(settings) if is_dataclass(settings) and not isinstance(settings, type) else {}
    for name in getattr(settings, "unused", tuple)():  # e.g. greedy decoding's starts
        shown.pop(name, None)
    return {"settings": shown,
            "checkpoint_sha256": digest, "routecli_version": __version__}


def progress_text(progress: Progress, bks: float | None = None) -> str:
    """The status line of a running solve: share done with the time it has taken and an
    estimate of the time left, or best cost so far (and its gap to ``bks``)."""
    if progress.share is not None:
        text = f"{progress.share:.0%} after {progress.seconds:.0f}s"
        if 0 < progress.share < 1:
            left = progress.seconds * (1 - progress.share) / progress.share
            text += f", about {left:.0f}s left"
        return text
    text = f"best {fmt_cost(progress.best)}"
    if bks is not None and progress.best is not None:
        from routecli.problems import gap

        text += f" (gap {fmt_gap(gap(progress.best, bks))})"
    return f"{text} at {progress.seconds:.1f}s"


def print_result(r: SolveResult, written: Path | None, row: dict[str, Any]) -> None:
    from routecli.results import OBJECTIVES

    status = "[green]feasible[/]" if r.feasible else "[red]INFEASIBLE[/]"
    measure = "value" if r.sense == "max" else "cost"
    named = f" ({OBJECTIVES[r.problem]})" if r.problem in OBJECTIVES and r.sense != "max" else ""
    console.print(
        f"[bold]{r.instance}[/] {r.problem.upper()} n={r.size}  model={r.model}  "
        f"{measure}={fmt_cost(r.cost)}{named}  bks={fmt_cost(r.bks)}  gap={fmt_gap(r.gap)}  "
        f"time={row['seconds']:.2f}s (solve {r.seconds:.2f}s)  {status}")
    console.print(f"  made with {made_with(row)}", markup=False)
    if r.effort is not None and not r.effort.complete:
        console.print(f"  {r.effort}", markup=False)
    if written is not None:
        console.print(f"  wrote {written}", markup=False)


def made_with(row: dict[str, Any]) -> str:
    """The provenance of a result for people: the settings that shape it (not where the
    weights file lies or how many threads ran), the weights' digest, the version."""
    shown = {k: v for k, v in row["settings"].items()
             if k not in ("checkpoint", "threads", "device") and v is not None}
    parts = [" ".join(f"{k}={v}" for k, v in shown.items())]
    if row["checkpoint_sha256"]:
        parts.append(f"weights sha256 {row['checkpoint_sha256'][:16]}")
    parts.append(f"routecli {row['routecli_version']}")
    return ", ".join(p for p in parts if p)


def summary_table(rows: list[dict[str, Any]]) -> Table:
    from rich.table import Table

    table = Table(title="routecli solve")
    measure = "cost / value" if any(r["problem"] == "kp" for r in rows) else "cost"
    # time: each instance's share of the command's wall clock, as time= (the solve alone is in
    # the lines above and in --json/--csv); the table fits an 80-column terminal
    for col in ("instance", "n", "model", measure, "bks", "gap", "time (s)", "feasible"):
        table.add_column(col, justify="left" if col in ("instance", "model") else "right")
    for r in rows:
        table.add_row(r["instance"], str(r["size"]), r["model"], fmt_cost(r["cost"]),
                      fmt_cost(r["bks"]), fmt_gap(r["gap_pct"]), f"{r['seconds']:.2f}",
                      "yes" if r["feasible"] else "NO")
    gaps = [r["gap_pct"] for r in rows if r["gap_pct"] is not None and r["feasible"]]
    mean_gap = fmt_gap(sum(gaps) / len(gaps)) if gaps else "-"
    mean_seconds = sum(r["seconds"] for r in rows) / len(rows)
    table.add_row("[bold]mean[/]", "", "", "", "", mean_gap, f"{mean_seconds:.2f}",
                  f"{sum(r['feasible'] for r in rows)}/{len(rows)}")
    return table
