"""``routecli solve FILE... --model NAME``: solve instance files, report cost, gap and time."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.status import Status
from rich.table import Table

from routecli.cli.common import (
    CANDIDATES_HELP,
    console,
    err_console,
    fmt_cost,
    fmt_gap,
    model_options,
)
from routecli.errors import OptionError
from routecli.io import best_known, read_instance, solution_suffix, write_solution
from routecli.problems import Instance
from routecli.solvers import REGISTRY, Progress, SolveResult, Stop, make_settings, make_solver, run


def output_path(out: Path | None, file: Path, result: SolveResult, many: bool) -> Path | None:
    """Where the solution of ``file`` goes: ``out`` itself for one file with a solution suffix,
    otherwise ``out/<stem>.sol|.tour``."""
    if out is None:
        return None
    suffix = solution_suffix(result.solution)
    if not many and out.suffix in (".sol", ".tour"):
        return out
    return out / f"{file.stem}{suffix}"


def solve(
    files: list[Path] = typer.Argument(..., help="Instance files (.vrp, .tsp, Solomon .txt)."),
    model: str = typer.Option("hgs", "--model", "-m",
                              help=f"Solver: {', '.join(REGISTRY)}."),
    time_limit: float | None = typer.Option(None, "--time-limit", "-t", min=0.0,
                                            help="Seconds per instance (searches default to "
                                            "10; constructive decoding stops starting new "
                                            "rollouts and returns the best finished)."),
    iterations: int | None = typer.Option(None, "--iterations", min=1, help="Iteration limit "
                                          "per instance (searches: hgs, sisr, nds)."),
    seed: int = typer.Option(0, "--seed", help="Random seed."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Solution file (.sol/.tour) for "
                                    "one instance, or a folder for several."),
    bks: float | None = typer.Option(None, "--bks", help="Best-known value to compute the gap "
                                     "against (default: sibling .sol/.opt.tour, then registry)."),
    rounding: str = typer.Option("file", "--round", help="Distance rule: file, none (exact "
                                 "Euclidean), euc2d, ceil2d, att, geo."),
    decode: str | None = typer.Option(None, "--decode", help="MiLoop decoding: greedy "
                                      "(default), sampling, multistart."),
    starts: int | None = typer.Option(None, "--starts", min=1, help="MiLoop multi-start M "
                                      "(distinct first nodes) or samples (default 100)."),
    augment: bool = typer.Option(False, "--augment", help="8-fold symmetry augmentation."),
    checkpoint: Path | None = typer.Option(None, "--checkpoint", help="Model weights "
                                           "(default: the shipped checkpoint)."),
    candidates: int | None = typer.Option(None, "--candidates", min=0, help=CANDIDATES_HELP),
    pe: str | None = typer.Option(None, "--pe", help="Positional encoding (nds)."),
    policy: str | None = typer.Option(None, "--policy", help="Removal policy (nds/sisr): "
                                      "learned, random, strings."),
    polish: bool = typer.Option(False, "--polish", help="Local-search polish of the result."),
    device: str | None = typer.Option(None, "--device", help="Torch device of neural models: "
                                      "cpu (default), cuda."),
    threads: int | None = typer.Option(None, "--threads", min=1, help="Torch CPU threads for "
                                       "neural models (default: one per core)."),
) -> None:
    """Solve instances and print cost, best-known value, gap, time and feasibility."""
    if bks is not None and len(files) > 1:
        raise OptionError("--bks applies to a single instance; pass one file")
    settings = make_settings(model, **model_options(
        decode=decode, starts=starts, augment=augment, checkpoint=checkpoint,
        candidates=candidates, pe=pe, policy=policy, polish=polish, threads=threads,
        device=device))
    stop = Stop(seconds=time_limit, iterations=iterations)
    solver = make_solver(model, settings)
    instances: list[Instance] = [read_instance(f, rounding) for f in files]  # fail early
    many = len(files) > 1
    results: list[SolveResult] = []
    failed = 0
    for file, instance in zip(files, instances, strict=False):
        reference, _ = best_known(instance, file, bks)
        label = f"solving {instance.name} ({instance.size}) with {model}"
        with console.status(label) as line:

            def show(progress: Progress, line: Status = line, label: str = label) -> None:
                line.update(f"{label}: {progress_text(progress)}")

            result = run(solver, instance, seed=seed, stop=stop, bks=reference, progress=show)
        results.append(result)
        _print_result(result)
        if not result.feasible:
            failed += 1
            err_console.print(f"error: {instance.name}: {model} returned an infeasible solution: "
                              f"{'; '.join(result.problems[:3])}", markup=False)
            continue
        target = output_path(out, file, result, many)
        if target is not None:
            write_solution(target, instance, result.solution)
            console.print(f"  wrote {target}")
    if many:
        console.print(summary_table(results))
    if failed:
        raise SystemExit(1)


def progress_text(progress: Progress) -> str:
    """The status line of a running solve: share done, or best cost so far."""
    if progress.share is not None:
        return f"{progress.share:.0%}"
    return f"best {fmt_cost(progress.best)} at {progress.seconds:.1f}s"


def _print_result(r: SolveResult) -> None:
    status = "[green]feasible[/]" if r.feasible else "[red]INFEASIBLE[/]"
    console.print(
        f"[bold]{r.instance}[/] {r.problem.upper()} n={r.size}  model={r.model}  "
        f"cost={fmt_cost(r.cost)}  bks={fmt_cost(r.bks)}  gap={fmt_gap(r.gap)}  "
        f"time={r.seconds:.2f}s  {status}")


def summary_table(results: list[SolveResult]) -> Table:
    table = Table(title="routecli solve")
    for col in ("instance", "n", "model", "cost", "bks", "gap", "time (s)", "feasible"):
        table.add_column(col, justify="left" if col in ("instance", "model") else "right")
    for r in results:
        table.add_row(r.instance, str(r.size), r.model, fmt_cost(r.cost), fmt_cost(r.bks),
                      fmt_gap(r.gap), f"{r.seconds:.2f}", "yes" if r.feasible else "NO")
    gaps = [r.gap for r in results if r.gap is not None and r.feasible]
    if len(results) > 1:
        mean_gap = fmt_gap(sum(gaps) / len(gaps)) if gaps else "-"
        total = sum(r.seconds for r in results)
        table.add_row("[bold]mean[/]", "", "", "", "", mean_gap, f"{total:.2f}",
                      f"{sum(r.feasible for r in results)}/{len(results)}")
    return table
