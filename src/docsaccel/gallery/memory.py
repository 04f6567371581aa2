"""What an example costs in memory: measured for every example, sampled while it runs.

The design, in full: the budgets guide's *Design* section.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import resource
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from docsaccel.gallery.processes import (
    Process,
    branch_of,
    children,
    descendants,
    read_proc,
    unreaped_children,
)

__all__ = [
    "COLLECT_ABOVE",
    "SAMPLE_SECONDS",
    "MemoryMeter",
    "Sample",
    "build_bytes",
    "hard_line",
    "own_peak_bytes",
    "pss_bytes",
    "reset_peak",
    "rss_bytes",
]

#: How often a running example's memory is sampled when a limit applies to it: the
#: ceiling stops an example well within a second of its crossing.
SAMPLE_SECONDS = 0.05
#: ``retained_bytes``: a garbage collection runs when the example grew its process by
#: more than this; less is recorded as measured.
COLLECT_ABOVE = 4 << 20
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def reset_peak() -> None:
    """Make the kernel's high-water mark of this process start over (Linux)."""
    with contextlib.suppress(OSError):
        control = os.open("/proc/self/clear_refs", os.O_WRONLY | os.O_CLOEXEC)
        try:
            os.write(control, b"5")
        finally:
            os.close(control)


def _status(pid: int | str) -> tuple[int | None, int | None]:
    """``(VmRSS, VmHWM)`` of ``pid`` in bytes (None: gone, or a zombie)."""
    rss = peak = None
    for line in read_proc(f"/proc/{pid}/status").splitlines():
        if line.startswith(b"VmRSS:"):
            rss = int(line.split()[1]) * 1024
        elif line.startswith(b"VmHWM:"):
            peak = int(line.split()[1]) * 1024
    return rss, peak


def own_peak_bytes() -> int | None:
    """This process's resident high-water mark since the last :func:`reset_peak`."""
    with contextlib.suppress(ValueError, IndexError):
        peak = _status("self")[1]
        if peak is not None:
            return peak
    try:
        return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024
    except (OSError, ValueError):
        return None


def rss_bytes(pid: int | str = "self") -> int:
    """Resident bytes of ``pid`` now (0 when gone): the cheapest read, ``statm``."""
    fields = read_proc(f"/proc/{pid}/statm").split()
    return int(fields[1]) * _PAGE if len(fields) > 1 else 0


def _smaps(pid: int | str) -> dict[bytes, int]:
    """The sizes of ``/proc/<pid>/smaps_rollup`` in bytes (``{}``: gone, or no such file)."""
    found = {}
    for line in read_proc(f"/proc/{pid}/smaps_rollup").splitlines()[1:]:
        name, _, rest = line.partition(b":")
        size = rest.split()
        if size and size[0].isdigit():
            found[name] = int(size[0]) * 1024
    return found


def pss_bytes(pid: int | str = "self") -> int:
    """Resident bytes of ``pid`` now with each page counted once over all processes: a
    page ``n`` processes share counts ``1/n`` in each (``Pss``); :func:`rss_bytes` when the
    kernel does not say. It walks the process's pages: dearer than :func:`rss_bytes`."""
    return _smaps(pid).get(b"Pss") or rss_bytes(pid)


def _own_peak(peak: int | None, smaps: dict[bytes, int]) -> int | None:
    """A forked child's high-water mark less the pages it still shares (with the process
    it was forked from, which counts them)."""
    if peak is None or b"Rss" not in smaps:
        return peak
    private = smaps.get(b"Private_Clean", 0) + smaps.get(b"Private_Dirty", 0)
    return max(peak - (smaps[b"Rss"] - private), private)


def _tree(pid: int, measure: Callable[[int | str], int]) -> int:
    return measure(pid) + sum(measure(child) for child, _ in descendants(pid))


def build_bytes(build_pid: int | None = None) -> int:
    """What the build's processes hold now (``build_pid``, this process by default, and
    its descendants), each shared page counted once: the measure that decides whether
    the build is over its ceiling."""
    return _tree(os.getpid() if build_pid is None else build_pid, pss_bytes)


#: The meter of the example this process runs now: a fork is noted on it.
_measuring: MemoryMeter | None = None
_fork_hook = False


def _note_fork() -> None:
    """After ``os.fork`` in this process: what a child carries of it, for the reaped
    children. A child starts with this process's anonymous pages mapped; the file pages
    it maps only once it reads them (``statm``: resident less file-backed)."""
    meter = _measuring
    if meter is None:
        return
    # Not after every fork: there (a pool's workers, hundreds of pools in a loop) the read
    # costs the process a copy of each page it touches, shared with the child just made,
    # more than the fork itself. Read at the example's 1st, 2nd, 4th, 8th... fork and
    # once a sample interval: the least held over the reads is what a child carries at
    # the least (a process that shrank between two forks).
    meter.forks += 1
    now = time.monotonic()
    if meter.forks & (meter.forks - 1) and now - meter.fork_read_at < SAMPLE_SECONDS:
        return
    meter.fork_read_at = now
    fields = read_proc("/proc/self/statm").split()
    held = (int(fields[1]) - int(fields[2])) * _PAGE if len(fields) > 2 else 0
    meter.held_at_fork = held if meter.held_at_fork is None else min(meter.held_at_fork, held)


def _reaped_children_peak() -> int:
    """The largest high-water mark of any reaped child of this process, ever (bytes)."""
    return int(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) * 1024


def hard_line(ceiling: int, machine: int | None) -> int | None:
    """Where the ceiling's hard stop comes at once: halfway from the ceiling to the
    machine's memory; None (the grace alone) when the machine's is unknown or no more."""
    if machine is None or machine <= ceiling:
        return None
    return ceiling + (machine - ceiling) // 2


@dataclass(frozen=True)
class Sample:
    """Resident memory at one moment, in bytes."""

    #: The example's: its process and the processes it started.
    example: int
    #: The build's: the Sphinx process and all its descendants (the ceiling's measure).
    build: int
    #: This process's tree holds at least as much of the build's memory as any other
    #: process tree that runs examples (always so in a serial build): the one to stop.
    largest: bool


class MemoryMeter:
    """One example's memory, from its start (:meth:`start`) to its end (:meth:`finish`).

    A plain class rather than a dataclass: a meter is never compared, shown or copied.
    """

    def __init__(
        self,
        before: frozenset[Process],
        rss_before: int,
        reaped_before: int,
        gpu_before: int | None,
        command: bytes = b"",
        unreaped_before: frozenset[Process] = frozenset(),
    ) -> None:
        #: This process's descendants before the example: not the example's children.
        self.before = before
        self.rss_before = rss_before
        self.reaped_before = reaped_before
        #: The children that had ended, not yet reaped, when it started: not the example's.
        self.unreaped_before = unreaped_before
        #: CUDA bytes allocated when it started (None: CUDA was not in use then).
        self.gpu_before = gpu_before
        #: This process's command line: a child forked without ``exec`` has the same.
        self.command = command
        #: The least this process held when the example forked (None: it did not fork),
        #: as read at some of its forks (:func:`_note_fork`).
        self.held_at_fork: int | None = None
        self.forks = 0
        self.fork_read_at = 0.0
        #: The peak of each child process of the example, as last read.
        self.child_peaks: dict[Process, int] = {}
        self._lock = threading.Lock()

    @classmethod
    def start(cls, before: set[Process]) -> MemoryMeter:
        """Start measuring an example; ``before``: this process's descendants now."""
        rss = rss_bytes()
        reset_peak()
        command = read_proc("/proc/self/cmdline")
        global _measuring, _fork_hook
        if not _fork_hook and hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_parent=_note_fork)
            _fork_hook = True
        # Read before the kernel's mark: one reaped in between is then taken for theirs.
        unreaped = frozenset(unreaped_children())
        _measuring = meter = cls(
            frozenset(before), rss, _reaped_children_peak(), _gpu_start(), command, unreaped
        )
        return meter

    def _note_children(self, processes: set[Process], shared_once: bool = False) -> int:
        """Note the peaks of the example's live ``processes``; return their resident bytes
        (with ``shared_once``, each shared page counted once over all processes)."""
        total = 0
        for pid, started in processes - self.before:
            rss, peak = _status(pid)
            if rss is None:
                continue
            forked = bool(self.command) and read_proc(f"/proc/{pid}/cmdline") == self.command
            smaps = _smaps(pid) if forked or shared_once else {}
            if forked:
                peak = _own_peak(peak, smaps)
            total += (smaps.get(b"Pss") or rss) if shared_once else rss
            if peak is not None:
                with self._lock:
                    known = self.child_peaks.get((pid, started), 0)
                    self.child_peaks[(pid, started)] = max(peak, known)
        return total

    def sample(self, build_pid: int, shared_once: bool = False) -> Sample:
        """The memory now: the example's, and that of the build whose process is
        ``build_pid`` (this process in a serial build). Quick, a shared page counted in
        each process that maps it; with ``shared_once``, once (:func:`pss_bytes`)."""
        measure = pss_bytes if shared_once else rss_bytes
        own = measure("self")
        mine = descendants()
        example = own + self._note_children(mine, shared_once)
        tree = own + sum(measure(pid) for pid, _ in mine)
        if build_pid == os.getpid():
            return Sample(example, tree, largest=True)
        # This process's own branch of the build is the tree just measured: measured again
        # a moment later, a growing example would always look smaller than itself.
        branch = branch_of(build_pid)
        others = [_tree(child, measure) for child in children(build_pid) if child != branch]
        ours = tree if branch in (None, os.getpid()) else _tree(branch, measure)
        build = measure(build_pid) + ours + sum(others)
        return Sample(example, build, largest=tree >= max(others, default=0))

    def so_far(self) -> dict[str, int | None]:
        """The record's peak fields as they stand now (while the example still runs)."""
        own = own_peak_bytes()
        return {"peak_rss_bytes": own, "children_peak_bytes": self._children_peak(own or 0)}

    def _children_peak(self, own: int) -> int:
        with self._lock:
            seen = sum(self.child_peaks.values())
        reaped = _reaped_children_peak()
        if reaped <= self.reaped_before:
            return seen
        if not self.unreaped_before <= unreaped_children():
            # One of them was reaped since (by its owner, at its own time): the kernel
            # keeps one mark for all reaped children, which may now be that process's.
            return seen
        if self.held_at_fork is not None:
            # A child forked without exec counts the pages it shares with this process.
            return max(seen, reaped - self.held_at_fork)
        # Not above what this process held: it may be this process's own memory, which a
        # forked child carries until it runs its program (see the budgets guide's *Design* section).
        return max(seen, reaped if reaped > own else 0)

    def finish(self, live: set[Process]) -> dict[str, int | None]:
        """The record's memory fields; ``live``: this process's descendants now."""
        global _measuring
        if _measuring is self:
            _measuring = None
        self._note_children(live)
        fields: dict[str, int | None] = self.so_far()
        grown = rss_bytes() - self.rss_before
        cuda = _cuda()
        gpu_grown = 0 if cuda is None else _allocated(cuda) - (self.gpu_before or 0)
        if grown > COLLECT_ABOVE or gpu_grown > 0:
            _collect()
            grown = rss_bytes() - self.rss_before
        fields["retained_bytes"] = max(grown, 0)
        if cuda is not None:
            fields["gpu_peak_bytes"] = _per_device(cuda, cuda.max_memory_allocated)
            fields["gpu_retained_bytes"] = max(_allocated(cuda) - (self.gpu_before or 0), 0)
        return fields


def _collect() -> None:
    gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Any:
    """glibc's ``malloc_trim`` (hands freed heap memory back), or None elsewhere."""
    try:
        import ctypes

        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError, ImportError):
        return None


# --- CUDA, through torch's documented API only, and only if the example imported torch.


def _cuda() -> Any:
    """``torch.cuda`` when torch is imported and CUDA is initialised, else None."""
    torch = sys.modules.get("torch")
    cuda = getattr(torch, "cuda", None)
    try:
        return cuda if cuda is not None and cuda.is_initialized() else None
    except Exception:  # a half-imported torch: no CUDA to measure
        return None


def _per_device(cuda: Any, measure: Any) -> int:
    return sum(int(measure(device)) for device in range(cuda.device_count()))


def _allocated(cuda: Any) -> int:
    return _per_device(cuda, cuda.memory_allocated)


def _gpu_start() -> int | None:
    """Start CUDA's peak over (when in use); the bytes allocated now."""
    cuda = _cuda()
    if cuda is None:
        return None
    for device in range(cuda.device_count()):
        cuda.reset_peak_memory_stats(device)
    return _allocated(cuda)
