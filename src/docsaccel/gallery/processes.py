"""The processes an example started, found and ended when the example ends.

An example that starts a server, a simulator or a ``sleep`` and never stops it leaves a
process behind that outlives the example, and then the build (a CI job waiting for its
children never ends). The hook takes :func:`descendants` of its process when an example
starts and again when it ends, however it ends; :func:`end_processes` stops the new ones:
``SIGTERM``, a short wait, then ``SIGKILL``.

Linux only (``/proc/<pid>/task/<tid>/children``); elsewhere :func:`descendants` finds
nothing and nothing is ended. A process that detached itself from its parent (a double
fork, a daemon) is not a descendant any more and is not found.

Example: a child left sleeping is found and ended.

>>> import subprocess
>>> import sys
>>> before = descendants()
>>> child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
>>> started = new_since(before)
>>> [pid for pid, _ in started] == [child.pid]
True
>>> end_processes(started)  # SIGTERM was enough: none had to be killed
set()
>>> new_since(before)
set()
>>> _ = child.wait()
"""

from __future__ import annotations

import contextlib
import os
import signal
import time

__all__ = ["descendants", "end_processes", "new_since"]

# A process is named by its pid and its start time, so a pid the kernel reused for an
# unrelated process is never taken for one seen before.
Process = tuple[int, int]


def _read(path: str) -> bytes:
    try:
        handle = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return b""
    try:
        return os.read(handle, 1 << 16)
    except OSError:
        return b""
    finally:
        os.close(handle)


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, start time) of ``pid``, None when it is gone."""
    text = _read(f"/proc/{pid}/stat")
    # The command name is in parentheses and may hold spaces or parentheses itself.
    fields = text[text.rfind(b")") + 2 :].split()
    if len(fields) < 20:
        return None
    return fields[0].decode("ascii", "replace"), int(fields[19])


def _children(pid: int) -> list[int]:
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    found = []
    for task in tasks:
        found += [int(child) for child in _read(f"/proc/{pid}/task/{task}/children").split()]
    return found


def descendants(pid: int | None = None) -> set[Process]:
    """The running (not zombie) descendants of ``pid`` (default: this process)."""
    found: set[Process] = set()
    waiting = _children(os.getpid() if pid is None else pid)
    seen: set[int] = set()
    while waiting:
        child = waiting.pop()
        if child in seen:
            continue
        seen.add(child)
        stat = _stat(child)
        if stat is not None and stat[0] not in ("Z", "X"):
            found.add((child, stat[1]))
        waiting += _children(child)
    return found


def new_since(before: set[Process]) -> set[Process]:
    """The descendants of this process that were not in ``before``."""
    return descendants() - before


def _alive(process: Process) -> bool:
    pid, started = process
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)  # reap our own children, so they do not linger as zombies
    stat = _stat(pid)
    return stat is not None and stat[1] == started and stat[0] not in ("Z", "X")


def _signal(processes: set[Process], signum: int) -> None:
    for process in processes:
        if _alive(process):
            with contextlib.suppress(OSError):
                os.kill(process[0], signum)


def end_processes(processes: set[Process], wait: float = 2.0) -> set[Process]:
    """``SIGTERM`` ``processes``, wait up to ``wait`` seconds, ``SIGKILL`` what is left.

    Returns the processes that had to be killed.
    """
    if not processes:
        return set()
    _signal(processes, signal.SIGTERM)
    end = time.monotonic() + wait
    left = {p for p in processes if _alive(p)}
    while left and time.monotonic() < end:
        time.sleep(0.02)
        left = {p for p in left if _alive(p)}
    _signal(left, signal.SIGKILL)
    for process in left:
        for _ in range(50):
            if not _alive(process):
                break
            time.sleep(0.01)
    return left
