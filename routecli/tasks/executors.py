"""Where tasks run. Every executor is a context manager (its workers live for the ``with``
block) whose :meth:`~Inline.run` yields ``(task, outcome)`` in the order tasks finish; a task
that raises is an outcome with an error, the others go on. Losing the engine itself (a dead
pool, a scheduler gone) raises :class:`ExecutorLost`.

- :class:`Inline`: one task after the other in this process (a debugger sees them).
- :class:`Pool`: ``concurrent.futures`` worker processes on this machine, one task per core
  and one thread each.
- :class:`Dask`: Dask distributed: a ``LocalCluster`` of worker processes on this machine, or
  the running scheduler at ``scheduler`` (a cluster started by hand, by ``dask-jobqueue`` on
  Slurm/PBS, or any Dask deployment). Dask moves the tasks and their results, retries a task
  that raised ``retries`` times, and reruns a task whose worker died on another worker.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from contextlib import suppress
from types import TracebackType
from typing import Any, Protocol

from routecli.errors import OptionError, RoutecliError
from routecli.resources import cores
from routecli.tasks.task import Outcome, Task

EXECUTORS = ("inline", "pool", "dask")
EXECUTOR_HELP = ("Where the tasks run: inline (this process), pool (local worker processes) or "
                 "dask (Dask distributed: a LocalCluster here, or the scheduler --scheduler "
                 "names); default: pool, or dask with --scheduler. Rows are written here as "
                 "tasks finish, so any run resumes.")
WORKERS_HELP = ("Worker processes of pool and of dask's LocalCluster, one task and one thread "
                "each (default: one per core; 1 runs in this process).")
SCHEDULER_HELP = ("Address of a running Dask scheduler (tcp://HOST:8786), e.g. one that "
                  "dask-jobqueue started on Slurm or PBS; its workers run the tasks.")
RETRIES = 2  # Dask reruns a task that raised this many more times before reporting it
CONNECT_SECONDS = 30  # how long to wait for a scheduler named by address
SINGLE_THREAD = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


class ExecutorLost(RoutecliError):
    """The engine itself failed: a worker pool broke, or the Dask scheduler went away."""


class Executor(Protocol):
    name: str
    workers: int  # tasks that run at once

    def __enter__(self) -> Executor: ...

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None: ...

    def run(self, tasks: Sequence[Task]) -> Iterator[tuple[Task, Outcome]]: ...


def one_thread() -> None:
    """A worker runs one task per core: its numerical libraries get one thread each (torch's
    pool too, when torch is loaded)."""
    for name in SINGLE_THREAD:
        os.environ[name] = "1"
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)


class _NoPool:
    def __enter__(self) -> Any:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        return None


class Inline(_NoPool):
    """Tasks one after the other in this process."""

    name = "inline"
    workers = 1

    def run(self, tasks: Sequence[Task]) -> Iterator[tuple[Task, Outcome]]:
        for task in tasks:
            try:
                value = task.run(*task.args)
            except Exception as exc:  # the task's failure, reported with the others at the end
                yield task, Outcome.failed(exc)
            else:
                yield task, Outcome(value)


class Pool:
    """``workers`` local processes (``concurrent.futures``), one thread each."""

    name = "pool"

    def __init__(self, workers: int):
        self.workers = workers
        self._pool: ProcessPoolExecutor | None = None

    def __enter__(self) -> Pool:
        self._pool = ProcessPoolExecutor(max_workers=self.workers, initializer=one_thread)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        assert self._pool is not None
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._pool = None

    def run(self, tasks: Sequence[Task]) -> Iterator[tuple[Task, Outcome]]:
        assert self._pool is not None, "use the pool in a with block"
        futures: dict[Future[Any], Task] = {self._pool.submit(t.run, *t.args): t for t in tasks}
        for future in as_completed(futures):
            try:
                value = future.result()
            except BrokenProcessPool:
                raise ExecutorLost("a worker process died (killed, or out of memory) and the "
                                   "local pool stopped") from None
            except Exception as exc:
                yield futures[future], Outcome.failed(exc)
            else:
                yield futures[future], Outcome(value)


class Dask:
    """Dask distributed: a ``LocalCluster`` of ``workers`` processes with one thread each, or
    the running scheduler at ``scheduler`` (its workers as they are)."""

    name = "dask"

    def __init__(self, workers: int, scheduler: str | None = None, retries: int = RETRIES,
                 connect_seconds: float = CONNECT_SECONDS):
        self.workers = workers
        self.scheduler = scheduler
        self.retries = retries
        self.connect_seconds = connect_seconds
        self._client: Any = None
        self._cluster: Any = None

    def __enter__(self) -> Dask:
        from distributed import Client, LocalCluster

        # Dask's own warnings (a worker restarted, tasks cancelled at shutdown) are noise
        # beside routecli's one line; its errors still show.
        logging.getLogger("distributed").setLevel(logging.ERROR)
        if self.scheduler is not None:
            try:
                self._client = Client(self.scheduler, timeout=self.connect_seconds)
            except (OSError, TimeoutError, ValueError) as exc:
                raise OptionError(f"--scheduler {self.scheduler}: no Dask scheduler answers "
                                  f"there ({type(exc).__name__}: {exc})") from None
            self.workers = max(1, sum(self._client.nthreads().values()))
        else:
            # dashboard on a free port: a second cluster on the machine must not fail
            self._cluster = LocalCluster(n_workers=self.workers, threads_per_worker=1,
                                         processes=True, dashboard_address=":0")
            self._client = Client(self._cluster)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        for part in (self._client, self._cluster):
            if part is not None:
                with suppress(Exception):  # a scheduler already gone: nothing left to close
                    part.close()
        self._client = self._cluster = None

    def run(self, tasks: Sequence[Task]) -> Iterator[tuple[Task, Outcome]]:
        from distributed import as_completed as completed
        from distributed.client import FutureCancelledError

        assert self._client is not None, "use the executor in a with block"
        by_key = {t.key: t for t in tasks}
        futures = [self._client.submit(t.run, *t.args, key=t.key, retries=self.retries,
                                       pure=False) for t in tasks]
        try:
            for future in completed(futures):
                task = by_key[future.key]
                try:
                    value = future.result()
                except Exception as exc:  # raised by the task (after retries), or KilledWorker
                    if isinstance(exc, FutureCancelledError) or self._client.status != "running":
                        where = self.scheduler or "of the local cluster"
                        raise ExecutorLost(f"lost the Dask scheduler {where}") from None
                    yield task, Outcome.failed(exc)
                else:
                    yield task, Outcome(value)
        finally:
            for future in futures:
                future.release()


def add_executor_options(parser: argparse.ArgumentParser, workers: int | None = None) -> None:
    """``--executor``, ``--workers`` (default ``workers``: one per core) and ``--scheduler``
    for a script's ``argparse`` parser (:func:`executor_of` reads them)."""
    parser.add_argument("--executor", choices=EXECUTORS, default=None, help=EXECUTOR_HELP)
    parser.add_argument("--workers", type=int, default=workers, metavar="N", help=WORKERS_HELP)
    parser.add_argument("--scheduler", default=None, metavar="ADDRESS", help=SCHEDULER_HELP)


def executor_of(args: argparse.Namespace) -> Executor:
    return make_executor(args.executor, args.workers, args.scheduler)


def make_executor(name: str | None = None, workers: int | None = None,
                  scheduler: str | None = None) -> Executor:
    """The executor the options ``--executor`` (default: pool, or dask with a scheduler),
    ``--workers`` (default: one per core here) and ``--scheduler`` name; a pool of one worker
    runs in this process."""
    name = name or ("dask" if scheduler is not None else "pool")
    if name not in EXECUTORS:
        raise OptionError(f"--executor must be one of {', '.join(EXECUTORS)}, got {name!r}")
    if scheduler is not None and name != "dask":
        raise OptionError("--scheduler names a Dask scheduler: add --executor dask")
    if workers is not None and workers < 1:
        raise OptionError(f"--workers must be at least 1, got {workers}")
    count = workers or cores()
    if name == "dask":
        return Dask(count, scheduler)
    if name == "inline" or count == 1:
        return Inline()
    return Pool(count)
