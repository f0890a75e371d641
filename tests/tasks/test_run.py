"""The driver loop: done tasks are skipped, results are recorded as they arrive, failures and
a lost engine are one line after what finished is recorded."""

from __future__ import annotations

import pytest

from routecli.tasks import ExecutorLost, Inline, Task, TasksFailed, run_tasks
from tests.tasks.test_executors import fail_on_three, square


def test_done_tasks_are_skipped_and_the_others_recorded():
    recorded = {}
    tasks = [Task(f"t-{v}", square, (v,)) for v in range(4)]
    with Inline() as engine:
        ran = run_tasks(tasks, engine, lambda t, v: recorded.update({t.key: v}),
                        done=lambda t: t.key == "t-1")
    assert ran == 3 and recorded == {"t-0": 0, "t-2": 4, "t-3": 9}


def test_failures_come_after_the_others_are_recorded():
    recorded = []
    tasks = [Task(f"t-{v}", fail_on_three, (v,)) for v in range(5)]
    with Inline() as engine, pytest.raises(TasksFailed) as err:
        run_tasks(tasks, engine, lambda t, v: recorded.append(v))
    assert recorded == [0, 1, 2, 4]
    assert str(err.value) == ("1 of 5 tasks failed, the other 4 are stored (rerun the same "
                              "command to resume and retry them); first: t-3: ValueError: three "
                              "is refused")


class Lost(Inline):
    def run(self, tasks):  # noqa: ANN001, ANN201
        yield from list(super().run(tasks))[:2]
        raise ExecutorLost("lost the Dask scheduler tcp://10.0.0.1:8786")


def test_a_lost_engine_says_how_much_is_stored():
    recorded = []
    with Lost() as engine, pytest.raises(ExecutorLost, match=r"^lost the Dask scheduler "
                                         r"tcp://10.0.0.1:8786; the 2 tasks finished before "
                                         r"are stored: rerun the same command to resume$"):
        run_tasks([Task(f"t-{v}", square, (v,)) for v in range(4)], engine,
                  lambda t, v: recorded.append(v))
    assert recorded == [0, 1]


def test_repeated_keys_are_refused():
    with pytest.raises(ValueError, match="task keys repeat: t, t"):
        run_tasks([Task("t", square, (1,)), Task("t", square, (2,))], Inline(), print)
