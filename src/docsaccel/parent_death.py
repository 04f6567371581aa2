"""A child process that ends when its parent does, however the parent ends.

A parent killed outright (``SIGKILL``, the out-of-memory killer) runs no code to stop its
children: a shard's ``sphinx-build`` or a parallel build's worker would run on, holding
memory and writing into folders the next build uses. On Linux the child asks the kernel
for ``SIGKILL`` as its parent ends (``prctl(PR_SET_PDEATHSIG)``); this module is the one
place that asks. Elsewhere nothing is asked and every function says so by its result.

The kernel ties the request to the thread that started the child: a parent starts the
child from a thread that outlives it (one that waits for it).

Example: a child started to end with this process (on Linux; elsewhere, a plain one).

>>> import subprocess
>>> import sys
>>> command = [sys.executable, "-c", "pass"]
>>> subprocess.run(command, preexec_fn=ending_with_this_process(), check=False).returncode
0
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Callable

__all__ = ["end_with_parent", "ending_with_this_process"]

#: ``prctl``'s request to get a signal when the parent ends (``<linux/prctl.h>``).
_PR_SET_PDEATHSIG = 1


def _prctl() -> Callable[..., int] | None:
    """The C library's ``prctl``, or None where there is none (not Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # no C library to call, or no prctl in it
        return None


def _ask(prctl: Callable[..., int], parent_pid: int) -> bool:
    if prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        return False
    if os.getppid() != parent_pid:  # the parent ended before the request took
        os.kill(os.getpid(), signal.SIGKILL)
    return True


def end_with_parent(parent_pid: int) -> bool:
    """Make this process end (``SIGKILL``) when its parent, ``parent_pid``, ends; a
    parent already gone ends it now, as the request would have. Returns whether it is
    asked: never when ``parent_pid`` is not this process's parent."""
    prctl = _prctl()
    if prctl is None or os.getppid() != parent_pid:
        return False
    return _ask(prctl, parent_pid)


def ending_with_this_process() -> Callable[[], None] | None:
    """A ``preexec_fn`` for :class:`subprocess.Popen` making the child end with this
    process; None where that cannot be asked.

    ``prctl`` is looked up here, in the parent: between ``fork`` and ``exec`` of a parent
    with threads, the child must not load a library (a lock another thread held at the
    fork stays held), only call a function already found.
    """
    prctl = _prctl()
    if prctl is None:
        return None
    parent_pid = os.getpid()

    def ask() -> None:
        _ask(prctl, parent_pid)

    return ask
