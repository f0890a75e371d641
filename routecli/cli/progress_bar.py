"""The progress bar of long constructions: nodes placed, nodes per second and the time left;
a search on as large an instance shows its best cost in the bar's label instead.

``routecli solve`` shows it on stderr for instances above :data:`BAR_MIN_NODES` nodes when
stderr is a terminal and ``--json`` is off; elsewhere a one-line status (or nothing) remains.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeRemainingColumn

from routecli.cli.common import err_console
from routecli.solvers import Progress as SolveProgress
from routecli.solvers import ProgressFn

BAR_MIN_NODES = 10_000


def wants_bar(size: int) -> bool:
    """Whether an instance of ``size`` nodes gets the bar (on an interactive stderr)."""
    return size > BAR_MIN_NODES and err_console.is_terminal


@contextmanager
def node_bar(label: str, size: int,
             describe: Callable[[SolveProgress], str] | None = None) -> Iterator[ProgressFn]:
    """A bar over ``size`` nodes; yields the progress callback that moves it (by share), or
    shows ``describe(progress)`` after the label for a report without a share (a search's
    best cost)."""
    columns = (TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(),
               TextColumn("{task.fields[rate]} nodes/s"), TimeRemainingColumn())
    with Progress(*columns, console=err_console, transient=True) as bar:
        task = bar.add_task(label, total=size, rate="-")

        def show(progress: SolveProgress) -> None:
            if progress.share is None:
                if describe is not None:
                    bar.update(task, description=f"{label}: {describe(progress)}")
                return
            placed = progress.share * size
            rate = f"{placed / progress.seconds:,.0f}" if progress.seconds > 0 else "-"
            bar.update(task, completed=placed, rate=rate)

        yield show
