"""When a training loop stops before its last step: Ctrl-C or ``kill`` (SIGINT, SIGTERM), or
its time limit. The loop asks :meth:`TrainingStop.reason` between steps, saves ``last.pt`` and
returns the reason, so an interrupted or timed run resumes with ``--resume`` and loses at most
the step in progress.
"""

from __future__ import annotations

import time
from enum import StrEnum
from types import TracebackType

from routecli.stop import Interruption
from routecli.train import distributed


class StopReason(StrEnum):
    INTERRUPTED = "interrupted"
    TIME_LIMIT = "time limit reached"


class TrainingStop:
    """A ``with`` block in which SIGINT and SIGTERM are noted instead of ending the process
    (:class:`routecli.stop.Interruption`: the first one only; searches of the step, such as a
    validation, run to their end), plus a wall-clock
    ``time_limit`` in seconds from entering the block.

    With several processes (``world > 1``) every rank stops at the same step: the reason is
    agreed with an all-reduce, so call :meth:`reason` at the same point on every rank."""

    def __init__(self, time_limit: float | None = None, world: int = 1):
        self.time_limit = time_limit
        self.world = world
        self.interruption = Interruption(stop_solves=False)
        self.started = time.monotonic()

    def __enter__(self) -> TrainingStop:
        self.started = time.monotonic()
        self.interruption.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.interruption.__exit__(kind, value, traceback)

    @property
    def signalled(self) -> bool:
        return self.interruption.signal is not None

    def reason(self) -> StopReason | None:
        """Why to stop now, or ``None`` to go on."""
        signalled = self.signalled
        timed_out = self.time_limit is not None and \
            time.monotonic() - self.started >= self.time_limit
        if self.world > 1:
            signalled, timed_out = distributed.any_rank(signalled), distributed.any_rank(timed_out)
        if signalled:
            return StopReason.INTERRUPTED
        return StopReason.TIME_LIMIT if timed_out else None
