"""Shared CLI plumbing: the app and command classes, consoles, number formats, and the options
several commands share (resources, stopping, distance rule), declared once so that one option
reads and checks the same everywhere (docs/vocabulary.md).

Nothing here imports torch, numba or scipy: every command module is imported when the program
starts (Typer builds all the help up front), so heavy imports belong inside the commands.
"""

from __future__ import annotations

import tempfile
import typing
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from typer.core import TyperArgument, TyperCommand

from routecli.cli import choices
from routecli.errors import OptionError, display_path, excerpt
from routecli.limits import BKS_MAX, BKS_MIN, BKS_RULE, MAX_JOBS, MAX_THREADS
from routecli.resources import DEVICE_HELP, SEED_HELP, SEED_MAX, check_threads, resolve_device
from routecli.stop import DEFAULT_SECONDS, MAX_ITERATIONS, MAX_SECONDS
from routecli.tasks import EXECUTOR_HELP, SCHEDULER_HELP, WORKERS_HELP

# -h as well as --help, in every command (click hands these settings down to subcommands).
CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"]}

THREADS_HELP = ("Torch CPU threads, 1 to the core count (models without torch use one); more "
                "pay off only on cores no other job is using.")
JOBS_HELP = "Parallel worker processes."
BKS_HELP = (f"Best-known value to compute the gap against: {BKS_RULE} (default: a published "
            ".sol/.opt.tour beside the instance, then the packaged registry).")
ROUND_HELP = ("Distance rule: file (the file's own), "
              + ", ".join(r for r in choices.ROUND if r not in ("file", "none"))
              + "; none is exact (float Euclidean).")


# Callbacks raise OptionError, which main() prints as one line (exit 2).
def _device(value: str) -> str:
    """A device name as given, checked: its syntax always, a CUDA device's presence when
    named (auto is resolved where torch runs, so that --help and torch-free models never load
    torch)."""
    if value.strip().lower() in ("auto", "cpu"):
        return value.strip().lower()
    resolve_device(value)
    return value


# The resource options, one declaration each for every command that takes them; a command
# gives the default in its signature (``seed: Seed = 0``), as Typer takes it from there.
# Every numeric option of every command declares its range (min, max) with the option.
Seed = Annotated[int, typer.Option("--seed", min=0, max=SEED_MAX, metavar="N", help=SEED_HELP)]
Threads = Annotated[int, typer.Option("--threads", min=1, max=MAX_THREADS, metavar="N",
                                      help=THREADS_HELP, callback=check_threads)]
Device = Annotated[str, typer.Option("--device", metavar="NAME", help=DEVICE_HELP,
                                     callback=_device)]
TimeLimit = Annotated[float | None, typer.Option(
    "--time-limit", "-t", min=0.0, max=MAX_SECONDS, metavar="SECONDS",
    help=f"Seconds per instance, at most {MAX_SECONDS:.0f} (a week; default: hgs, sisr and nds "
    f"search {DEFAULT_SECONDS:g} s unless --iterations is given; the other models run to "
    "completion). It bounds the search (--json: search_seconds); start-up, reading, PyVRP's "
    "set-up, compiling kernels on first use and --polish come on top (time= counts them). "
    "miloop starts no rollouts after it and nearest neighbour finishes the one it cuts; dact "
    "ends its move; nn and exact always finish. Ctrl-C or SIGTERM stops a search early and "
    "keeps its best solution.")]
Iterations = Annotated[int | None, typer.Option(
    "--iterations", min=1, max=MAX_ITERATIONS, metavar="N",
    help="Iteration limit per instance (hgs, sisr, nds; dact: moves).")]
NoImprovementLimit = Annotated[int | None, typer.Option(
    "--no-improvement", min=1, max=MAX_ITERATIONS, metavar="N",
    help="Stop after N iterations without a better solution (hgs, sisr, nds, dact).")]
Rounding = Annotated[str, typer.Option("--round", metavar="RULE", help=ROUND_HELP)]
Bks = Annotated[float | None, typer.Option("--bks", min=BKS_MIN, max=BKS_MAX, metavar="COST",
                                           help=BKS_HELP)]
ExecutorName = Annotated[str | None, typer.Option("--executor", metavar="NAME",
                                                  help=EXECUTOR_HELP)]
Workers = Annotated[int | None, typer.Option("--workers", min=1, max=MAX_JOBS, metavar="N",
                                             help=WORKERS_HELP)]
Scheduler = Annotated[str | None, typer.Option("--scheduler", metavar="ADDRESS",
                                               help=SCHEDULER_HELP)]

console = Console(highlight=False, soft_wrap=True)
# emoji=False: input echoed in a message (e.g. ':smile:') must print as written
err_console = Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)


def new_app(help_text: str) -> App:
    """A Typer app (or command group) with plain help (no boxes, no Python type names) and
    ``-h``."""
    return App(help=help_text, rich_markup_mode=None, add_completion=False,
               pretty_exceptions_enable=False, no_args_is_help=True,
               context_settings=CONTEXT_SETTINGS)


class Command(TyperCommand):
    """A command whose help speaks to users: an option without a metavar shows its own name
    (``--size SIZE``), not Typer's Python type (``--size <int>``), and an argument shows its
    metavar alone, neither typed (``FILE <list[Path]>``) nor braced (``{FILE}...``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            if param.metavar is None and not getattr(param, "is_flag", True):
                param.metavar = (param.name or "value").upper()
            if getattr(param, "min", None) is not None or getattr(param, "max", None) is not None:
                _state_range(param)

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if isinstance(param, TyperArgument):
                name, _ = _argument_record(param)
                pieces.append(name if param.required else f"[{name}]")
            else:
                pieces += param.get_usage_pieces(ctx)
        return pieces

    def format_options(self, ctx: Any, formatter: Any) -> None:
        params = self.get_params(ctx)
        arguments = [_argument_record(p) for p in params if isinstance(p, TyperArgument)]
        options = [record for p in params if not isinstance(p, TyperArgument)
                   and (record := p.get_help_record(ctx)) is not None]
        for title, rows in (("Arguments", arguments), ("Options", options)):
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)


class App(typer.Typer):
    """A Typer app whose commands are :class:`Command` unless one says otherwise, so a new
    command gets the same help without having to remember it."""

    def command(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("cls", Command)
        return super().command(*args, **kwargs)


def _state_range(param: Any) -> None:
    """Make a numeric option's refusal name its declared range and the value given: one
    message for every option, whatever Typer's conversion found wrong (not a number, NaN,
    infinite, out of range)."""
    process = param.process_value
    integer = int in (typing.get_args(param.type_descriptor.annotation)
                      or (param.type_descriptor.annotation,))

    def checked(ctx: Any, value: Any) -> Any:
        try:
            return process(ctx, value)
        except typer.BadParameter:
            if value is None:
                raise
            kind = "an integer" if integer else "a number"
            low, high = (f"{b:,}" if integer else f"{b:g}" for b in (param.min, param.max))
            raise OptionError(f"{param.opts[0]} must be {kind} from {low} to {high}, got "
                              f"{excerpt(value)}") from None

    param.process_value = checked


def _argument_record(param: TyperArgument) -> tuple[str, str]:
    """The argument's name (``FILE...`` for several) and help."""
    name = (param.metavar or param.name or "").upper() + ("..." if param.nargs != 1 else "")
    return name, (param.help or "") + ("  [required]" if param.required else "")


def fmt_gap(gap: float | None) -> str:
    return "-" if gap is None else f"{gap:.2f}%"


def fmt_cost(cost: float | None) -> str:
    """A cost for people (thousands separated); machine output uses plain numbers."""
    if cost is None:
        return "-"
    return f"{cost:,.0f}" if float(cost).is_integer() else f"{cost:,.4f}"


def check_writable(path: Path, what: str) -> None:
    """Refuse, before any work, an output ``path`` that cannot be written: a folder, or one
    whose nearest existing parent is a file or a folder we may not create files in. The test
    is a real file created there and removed: permission bits say nothing when running as root
    or on a read-only mount."""
    shown = display_path(path)
    if path.is_dir():
        raise OptionError(f"{what} {shown} is a folder, not a file")
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise OptionError(f"{what} {shown}: {display_path(parent)} is a file, not a folder")
    try:
        with tempfile.TemporaryFile(dir=parent):
            pass
    except OSError as exc:
        raise OptionError(f"{what} {shown}: cannot write in {display_path(parent)} "
                          f"({exc.strerror or type(exc).__name__})") from None


def deprecated(old: str, new: str) -> Any:
    """The callback of a hidden old spelling: a one-line note on stderr when it is used (old
    spellings stay for one release)."""

    def note(value: Any) -> Any:
        if value is not None and value is not False:
            err_console.print(f"note: {old} is deprecated and goes in the next release; use "
                              f"{new}", markup=False)
        return value

    return note


def cpu_device(device: str, command: str) -> str:
    """``--device`` of a command whose computation runs on the CPU only: auto is the CPU, a
    CUDA device is refused (after its presence is checked, as everywhere)."""
    if device not in ("auto", "cpu"):
        raise OptionError(f"--device {device}: {command} computes on the CPU only (use cpu or "
                          "auto)")
    return "cpu"
