"""``routecli``: the Typer application and the entry point that turns user errors into one
line on stderr with exit code 2 (no tracebacks).

Every command module keeps torch, matplotlib, PyVRP and the numba kernels out of its module
level (they load inside the command), so ``routecli --help`` and ``routecli info`` start in
well under a second; ``tests/cli/test_startup.py`` checks that importing this module loads none
of them.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import warnings
from types import FrameType

import typer
from typer.exceptions import Abort, TyperException

from routecli import __version__
from routecli.cli import (
    analyze,
    analyze_memory,
    analyze_shift,
    bench,
    compare_pe,
    data,
    generate,
    info,
    plot,
    plot_solution,
    probe,
    solve,
    start_command,
    train,
    train_nds,
    validate,
)
from routecli.cli.common import err_console, new_app
from routecli.errors import RoutecliError, one_line
from routecli.stop import SIGNALS, signal_exit_code

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
app.add_typer(data.app, name="data")


@app.callback(invoke_without_command=True)
def _root(version: bool = typer.Option(False, "--version", help="Print the version and exit.")) -> None:
    if version:
        typer.echo(f"routecli {__version__}")
        raise typer.Exit()


class Interrupted(BaseException):
    """SIGINT or SIGTERM during a command: raised where the program is (so ``finally`` blocks
    and atomic writes clean up), reported as one line. Not a ``KeyboardInterrupt``, which
    Typer turns into a silent exit 130."""

    def __init__(self, number: int):
        super().__init__(number)
        self.number = number


def _interrupt(number: int, frame: FrameType | None) -> None:
    raise Interrupted(number)




def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns (and exits with) the exit code.

    Python warnings (torch's among them) are held until the command ends: after an error
    stderr holds the one ``error:`` line alone; otherwise each prints as one ``warning:``
    line."""
    if argv is not None:
        start_command()
    handlers = {}
    if threading.current_thread() is threading.main_thread():
        handlers = {number: signal.signal(number, _interrupt) for number in SIGNALS}
    try:
        with warnings.catch_warnings(record=True) as caught:
            code = _run(argv)
    finally:
        for number, handler in handlers.items():
            signal.signal(number, handler)
    if code != 2:
        for warning in caught:
            err_console.print(f"warning: {one_line(str(warning.message))}", markup=False)
    if argv is None:
        # The work is done and written (outputs are atomic and closed, pools joined): skip the
        # interpreter's teardown, which with torch and numba loaded takes another second or
        # two after the last line.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def _run(argv: list[str] | None) -> int:
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
    except Interrupted as exc:
        err_console.print(f"interrupted ({signal.Signals(exc.number).name})", markup=False)
        code = signal_exit_code(exc.number)
    except (Abort, KeyboardInterrupt):
        err_console.print("interrupted", markup=False)
        code = 130
    return code if isinstance(code, int) else 0
