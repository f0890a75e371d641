import os
import signal
import time

import pytest

from routecli.train.stopping import StopReason, TrainingStop


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM])
def test_the_first_signal_is_noted_and_a_second_acts_as_usual(number):
    previous = signal.getsignal(number)
    caught = []
    signal.signal(number, lambda *_: caught.append("second"))
    try:
        with TrainingStop() as stop:
            assert stop.reason() is None
            os.kill(os.getpid(), number)
            assert stop.reason() is StopReason.INTERRUPTED
            os.kill(os.getpid(), number)  # the handler before the block is back
        assert caught == ["second"]
    finally:
        signal.signal(number, previous)


def test_the_handlers_are_restored_after_the_block():
    before = signal.getsignal(signal.SIGINT)
    with TrainingStop():
        assert signal.getsignal(signal.SIGINT) is not before
    assert signal.getsignal(signal.SIGINT) is before


def test_the_time_limit_counts_from_entering_the_block():
    stop = TrainingStop(time_limit=0.2)
    time.sleep(0.3)
    with stop:
        assert stop.reason() is None
        time.sleep(0.3)
        assert stop.reason() is StopReason.TIME_LIMIT


def test_a_signal_during_training_leaves_its_searches_alone():
    from routecli.stop import MaxIterations, Watch, stop_requested

    with TrainingStop() as stop:
        os.kill(os.getpid(), signal.SIGTERM)
        assert stop.reason() is StopReason.INTERRUPTED
        assert not stop_requested() and not Watch(MaxIterations(5)).done()
