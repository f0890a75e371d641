"""Executors run tasks and report each one's value or error; the options choose one."""

from __future__ import annotations

import os

import pytest

from routecli.errors import OptionError
from routecli.tasks import Dask, Inline, Pool, Task, make_executor


def square(x: int) -> int:
    return x * x


def fail_on_three(x: int) -> int:
    if x == 3:
        raise ValueError("three is refused")
    return x


def threads() -> str:
    return os.environ.get("OMP_NUM_THREADS", "")


def _tasks(function, values):  # noqa: ANN001, ANN202
    return [Task(f"t-{v}", function, (v,)) for v in values]


@pytest.mark.parametrize("executor", [Inline(), Pool(2)], ids=["inline", "pool"])
def test_every_task_gives_its_value_or_its_error(executor):
    with executor as engine:
        outcomes = {t.key: o for t, o in engine.run(_tasks(fail_on_three, range(5)))}
    assert {k: o.value for k, o in outcomes.items() if o.error is None} == \
        {"t-0": 0, "t-1": 1, "t-2": 2, "t-4": 4}
    assert outcomes["t-3"].error == "ValueError: three is refused"


def test_pool_workers_run_one_thread_each():
    with Pool(2) as engine:
        assert {o.value for _, o in engine.run([Task("a", threads), Task("b", threads)])} == {"1"}


def test_dask_retries_then_reports_a_task_that_raises():
    with Dask(workers=1, retries=1) as engine:
        outcomes = {t.key: o for t, o in engine.run(_tasks(fail_on_three, [2, 3]))}
        assert outcomes["t-2"].value == 2
        assert outcomes["t-3"].error == "ValueError: three is refused"
        assert [o.value for _, o in engine.run([Task("omp", threads)])] == ["1"]


def test_a_scheduler_that_does_not_answer_is_one_line():
    with pytest.raises(OptionError, match=r"--scheduler tcp://127.0.0.1:9: no Dask scheduler"), \
            Dask(workers=1, scheduler="tcp://127.0.0.1:9", connect_seconds=1):
        pass


def test_the_options_choose_the_executor():
    assert isinstance(make_executor("pool", 3), Pool) and make_executor("pool", 3).workers == 3
    assert isinstance(make_executor("pool", 1), Inline)  # one worker: this process
    assert isinstance(make_executor(None, 2), Pool)
    chosen = make_executor(None, None, "tcp://127.0.0.1:8786")
    assert isinstance(chosen, Dask) and chosen.scheduler == "tcp://127.0.0.1:8786"
    with pytest.raises(OptionError, match="--scheduler names a Dask scheduler"):
        make_executor("pool", None, "tcp://127.0.0.1:8786")
    with pytest.raises(OptionError, match="--executor must be one of inline, pool, dask"):
        make_executor("ray")


def die() -> None:
    os._exit(9)


def test_a_pool_whose_worker_dies_is_lost():
    from routecli.tasks import ExecutorLost

    with Pool(2) as engine, pytest.raises(ExecutorLost, match="a worker process died"):
        list(engine.run([Task("dies", die)]))
