"""``routecli plot solution FILE SOLUTION --out fig.png``."""

from __future__ import annotations

from pathlib import Path

import typer

from routecli.cli.common import console
from routecli.errors import OptionError
from routecli.io import best_known, read_instance, read_solution
from routecli.plots import plot_solution
from routecli.problems import validate


def solution(
    file: Path = typer.Argument(..., help="Instance file (.vrp, .tsp)."),
    solution_file: Path = typer.Argument(..., help="Solution file (.sol, .tour)."),
    out: Path = typer.Option(..., "--out", "-o", help="PNG file to write."),
    bks: float | None = typer.Option(None, "--bks", help="Best-known value for the gap."),
    rounding: str = typer.Option("file", "--round", help="Distance rule override."),
) -> None:
    """Draw a solution: depot marked, routes coloured, cost and gap in the title."""
    if out.suffix.lower() != ".png":
        raise OptionError(f"--out must be a .png file, got {out}")
    instance = read_instance(file, rounding)
    sol = read_solution(solution_file, instance)
    problems = validate(instance, sol)
    if problems:
        raise OptionError(f"{solution_file}: not a feasible solution of {instance.name}: "
                          f"{'; '.join(problems[:3])}")
    reference, _ = best_known(instance, file, bks)
    if instance.metric.coords is None:  # type: ignore[union-attr]
        raise OptionError(f"{file}: no coordinates to draw (explicit distance matrix)")
    console.print(f"wrote {plot_solution(instance, sol, out, reference)}")
