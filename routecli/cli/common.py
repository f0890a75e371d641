"""Shared CLI plumbing: the app and command classes, consoles, number formats, the option
help texts several commands share, so that one option reads the same everywhere, and the model
options of ``solve`` and ``bench``, declared once.

Nothing here imports torch, numba or scipy: every command module is imported when the program
starts (Typer builds all the help up front), so heavy imports belong inside the commands.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from typer.core import TyperArgument, TyperCommand

from routecli.cli import choices
from routecli.errors import OptionError
from routecli.limits import BKS_RULE
from routecli.limits import check_bks as check_bks  # the commands' --bks check
from routecli.solvers import REGISTRY

# -h as well as --help, in every command (click hands these settings down to subcommands).
CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"]}

DEFAULT_THREADS = 1  # torch threads: the default, one per core, crawls on a core other jobs use
ROUND_HELP = ("Distance rule: file (the file's own), "
              + ", ".join(r for r in choices.ROUND if r not in ("file", "none"))
              + "; none is exact (float Euclidean).")
THREADS_HELP = ("Torch CPU threads of neural models; more pay off only on cores no other job "
                "is using.")
JOBS_HELP = "Parallel worker processes."
SEED_HELP = "Random seed."
BKS_HELP = (f"Best-known value to compute the gap against: {BKS_RULE} (default: a published "
            ".sol/.opt.tour beside the instance, then the packaged registry).")

# The options solve and bench share, one declaration each; a command gives the default in its
# signature (``seed: Seed = 0``), as Typer takes it from there when the type is Annotated.
ModelName = Annotated[str, typer.Option("--model", "-m", metavar="NAME",
                                        help=f"Solver: {', '.join(REGISTRY)}.")]
TimeLimit = Annotated[float | None, typer.Option(
    "--time-limit", "-t", min=0.0, metavar="SECONDS",
    help=f"Seconds per instance (default: hgs, sisr and nds search {choices.SEARCH_SECONDS:g} s; "
    "the other models run to completion). miloop starts no rollouts after it and returns the "
    "best finished; nn always finishes within milliseconds.")]
Iterations = Annotated[int | None, typer.Option(
    "--iterations", min=1, metavar="N",
    help="Iteration limit per instance (searches: hgs, sisr, nds).")]
Seed = Annotated[int, typer.Option("--seed", metavar="N", help=SEED_HELP)]
Rounding = Annotated[str, typer.Option("--round", metavar="RULE", help=ROUND_HELP)]
Decode = Annotated[str | None, typer.Option(
    "--decode", metavar="METHOD",
    help=f"MiLoop decoding: {', '.join(choices.DECODES)} (default {choices.DECODES[0]}).")]
Starts = Annotated[int | None, typer.Option(
    "--starts", min=1, metavar="M",
    help="MiLoop multistart M (distinct first nodes) or samples (default 100).")]
Augment = Annotated[bool, typer.Option("--augment",
                                       help="MiLoop: 8-fold symmetry augmentation.")]
Checkpoint = Annotated[Path | None, typer.Option(
    "--checkpoint", metavar="FILE",
    help="Weights of miloop or nds (default: the shipped checkpoint).")]
Candidates = Annotated[int | None, typer.Option(
    "--candidates", min=0, metavar="K",
    help="MiLoop: attend only to the K nearest allowed nodes per step (default: 200 for TSP, "
    "400 for CVRP above 1000 nodes; 0 = always all nodes).")]
PositionalEncoding = Annotated[str | None, typer.Option(
    "--pe", metavar="NAME",
    help=f"nds positional encoding (default: the checkpoint's): {', '.join(choices.PE_NAMES)}.")]
RemovalPolicy = Annotated[str | None, typer.Option(
    "--policy", metavar="NAME",
    help=f"Removal policy: sisr takes {' or '.join(choices.REMOVAL_POLICIES)} (default strings), "
    "nds also learned (its default).")]
Polish = Annotated[bool, typer.Option("--polish",
                                      help="sisr, nds: local-search polish of the result.")]
# --threads stays None unless given, so nn and hgs can still refuse an explicit --threads, and
# threads_for() supplies the default; the help shows it as click would.
ModelThreads = Annotated[int | None, typer.Option(
    "--threads", min=1, metavar="N", help=f"{THREADS_HELP}  [default: {DEFAULT_THREADS}]")]

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


def model_options(**given: Any) -> dict[str, Any]:
    """The model options a user actually gave (None and unset flags dropped), for
    :func:`routecli.solvers.make_settings`, which refuses those the model does not take."""
    return {k: (str(v) if isinstance(v, Path) else v) for k, v in given.items()
            if v is not None and v is not False}


def threads_for(model: str, threads: int | None) -> int | None:
    """``--threads`` as given, else :data:`DEFAULT_THREADS` for a model that runs torch (and
    nothing for one that does not, which would refuse the option)."""
    from dataclasses import fields

    from routecli.solvers import settings_type

    if threads is not None:
        return threads
    takes = {f.name for f in fields(settings_type(model))}
    return DEFAULT_THREADS if "threads" in takes else None


def check_writable(path: Path, what: str) -> None:
    """Refuse, before any work, an output ``path`` that cannot be written: a folder, or one
    whose nearest existing parent is a file or a folder we may not create files in. The test
    is a real file created there and removed: permission bits say nothing when running as root
    or on a read-only mount."""
    if path.is_dir():
        raise OptionError(f"{what} {path} is a folder, not a file")
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise OptionError(f"{what} {path}: {parent} is a file, not a folder")
    try:
        with tempfile.TemporaryFile(dir=parent):
            pass
    except OSError as exc:
        raise OptionError(f"{what} {path}: cannot write in {parent} "
                          f"({exc.strerror or type(exc).__name__})") from None
