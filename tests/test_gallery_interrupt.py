"""The interrupt mechanism on its own: both methods, the code filter, cancelling."""

from __future__ import annotations

import threading
import time

import pytest

from docsaccel.gallery.interrupt import BudgetExceeded, Deadline


def spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def test_signal_method_stops_a_loop_and_a_sleep() -> None:
    for work in (lambda: spin(30), lambda: time.sleep(30)):
        deadline = Deadline(0.3, lambda elapsed: f"stopped after {elapsed:.1f} s").start()
        assert deadline.method == "signal"
        started = time.perf_counter()
        with pytest.raises(BudgetExceeded, match="stopped after"):
            try:
                work()
            finally:
                deadline.cancel()
        assert deadline.fired and time.perf_counter() - started < 10


def test_thread_method_outside_the_main_thread() -> None:
    outcome = {}

    def worker() -> None:
        deadline = Deadline(0.3, lambda elapsed: "budget gone").start()
        outcome["method"] = deadline.method
        try:
            spin(30)
        except BudgetExceeded as exc:
            outcome["error"] = str(exc)
        finally:
            deadline.cancel()

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join(timeout=30)
    assert outcome == {"method": "thread", "error": "budget gone"}


def test_only_raises_while_the_given_code_runs() -> None:
    deadline = Deadline(0.2, lambda elapsed: "late", code_file="/nowhere/example.py").start()
    try:
        spin(0.8)  # this file is not /nowhere/example.py: nothing is raised
    finally:
        deadline.cancel()
    assert not deadline.fired


def test_cancel_before_expiry_means_no_interruption() -> None:
    deadline = Deadline(0.3, lambda elapsed: "late").start()
    deadline.cancel()
    spin(0.6)
    assert not deadline.fired


@pytest.mark.parametrize("seconds", [0, -1])
def test_bad_seconds(seconds) -> None:
    with pytest.raises(ValueError, match="more than 0"):
        Deadline(seconds, lambda elapsed: "")
