"""When a solver or a decoding stops: small criteria objects in the style of ``pyvrp.stop``,
one default, and :class:`Watch`, the one helper every solver checks them through.

``MaxRuntime(30) | MaxIterations(10_000)`` (or ``FirstOf(...)``) stops at whichever comes
first. A solver given no criterion (``None``) runs its own default: a construction finishes; a
search (hgs, sisr, nds) runs :data:`DEFAULT_SECONDS` unless its criterion bounds time or
iterations (:func:`search_budget`).

A stop can also be asked for from outside: :class:`Interruption` turns the first SIGINT or
SIGTERM into such a request, and :func:`request_stop` makes one from any thread. Every
:class:`Watch` is then done, so the running solver returns the best solution it has.
"""

from __future__ import annotations

import math
import signal
import threading
import time
from dataclasses import dataclass
from types import FrameType, TracebackType
from typing import Any

from routecli.errors import OptionError

DEFAULT_SECONDS = 10.0  # a search given neither a time nor an iteration limit
MAX_SECONDS = 7 * 24 * 3600.0  # a week: a limit of inf or 1e300 would run forever
MAX_ITERATIONS = 2**63 - 1  # the compiled kernels count iterations in int64


@dataclass(frozen=True)
class Limits:
    """What a criterion bounds (None: unbounded): wall-clock seconds, iterations of the
    solver's main loop, and iterations without a better solution."""

    seconds: float | None = None
    iterations: int | None = None
    no_improvement: int | None = None


class Criterion:
    """A stopping criterion: :meth:`limits` says what it bounds; ``a | b`` stops at whichever
    of the two comes first."""

    def limits(self) -> Limits:
        raise NotImplementedError

    def __or__(self, other: Criterion) -> FirstOf:
        return FirstOf(self, other)


def _count(value: int, what: str) -> None:
    if not 1 <= value <= MAX_ITERATIONS:
        raise OptionError(f"{what} must be between 1 and 2**63-1, got {value}")


@dataclass(frozen=True)
class MaxRuntime(Criterion):
    """Stop after ``seconds`` of wall clock (0 stops after the first step: a solver always
    makes one, so that it returns a solution)."""

    seconds: float

    def __post_init__(self) -> None:
        if not (math.isfinite(self.seconds) and 0 <= self.seconds <= MAX_SECONDS):
            raise OptionError(f"time limit must be between 0 and {MAX_SECONDS:.0f} seconds "
                              f"(a week), got {self.seconds:g}")

    def limits(self) -> Limits:
        return Limits(seconds=self.seconds)


@dataclass(frozen=True)
class MaxIterations(Criterion):
    """Stop after ``iterations`` iterations of the solver's main loop (moves of dact, PyVRP
    iterations of hgs, annealing iterations of sisr and nds)."""

    iterations: int

    def __post_init__(self) -> None:
        _count(self.iterations, "iteration limit")

    def limits(self) -> Limits:
        return Limits(iterations=self.iterations)


@dataclass(frozen=True)
class NoImprovement(Criterion):
    """Stop after ``iterations`` iterations without a better solution (deterministic for a
    fixed seed, unlike a time limit)."""

    iterations: int

    def __post_init__(self) -> None:
        _count(self.iterations, "no-improvement limit")

    def limits(self) -> Limits:
        return Limits(no_improvement=self.iterations)


@dataclass(frozen=True, init=False)
class FirstOf(Criterion):
    """Stop as soon as any of ``criteria`` says so."""

    criteria: tuple[Criterion, ...]

    def __init__(self, *criteria: Criterion) -> None:
        if not criteria:
            raise ValueError("FirstOf needs at least one criterion")
        object.__setattr__(self, "criteria", criteria)

    def limits(self) -> Limits:
        parts = [c.limits() for c in self.criteria]

        def least(values: list[Any]) -> Any:
            given = [v for v in values if v is not None]
            return min(given) if given else None

        return Limits(least([p.seconds for p in parts]), least([p.iterations for p in parts]),
                      least([p.no_improvement for p in parts]))


def stop_after(seconds: float | None = None, iterations: int | None = None,
               no_improvement: int | None = None) -> Criterion | None:
    """The criterion of the given limits, whichever comes first (None when none is given:
    the solver's default)."""
    criteria: list[Criterion] = []
    if seconds is not None:
        criteria.append(MaxRuntime(seconds))
    if iterations is not None:
        criteria.append(MaxIterations(iterations))
    if no_improvement is not None:
        criteria.append(NoImprovement(no_improvement))
    if not criteria:
        return None
    return criteria[0] if len(criteria) == 1 else FirstOf(*criteria)


def time_limit_only(stop: Criterion | None, what: str) -> Limits:
    """The limits of ``stop`` for a solver without iterations (a construction, an exact
    program), which refuses an iteration or no-improvement limit as a user error."""
    limits = stop.limits() if stop is not None else Limits()
    if limits.iterations is not None or limits.no_improvement is not None:
        raise OptionError(f"{what} takes a time limit, not an iteration limit or a no-improvement limit")
    return limits


def search_budget(stop: Criterion | None) -> Criterion:
    """The criterion a search runs under: ``stop``, plus :data:`DEFAULT_SECONDS` when it
    bounds neither time nor iterations (a search must end)."""
    limits = stop.limits() if stop is not None else Limits()
    if limits.seconds is not None or limits.iterations is not None:
        assert stop is not None
        return stop
    default = MaxRuntime(DEFAULT_SECONDS)
    return default if stop is None else stop | default


def describe(stop: Criterion | None) -> dict[str, Any]:
    """The limits as plain values, for run records: ``seconds`` and ``iterations`` always,
    ``no_improvement`` when set."""
    limits = stop.limits() if stop is not None else Limits()
    record: dict[str, Any] = {"seconds": limits.seconds, "iterations": limits.iterations}
    if limits.no_improvement is not None:
        record["no_improvement"] = limits.no_improvement
    return record


_requested = threading.Event()  # a stop asked for from outside the solver


def request_stop() -> None:
    """Ask every running solve to stop at its next check and return the best solution it has
    (thread-safe; :func:`clear_stop_request` ends the request)."""
    _requested.set()


def clear_stop_request() -> None:
    _requested.clear()


def stop_requested() -> bool:
    return _requested.is_set()


SIGNALS = (signal.SIGINT, signal.SIGTERM)
_noted: dict[str, int | None] = {"signal": None}  # of the latest Interruption block


def signal_exit_code(number: int) -> int:
    """128 + the signal's number, as shells report a process a signal ended (130 for SIGINT,
    143 for SIGTERM)."""
    return 128 + number


def noted_signal() -> int | None:
    """The signal the latest :class:`Interruption` block noted (None: none), also after the
    block (a command reports it once the interrupted work has returned)."""
    return _noted["signal"]


class Interruption:
    """A ``with`` block in which the first SIGINT or SIGTERM is noted instead of ending the
    process: :attr:`signal` is its number, and (``stop_solves``) :func:`request_stop` is
    called, so a running solve returns its best solution; a training loop, which asks
    :attr:`signal` between steps, leaves its searches alone (a validation search cut short
    would log a gap it did not measure). A second signal acts as the handler before the block
    does, for a user who will not wait. Only the main thread receives signals; elsewhere the
    block notes none."""

    def __init__(self, stop_solves: bool = True) -> None:
        self.signal: int | None = None
        self.stop_solves = stop_solves
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> Interruption:
        clear_stop_request()
        _noted["signal"] = None
        if threading.current_thread() is threading.main_thread():
            for number in SIGNALS:
                self._previous[number] = signal.signal(number, self._note)
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self._restore()
        clear_stop_request()

    def _note(self, number: int, frame: FrameType | None) -> None:
        self.signal = _noted["signal"] = number
        if self.stop_solves:
            request_stop()
        self._restore()

    def _restore(self) -> None:
        for number, handler in self._previous.items():
            signal.signal(number, handler)
        self._previous.clear()


class Watch:
    """One run against a criterion. The solver calls :meth:`record` after its steps with the
    iterations done and the best cost so far, and stops when :meth:`done`; :meth:`used` is the
    share of the budget spent (what an annealing schedule follows)."""

    def __init__(self, stop: Criterion | None) -> None:
        self.limits = stop.limits() if stop is not None else Limits()
        self.started = time.perf_counter()
        self.iterations = 0
        self.best = math.inf
        self.improved_at = 0

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    def record(self, iterations: int, best: float | None = None) -> None:
        self.iterations = iterations
        if best is not None and best < self.best:
            self.best = best
            self.improved_at = iterations

    def deadline(self) -> float | None:
        """The ``time.perf_counter()`` value at which the time limit runs out (None: none)."""
        return None if self.limits.seconds is None else self.started + self.limits.seconds

    def out_of_time(self) -> bool:
        return self.limits.seconds is not None and self.elapsed >= self.limits.seconds

    def out_of_iterations(self) -> bool:
        """The iteration or no-improvement limit is reached (the deterministic criteria)."""
        limits = self.limits
        return ((limits.iterations is not None and self.iterations >= limits.iterations)
                or (limits.no_improvement is not None
                    and self.iterations - self.improved_at >= limits.no_improvement))

    def done(self) -> bool:
        return self.out_of_iterations() or self.out_of_time() or stop_requested()

    def stopped_by(self) -> str:
        """Why the run ended, if it ended now: ``interrupted`` (:func:`request_stop`), ``time
        limit``, ``iteration limit``, ``no improvement``, else ``finished`` (the solver's plan
        ran out first)."""
        limits = self.limits
        if stop_requested():
            return "interrupted"
        if self.out_of_time():
            return "time limit"
        if limits.iterations is not None and self.iterations >= limits.iterations:
            return "iteration limit"
        if (limits.no_improvement is not None
                and self.iterations - self.improved_at >= limits.no_improvement):
            return "no improvement"
        return "finished"

    def iterations_left(self) -> int | None:
        limit = self.limits.iterations
        return None if limit is None else max(0, limit - self.iterations)

    def used(self, iterations: int | None = None, seconds: float | None = None) -> float:
        """Share of the time or iteration budget spent, whichever is further along (0 when
        neither is bounded), at ``iterations`` and ``seconds`` (default: now)."""
        limits = self.limits
        spent = 0.0
        if limits.seconds is not None:  # a zero limit is used up at once
            spent = (self.elapsed if seconds is None else seconds) / max(limits.seconds, 1e-9)
        if limits.iterations is not None:
            done = self.iterations if iterations is None else iterations
            spent = max(spent, done / limits.iterations)
        return spent
