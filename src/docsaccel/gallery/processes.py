"""The processes an example started, found and ended when the example ends.

The design, in full: the budgets guide's *Design* section.

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
import sys
import time

from docsaccel.contract import MULTIPROCESSING_HELPERS
from docsaccel.parent_death import end_with_parent
from docsaccel.process_stat import read_proc
from docsaccel.process_stat import state_and_start as _stat

__all__ = [
    "Process",
    "branch_of",
    "children",
    "descendants",
    "end_processes",
    "end_started",
    "end_with_build",
    "kill_started",
    "new_since",
    "process_name",
    "read_proc",
    "reap_ended",
    "unreaped_children",
]

# A process is named by its pid and its start time, so a pid the kernel reused for an
# unrelated process is never taken for one seen before.
Process = tuple[int, int]


def _parent(pid: int) -> int | None:
    """The parent of ``pid``, None when it is gone."""
    text = read_proc(f"/proc/{pid}/stat")
    fields = text[text.rfind(b")") + 2 :].split()
    return int(fields[1]) if len(fields) > 1 else None


def branch_of(ancestor: int, pid: int | None = None) -> int | None:
    """The child of ``ancestor`` that ``pid`` (default: this process) is or descends
    from; None when ``pid`` does not descend from ``ancestor``.

    >>> branch_of(os.getppid()) == os.getpid()
    True
    >>> branch_of(os.getpid()) is None
    True
    """
    current: int | None = os.getpid() if pid is None else pid
    while current is not None and current > 1:
        parent = _parent(current)
        if parent == ancestor:
            return current
        current = parent
    return None


def children(pid: int) -> list[int]:
    """The pids of the children of ``pid`` (of each of its threads)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    found = []
    for task in tasks:
        found += [int(child) for child in read_proc(f"/proc/{pid}/task/{task}/children").split()]
    return found


def descendants(pid: int | None = None) -> set[Process]:
    """The running (not zombie) descendants of ``pid`` (default: this process), but
    ``multiprocessing``'s helpers (see the budgets guide's *Design* section)."""
    found: set[Process] = set()
    waiting = children(os.getpid() if pid is None else pid)
    seen: set[int] = set()
    while waiting:
        child = waiting.pop()
        if child in seen:
            continue
        seen.add(child)
        stat = _stat(child)
        if stat is not None and stat[0] not in ("Z", "X") and not _is_helper(child):
            found.add((child, stat[1]))
        waiting += children(child)
    return found


def unreaped_children() -> set[Process]:
    """This process's children that have ended and wait to be reaped (zombies)."""
    found: set[Process] = set()
    for child in children(os.getpid()):
        stat = _stat(child)
        if stat is not None and stat[0] == "Z":
            found.add((child, stat[1]))
    return found


def process_name(pid: int) -> str:
    """The command name of ``pid`` (``/proc/<pid>/comm``), ``""`` when it is gone."""
    return read_proc(f"/proc/{pid}/comm").decode("utf-8", "replace").strip()


def _is_helper(pid: int) -> bool:
    command = read_proc(f"/proc/{pid}/cmdline").replace(b"\0", b" ").decode("utf-8", "replace")
    return any(helper in command for helper in MULTIPROCESSING_HELPERS)


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
                if signum == signal.SIGTERM:
                    # One stopped by _freeze acts on the SIGTERM only once it runs again.
                    os.kill(process[0], signal.SIGCONT)


#: How many rounds :func:`end_started` ends processes started while it ends the previous
#: ones, and how many looks :func:`_freeze` takes at most: a thread of the build that
#: starts processes without end cannot keep the build from ending.
_ROUNDS = 10
_LOOKS = 200
#: How many looks in a row must find nothing new: a process being started as one looks
#: (a fork under way) shows at the next.
_QUIET_LOOKS = 2


def _freeze(before: set[Process]) -> set[Process]:
    """Stop (``SIGSTOP``) every descendant not in ``before``, looking again until nothing
    new shows: a stopped process starts nothing more, and a pool does not replace a worker
    that is stopped (it does one that ended). Returns those stopped."""
    frozen: set[Process] = set()
    quiet = 0
    for _ in range(_LOOKS):
        found = descendants() - before - frozen
        if found:
            _signal(found, signal.SIGSTOP)
            frozen |= found
            quiet = 0
            continue
        quiet += 1
        if quiet >= _QUIET_LOOKS:
            break
        time.sleep(0.01)
    return frozen


def end_started(before: set[Process], wait: float = 2.0) -> set[Process]:
    """End every descendant of this process not in ``before`` (as :func:`end_processes`
    does), with those they started, and those started meanwhile to replace the ones
    ended (a pool starts a new worker for each worker that ends). Returns those killed.
    """
    killed: set[Process] = set()
    for _ in range(_ROUNDS):
        frozen = _freeze(before)
        if not frozen:
            break
        killed |= end_processes(frozen, wait)
    reap_ended()
    return killed


def reap_ended() -> None:
    """Have ``multiprocessing`` reap the processes it started that have ended, now rather
    than at the next process it starts (``active_children``), so that the kernel counts
    their peak in this process's reaped children before the next example is measured,
    not during it (memory_profiler's monitor, which ``show_memory`` starts for each code
    block, is killed with the code it measured and left unreaped).

    Through ``multiprocessing`` itself: reaped behind its back, a process it started
    would look alive to it for good.
    """
    started = sys.modules.get("multiprocessing")
    if started is not None:
        started.active_children()


def kill_started(before: set[Process] | None = None) -> None:
    """``SIGKILL`` every descendant of this process not in ``before``, as the process is
    about to end: all are stopped first, so none is replaced once it is killed (the
    thread of a pool that would replace it does not run again before the process ends,
    as long as nothing between here and its end lets other threads run)."""
    frozen = _freeze(before or set())
    # Nor does the interpreter hand that thread a turn between the kills: this process
    # ends next, so the switch interval has nothing else left to serve.
    sys.setswitchinterval(1e6)
    for pid, _ in frozen:
        # Stopped, it cannot have ended meanwhile: no look at /proc between the kills,
        # which would let that thread run.
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


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


def end_with_build(build_pid: int) -> bool:
    """Make this worker of a parallel build (a joblib worker, whose parent is the build's
    process ``build_pid``) end when the build's process does (:mod:`docsaccel.parent_death`):
    only ever this process, never one this code cannot prove is the build's worker.
    Returns whether it is set.

    Linux only; elsewhere, in the build's own process and in a process whose parent is
    not the build's (a worker's worker), nothing is set. A build that ended before the
    request took ends this process now, as the request would have.
    """
    if os.getpid() == build_pid:
        return False
    return end_with_parent(build_pid)
