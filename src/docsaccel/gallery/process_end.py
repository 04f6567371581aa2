"""How a process that runs examples ends: every way out, handled in one place.

The design, in full: the budgets guide's *Design* section.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import json
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, Protocol

from sphinx.util import logging as sphinx_logging

from docsaccel import layout, sg_compat
from docsaccel.contract import ended_by, free_locks_in_child, stopped_by
from docsaccel.gallery.interrupt import cancel_all, forget_in_forked_child
from docsaccel.gallery.processes import descendants, end_started, kill_started
from docsaccel.intercept import Patch

__all__ = [
    "EXIT_STATUS",
    "INTERRUPTED",
    "TERMINATED",
    "ExampleExit",
    "ExampleMark",
    "Stuck",
    "after_example",
    "before_example",
    "bound_exit",
    "builds_here",
    "end_of_process",
    "ended_by",
    "ending_why",
    "in_forked_child",
    "install",
    "interrupted",
    "left_by",
    "left_in_workers",
    "leftovers",
    "on_process_end",
    "real_exit",
    "remember_log_handlers",
    "running",
    "show_pending_logs",
    "signals_text",
    "stopped_by",
    "stopped_early",
    "stuck",
    "tell_build",
    "verdict_pending",
]

logger = sphinx_logging.getLogger(__name__)

#: The status of a process ended here: the hard stop, an example that ended the process
#: with status 0 (``os._exit(0)``, ``raise SystemExit``) while the build was not done, or
#: a finished build that something an example left kept from ending.
EXIT_STATUS = 2

#: ``os._exit`` as it was before any guard: the one way this package ends a process.
real_exit = os._exit
_real_sys_exit = sys.exit
_real_atexit_clear = atexit._clear
_real_atexit_unregister = atexit.unregister
_real_atexit_run = atexit._run_exitfuncs
#: The functions that replace this process with another program (``os.execl`` and the
#: other ``exec*`` forms call these through the ``os`` module's globals).
_REAL_EXECS = {name: getattr(os, name) for name in ("execv", "execve") if hasattr(os, name)}
# ``os`` takes these from the platform's module (``posix``); a name looked up there must
# find the guard too.
_platform = sys.modules.get(os.name)


class ExampleExit(Exception):
    """Raised in place of ``sys.exit()`` called by a running example.

    An example error like any other (sphinx-gallery shows it on the page): ending the
    process would end the build, with sphinx-gallery's pages half written and, for
    ``sys.exit(0)``, a status that says it succeeded.
    """


class Running(Protocol):
    """What runs an example in this process (the hook): told when the process ends."""

    def running_file(self) -> str | None:
        """The source file of the example running in this process, if any."""

    def end_running(self, why: str | None) -> None:
        """Record the running example (``why`` it did not finish), end its processes."""

    def fail_running(self, error: str) -> None:
        """Record the running example failed (``error``), end its processes."""


_running: Running | None = None
_callbacks: list[tuple[int, Callable[[], bool]]] = []
# The pid install() ran in, and the SIGTERM handler it replaced there.
_installed_in: int | None = None
_sigterm_before: Any = None
_fork_callbacks: list[Callable[[], None]] = []


def install(sigterm: bool = True) -> None:
    """Set up this process's ways out (once per process; later calls only re-arm the exit
    guards, which an example may have replaced).

    ``sigterm``: also handle SIGTERM (the build's own process, on its main thread).
    """
    global _installed_in
    _guard_exits()
    if _installed_here():
        return
    _installed_in = os.getpid()
    _register_fork_hook()
    atexit.register(_at_exit)
    # Exit handlers run only once the interpreter has waited for every non-daemon thread:
    # one an example left would keep an unfinished build from ever writing its report.
    with contextlib.suppress(AttributeError, RuntimeError):  # no such hook; exiting now
        threading._register_atexit(_before_threads_joined)  # type: ignore[attr-defined]
    if sigterm:
        _install_sigterm_handler()
    _install_sigint_watch()
    sg_compat.fail_own_exits(_example_exit)
    sg_compat.on_abort(_example_aborts)


def _installed_here() -> bool:
    """Whether :func:`install` ran in this process (not in the one it was forked from)."""
    return _installed_in == os.getpid()


def in_forked_child(callback: Callable[[], None]) -> None:
    """Call ``callback()`` in every child forked from this process (let go of a lock)."""
    _fork_callbacks.append(callback)


# Whether the forking thread blocked SIGTERM for the fork (see _before_fork).
_fork_mask = threading.local()

# What the fork hooks call, in every fork: the signal module's own C functions. Its Python
# wrappers turn each handler and mask they return into enum members (a handler that is a
# function costs a raised and caught ValueError), which in a pool worker cost more than
# the rest of what docsaccel does there; the hooks compare only ints and functions.
try:
    import _signal as _raw_signal
except ImportError:  # an interpreter without it: the wrappers do the same, slower
    _raw_signal = signal  # type: ignore[assignment]


def _before_fork() -> None:
    # SIGTERM waits while the process forks. A child signalled before it first runs (a
    # pool ended at once, on a busy machine) would get it through the build's Python-level
    # handler, which the interpreter drops in a new child (it clears the pending signals
    # of its handlers), and the pool would wait for that worker forever. Blocked, it stays
    # pending in the child until its handler is put back as it was, then acts as it would
    # without the plugin; in the build, once the fork returned.
    if _installed_in is None:
        return
    with contextlib.suppress(ValueError, OSError):
        blocked = _raw_signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
        _fork_mask.unblock = signal.SIGTERM not in blocked


def _unblock_after_fork() -> None:
    if getattr(_fork_mask, "unblock", False):
        _fork_mask.unblock = False
        with contextlib.suppress(ValueError, OSError):
            _raw_signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})


def _after_fork_in_child() -> None:
    # A forked child is not the build: it ends as it would without the plugin.
    global _running, _installed_in
    if _installed_in is None:
        return
    _running, _installed_in = None, None
    try:
        free_locks_in_child()
        forget_in_forked_child()
        for callback in _fork_callbacks:
            with contextlib.suppress(Exception):
                callback()
        _unguard_exits()
        with contextlib.suppress(ValueError, OSError, TypeError):  # not the main thread
            handler = _raw_signal.getsignal(signal.SIGTERM)
            if getattr(handler, "__name__", "") == _on_sigterm.__name__:
                before = signal.SIG_DFL if _sigterm_before is None else _sigterm_before
                # The C function takes SIG_DFL and SIG_IGN as plain ints, not enum members.
                _raw_signal.signal(
                    signal.SIGTERM, int(before) if isinstance(before, int) else before
                )
    finally:
        _unblock_after_fork()  # a SIGTERM that came meanwhile acts now


# Registered once for the life of the interpreter; it acts only where install() ran.
_fork_hook_registered = False


def _register_fork_hook() -> None:
    global _fork_hook_registered
    if not _fork_hook_registered:
        os.register_at_fork(
            before=_before_fork,
            after_in_parent=_unblock_after_fork,
            after_in_child=_after_fork_in_child,
        )
        _fork_hook_registered = True


def running(hook: Running | None) -> None:
    """Say what runs an example in this process now (``None``: no example runs)."""
    global _running
    _running = hook


#: The attribute of an example's error that ended its build: the example's source.
_ABORTED_IN = "_docsaccel_aborted_in"


def abort_text(error: BaseException) -> str:
    """``error``, which ``abort_on_example_error`` made the build's end, in one line:
    ``"RuntimeError: it crashed"``."""
    return f"{type(error).__name__}: {error}".splitlines()[0]


def abort_error(error: BaseException) -> str:
    """The error of the record of the example whose ``error`` ended the build."""
    return f"it raised {abort_text(error)}; abort_on_example_error stopped the build"


def _example_aborts(error: BaseException) -> None:
    """The running example's ``error`` ends the build (``abort_on_example_error``): the
    example is finished where it ran, the one process that knows which example raised
    and holds its record. In a ``parallel`` build that is a worker: the build's process
    runs no example, and the abort ends the worker before anything else would finish
    it. Its source goes with the error, which the build's process gets, to name it."""
    where = fail_running(abort_error(error))
    if where is not None:
        with contextlib.suppress(AttributeError, TypeError):  # an error that takes none
            setattr(error, _ABORTED_IN, where)


def aborted_in(error: BaseException) -> str | None:
    """The source of the example whose ``error`` ended the build, where it ran
    (:func:`_example_aborts`); ``None`` when no example's record took it."""
    where = getattr(error, _ABORTED_IN, None)
    return where if isinstance(where, str) else None


def fail_running(why: str) -> str | None:
    """The example running in this process failed and stops the build (``why``): record
    it so and end its processes; its source file (``None``: no example runs)."""
    hook = _running
    if hook is None:
        return None
    where = hook.running_file()
    with contextlib.suppress(Exception):
        hook.fail_running(why)
    return where


def on_process_end(callback: Callable[[], bool]) -> None:
    """Call ``callback()`` when this process ends before its build did (once per callback).

    At the hard stop, ``os._exit`` in an example, SIGTERM and interpreter exit, after
    the running example is recorded. The callback returns whether a build was left
    unfinished: then an interpreter exit ends with a failing status (:data:`EXIT_STATUS`).
    """
    if (os.getpid(), callback) not in _callbacks:
        _callbacks.append((os.getpid(), callback))


# The builds that have ended but whose status sphinx-build has not decided yet.
_pending: set[int] = set()


def verdict_pending(build: object, pending: bool) -> None:
    """Say whether ``build`` has ended with its status still undecided: the handlers of
    ``build-finished`` after the plugin's may still fail it. Meanwhile a process that
    something ends with status 0 ends with :data:`EXIT_STATUS`."""
    if pending:
        _pending.add(id(build))
    else:
        _pending.discard(id(build))


def builds_here() -> bool:
    """Whether this process runs a build (a callback was registered in it), not a worker."""
    return any(pid == os.getpid() for pid, _ in _callbacks)


#: What ended the build's process on SIGTERM.
TERMINATED = ended_by(signal.SIGTERM)

#: Why the process is ending, when a signal ends the whole build (not an example's
#: doing): the callbacks say it in the report of a build that no example was running in.
_ending: str | None = None


def ending_why() -> str | None:
    """Why the build's process is ending (``"it was terminated (SIGTERM)"``), while the
    :func:`on_process_end` callbacks run; ``None`` when no signal ended it."""
    return _ending


def end_of_process(
    status: int | None,
    why: str | None = None,
    every_process: bool = False,
    fail_unfinished: bool = False,
    unfinished_status: int | None = None,
    build_why: str | None = None,
) -> bool:
    """Record the running example (``why`` it did not finish), end the processes it started
    (``every_process``: all of this process's descendants), run the :func:`on_process_end`
    callbacks (``build_why``: what :func:`ending_why` tells them); then end this process
    with ``status``, if given, or with ``unfinished_status`` (default :data:`EXIT_STATUS`,
    never 0) if ``fail_unfinished`` and a build was left unfinished. Returns whether a
    build was left unfinished (its callback then logged why, and where its report is).
    """
    global _running, _ending
    # Ctrl-C ends the build through the interpreter's exit, not a handler of its own: it
    # is named as SIGTERM is.
    _ending = build_why or (INTERRUPTED if _sigint_received else None)
    hook, _running = _running, None
    cancel_all()
    if hook is not None:
        with contextlib.suppress(Exception):
            hook.end_running(why)
    if every_process:
        end_started(set())
    unfinished = False
    # Before Sphinx 8.1, -W without --keep-going raises on the first warning or error
    # logged: at the end of the process a message must be shown, never raised, or the
    # callbacks after it and the failing status would be skipped.
    shown = getattr(sphinx_logging, "skip_warningiserror", contextlib.nullcontext)
    with shown():
        for pid, callback in list(_callbacks):
            if pid != os.getpid():
                continue  # registered in the process this one was forked from
            try:
                unfinished = bool(callback()) or unfinished
            except Exception as exc:  # the others still run; the process ends regardless
                logger.error(f"docsaccel: while the build's process ended: {exc!r}")
    show_pending_logs()
    if status is None and fail_unfinished and unfinished:
        status = unfinished_status or EXIT_STATUS
    if status is None:
        return unfinished
    _exit_now(status)
    return unfinished  # not reached


def _exit_now(status: int) -> None:
    """End this process with ``status`` now, its output flushed."""
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        with contextlib.suppress(Exception):
            stream.flush()
    logging.shutdown()
    kill_started()  # those started since the examples' processes were ended
    real_exit(status)


#: Why the running example did not finish when the interpreter exits mid-build: Ctrl-C
#: (SIGINT received), or something else (an example's own KeyboardInterrupt or SystemExit
#: fails that example only: :func:`_example_exit`).
_EXIT_WHY_SIGINT = stopped_by(signal.SIGINT)
_EXIT_WHY_OTHER = (
    "the build's process exited while it ran (an error with abort_on_example_error, or "
    "SystemExit or KeyboardInterrupt raised outside the example's code)"
)


def _exit_why() -> str:
    return _EXIT_WHY_SIGINT if _sigint_received else _EXIT_WHY_OTHER


# --- Ctrl-C, or an example's own KeyboardInterrupt ----------------------------------------

#: Whether SIGINT reached this process: a ``KeyboardInterrupt`` is then a real Ctrl-C (or
#: a shard command stopping its build), never an example's own.
_sigint_received = False
#: Said of a build's process Ctrl-C ended (as :data:`TERMINATED` of ``SIGTERM``).
INTERRUPTED = ended_by(signal.SIGINT)
#: Whether the interpreter is waiting for the threads examples left (its exit began).
_joining_threads = False


def interrupted() -> bool:
    """Whether Ctrl-C (SIGINT) reached this build's process."""
    return _sigint_received


def _install_sigint_watch() -> None:
    """Note SIGINT as it arrives, then do what Python does with it (raise
    ``KeyboardInterrupt``): only then can an example's own ``raise KeyboardInterrupt`` be
    told from Ctrl-C. A handler other than Python's default is left alone."""
    if threading.current_thread() is not threading.main_thread():
        return
    previous = signal.getsignal(signal.SIGINT)
    if previous is not signal.default_int_handler:
        return

    def on_sigint(signum: int, frame: Any) -> None:
        global _sigint_received
        _sigint_received = True
        if _joining_threads and _installed_here():
            # The build is over and the interpreter waits for threads examples left: the
            # end-of-process callbacks fail those examples, unjudged, and end the process
            # now (a KeyboardInterrupt here would only print a traceback and exit 0).
            end_of_process(None, why=_exit_why(), fail_unfinished=True)
        signal.default_int_handler(signum, frame)

    signal.signal(signal.SIGINT, on_sigint)


def _example_exit(exc: BaseException) -> Exception | None:
    """What replaces a ``KeyboardInterrupt`` or ``SystemExit`` the running example's code
    raised (:func:`docsaccel.sg_compat.fail_own_exits`): an :class:`ExampleExit`, failing
    that example only, as ``sys.exit()`` does; ``None`` for a real Ctrl-C, which stops
    the build as without the plugin."""
    if isinstance(exc, KeyboardInterrupt):
        if _sigint_received:
            return None
        return ExampleExit(
            "the example raised KeyboardInterrupt itself (no Ctrl-C: this process "
            "received no SIGINT), which would stop the whole build; an example must return "
            "normally (or raise an exception to fail)"
        )
    return ExampleExit(
        f"the example raised SystemExit({exc.code!r}), which would end the build's "
        "process; an example must return normally (or raise an exception to fail)"
    )


#: Whether :func:`_before_threads_joined` ran the callbacks already and a build was left
#: unfinished (``None``: it did not run them).
_ended_early: bool | None = None
#: What tells whether a build in this process is unfinished (:func:`stopped_early`).
_unfinished_probes: list[Callable[[], bool]] = []


def stopped_early(probe: Callable[[], bool]) -> None:
    """Register ``probe()``: whether a build in this process has not finished. At an
    interpreter exit while one has not, the callbacks run before the interpreter waits
    for the threads examples left (:func:`_before_threads_joined`)."""
    if probe not in _unfinished_probes:
        _unfinished_probes.append(probe)


def _before_threads_joined() -> None:
    """Interpreter exit, before it waits for the non-daemon threads: when a build was cut
    short (Ctrl-C, ``SystemExit``) while a thread an example left still runs, its report
    is written now, not once that thread ends (maybe never), and its callback arms the
    exit bound (:func:`bound_exit`), so the process ends within the grace, naming the
    example. A finished build's process (loky's thread ends at exit) is left alone."""
    global _ended_early, _joining_threads
    _joining_threads = True
    if not _installed_here() or not any(left_by(example_id) for example_id in _left):
        return
    if not any(probe() for probe in _unfinished_probes):
        return
    _ended_early = end_of_process(None, why=_exit_why())
    while _bounds_at_exit:
        _bounds_at_exit.pop(0)()


def _at_exit() -> None:
    if not _installed_here():
        return  # a forked child: not the process install() ran in
    if _bound_status is not None:
        # The exit bound ended the workers that held the process: its exit may go on
        # before the bound's own thread ends it, and must carry the bound's status.
        kill_started()
        real_exit(_bound_status)
    # A build left unfinished at interpreter exit stopped in the middle: an example
    # raised SystemExit (sphinx-build would exit 0), an error with abort_on_example_error,
    # Ctrl-C. The status says it failed, whatever the status the exit carried; an
    # exception nothing caught (the interpreter printed it) keeps the interpreter's 1, as
    # without the plugin.
    uncaught = getattr(sys, "last_value", None)
    other = (SystemExit, KeyboardInterrupt)  # the interpreter ends with another status
    crashed = (
        isinstance(uncaught, BaseException)
        and not isinstance(uncaught, other)
        # One an example left there (a traceback it showed itself) is not this exit's.
        and uncaught is not _last_value_seen
    )
    status = 1 if crashed else None
    if _ended_early is None:
        end_of_process(None, why=_exit_why(), fail_unfinished=True, unfinished_status=status)
    elif _ended_early:  # its report was written before the threads were waited for
        _exit_now(status or EXIT_STATUS)


# --- Logs Sphinx holds back -------------------------------------------------------------

#: The handlers of Sphinx's logger as the build set them up (:func:`remember_log_handlers`).
_log_handlers: list[logging.Handler] = []


def remember_log_handlers() -> None:
    """Note the handlers of Sphinx's logger, which Sphinx takes off while it holds logs
    back (as it writes the pages), so :func:`show_pending_logs` can put them back."""
    _log_handlers[:] = logging.getLogger(sphinx_logging.NAMESPACE).handlers


def show_pending_logs() -> None:
    """Show the logs Sphinx is holding back (it buffers warnings and errors while it writes
    the pages, and shows them once done): a process that ends meanwhile would lose them,
    the build's own last words ("terminated (SIGTERM)") among them. Does what the end of
    Sphinx's ``pending_warnings`` does: its handlers back, then the buffered records."""
    logger = logging.getLogger(sphinx_logging.NAMESPACE)
    pending = [h for h in logger.handlers if isinstance(h, sphinx_logging.MemoryHandler)]
    if not pending:
        return
    for handler in pending:
        logger.removeHandler(handler)
    for handler in _log_handlers:
        if handler not in logger.handlers:
            logger.addHandler(handler)
    for handler in pending:
        with contextlib.suppress(Exception):
            handler.flushTo(logger)


# --- An example ending the process ------------------------------------------------------


def _called_from_example() -> bool:
    hook = _running
    code_file = hook.running_file() if hook is not None else None
    if code_file is None or threading.current_thread() is not threading.main_thread():
        return False
    try:
        frame: Any = sys._getframe(2)
    except ValueError:  # called straight from C (an exit handler): no example's frame
        return False
    while frame is not None:
        if frame.f_code.co_filename == code_file:
            return True
        frame = frame.f_back
    return False


def _guard_exits() -> None:
    for guard in _GUARDS:
        guard.apply()


def _unguard_exits() -> None:
    for guard in _GUARDS:
        guard.undo()


def _guarded_sys_exit(status: object = None) -> None:
    if _called_from_example():
        raise ExampleExit(
            f"the example called sys.exit({status!r}), which would end the build's process; "
            "an example must return normally (or raise an exception to fail)"
        )
    _real_sys_exit(status)


def _guarded_os_exit(status: int) -> None:
    if _installed_here():
        if _called_from_example():
            # Whatever it passed: its status is not the build's verdict, and a code of
            # the build's own (check's "build failed") would say what did not happen.
            end_of_process(
                EXIT_STATUS,
                why=f"the example called os._exit({status!r}), which ended the build's process",
            )
        _cut_short(f"os._exit({status!r}) ended the build's process while it ran", status)
    real_exit(status)


def _cut_short(why: str, status: int) -> None:
    """The build's process ends now, from outside any example (a thread an example left
    behind, a handler it installed, a library): a build it cuts short gets its report and
    :data:`EXIT_STATUS`, whatever status it was ended with, as at interpreter exit;
    status 0 before sphinx-build's verdict fails too. Returns only when the process may
    end with ``status``."""
    end_of_process(None, why=why, fail_unfinished=True)
    if not status and _pending:
        print(
            f"ERROR: docsaccel: {why}, before sphinx-build decided its status; "
            f"ended with status {EXIT_STATUS}",
            file=sys.__stderr__,
            flush=True,
        )
        real_exit(EXIT_STATUS)


def _guarded_exec(name: str) -> Callable[..., Any]:
    real = _REAL_EXECS[name]

    def guarded(*args: Any, **kwargs: Any) -> Any:
        if _installed_here():
            if _called_from_example():
                raise ExampleExit(
                    f"the example called os.{name}(), which would replace the build's "
                    "process with another program; run it with subprocess instead"
                )
            # What the other program exits with is not the build's verdict.
            _cut_short(f"os.{name}() replaced the build's process while it ran", 0)
        return real(*args, **kwargs)

    guarded.__name__ = guarded.__qualname__ = name
    guarded.__doc__ = real.__doc__
    return guarded


_GUARDED_EXECS = {name: _guarded_exec(name) for name in _REAL_EXECS}


def _guarded_atexit_clear() -> None:
    global _handlers_marked
    _real_atexit_clear()
    _handlers_marked = -1  # the markers went too
    # The handler that fails a build the interpreter's exit cuts short stays.
    if _installed_here():
        atexit.register(_at_exit)


def _guarded_atexit_unregister(func: Callable[..., Any]) -> None:
    if func is not _at_exit or not _installed_here():
        _real_atexit_unregister(func)


def _guarded_atexit_run() -> None:
    # The exit handlers run now, in the middle of the build: the others, as without the
    # plugin; the one for the interpreter's exit stays for that exit.
    ours = _installed_here()
    if ours:
        _real_atexit_unregister(_at_exit)
    global _handlers_running, _handlers_marked
    try:
        _real_atexit_run()
    finally:
        # The markers ran and went with the handlers: none names what runs at the exit.
        _handlers_running, _handlers_marked = _NO_MARKER, -1
        if ours:
            atexit.register(_at_exit)


def _guard(owner: Any, name: str, guarded: Callable[..., Any]) -> Patch:
    """The patch putting ``guarded`` in place of ``owner.name``, not applied yet. The
    guards call what they guard as it was when this module was imported (``real_exit``
    and the others above), and forward to it wherever :func:`install` did not run."""
    return Patch(owner, name, lambda replaced: guarded)


#: Every way out guarded here, applied by :func:`_guard_exits`, undone by
#: :func:`_unguard_exits` (in a forked child).
_GUARDS: list[Patch] = [
    _guard(sys, "exit", _guarded_sys_exit),
    _guard(atexit, "_clear", _guarded_atexit_clear),
    _guard(atexit, "unregister", _guarded_atexit_unregister),
    _guard(atexit, "_run_exitfuncs", _guarded_atexit_run),
]
for _module in (os, _platform):
    if _module is not None:
        _GUARDS.append(_guard(_module, "_exit", _guarded_os_exit))
        _GUARDS += [_guard(_module, n, g) for n, g in _GUARDED_EXECS.items()]


# --- SIGTERM ----------------------------------------------------------------------------


def _install_sigterm_handler() -> None:
    """SIGTERM (CI cancelling, ``timeout``) writes the report as Ctrl-C does."""
    global _sigterm_before
    if threading.current_thread() is not threading.main_thread():
        return
    previous = signal.getsignal(signal.SIGTERM)
    if getattr(previous, "__name__", "") == _on_sigterm.__name__:
        return
    _sigterm_before = previous
    build_pid = os.getpid()

    def on_sigterm(signum: int, frame: Any) -> None:
        if os.getpid() != build_pid:
            # A child made without fork's hooks (a raw fork in C) still ends as it would.
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
            return
        _on_sigterm(previous)

    on_sigterm.__name__ = _on_sigterm.__name__
    global _our_sigterm
    _our_sigterm = on_sigterm
    signal.signal(signal.SIGTERM, on_sigterm)


#: The SIGTERM handler the build installed in this process, once it did.
_our_sigterm: Any = None


#: The signals that stop a build (Ctrl-C, a cancelled job): their handling is the build's.
_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _stop_handlers() -> dict[int, Any]:
    """The handlers of :data:`_STOP_SIGNALS` now, as an example's start finds them
    (SIGTERM's is the build's own once it installed one, whatever the example found)."""
    handlers = {signum: signal.getsignal(signum) for signum in _STOP_SIGNALS}
    if _our_sigterm is not None:
        handlers[signal.SIGTERM] = _our_sigterm
    return handlers


def _reclaim_stop_signals(before: dict[int, Any]) -> list[str]:
    """An example that changed how the build stops (ignored Ctrl-C or SIGTERM, or set its
    own handler) must not leave the rest of the build deaf to them: the handlers it found
    go back after it. The undo of the example's change, beside the build's own handlers
    above. Returns the names of the signals whose handler went back (``["SIGINT"]``),
    which the example's progress line says."""
    if threading.current_thread() is not threading.main_thread():
        return []
    changed = []
    for signum, handler in before.items():
        if handler is None or signal.getsignal(signum) == handler:
            continue  # None: a handler not set from Python, which Python cannot put back
        signal.signal(signum, handler)
        changed.append(signal.Signals(signum).name)
    return changed


def signals_text(example_id: str, changed: list[str]) -> str:
    """The one line saying an example changed how the build stops, and that it was undone:
    ``"docsaccel: a.py changed the handler of SIGINT; the build's was put back, so the
    build can still be stopped"``."""
    return (
        f"docsaccel: {example_id} changed the handler of {' and '.join(changed)}; "
        "the build's was put back, so the build can still be stopped"
    )


def _on_sigterm(previous: Any) -> None:
    # One fault, one ERROR line: the unfinished build's says it was terminated and where
    # its report is (:func:`ending_why`); this one only when no build was left unfinished.
    # The workers of a parallel build and anything the examples started end with it.
    unfinished = end_of_process(
        None,
        why=stopped_by(signal.SIGTERM),
        every_process=True,
        build_why=TERMINATED,
    )
    if not unfinished:
        logger.error(f"docsaccel: the build's process ended: {TERMINATED}")
        show_pending_logs()
    if callable(previous):
        previous(signal.SIGTERM, None)
        return
    # End with the signal's own status, as the build would have without the plugin; a
    # process started since the examples' were ended (a pool replacing its workers as they
    # ended) must not outlive it.
    kill_started()
    signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)
    os.kill(os.getpid(), signal.SIGTERM)


# --- What examples leave behind ---------------------------------------------------------

# Example id -> what it left: non-daemon threads, and whether it added exit handlers.
_left: dict[str, tuple[list[threading.Thread], bool]] = {}
# ``sys.last_value`` as the last example found and left it.
_last_value_seen: object = None

# Which exit handlers run now. Exit handlers run last registered first, so a marker
# registered just after the handlers an example added runs just before them: the last
# marker that ran names whose handlers run (``None``: handlers no example registered).
# _NO_MARKER: none ran yet (the handlers running were registered after the last marker,
# or none runs).
_NO_MARKER = object()
_handlers_running: object = _NO_MARKER
# ``atexit._ncallbacks()`` just after the last marker was registered.
_handlers_marked = -1


def _handlers_of(example_id: str | None) -> None:
    """The marker: the exit handlers that run after it are ``example_id``'s (in a worker,
    the build's process is told too: it cannot see this one's markers run)."""
    global _handlers_running
    _handlers_running = example_id
    if example_id is not None and not builds_here():
        _tell({"id": example_id, "running_handlers": True})


def _mark_handlers(example_id: str | None) -> None:
    """Register the marker of the handlers registered since the last one (``example_id``'s,
    or ``None``: the build's, ``conf.py``'s, a library's)."""
    global _handlers_marked
    atexit.register(_handlers_of, example_id)
    _handlers_marked = atexit._ncallbacks()


class ExampleMark(NamedTuple):
    """What :func:`after_example` compares with what an example left: the threads, the
    number of exit handlers and the handlers of the signals that stop the build, as the
    example's start found them."""

    threads: frozenset[int | None]
    exit_handlers: int
    stop_handlers: dict[int, Any]


def before_example() -> ExampleMark:
    """The threads, exit handlers and stop signals' handlers before an example runs."""
    global _last_value_seen
    _last_value_seen = getattr(sys, "last_value", None)
    if atexit._ncallbacks() != _handlers_marked:
        _mark_handlers(None)  # those registered since are no example's
    idents = frozenset(t.ident for t in threading.enumerate())
    return ExampleMark(idents, atexit._ncallbacks(), _stop_handlers())


def after_example(example_id: str, mark: ExampleMark) -> list[str]:
    """Note the non-daemon threads and exit handlers the example added (in this process),
    and put the build's SIGINT and SIGTERM handlers back if the example changed them:
    returns the names of those it changed (:func:`signals_text` says it)."""
    global _last_value_seen
    _last_value_seen = getattr(sys, "last_value", None)
    changed = _reclaim_stop_signals(mark.stop_handlers)
    idents, handlers = mark.threads, mark.exit_handlers
    threads = [
        t for t in threading.enumerate() if t.ident not in idents and not t.daemon and t.is_alive()
    ]
    added_handlers = atexit._ncallbacks() > handlers
    if added_handlers:
        _mark_handlers(example_id)
    if threads or added_handlers:
        _left[example_id] = (threads, added_handlers)
    return changed


@dataclasses.dataclass(frozen=True)
class Stuck:
    """What holds a finished build's process from ending, as far as this process can tell.

    ``culprits``: the examples known to hold it, each with what it left (a thread it
    started still runs; the exit handler running now is one it registered).
    ``suspects``: when no example is known to hold it, those that left something (an
    exit handler that already ran, a thread since ended): none is blamed, none is trusted.
    """

    culprits: dict[str, str]
    suspects: list[str]
    #: One line saying what holds the process.
    text: str


#: What holds a process whose exit handler, registered by an example, runs now.
_HANDLER_RUNS = "an exit handler it registered did not return"


def stuck(workers: Mapping[str, tuple[int, str]] | None = None) -> Stuck:
    """What holds this process now (called once it should have ended). ``workers``
    (:func:`left_in_workers`): the examples that left threads running in a worker of a
    parallel gallery; one whose worker still runs holds this process, which waits for it.
    """
    culprits = {}
    for example_id, (threads, _) in sorted(_left.items()):
        alive = [t.name for t in threads if t.is_alive()]
        if alive:
            culprits[example_id] = f"it left {_threads_running(alive)}"
    running_workers = {pid for pid, _ in descendants()}
    for example_id, (pid, left) in sorted((workers or {}).items()):
        if pid in running_workers and example_id not in culprits:
            culprits[example_id] = f"{left} (in worker process {pid}, which did not end)"
    running = _handlers_running
    if not culprits and isinstance(running, str):
        culprits[running] = _HANDLER_RUNS
    if culprits:
        text = "; ".join(f"{example_id}: {why}" for example_id, why in culprits.items())
        return Stuck(culprits, [], text)
    suspects = sorted(_left)
    if running is None:
        what = "an exit handler no example registered did not return"
    else:
        what = "no example's thread runs and no example's exit handler is known to be running"
    if suspects:
        what += f" (examples that left threads or exit handlers: {', '.join(suspects)})"
    return Stuck({}, suspects, what)


def tell_build(folder: str | os.PathLike[str], example_id: str) -> None:
    """In a worker of a parallel gallery (not the build's process): note in ``folder``
    (``left-<pid>.jsonl``, :func:`docsaccel.layout.left_files`) what ``example_id`` left
    that may keep this worker from ending (threads running, exit handlers), so the build's
    process, which waits for its workers as it ends, can blame it (:func:`left_in_workers`).
    """
    global _tell_folder
    _, handlers = _left.get(example_id, ([], False))
    if builds_here() or not (handlers or left_by(example_id)):
        return
    _tell_folder = os.fspath(folder)
    _tell({"id": example_id, "left": left_by(example_id), "handlers": handlers})


#: Where this worker tells the build's process what its examples left (:func:`tell_build`).
_tell_folder: str | None = None


def _tell(said: dict[str, Any]) -> None:
    """Append one line of what this worker's examples left (one ``write``, appended)."""
    if _tell_folder is None:
        return
    line = json.dumps({**said, "pid": os.getpid()}) + "\n"
    path = os.path.join(_tell_folder, f"{layout.LEFT_PREFIX}{os.getpid()}.jsonl")
    with contextlib.suppress(OSError), open(path, "a", encoding="utf-8") as stream:
        stream.write(line)


def left_in_workers(folder: str | os.PathLike[str]) -> dict[str, tuple[int, str]]:
    """What holds the workers of a parallel gallery, as they said (:func:`tell_build`):
    ``{example id: (worker pid, what it left)}``: the examples that left threads running,
    and in each worker, the example whose exit handlers run now (the last marker that ran
    there, as :func:`stuck` tells it in its own process)."""
    threads: dict[str, tuple[int, str]] = {}
    handlers: dict[int, tuple[str, str]] = {}
    for path in layout.left_files(folder):
        with contextlib.suppress(OSError, UnicodeDecodeError):
            for line in path.read_text(encoding="utf-8").splitlines():
                with contextlib.suppress(ValueError, TypeError, KeyError, AttributeError):
                    said = json.loads(line)
                    example_id, pid = str(said["id"]), int(said["pid"])
                    if said.get("running_handlers"):
                        handlers[pid] = (example_id, _HANDLER_RUNS)
                    elif isinstance(said.get("left"), str):
                        threads[example_id] = (pid, f"it left {said['left']}")
    for pid, (example_id, what) in handlers.items():
        threads.setdefault(example_id, (pid, what))
    return threads


def _still_held(workers: Mapping[str, tuple[int, str]], wait: float) -> dict[str, tuple[int, str]]:
    """Of ``workers`` (:func:`left_in_workers`), those whose worker still runs after up to
    ``wait`` more seconds: a worker that was only slow to end (its exit handlers, on a
    busy machine) is not blamed; one held by what an example left never ends."""
    deadline = time.monotonic() + wait
    while True:
        running = {pid for pid, _ in descendants()}
        held = {k: v for k, v in workers.items() if v[0] in running}
        if not held or time.monotonic() >= deadline:
            return held
        time.sleep(0.05)


def left_by(example_id: str) -> str | None:
    """The threads ``example_id`` left running (``"thread running: poller"``), or
    ``None``: until the build's process ends, its status is provisional
    (:func:`bound_exit` fails it if they hold the process). Exit handlers are not named:
    libraries register them on import (matplotlib's, joblib's), and nearly all return.
    """
    threads, _ = _left.get(example_id, ([], False))
    alive = [t.name for t in threads if t.is_alive()]
    return _threads_running(alive) if alive else None


def _threads_running(names: list[str]) -> str:
    """The threads ``names`` an example left, said as their number wants."""
    return f"{'thread' if len(names) == 1 else 'threads'} running: {', '.join(names)}"


def leftovers() -> list[str]:
    """What examples left that can still hold the process: one description each."""
    found = []
    for example_id, (threads, handlers) in sorted(_left.items()):
        alive = [t.name for t in threads if t.is_alive()]
        if alive:
            found.append(f"{example_id} left {_threads_running(alive)}")
        elif handlers:
            found.append(f"{example_id} registered exit handler(s)")
    return found


#: The status the exit bound ends the process with, once it ends the workers holding it.
_bound_status: int | None = None


def bound_exit(
    grace: float,
    status: int = EXIT_STATUS,
    on_stuck: Callable[[Stuck], bool | None] | None = None,
    workers: str | os.PathLike[str] | None = None,
    after: str = "the build",
) -> bool:
    """End this process with ``status`` if it has not ended ``grace`` seconds from now.

    Only when an example left a thread running or registered an exit handler, here or in
    a worker of a parallel gallery (``workers``: the folder where they say it,
    :func:`tell_build`; this process waits for its workers as it ends); the timer is a
    daemon thread, so a process that ends in time ends as it would have. Before it ends
    the process, ``on_stuck`` is told what holds it (:func:`stuck`): the build it ran must
    not be kept as passing (it returns ``True`` when its build's log said it already: the
    bound's ERROR line is then left out); then the workers still running are ended, so none is left
    behind, spinning. ``after``: what the grace runs from, as the message says it
    (``"the build"``, ``"it was stopped"``). Returns whether it armed the bound: then
    the process's end, not the build's, gives the build its last word.
    """
    in_workers = workers is not None and bool(layout.left_files(workers))
    if not leftovers() and not in_workers:
        return False
    if atexit._ncallbacks() != _handlers_marked:
        _mark_handlers(None)  # registered since the last example: no example's

    def stop(wait: bool = True) -> None:
        if wait:
            time.sleep(grace)
        held = None
        if in_workers and workers is not None:
            # Read now: a worker says whose exit handlers run as it ends, after the build.
            held = _still_held(left_in_workers(workers), grace)
        found = stuck(held)
        said = False
        if on_stuck is not None:
            try:
                said = bool(on_stuck(found))
            except Exception as exc:  # the process ends regardless
                print(f"ERROR: docsaccel: {exc!r}", file=sys.__stderr__, flush=True)
        if not said:
            print(
                f"ERROR: docsaccel: the build's process had not ended {grace:g} s after "
                f"{after}: {found.text}. Ended with status {status}; an example must stop "
                "what it starts.",
                file=sys.__stderr__,
                flush=True,
            )
        if in_workers:
            global _bound_status
            _bound_status = status  # before the workers end, and the process with them
            end_started(set())
        kill_started()  # a pool an example left replaces the workers that ended
        real_exit(status)

    try:
        threading.Thread(target=stop, name="docsaccel-exit-bound", daemon=True).start()
    except RuntimeError:
        # The interpreter's exit has begun (Ctrl-C while a thread an example left runs):
        # Python 3.12+ starts no thread then. The grace is waited out in the thread the
        # interpreter would wait for that one in, once the end-of-process callbacks ran
        # (the report first: :func:`_before_threads_joined`).
        _bounds_at_exit.append(lambda: _wait_out(grace, stop))
    return True


#: The exit bounds armed once no thread could start (:func:`bound_exit`).
_bounds_at_exit: list[Callable[[], None]] = []


def _wait_out(grace: float, stop: Callable[[bool], None]) -> None:
    """Wait up to ``grace`` for what examples left to let the process end, then ``stop``."""
    deadline = time.monotonic() + grace
    while leftovers() and time.monotonic() < deadline:
        time.sleep(0.05)
    if leftovers():
        stop(False)
