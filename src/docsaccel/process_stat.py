"""A process named by its pid and its start time, read from ``/proc``: a pid the kernel
reused for an unrelated process is never taken for the one seen before. For the plugin,
which ends the processes an example left, and for the readers of a report, which tell a
command still running from one killed outright.

>>> started = start_time(os.getpid())
>>> runs(os.getpid(), started)
True
>>> runs(os.getpid(), started + 1)
False
"""

from __future__ import annotations

import os

__all__ = ["read_proc", "runs", "start_time", "state_and_start"]


def read_proc(path: str) -> bytes:
    """The first 64 KiB of a ``/proc`` file, ``b""`` if it cannot be read (raw ``os`` calls:
    a Python file object costs four more system calls, and these are read often)."""
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


def state_and_start(pid: int) -> tuple[str, int] | None:
    """(state, start time in clock ticks since boot) of ``pid``, None when it is gone."""
    text = read_proc(f"/proc/{pid}/stat")
    # The command name is in parentheses and may hold spaces or parentheses itself.
    fields = text[text.rfind(b")") + 2 :].split()
    if len(fields) < 20:
        return None
    return fields[0].decode("ascii", "replace"), int(fields[19])


def start_time(pid: int) -> int | None:
    """When ``pid`` started (clock ticks since boot), None when it is gone or where there
    is no ``/proc``."""
    found = state_and_start(pid)
    return None if found is None else found[1]


def runs(pid: int, started: int) -> bool:
    """Whether ``pid`` runs (a zombie does not) and is the process that started at
    ``started`` (:func:`start_time`)."""
    found = state_and_start(pid)
    return found is not None and found[1] == started and found[0] not in ("Z", "X")
