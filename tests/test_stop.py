"""Stopping criteria: composition, the one default, and the watch every solver checks."""

from __future__ import annotations

import math
import pickle

import pytest

from routecli.errors import OptionError
from routecli.stop import (
    DEFAULT_SECONDS,
    FirstOf,
    Limits,
    MaxIterations,
    MaxRuntime,
    NoImprovement,
    Watch,
    describe,
    search_budget,
    stop_after,
)


def test_first_of_takes_the_tightest_limit_of_each_kind():
    stop = MaxRuntime(5) | MaxIterations(100) | MaxRuntime(2) | NoImprovement(7)
    assert stop.limits() == Limits(seconds=2, iterations=100, no_improvement=7)
    assert FirstOf(MaxIterations(3)).limits() == Limits(iterations=3)


def test_stop_after_builds_the_criterion_of_the_given_options():
    assert stop_after() is None
    assert stop_after(seconds=3) == MaxRuntime(3)
    both = stop_after(seconds=3, iterations=9, no_improvement=4)
    assert both.limits() == Limits(3, 9, 4)


def test_a_search_without_time_or_iterations_runs_the_one_default():
    assert search_budget(None) == MaxRuntime(DEFAULT_SECONDS)
    assert search_budget(MaxIterations(5)) == MaxIterations(5)
    stalled = search_budget(NoImprovement(50)).limits()
    assert stalled == Limits(seconds=DEFAULT_SECONDS, no_improvement=50)


@pytest.mark.parametrize("seconds", [-1.0, math.inf, math.nan, 1e300])
def test_time_limits_that_never_end_or_make_no_sense_are_refused(seconds):
    with pytest.raises(OptionError, match="time limit must be between 0 and"):
        MaxRuntime(seconds)


@pytest.mark.parametrize("make", [MaxIterations, NoImprovement])
@pytest.mark.parametrize("count", [0, -3, 2**63])
def test_iteration_counts_are_positive_int64(make, count):
    with pytest.raises(OptionError, match="between 1 and 2\\*\\*63-1"):
        make(count)


def test_the_watch_stops_on_iterations_and_on_a_stall():
    watch = Watch(MaxIterations(10) | NoImprovement(3))
    watch.record(0, 5.0)
    watch.record(2, 4.0)
    assert not watch.done() and watch.iterations_left() == 8
    watch.record(4, 4.0)
    assert not watch.done()
    watch.record(5, 4.5)
    assert watch.done() and watch.out_of_iterations() and not watch.out_of_time()
    assert watch.used() == pytest.approx(0.5)


def test_the_watch_measures_time_and_the_share_used():
    assert Watch(MaxRuntime(0)).out_of_time()
    watch = Watch(MaxRuntime(1000))
    assert not watch.done() and 0 <= watch.used() < 0.01
    assert watch.used(seconds=500) == pytest.approx(0.5)
    assert not Watch(None).done() and Watch(None).used() == 0.0
    assert watch.deadline() == pytest.approx(watch.started + 1000)
    assert Watch(MaxIterations(5)).deadline() is None


def test_criteria_pickle_for_worker_processes_and_describe_plainly():
    stop = MaxRuntime(2) | MaxIterations(9)
    assert pickle.loads(pickle.dumps(stop)) == stop
    assert describe(stop) == {"seconds": 2, "iterations": 9}
    assert describe(None) == {"seconds": None, "iterations": None}
    assert describe(NoImprovement(4))["no_improvement"] == 4


def test_an_interruption_notes_the_first_signal_and_every_watch_is_done():
    import os
    import signal

    from routecli.stop import Interruption, noted_signal, stop_requested

    watch = Watch(MaxIterations(10))
    with Interruption() as interruption:
        assert not watch.done() and watch.stopped_by() == "finished"
        os.kill(os.getpid(), signal.SIGTERM)
        assert interruption.signal == signal.SIGTERM and stop_requested()
        assert watch.done() and watch.stopped_by() == "interrupted"
    assert not stop_requested() and noted_signal() == signal.SIGTERM
    assert not watch.done()


def test_a_watch_says_which_limit_stopped_it():
    from routecli.stop import clear_stop_request, request_stop

    watch = Watch(MaxIterations(10) | NoImprovement(3))
    watch.record(2, 5.0)
    watch.record(5)
    assert watch.stopped_by() == "no improvement"
    watch = Watch(MaxIterations(10))
    watch.record(10)
    assert watch.stopped_by() == "iteration limit"
    assert Watch(MaxRuntime(0)).stopped_by() == "time limit"
    request_stop()
    try:
        assert Watch(None).stopped_by() == "interrupted"
    finally:
        clear_stop_request()


def test_solvers_without_iterations_refuse_iteration_limits():
    from routecli.stop import time_limit_only

    assert time_limit_only(MaxRuntime(3), "nn").seconds == 3
    for stop in (MaxIterations(3), NoImprovement(3) | MaxRuntime(1)):
        with pytest.raises(OptionError, match="nn takes a time limit, not an iteration limit"):
            time_limit_only(stop, "nn")
