"""``routecli analyze memory``: what MiLoop's memory holds over the steps of a greedy rollout
(MiLoop Appendix D, Table 8), beside the paper's values, with a per-step plot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from routecli.cli.analyze import OUT_HELP, check_out, command_line, fmt, write_rows
from routecli.cli.common import Device, Threads, console, cpu_device
from routecli.cli.outputs import check_replaceable, output_path
from routecli.errors import OptionError
from routecli.limits import MAX_INSTANCES, MAX_NODES
from routecli.resources import DEFAULT_DEVICE, DEFAULT_THREADS, SEED_MAX


def memory(
    problem: str = typer.Option("tsp", "--problem", metavar="NAME",
                                help="tsp (the paper's) or cvrp."),
    checkpoint: Path = typer.Option(None, "--checkpoint", metavar="FILE", help="MiLoop weights "
                                    "(default: the shipped miloop-PROBLEM.pt)."),
    baselines: list[Path] = typer.Option([], "--baseline", metavar="FILE", help="Also measure "
                                         "this trained checkpoint, e.g. a dynamic-embedding "
                                         "model trained with --no-memory (the paper's "
                                         "baseline); repeatable."),
    size: int = typer.Option(100, "--size", min=3, max=MAX_NODES, metavar="N",
                             help="Nodes (TSP) or customers (CVRP); the paper: TSP-100."),
    num: int = typer.Option(16, "--num", min=1, max=MAX_INSTANCES,
                            metavar="N", help="Uniform instances."),
    seed: int = typer.Option(0, "--seed", min=0, max=SEED_MAX, metavar="N",
                             help="Seed of the instance generator."),
    threads: Threads = DEFAULT_THREADS,
    device: Device = DEFAULT_DEVICE,
    out: Path = typer.Option(None, "--out", "-o", metavar="FILE", parser=output_path,
                             help=OUT_HELP
                             + " JSON adds the per-step means."),
    figure: Path = typer.Option(None, "--figure", metavar="FILE", parser=output_path,
                                help="Plot the per-step "
                                "means (the paper's Figure 3) to this .png file."),
) -> None:
    """Cosine similarity of node representations across the steps of a greedy rollout (MiLoop
    Table 8): each unvisited node's representation against the previous step's (centred, Eq.
    31-32) and against the first recorded step's. Rows: the checkpoint, the same weights with
    the memory switched off (what the memory contributes; not a trained baseline), and every
    --baseline."""
    import torch
    from rich.table import Table

    from routecli.analysis.memory import (
        MEMORY_COLUMNS,
        PAPER_TABLE8,
        memory_rows,
        memory_study,
        plot_dynamics,
    )
    from routecli.plots.figure import drawn_by_routecli

    cpu_device(device, "analyze memory")
    check_out(out, MEMORY_COLUMNS)
    if figure is not None:
        if figure.suffix != ".png":
            raise OptionError(f"--figure must end in .png, got {figure}")
        check_replaceable(figure, None, "--figure", drawn_by_routecli)
    torch.set_num_threads(threads)
    results = memory_study(problem, checkpoint, baselines, size, num, seed)

    table = Table(title=f"Mean cosine similarity of node representations, {problem.upper()}-"
                  f"{size}, {num} greedy rollouts (ours | MiLoop Table 8, TSP-100)")
    table.add_column("similarity")
    for r in results:
        table.add_column(r.label, justify="right")
    table.add_column("paper: dynamic embedding", justify="right")
    table.add_column("paper: MiLoop", justify="right")
    for key, name in (("adjacent", "adjacent steps (C)"), ("first", "first recorded step (A)")):
        table.add_row(name, *(fmt(getattr(r, key), 4) for r in results),
                      fmt(PAPER_TABLE8[key]["dynamic"], 4), fmt(PAPER_TABLE8[key]["miloop"], 4))
    table.add_section()
    table.add_row("mean greedy objective", *(fmt(r.cost, 3) for r in results), "-", "-")
    console.print(table)
    console.print(f"[dim]{command_line()}[/dim]")
    meta: dict[str, Any] = {"command": command_line(), "problem": problem, "size": size,
                            "num": num, "seed": seed}
    if out is not None and out.suffix == ".json":
        meta["steps"] = {r.label: [vars(s) for s in r.steps] for r in results}
    write_rows(out, memory_rows(results), meta, MEMORY_COLUMNS)
    if figure is not None:
        plot_dynamics(results, str(figure), f"{problem.upper()}-{size}, {num} greedy rollouts, "
                      f"seed {seed}")
        console.print(f"wrote {figure}")
