"""``routecli plot solution FILE SOLUTION --out fig.png``."""

from __future__ import annotations

from pathlib import Path

import typer

from routecli.cli.common import ROUND_HELP, Bks, console
from routecli.cli.outputs import check_replaceable, output_path
from routecli.errors import OptionError


def solution(
    file: Path = typer.Argument(..., metavar="INSTANCE", help="Instance file (.vrp, .tsp)."),
    solution_file: Path = typer.Argument(..., metavar="SOLUTION", help="Solution file (.sol, "
                                         ".tour)."),
    out: Path = typer.Option(..., "--out", "-o", metavar="FILE", parser=output_path,
                             help="PNG file to write."),
    bks: Bks = None,
    rounding: str = typer.Option("file", "--round", metavar="RULE", help=ROUND_HELP),
) -> None:
    """Draw a solution: depot marked, routes coloured, cost and gap in the title."""
    from routecli.io import best_known, read_instance, read_solution
    from routecli.plots import plot_solution
    from routecli.plots.figure import drawn_by_routecli
    from routecli.problems import validate

    if out.suffix.lower() != ".png":
        raise OptionError(f"--out must be a .png file, got {out}")
    check_replaceable(out, None, "--out", drawn_by_routecli)
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
