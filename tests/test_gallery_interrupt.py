"""The interrupt mechanism on its own: both methods, the code filter, cancelling, the
watchdog against escapes, imports, the hard stop."""

from __future__ import annotations

import signal
import sys
import threading
import time

import pytest

from docsaccel.gallery.interrupt import (
    GRACE_SECONDS,
    BudgetExceeded,
    Deadline,
    cancel_all,
    grace_seconds,
)


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


# --- Escapes: the example replaces, ignores or disarms the timer ------------------------


def _escape_handler() -> None:
    signal.signal(signal.SIGALRM, lambda *args: None)


def _escape_ignore() -> None:
    signal.signal(signal.SIGALRM, signal.SIG_IGN)


def _escape_disarm() -> None:
    signal.setitimer(signal.ITIMER_REAL, 0)


@pytest.mark.parametrize("escape", [_escape_handler, _escape_ignore, _escape_disarm])
def test_the_watchdog_interrupts_an_example_that_disabled_the_timer(escape) -> None:
    before = signal.getsignal(signal.SIGALRM)
    deadline = Deadline(0.3, lambda elapsed: "budget gone").start()
    try:
        with pytest.raises(BudgetExceeded, match="budget gone"):
            escape()
            spin(30)
    finally:
        deadline.cancel()
    assert deadline.tier == "watchdog"
    # The handler in place before the deadline is back.
    assert signal.getsignal(signal.SIGALRM) is before


def test_a_swallowed_interruption_comes_again_then_the_hard_stop() -> None:
    stopped = []
    deadline = Deadline(
        0.3, lambda elapsed: "budget gone", grace=1.0, on_hard_stop=stopped.append
    ).start()
    caught = 0
    try:
        end = time.perf_counter() + 30
        while not stopped and time.perf_counter() < end:
            try:
                time.sleep(10)
            except BudgetExceeded:
                caught += 1
    finally:
        deadline.cancel()
    assert caught >= 2 and deadline.tier == "hard stop"
    assert stopped and 1.3 <= stopped[0] < 20
    assert deadline.fired


def test_no_interruption_inside_an_import(tmp_path, monkeypatch) -> None:
    (tmp_path / "slow_to_import.py").write_text("import time\ntime.sleep(1.0)\nDONE = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    deadline = Deadline(0.2, lambda elapsed: "budget gone").start()
    try:
        with pytest.raises(BudgetExceeded):
            import slow_to_import  # noqa: F401

            spin(30)
    finally:
        deadline.cancel()
        sys.modules.pop("slow_to_import", None)
    # The import finished whole before the interruption landed.
    assert deadline.fired


def test_an_armed_deadline_is_disarmed_by_the_next_one_and_cancel_all() -> None:
    first = Deadline(30, lambda elapsed: "first").start()
    second = Deadline(30, lambda elapsed: "second").start()
    assert first._stop.is_set() and not second._stop.is_set()
    cancel_all()
    assert second._stop.is_set()
    assert signal.getsignal(signal.SIGALRM) is not second._handler


@pytest.mark.parametrize("value", ["soon", "-1", "inf", "nan"])
def test_a_bad_grace_names_the_variable(monkeypatch, value) -> None:
    monkeypatch.setenv("DOCSACCEL_INTERRUPT_GRACE", value)
    with pytest.raises(ValueError, match=f"DOCSACCEL_INTERRUPT_GRACE='{value}'"):
        grace_seconds()


def test_the_grace_comes_from_the_environment(monkeypatch) -> None:
    monkeypatch.delenv("DOCSACCEL_INTERRUPT_GRACE", raising=False)
    assert grace_seconds() == GRACE_SECONDS
    monkeypatch.setenv("DOCSACCEL_INTERRUPT_GRACE", "1.5")
    assert Deadline(1, lambda elapsed: "").grace == 1.5
