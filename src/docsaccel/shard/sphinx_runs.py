"""The ``sphinx-build`` processes the shard commands start, and how an interrupt stops them.

Each build runs in a process group of its own, so Ctrl-C (or ``SIGTERM``) reaches the
shard command alone, which passes it on with :func:`stop_all`: the signal it got to
every group, which Sphinx answers by stopping the running example and ending the build,
its log naming that signal; ``SIGTERM`` (after a ``SIGINT``) to those still running
after :data:`STOP_GRACE_S`, ``SIGKILL`` after as long again. Until :func:`resume`, no
build starts (a shard still copying the project stops there), so a command stops in
seconds with none of its builds left running. A command killed outright (``SIGKILL``),
which can stop nothing, takes its builds with it (:mod:`docsaccel.parent_death`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from typing import IO

from docsaccel.contract import stop_signal
from docsaccel.parent_death import ending_with_this_process
from docsaccel.shard.plan import ShardError

__all__ = [
    "BUILDERS",
    "DEFAULT_BUILDER",
    "STOP_GRACE_S",
    "Stopped",
    "check_running",
    "cores",
    "resume",
    "run_build",
    "stop_all",
]

#: The Sphinx builders the shard commands build with (``--builder``): those of a site of
#: HTML pages, which the merge publishes as a serial build of that builder does.
BUILDERS = ("html", "dirhtml")
#: The builder of the shard commands when none is given.
DEFAULT_BUILDER = "html"

#: How long a build has to end after each signal before the next, harder one.
STOP_GRACE_S = 5.0

_lock = threading.Lock()
_running: set[subprocess.Popen[bytes]] = set()
_stopping = threading.Event()


class Stopped(ShardError):
    """Work refused because the command is being stopped (an interrupt)."""


def cores() -> int:
    """The cores this process may run on: a build per core at most runs at once, as more
    would only share them."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def check_running() -> None:
    """Raise :class:`Stopped` once a stop has begun: work that would start a build ends."""
    if _stopping.is_set():
        raise Stopped("stopped by an interrupt")


def run_build(command: Sequence[str], env: Mapping[str, str], stream: IO[str] | None = None) -> int:
    """Run ``command`` in a process group of its own; its exit code. Output to ``stream``
    (``None``: this process's). Interrupted in the main thread, it stops the build first."""
    with _lock:
        check_running()
        process = subprocess.Popen(
            list(command),
            env=dict(env),
            stdout=stream,
            stderr=stream,
            start_new_session=True,
            preexec_fn=ending_with_this_process(),
        )
        _running.add(process)
    try:
        return process.wait()
    except KeyboardInterrupt as exc:
        stop_all(stop_signal(exc))
        resume()
        raise
    finally:
        with _lock:
            _running.discard(process)


def stop_all(signum: int = signal.SIGINT, grace: float = STOP_GRACE_S) -> None:
    """Stop every build this process runs (see the module docstring) and wait for them,
    ``signum`` being the signal that stops this process (:func:`.contract.stop_signal`).
    A second Ctrl-C meanwhile is ignored: the stop is under way and ends within
    ``3 * grace`` seconds."""
    _stopping.set()
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if in_main else None
    try:
        for sent in dict.fromkeys((signum, signal.SIGTERM, signal.SIGKILL)):
            with _lock:
                running = [process for process in _running if process.poll() is None]
            if not running:
                return
            for process in running:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, sent)
            deadline = time.monotonic() + grace
            for process in running:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(timeout=max(0.0, deadline - time.monotonic()))
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def resume() -> None:
    """Allow builds again, once the work the stop ended has returned."""
    _stopping.clear()
