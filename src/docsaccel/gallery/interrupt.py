"""Stop a running example when its budget runs out: one small interface, two mechanisms.

The rest of the plugin only knows :class:`Deadline` (``start`` / ``cancel`` / ``fired``) and
the exception it raises, :class:`BudgetExceeded`. How the exception reaches the running
code is decided here, as pytest-timeout does:

- ``"signal"`` (main thread, POSIX): a ``SIGALRM`` interval timer. The handler raises in
  the interrupted frame, so even a blocking ``time.sleep`` is cut short.
- ``"thread"`` (elsewhere): a watchdog thread sets an asynchronous exception on the
  running thread; it lands at the next Python bytecode.

Either way, the exception is raised only while ``code_file`` (the example's source, the
file name sphinx-gallery compiles its blocks under) is on the stack, so it never lands in
sphinx-gallery's own bookkeeping. If the example swallows it (``except Exception: pass``),
it is raised again every ``retry_every`` seconds until the example returns.

Example::

    deadline = Deadline(2.0, lambda elapsed: f"stopped after {elapsed:.1f} s").start()
    try:
        while True:
            pass
    except BudgetExceeded as exc:
        print(exc)            # stopped after 2.0 s
    finally:
        deadline.cancel()
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import Callable
from types import FrameType

__all__ = ["BudgetExceeded", "Deadline"]

# Messages for exceptions delivered by the thread mechanism, which can only raise a class.
_pending_messages: dict[int, str] = {}


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


class Deadline:
    """Raise :class:`BudgetExceeded` in the calling thread ``seconds`` after :meth:`start`.

    ``message_for(elapsed_seconds)`` builds the exception's message when it fires (it may
    also record the interruption). ``code_file``: raise only while this file's code runs.
    """

    def __init__(
        self,
        seconds: float,
        message_for: Callable[[float], str],
        code_file: str | None = None,
        retry_every: float = 0.25,
    ) -> None:
        if not seconds > 0:
            raise ValueError(f"Deadline seconds must be more than 0, got {seconds!r}")
        if not retry_every > 0:
            raise ValueError(f"Deadline retry_every must be more than 0, got {retry_every!r}")
        self.seconds = float(seconds)
        self.retry_every = float(retry_every)
        self.message_for = message_for
        self.code_file = code_file
        self.fired = False
        self.method = _method()
        self._started = 0.0
        self._target = threading.get_ident()
        self._stop = threading.Event()
        self._previous_handler: object = None

    def start(self) -> Deadline:
        self._started = time.perf_counter()
        self._target = threading.get_ident()
        if self.method == "signal":
            self._previous_handler = signal.signal(signal.SIGALRM, self._on_alarm)
            signal.setitimer(signal.ITIMER_REAL, self.seconds, self.retry_every)
        else:
            threading.Thread(target=self._watch, name="docsaccel-deadline", daemon=True).start()
        return self

    def cancel(self) -> None:
        """Stop the clock; a no-op when it was never started or already cancelled."""
        if self.method == "signal":
            if self._previous_handler is not None:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, self._previous_handler)
                self._previous_handler = None
        elif not self._stop.is_set():
            self._stop.set()
            # Drop an exception that was set but not delivered yet.
            _set_async_exception(self._target, None)
            _pending_messages.pop(self._target, None)

    def _message(self) -> str:
        self.fired = True
        return self.message_for(time.perf_counter() - self._started)

    def _in_code(self, frame: FrameType | None) -> bool:
        if self.code_file is None:
            return True
        while frame is not None:
            if frame.f_code.co_filename == self.code_file:
                return True
            frame = frame.f_back
        return False

    def _on_alarm(self, signum: int, frame: FrameType | None) -> None:
        if self._in_code(frame):
            raise BudgetExceeded(self._message())

    def _watch(self) -> None:
        if self._stop.wait(self.seconds):
            return
        while not self._stop.is_set():
            frame = sys._current_frames().get(self._target)
            if self._in_code(frame):
                _pending_messages[self._target] = self._message()
                _set_async_exception(self._target, BudgetExceeded)
            if self._stop.wait(self.retry_every):
                return


def _method() -> str:
    on_main = threading.current_thread() is threading.main_thread()
    return "signal" if on_main and hasattr(signal, "setitimer") else "thread"


def _set_async_exception(thread_id: int, exception: type[BaseException] | None) -> None:
    # Imported on first use by the thread mechanism: every build loads this module, and
    # most never need ctypes.
    import ctypes

    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread_id), ctypes.py_object(exception) if exception else None
    )
