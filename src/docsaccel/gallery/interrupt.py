"""Stop a running example when its budget runs out, whatever the example does.

The rest of the plugin only knows :class:`Deadline` (``start`` / ``cancel`` / ``fired`` /
``tier``) and the exception it raises, :class:`BudgetExceeded`. How the stop happens is
decided here, in two tiers:

1. **Interruption** (the example sees an exception, sphinx-gallery shows it on the page):

   - ``"signal"`` (main thread, POSIX): a repeating ``SIGALRM`` interval timer. The
     handler raises in the interrupted frame, so even a blocking ``time.sleep`` is cut
     short. A watchdog thread checks that the handler is still ours and the timer still
     armed; when the example replaced, ignored or disarmed it, the watchdog delivers the
     exception itself (tier ``"watchdog"``).
   - ``"thread"`` (elsewhere): the watchdog thread sets an asynchronous exception on the
     running thread; it lands at the next Python bytecode.

   The exception is raised only while ``code_file`` (the example's source, the file name
   sphinx-gallery compiles its blocks under) is on the stack, so it never lands in
   sphinx-gallery's own bookkeeping, and never inside an import (``importlib._bootstrap``
   on the stack): a module interrupted half-initialised breaks every later example that
   imports it. If the example swallows it (``except Exception: pass``), it is raised
   again every ``retry_every`` seconds until the example returns.

2. **Hard stop**: an example still running ``grace`` seconds after its budget (it
   swallows the exception in a loop, or sits in native code with ``SIGALRM`` ignored)
   gets ``on_hard_stop(elapsed)`` called from the watchdog thread; the plugin records it
   and ends the process there. The grace defaults to :data:`GRACE_SECONDS`;
   ``DOCSACCEL_INTERRUPT_GRACE`` sets it.

A deadline an example left armed (with ``abort_on_example_error`` the example's "after"
hook never runs) is disarmed when the next deadline starts, by :func:`cancel_all`, and at
the process's end.

Example: a loop that never ends on its own, stopped after 0.2 s (on the main thread; the
previous ``SIGALRM`` handler and timer are back after :meth:`Deadline.cancel`).

>>> deadline = Deadline(0.2, lambda elapsed: f"stopped after {elapsed:.1f} s").start()
>>> try:
...     while True:
...         pass
... except BudgetExceeded as exc:
...     print(exc, "by", deadline.tier)
... finally:
...     deadline.cancel()
stopped after ... s by signal
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import Callable
from types import FrameType

from docsaccel.settings import GRACE_SECONDS, read_env_setting

__all__ = ["GRACE_SECONDS", "BudgetExceeded", "Deadline", "cancel_all", "grace_seconds"]

# Messages for exceptions delivered by the watchdog, which can only raise a class.
_pending_messages: dict[int, str] = {}
# Started and not cancelled yet.
_active: set[Deadline] = set()
_IMPORT_MACHINERY = "<frozen importlib._bootstrap"


class BudgetExceeded(Exception):
    """Raised inside an example whose time budget ran out (``docsaccel_on_overrun = "fail"``).

    An ``Exception`` (not ``BaseException``) on purpose: sphinx-gallery then handles it as
    an example error, shows it on the page and in the log, and honours
    ``abort_on_example_error``.
    """

    def __init__(self, message: str | None = None) -> None:
        if message is None:
            message = _pending_messages.pop(threading.get_ident(), "time budget exceeded")
        super().__init__(message)


def grace_seconds() -> float:
    """The hard stop's grace: ``DOCSACCEL_INTERRUPT_GRACE`` seconds, or :data:`GRACE_SECONDS`.

    Raises :class:`~docsaccel.settings.SettingError` naming a bad value.
    """
    return read_env_setting("interrupt_grace")


class Deadline:
    """Raise :class:`BudgetExceeded` in the calling thread ``seconds`` after :meth:`start`.

    ``message_for(elapsed_seconds)`` builds the exception's message when it fires (it may
    also record the interruption; :attr:`tier` says which mechanism fired).
    ``code_file``: raise only while this file's code runs. ``on_hard_stop(elapsed)``:
    called from the watchdog thread when the code still runs ``grace`` seconds after the
    budget (default grace: :func:`grace_seconds`); without it there is no hard stop.
    """

    def __init__(
        self,
        seconds: float,
        message_for: Callable[[float], str],
        code_file: str | None = None,
        retry_every: float = 0.25,
        grace: float | None = None,
        on_hard_stop: Callable[[float], None] | None = None,
    ) -> None:
        if not seconds > 0:
            raise ValueError(f"Deadline seconds must be more than 0, got {seconds!r}")
        if not retry_every > 0:
            raise ValueError(f"Deadline retry_every must be more than 0, got {retry_every!r}")
        self.seconds = float(seconds)
        self.retry_every = float(retry_every)
        self.grace = grace_seconds() if grace is None else float(grace)
        self.message_for = message_for
        self.code_file = code_file
        self.on_hard_stop = on_hard_stop
        self.fired = False
        #: Which mechanism stopped the code first: "signal", "watchdog" or "hard stop".
        self.tier: str | None = None
        self.method = _method()
        self._started = 0.0
        self._target = threading.get_ident()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._handler = self._on_alarm
        self._previous_handler: object = None
        self._previous_timer = (0.0, 0.0)
        self._armed_signal = False
        self._delivered = False

    def start(self) -> Deadline:
        cancel_all()  # one example runs per thread: a deadline still armed is left over
        self._started = time.perf_counter()
        self._target = threading.get_ident()
        if self.method == "signal":
            self._previous_handler = signal.signal(signal.SIGALRM, self._handler)
            self._previous_timer = signal.getitimer(signal.ITIMER_REAL)
            signal.setitimer(signal.ITIMER_REAL, self.seconds, self.retry_every)
            self._armed_signal = True
        _active.add(self)
        threading.Thread(target=self._watch, name="docsaccel-deadline", daemon=True).start()
        return self

    def cancel(self) -> None:
        """Stop the clock; a no-op when it was never started or already cancelled."""
        with self._lock:
            self._stop.set()
            _active.discard(self)
            if self._delivered:
                # Drop an exception that was set but not delivered yet.
                _set_async_exception(self._target, None)
                self._delivered = False
            _pending_messages.pop(self._target, None)
        if self._armed_signal and threading.current_thread() is threading.main_thread():
            self._armed_signal = False
            signal.setitimer(signal.ITIMER_REAL, 0)
            previous = self._previous_handler
            # None: a handler installed outside Python, which cannot be put back.
            signal.signal(signal.SIGALRM, signal.SIG_DFL if previous is None else previous)
            self._previous_handler = None
            # A timer of the code around the build (pytest-timeout, say) runs on.
            value, interval = self._previous_timer
            if value > 0:
                left = value - (time.perf_counter() - self._started)
                signal.setitimer(signal.ITIMER_REAL, max(left, 0.001), interval)

    def _message(self, tier: str) -> str:
        self.fired = True
        self.tier = self.tier or tier
        return self.message_for(time.perf_counter() - self._started)

    def _where(self, frame: FrameType | None) -> tuple[bool, bool]:
        """(the code runs, an import is in progress) for the stack ending at ``frame``."""
        in_code = self.code_file is None
        in_import = False
        while frame is not None:
            name = frame.f_code.co_filename
            if name == self.code_file:
                in_code = True
            elif name.startswith(_IMPORT_MACHINERY):
                in_import = True
            frame = frame.f_back
        return in_code, in_import

    def _on_alarm(self, signum: int, frame: FrameType | None) -> None:
        if self._stop.is_set():
            return
        in_code, in_import = self._where(frame)
        if in_code and not in_import:
            raise BudgetExceeded(self._message("signal"))

    def _signal_disabled(self) -> bool:
        if self.method != "signal":
            return True
        try:
            replaced = signal.getsignal(signal.SIGALRM) is not self._handler
            return replaced or signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
        except (ValueError, OSError):
            return True

    def _watch(self) -> None:
        if self._stop.wait(self.seconds):
            return
        hard_stop_at = self._started + self.seconds + self.grace
        while not self._stop.is_set():
            frame = sys._current_frames().get(self._target)
            in_code, in_import = self._where(frame)
            del frame
            if in_code and self.on_hard_stop is not None and time.perf_counter() >= hard_stop_at:
                with self._lock:
                    if self._stop.is_set():
                        return
                    self.fired, self.tier = True, "hard stop"
                self.on_hard_stop(time.perf_counter() - self._started)
                return
            if in_code and not in_import and self._signal_disabled():
                with self._lock:
                    if self._stop.is_set():
                        return
                    _pending_messages[self._target] = self._message("watchdog")
                    _set_async_exception(self._target, BudgetExceeded)
                    self._delivered = True
            if self._stop.wait(self.retry_every):
                return


def cancel_all() -> None:
    """Disarm every deadline still armed (an example stopped without its "after" hook, the
    process ending: :mod:`.process_end` calls it)."""
    for deadline in list(_active):
        deadline.cancel()


def _method() -> str:
    on_main = threading.current_thread() is threading.main_thread()
    return "signal" if on_main and hasattr(signal, "setitimer") else "thread"


def _set_async_exception(thread_id: int, exception: type[BaseException] | None) -> None:
    # Imported on first use by the watchdog: every build loads this module, and most
    # never need ctypes.
    import ctypes

    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread_id), ctypes.py_object(exception) if exception else None
    )
