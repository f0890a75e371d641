"""The driver loop every task list runs through: :func:`run_tasks`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from routecli.errors import RoutecliError
from routecli.tasks.executors import Executor, ExecutorLost
from routecli.tasks.task import Outcome, Task

RESUME = "rerun the same command to resume"


class TasksFailed(RoutecliError):
    """Tasks raised (after the executor's retries); the others finished and are recorded."""


def run_tasks(tasks: Sequence[Task], executor: Executor, record: Callable[[Task, Any], None],
              done: Callable[[Task], bool] | None = None) -> int:
    """Run the ``tasks`` that are not ``done`` on ``executor`` (entered by the caller), and
    ``record`` each result in this process as it arrives, so a worker that dies loses only
    its own task, and a run stopped at any point resumes from what was recorded. Returns the
    number of tasks run. When tasks raise, the others still run; then :class:`TasksFailed`
    names the first failure. A lost engine raises :class:`ExecutorLost`."""
    keys = [t.key for t in tasks]
    if len(set(keys)) != len(keys):
        raise ValueError("task keys repeat: " + ", ".join(k for k in keys if keys.count(k) > 1))
    todo = [t for t in tasks if done is None or not done(t)]
    failed: list[tuple[Task, Outcome]] = []
    recorded = 0
    try:
        for task, outcome in executor.run(todo):
            if outcome.error is not None:
                failed.append((task, outcome))
                continue
            record(task, outcome.value)
            recorded += 1
    except ExecutorLost as exc:
        raise ExecutorLost(f"{exc}; the {recorded} tasks finished before are stored: "
                           f"{RESUME}") from None
    if failed:
        task, outcome = failed[0]
        raise TasksFailed(f"{len(failed)} of {len(todo)} tasks failed, the other {recorded} "
                          f"are stored ({RESUME} and retry them); first: {task.key}: "
                          f"{outcome.error}")
    return len(todo)
