"""``routecli``: the Typer application and the entry point that turns user errors into one
line on stderr with exit code 2 (no tracebacks)."""

from __future__ import annotations

import sys

import click
import typer

from routecli import __version__
from routecli.cli import generate, info, solve
from routecli.cli.common import err_console
from routecli.errors import RoutecliError

app = typer.Typer(
    name="routecli",
    help="Neural vehicle routing from the command line: read TSPLIB/CVRPLIB files, solve them "
    "with MiLoop, neural deconstruction search or PyVRP, and measure the gap to the best-known "
    "solution.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command("solve")(solve.solve)
app.command("info")(info.info)
app.command("generate")(generate.generate)


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
    except click.exceptions.NoArgsIsHelpError as exc:
        click.echo(exc.ctx.get_help() if exc.ctx else str(exc))
        code = 0
    except click.ClickException as exc:
        err_console.print(f"error: {exc.format_message()}", markup=False)
        code = 2
    except RoutecliError as exc:
        err_console.print(f"error: {exc}", markup=False)
        code = 2
    except click.exceptions.Abort:
        err_console.print("aborted", markup=False)
        code = 130
    except KeyboardInterrupt:
        err_console.print("interrupted", markup=False)
        code = 130
    code = code if isinstance(code, int) else 0
    if argv is None:
        sys.exit(code)
    return code
