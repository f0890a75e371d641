"""``routecli``: the Typer application and the entry point that turns user errors into one
line on stderr with exit code 2 (no tracebacks).

Every command module keeps torch, matplotlib, PyVRP and the numba kernels out of its module
level (they load inside the command), so ``routecli --help`` and ``routecli info`` start in
well under a second; ``tests/cli/test_startup.py`` checks that importing this module loads none
of them.
"""

from __future__ import annotations

import sys

import typer
from typer.exceptions import Abort, TyperException

from routecli import __version__
from routecli.cli import (
    analyze,
    analyze_memory,
    analyze_shift,
    bench,
    compare_pe,
    generate,
    info,
    plot,
    plot_solution,
    probe,
    solve,
    train,
    train_nds,
    validate,
)
from routecli.cli.common import err_console, new_app
from routecli.errors import RoutecliError, one_line

app = new_app("Neural vehicle routing from the command line: read TSPLIB/CVRPLIB files, solve "
              "them with MiLoop, neural deconstruction search or PyVRP, and measure the gap to "
              "the best-known solution.")
app.command("solve")(solve.solve)
app.command("validate")(validate.validate)
app.command("info")(info.info)
app.command("generate")(generate.generate)
app.command("bench")(bench.bench)
app.command("train")(train.train)
app.command("train-nds")(train_nds.train_nds)
app.command("compare-pe")(compare_pe.compare_pe)
analyze.app.command("memory")(analyze_memory.memory)
analyze.app.command("shift")(analyze_shift.shift)
app.add_typer(analyze.app, name="analyze")
app.command("probe")(probe.probe)
plot.app.command("solution")(plot_solution.solution)
app.add_typer(plot.app, name="plot")


@app.callback(invoke_without_command=True)
def _root(version: bool = typer.Option(False, "--version", help="Print the version and exit.")) -> None:
    if version:
        typer.echo(f"routecli {__version__}")
        raise typer.Exit()


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns (and exits with) the exit code."""
    command = typer.main.get_command(app)
    try:
        code = command.main(args=argv, prog_name="routecli", standalone_mode=False)
    except TyperException as exc:  # Typer's click errors: usage, bad parameter, no args
        ctx = getattr(exc, "ctx", None)
        if type(exc).__name__ == "NoArgsIsHelpError" and ctx is not None:
            typer.echo(ctx.get_help())
            code = 0
        else:
            message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
            err_console.print(f"error: {one_line(message)}", markup=False)
            code = 2
    except RoutecliError as exc:
        err_console.print(f"error: {exc}", markup=False)
        code = 2
    except (Abort, KeyboardInterrupt):
        err_console.print("interrupted", markup=False)
        code = 130
    code = code if isinstance(code, int) else 0
    if argv is None:
        sys.exit(code)
    return code
