"""``routecli bench``: a benchmark set through one model, with a report by size bucket."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import typer

from routecli.cli import choices
from routecli.cli.common import ExecutorName, Rounding, Scheduler, Workers, console, fmt_gap
from routecli.cli.model_options import RunOptions, run_options
from routecli.cli.outputs import output_path
from routecli.errors import OptionError
from routecli.limits import MAX_FACTOR, MAX_JOBS, MAX_NODES, MAX_RUNS, MIN_FACTOR


@run_options
def bench(
    targets: list[str] = typer.Argument(None, metavar="INPUT", help="Instance files or folders "
                                        "(in addition to --set)."),
    sets: list[str] = typer.Option([], "--set", metavar="SET", help="Named set ("
                                   + ", ".join(choices.BENCH_SETS) + "), a folder, or a file; "
                                   "repeatable."),
    out: Path = typer.Option(..., "--out", "-o", metavar="FOLDER", parser=output_path,
                             help="Output folder: "
                             "results.csv, report.md, gap_vs_size.png, solutions/. Rerunning "
                             "skips finished instances. A folder that holds files and is not a "
                             "bench run folder is refused, and so is replacing a file there "
                             "routecli did not write."),
    force: bool = typer.Option(False, "--force", help="Let --out write into a folder that is "
                               "not a bench run folder and replace files routecli did not "
                               "write."),
    executor: ExecutorName = None,
    workers: Workers = None,
    jobs: int | None = typer.Option(None, "--jobs", "-j", min=1, max=MAX_JOBS, hidden=True,
                                    help="--workers, as bench spelled it before."),
    scheduler: Scheduler = None,
    runs: int | None = typer.Option(None, "--runs", min=1, max=MAX_RUNS, metavar="N",
                                    help="Runs per "
                                    "instance, with seeds SEED..SEED+N-1 (default 1; "
                                    "--protocol pyvrp: 10)."),
    protocol: str | None = typer.Option(None, "--protocol", metavar="NAME", help="A published "
                                        "protocol: " + ", ".join(choices.BENCH_PROTOCOLS)
                                        + " (PyVRP's: 2.4 x n seconds per instance of n "
                                        "clients times --time-scale, 10 seeds, round distances; "
                                        "the report adds gaps over seeds, the primal integral "
                                        "and the CPU's measured speed)."),
    time_scale: float = typer.Option(1.0, "--time-scale", min=MIN_FACTOR, max=MAX_FACTOR,
                                     metavar="FACTOR", help="--protocol: "
                                     "multiply its time limits by FACTOR (fit your CPU or budget)."),
    data_root: Path | None = typer.Option(None, "--data-root", metavar="FOLDER",
                                          help="Folder holding tsplib/ and cvrplib/ (default: "
                                          "$ROUTECLI_DATA or ../shared/benchdata)."),
    compare: Path | None = typer.Option(None, "--compare", metavar="CSV", help="results.csv of "
                                        "another run, shown side by side in the report."),
    max_size: int | None = typer.Option(None, "--max-size", min=1, max=MAX_NODES, metavar="N", help="Skip "
                                        "instances larger than this."),
    rounding: Rounding = "file",
    *,
    options: RunOptions,
) -> None:
    """Solve a benchmark set, validate every solution, report gaps by size bucket."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from routecli.bench import read_rows_for, resolve, run_bench, summarise, write_report
    from routecli.bench.protocol import protocol as named_protocol
    from routecli.bench.report import REPORT_FILE
    from routecli.bench.runner import protocol_report
    from routecli.io import read_instance
    from routecli.tasks import make_executor

    if "init" in options.given:
        raise OptionError("--init applies to solve with one instance, not to bench")
    files = resolve([*sets, *(targets or [])], data_root)
    if not files:
        raise OptionError("nothing to solve: pass --set, folders or files")
    if max_size is not None:
        files = [f for f in files if read_instance(f, rounding).size <= max_size]
    model = options.model
    settings = options.settings()
    preset = named_protocol(protocol, time_scale) if protocol is not None else None
    if preset is None and time_scale != 1.0:
        raise OptionError("--time-scale scales a --protocol's time limits; add --protocol")
    if jobs is not None and workers is not None and jobs != workers:
        raise OptionError(f"--jobs {jobs} and --workers {workers} name the same count: give one")
    engine = make_executor(executor, workers or jobs, scheduler)
    other = read_rows_for(compare) if compare is not None else None
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn(), TextColumn("{task.fields[last]}"))
    command = "routecli " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    # The bar appears once the output folder is claimed: a refused --out is one line alone.
    progress = Progress(*columns, console=console)
    total = len(files) * (runs or (preset.runs if preset is not None else 1))
    task = progress.add_task(f"bench {model}", total=total, last="")
    try:

        def start(done: int) -> None:
            progress.start()
            progress.update(task, completed=done)

        def advance(row) -> None:  # noqa: ANN001 - BenchRow
            progress.update(task, advance=1,
                            last=f"{row.instance}: gap {fmt_gap(row.gap_pct)} {row.seconds:.1f}s")

        def report(rows: list) -> None:
            extra = protocol_report(out, preset) if preset is not None else ""
            write_report(rows, out, f"routecli bench: {model}", other, command, extra)

        rows = run_bench(files, model, settings, out, seed=options.seed,
                         runs=runs or (preset.runs if preset is not None else 1),
                         stop=options.stop(), protocol=preset, executor=engine,
                         rounding=None if rounding == "file" else rounding,
                         force=force, on_start=start, on_row=advance, finish=report)
    finally:
        if progress.live.is_started:
            progress.stop()
    for problem, summaries in summarise(rows).items():
        cells = "  ".join(f"{s.label} {fmt_gap(s.mean_gap)}" for s in summaries)
        console.print(f"{problem.upper()}: {cells}  solved {summaries[-1].solved}/"
                      f"{summaries[-1].count}")
    console.print(f"report: {out / REPORT_FILE}")
    if any(not r.feasible for r in rows):
        raise typer.Exit(1)

