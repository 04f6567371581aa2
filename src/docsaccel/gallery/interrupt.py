"""Stop a running example when its budget runs out, whatever the example does.

The design, in full: the budgets guide's *Design* section.

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

>>> blocks = []
>>> wire = Tripwire(lambda: "memory" if len(blocks) > 3 else None,
...                 lambda why: f"over its {why} budget", every=0.01).start()
>>> try:
...     while True:
...         blocks.append(bytearray(1 << 20))
...         time.sleep(0.005)
... except MemoryExceeded as exc:
...     print(exc, "by the", wire.tier)
... finally:
...     wire.cancel()
over its memory budget by the watchdog
"""

from __future__ import annotations

import contextlib
import functools
import signal
import sys
import threading
import time
from collections.abc import Callable
from types import FrameType

from docsaccel.settings import GRACE_SECONDS, read_env_setting

__all__ = [
    "GRACE_SECONDS",
    "BudgetExceeded",
    "Deadline",
    "MemoryExceeded",
    "Tripwire",
    "cancel_all",
    "forget_in_forked_child",
    "grace_seconds",
]

# Messages for exceptions delivered by the watchdog, which can only raise a class.
_pending_messages: dict[int, str] = {}
# Started and not cancelled yet.
_active: set[_Interruption] = set()
_IMPORT_MACHINERY = "<frozen importlib._bootstrap"


class BudgetExceeded(Exception):
    """Raised inside an example whose time budget ran out (``docsaccel_on_overrun = "fail"``).

    An ``Exception`` (not ``BaseException``) on purpose: sphinx-gallery then handles it as
    an example error, shows it on the page and in the log, and honours
    ``abort_on_example_error``.
    """

    def __init__(self, message: str | None = None) -> None:
        if message is None:
            message = _pending_messages.pop(threading.get_ident(), "budget exceeded")
        super().__init__(message)


class MemoryExceeded(BudgetExceeded):
    """Raised inside an example over its memory budget, or that took the build over its
    memory ceiling (a :class:`BudgetExceeded`, handled as one)."""


def grace_seconds() -> float:
    """The hard stop's grace: ``DOCSACCEL_INTERRUPT_GRACE`` seconds, or :data:`GRACE_SECONDS`.

    Raises :class:`~docsaccel.settings.SettingError` naming a bad value.
    """
    return read_env_setting("interrupt_grace")


class _Interruption:
    """What both kinds share: where the code runs, the watchdog's delivery, cancelling."""

    exception: type[BudgetExceeded] = BudgetExceeded

    def __init__(
        self,
        code_file: str | None,
        retry_every: float,
        grace: float | None,
        on_hard_stop: Callable[[float], None] | None,
    ) -> None:
        if not retry_every > 0:
            raise ValueError(
                f"{type(self).__name__} retry_every must be more than 0, got {retry_every!r}"
            )
        self.retry_every = float(retry_every)
        self.grace = grace_seconds() if grace is None else float(grace)
        self.code_file = code_file
        self.on_hard_stop = on_hard_stop
        self.fired = False
        #: Which mechanism stopped the code first: "signal", "watchdog" or "hard stop".
        self.tier: str | None = None
        self._started = 0.0
        self._target = threading.get_ident()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._delivered = False

    def _begin(self) -> None:
        # One example runs per thread: one of this kind still armed there is left over.
        for other in list(_active):
            if type(other) is type(self) and other._target == threading.get_ident():
                other.cancel()
        self._started = time.perf_counter()
        self._target = threading.get_ident()
        _active.add(self)

    def _watch_in_thread(self) -> None:
        name = f"docsaccel-{type(self).__name__.lower()}"
        threading.Thread(target=self._watch, name=name, daemon=True).start()

    def _forget_in_child(self) -> None:
        """In a forked child: undo what arming did to the process (a watch thread is
        never the child's: nothing to undo by default)."""

    def _watch(self) -> None:
        """The watch thread's loop: each kind (:class:`Deadline`, :class:`Tripwire`) has
        its own; this base is never started itself."""
        raise NotImplementedError

    def cancel(self) -> None:
        """Stop watching; a no-op when it was never started or already cancelled."""
        with self._lock:
            self._stop.set()
            _active.discard(self)
            if self._delivered:
                # Drop an exception that was set but not delivered yet.
                _set_async_exception(self._target, None)
                self._delivered = False
            _pending_messages.pop(self._target, None)

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

    def _target_state(self) -> tuple[bool, bool]:
        frame = sys._current_frames().get(self._target)
        try:
            return self._where(frame)
        finally:
            del frame

    def _deliver(self, message: Callable[[], str]) -> bool:
        """Set the exception on the target thread (the watchdog's way); False if cancelled."""
        with self._lock:
            if self._stop.is_set():
                return False
            _pending_messages[self._target] = message()
            _set_async_exception(self._target, self.exception)
            self._delivered = True
        return True

    def _hard_stop(self) -> None:
        with self._lock:
            if self._stop.is_set():
                return
            self.fired, self.tier = True, "hard stop"
        assert self.on_hard_stop is not None
        self.on_hard_stop(time.perf_counter() - self._started)


class Deadline(_Interruption):
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
        super().__init__(code_file, retry_every, grace, on_hard_stop)
        self.seconds = float(seconds)
        self.message_for = message_for
        self.method = _method()
        self._handler = self._on_alarm
        self._previous_handler: object = None
        self._previous_timer = (0.0, 0.0)
        self._armed_signal = False

    def start(self) -> Deadline:
        self._begin()
        if self.method == "signal":
            self._previous_handler = signal.signal(signal.SIGALRM, self._handler)
            self._previous_timer = signal.getitimer(signal.ITIMER_REAL)
            signal.setitimer(signal.ITIMER_REAL, self.seconds, self.retry_every)
            self._armed_signal = True
        self._watch_in_thread()
        return self

    def cancel(self) -> None:
        """Stop the clock; a no-op when it was never started or already cancelled."""
        super().cancel()
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

    def _forget_in_child(self) -> None:
        # The interval timer is never inherited: only the SIGALRM handler is put back.
        with contextlib.suppress(ValueError, OSError, TypeError):  # not the main thread
            if signal.getsignal(signal.SIGALRM) == self._handler:
                previous = self._previous_handler
                signal.signal(signal.SIGALRM, signal.SIG_DFL if previous is None else previous)

    def _watch(self) -> None:
        if self._stop.wait(self.seconds):
            return
        hard_stop_at = self._started + self.seconds + self.grace
        while not self._stop.is_set():
            in_code, in_import = self._target_state()
            if in_code and self.on_hard_stop is not None and time.perf_counter() >= hard_stop_at:
                self._hard_stop()
                return
            delivery = in_code and not in_import and self._signal_disabled()
            if delivery and not self._deliver(lambda: self._message("watchdog")):
                return
            if self._stop.wait(self.retry_every):
                return


class Tripwire(_Interruption):
    """Raise :class:`MemoryExceeded` in the calling thread once ``tripped()`` says why.

    A watch thread calls ``tripped()`` every ``every`` seconds; it returns ``None``, or
    why to stop (kept as :attr:`why`). Then, once, ``message_for(why)`` builds the
    exception's message (it may record the trip first: it runs before any delivery), and
    the watch delivers the exception while ``code_file``'s code runs (never inside an
    import), again every ``retry_every`` seconds until :meth:`cancel`. ``on_hard_stop``:
    called when the code still runs ``grace`` seconds after the trip, or at once when
    ``hard()`` (checked at every sample after the trip) is true. ``on_delivered``: called
    once, right after the first delivery (the exception is pending in the code's thread:
    ending a child process the code waits for lets it land). ``at_check``: what
    :meth:`decide_now` asks in the code's own thread (``tripped`` by default).
    """

    exception = MemoryExceeded

    def __init__(
        self,
        tripped: Callable[[], str | None],
        message_for: Callable[[str], str],
        code_file: str | None = None,
        every: float = 0.05,
        retry_every: float = 0.25,
        grace: float | None = None,
        on_hard_stop: Callable[[float], None] | None = None,
        hard: Callable[[], bool] | None = None,
        on_delivered: Callable[[], None] | None = None,
        at_check: Callable[[], str | None] | None = None,
    ) -> None:
        if not every > 0:
            raise ValueError(f"Tripwire every must be more than 0, got {every!r}")
        super().__init__(code_file, retry_every, grace, on_hard_stop)
        self.tripped = tripped
        self.message_for = message_for
        self.every = float(every)
        self.hard = hard
        self.on_delivered = on_delivered
        self.at_check = at_check or tripped
        #: What ``tripped()`` said, once it did, and the message it was given.
        self.why: str | None = None
        self.message: str | None = None

    def start(self) -> Tripwire:
        self._begin()
        self._watch_in_thread()
        return self

    def _trip(self, tripped: Callable[[], str | None]) -> str | None:
        """The message, once ``tripped()`` says why (None until then, or when cancelled);
        the first decision's, whichever thread asks."""
        why = tripped()
        if why is None:
            return None
        with self._lock:
            if self._stop.is_set():
                return None
            if self.message is None:
                self.why, self.fired, self.tier = why, True, "watchdog"
                self.message = self.message_for(why)
            return self.message

    def decide_now(self, last: bool) -> str | None:
        """In the code's own thread, at a point where it can take the exception itself
        (its code has returned; its caller handles its errors): the message if the
        tripwire tripped, or trips now (``at_check()`` is asked at once), else None.

        A decision the watch made once the code had returned never reached it: raised
        here, it does. A message returned, or ``last`` (no such point comes after this
        one), ends the watch: a decision after it could reach no code, so none is made.
        """
        message = self.message
        if message is None and not self._stop.is_set():
            message = self._trip(self.at_check)
        if message is not None or last:
            # Also drops an exception delivered but not raised yet: it is raised here.
            self.cancel()
        return message

    def _watch(self) -> None:
        message: str | None = None
        tripped_at = next_try = 0.0
        while not self._stop.wait(self.every):
            first = message is None
            if first:
                message = self._trip(self.tripped)
                if message is None:
                    continue
                tripped_at = time.perf_counter()
            in_code, in_import = self._target_state()
            now = time.perf_counter()
            # Never before the first delivery: the code gets its chance to stop.
            hard_stop = in_code and not first and self.on_hard_stop is not None
            if hard_stop and self._hard_due(now - tripped_at):
                self._hard_stop()
                return
            if in_code and not in_import and now >= next_try:
                if not self._deliver(functools.partial(str, message)):
                    return
                if not next_try and self.on_delivered is not None:
                    self.on_delivered()
                next_try = now + self.retry_every

    def _hard_due(self, since_trip: float) -> bool:
        return since_trip >= self.grace or (self.hard is not None and self.hard())


def cancel_all() -> None:
    """Disarm every deadline and tripwire still armed (an example stopped without its
    "after" hook, the process ending: :mod:`.process_end` calls it)."""
    for armed in list(_active):
        armed.cancel()


def forget_in_forked_child() -> None:
    """In a child forked while a deadline was armed: the deadline is its parent's. Its
    ``SIGALRM`` handler is put back as it was (the interval timer is never inherited, so
    only a timer the child sets itself would reach it), and nothing here counts it as
    armed or waits on its lock."""
    for armed in list(_active):
        armed._forget_in_child()
    _active.clear()
    _pending_messages.clear()


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
