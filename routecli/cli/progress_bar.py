"""Progress on stderr: the bar of long constructions (nodes placed, nodes per second and the
time left; a search on as large an instance shows its best cost in the bar's label instead),
and the count of long work done item by item.

``routecli solve`` shows the node bar for instances above :data:`BAR_MIN_NODES` nodes when
stderr is a terminal and ``--json`` is off; elsewhere a one-line status (or nothing) remains.
:func:`item_bar` is a bar on a terminal and a line per item in a log.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

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


@contextmanager
def item_bar(label: str, total: int) -> Iterator[Callable[[str], None]]:
    """Progress over ``total`` items; yields ``done(name)``, to call as each one finishes. On
    a terminal, a bar on stderr with the time left; otherwise (a log, a pipe) one line on
    stderr per item, so a long run is never silent."""
    started = time.perf_counter()
    if err_console.is_terminal:
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), TimeRemainingColumn())
        with Progress(*columns, console=err_console, transient=True) as bar:
            task = bar.add_task(label, total=total)

            def advance(name: str) -> None:
                bar.update(task, advance=1, description=f"{label}: {name}")

            yield advance
        return
    count = [0]

    def line(name: str) -> None:
        count[0] += 1
        err_console.print(f"{label}: {name} done ({count[0]} of {total}, "
                          f"{time.perf_counter() - started:.0f} s)", markup=False)

    yield line
