"""Experiments as task lists: every long job in routecli (``bench``, ``compare-pe``, the MiLoop
ablation, labels, references) is a list of independent :class:`Task` objects, run by one
:class:`Executor` and recorded by the driver as they finish.

- :mod:`routecli.tasks.task`: :class:`Task` (a stable key, a function and its arguments),
  :func:`task_key`.
- :mod:`routecli.tasks.executors`: where tasks run: :class:`Inline` (this process),
  :class:`Pool` (local worker processes, one task per core, one thread each) and
  :class:`Dask` (Dask distributed: a ``LocalCluster`` or a running scheduler, so Slurm/PBS
  through dask-jobqueue); :func:`make_executor` from the command-line options.
- :mod:`routecli.tasks.run`: :func:`run_tasks`, the driver loop: skip done tasks, submit the
  rest, record each result in this process as it arrives, so a worker or scheduler lost
  mid-run costs only the unfinished tasks and a rerun resumes.

Scheduling, transport and retries are the executor's (``concurrent.futures`` or Dask), never
routecli's.
"""

from routecli.tasks.executors import (
    EXECUTOR_HELP,
    EXECUTORS,
    SCHEDULER_HELP,
    WORKERS_HELP,
    Dask,
    Executor,
    ExecutorLost,
    Inline,
    Pool,
    add_executor_options,
    executor_of,
    make_executor,
)
from routecli.tasks.run import TasksFailed, run_tasks
from routecli.tasks.task import Outcome, Task, task_key

__all__ = ["EXECUTORS", "EXECUTOR_HELP", "SCHEDULER_HELP", "WORKERS_HELP", "Dask", "Executor",
           "ExecutorLost", "Inline", "Outcome", "Pool", "Task", "TasksFailed",
           "add_executor_options", "executor_of", "make_executor", "run_tasks", "task_key"]
