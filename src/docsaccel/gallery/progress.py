"""Live progress of the gallery in the build log: counts, expected times, an estimate.

The design, in full: the reports guide's *Design* section.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from sphinx.util import logging

from docsaccel import sg_compat
from docsaccel.budgets import format_measured, format_seconds
from docsaccel.contract import (
    BY_CEILING,
    BY_MEMORY,
    EXECUTED,
    EXPECTED_FAILURE,
    NEAR_BUDGET,
    REUSABLE,
    is_unfinished,
    status_text,
    unfinished_why,
)
from docsaccel.examples import Example
from docsaccel.gallery.process_end import signals_text
from docsaccel.memory_sizes import format_size

__all__ = [
    "NearBudgetWatch",
    "Progress",
    "ProgressChannel",
    "expected_seconds",
    "history_medians",
    "line_status",
    "remove_stale_pipes",
    "start_progress",
]

logger = logging.getLogger(__name__)

# The Progress of each channel in the process that created it (the Sphinx process).
_LOCAL: dict[str, Progress] = {}
_STOP = b"{}\n"
# Longer events are dropped: a pipe write is atomic up to PIPE_BUF (4096 on Linux).
_MAX_EVENT = 4000


class ProgressChannel:
    """Where the hook sends an example's events, from whichever process runs it.

    A plain class rather than a dataclass: a channel is never compared or shown, and it
    travels to workers as its pipe and owner alone (:meth:`__getstate__`).
    """

    def __init__(self, pipe: str, owner_pid: int) -> None:
        self.pipe = pipe
        self.owner_pid = owner_pid
        self._handle: int | None = None
        self._handle_pid: int | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"pipe": self.pipe, "owner_pid": self.owner_pid}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(**state)  # type: ignore[misc]

    def send(self, **event: Any) -> None:
        local = _LOCAL.get(self.pipe) if os.getpid() == self.owner_pid else None
        if local is not None:
            local.handle(event)
            return
        payload = (json.dumps(event) + "\n").encode("utf-8")
        if len(payload) > _MAX_EVENT:
            return
        try:
            if self._handle_pid != os.getpid():
                flags = os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC
                self._handle, self._handle_pid = os.open(self.pipe, flags), os.getpid()
            assert self._handle is not None
            os.write(self._handle, payload)
        except OSError:
            pass  # no reader any more, or a full pipe: progress is never worth a delay


def expected_seconds(
    examples: Iterable[Example],
    fast: bool,
    previous: Mapping[str, Mapping[str, Any]],
    history: Mapping[str, float] | None = None,
) -> dict[str, float]:
    """Each example's expected seconds: its previous record of the same kind, else history.

    ``previous``: the records of the last build in the output folder, by id; ``history``:
    median seconds by id from builds of the same kind.
    """
    found: dict[str, float] = {}
    for example in examples:
        record = previous.get(example.id)
        # A run's time rounds to 0.0 on a fast machine and is still its time; a reused
        # record's 0.0 is a time nobody measured.
        if (
            record
            and record.get("fast") == fast
            and record.get("status") in REUSABLE
            and (record.get("wall_seconds", 0) > 0 or record.get("status") in EXECUTED)
        ):
            found[example.id] = float(record["wall_seconds"])
        elif history and example.id in history:
            found[example.id] = float(history[example.id])
    return found


def history_medians(
    path: Path | None, fast: bool, warn: Callable[[str], None] | None = None
) -> dict[str, float]:
    """Median seconds by example id over the recent builds of kind ``fast`` in ``path``.

    A missing file (the first build) gives nothing; an unreadable one, a warning naming it
    (``warn``: how to say it, default a Sphinx warning).
    """
    if path is None or not path.is_file():
        return {}
    from docsaccel.report.history import read_history
    from docsaccel.report.model import InputError

    warn = warn or _history_warning

    try:
        found = read_history(path, last=5, fast=fast, warn=warn)
    except (InputError, ValueError) as exc:
        warn(f"{exc}; no expected times from it")
        return {}
    return {example_id: stats.median_seconds for example_id, stats in found.items()}


def _history_warning(message: str) -> None:
    logger.warning(f"docsaccel_history: {message}", type="docsaccel", subtype="history")


#: The named pipe of the build in process ``pid``: ``progress-<pid>.pipe``.
_PIPE_PREFIX, _PIPE_SUFFIX = "progress-", ".pipe"


def remove_stale_pipes(folder: Path | str) -> list[Path]:
    """Remove the named pipes a build killed outright (``SIGKILL``) left in ``folder``:
    those of processes that no longer run. Returns them. A pipe is no file to publish
    (uploading the output folder as an artifact stops at one)."""
    removed = []
    for pipe in Path(folder).glob(f"{_PIPE_PREFIX}*{_PIPE_SUFFIX}"):
        pid = pipe.name[len(_PIPE_PREFIX) : -len(_PIPE_SUFFIX)]
        if pid.isdigit() and not _runs(int(pid)):
            with contextlib.suppress(OSError):
                pipe.unlink()
                removed.append(pipe)
    return removed


def _runs(pid: int) -> bool:
    """Whether process ``pid`` exists (one of another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def start_progress(build: Any, gallery_conf: dict[str, Any]) -> Progress | None:
    """The progress of a :class:`~docsaccel.gallery.state.GalleryBuild` about to run its gallery.

    Counts the examples sphinx-gallery will execute: executable under the build's final
    config (a shard's own), and not skipped as unchanged. ``None`` when it runs none.
    """
    rerun = bool(gallery_conf.get("run_stale_examples"))
    planned = [
        example
        for example in build.examples
        if sg_compat.is_executable(example.src_file, gallery_conf)
        and (rerun or not sg_compat.is_unchanged(example.src_file, example.target_file))
    ]
    if not planned:
        return None
    fast = build.settings.fast
    history = history_medians(build.settings.history, fast, build.warn_history)
    expected = expected_seconds(planned, fast, build.previous, history)
    parallel = gallery_conf.get("parallel") or 1
    jobs = os.cpu_count() or 1 if parallel is True or parallel < 0 else int(parallel)
    return Progress(planned, expected, jobs=jobs, known=build.examples).start(build.records_dir)


def line_status(record: Mapping[str, Any]) -> str:
    """An example's status in its progress line, as its record has it and the views write
    it (:func:`~docsaccel.contract.status_text`); one the build stopped while it ran says
    what stopped the build (the signal, ``os._exit``, the abort), as its record does."""
    unfinished = is_unfinished(record)
    status = status_text(record["status"], record.get(EXPECTED_FAILURE) is True, unfinished)
    if unfinished:
        status += f" ({unfinished_why(record['error'])})"
    return status


def _share(
    example: Example, seconds: float, peak: int | None, by: str | None, unfinished: bool = False
) -> str:
    """What the end line says of the example's limits: its peak, then its memory budget's
    share when memory stopped it or it went over that budget (``by``: which limit
    interrupted it, if memory's), else its time budget's share. None for an example the
    build's end stopped (``unfinished``): the time it ran is no timing to hold against
    its budget."""
    memory_budget = example.budget.memory.bytes
    peak_text = "" if peak is None else f", peak {format_size(peak)}"
    if unfinished:
        return peak_text
    if by == BY_CEILING:
        return f"{peak_text}, stopped by the build's memory ceiling"
    if memory_budget and peak is not None and (by == BY_MEMORY or peak > memory_budget):
        limit = format_size(memory_budget)
        return f"{peak_text}, {peak / memory_budget:.0%} of its memory budget of {limit}"
    budget = example.budget.seconds
    time_share = (
        f", {seconds / budget:.0%} of its budget of {format_seconds(budget)}" if budget else ""
    )
    return time_share + peak_text


class _Running:
    """A running example's number in the log and its start (``time.monotonic``)."""

    __slots__ = ("number", "started")

    def __init__(self, number: int, started: float) -> None:
        self.number = number
        self.started = started


class Progress:
    """Numbers the examples as they start and logs their lines (in the Sphinx process)."""

    def __init__(
        self,
        planned: Iterable[Example],
        expected: Mapping[str, float] | None = None,
        jobs: int = 1,
        log: Callable[[str], None] | None = None,
        known: Iterable[Example] = (),
    ) -> None:
        self.planned = {example.id: example for example in planned}
        # Examples the plan did not expect to run (a guess about unchanged ones that
        # sphinx-gallery saw otherwise) are still logged, and counted once they start.
        self.known = {example.id: example for example in known} | self.planned
        self.expected = dict(expected or {})
        self.jobs = max(1, jobs)
        self.log = log or logger.info
        self.started = 0
        self.running: dict[str, _Running] = {}
        self.done: dict[str, float] = {}
        #: An example's end ended the build (its error with ``abort_on_example_error``, a
        #: signal, ``os._exit``, the hard stop): no example is left to run, whatever the
        #: plan counted, so no line says one is.
        self.ending = False
        self.channel: ProgressChannel | None = None
        self._reader: threading.Thread | None = None
        self._lock = threading.Lock()

    # Lifecycle ------------------------------------------------------------------------

    def start(self, folder: Path | str) -> Progress:
        """Open the channel in ``folder`` (a named pipe) and start reading it."""
        pipe = os.path.join(folder, f"{_PIPE_PREFIX}{os.getpid()}{_PIPE_SUFFIX}")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(pipe)
        self.channel = ProgressChannel(pipe, os.getpid())
        _LOCAL[pipe] = self
        try:
            os.mkfifo(pipe)
            # Read and write: the pipe never reports end of file while workers come and go.
            handle = os.open(pipe, os.O_RDWR | os.O_CLOEXEC)
        except (OSError, AttributeError):
            # No named pipes here (another OS, a file system without them): the Sphinx
            # process still logs its own examples; workers find no pipe and stay silent.
            return self
        self._reader = threading.Thread(
            target=self._read, args=(handle,), name="docsaccel-progress", daemon=True
        )
        self._reader.start()
        return self

    def stop(self) -> None:
        """Log what the workers sent so far, then close the channel."""
        if self.channel is None:
            return
        pipe = self.channel.pipe
        if self._reader is not None:
            with contextlib.suppress(OSError):
                handle = os.open(pipe, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
                os.write(handle, _STOP)
                os.close(handle)
            self._reader.join(timeout=10)
            with contextlib.suppress(OSError):
                os.unlink(pipe)
            self._reader = None
        _LOCAL.pop(pipe, None)

    def settle(self, records: Mapping[str, Mapping[str, Any]]) -> None:
        """The build ended before its gallery did (``records``: its final records by id,
        those of its report): each example that started and sent no end (a ``parallel``
        worker's, which the build's end stopped or killed) gets its one line, in the
        order they started, with its record's status; its time is the one it ran until
        now (an unfinished record holds none). Once the channel is stopped, so that no
        end of theirs comes after."""
        with self._lock:
            self.ending = True
            now = time.monotonic()
            for example_id, run in sorted(self.running.items(), key=lambda item: item[1].number):
                record = records.get(example_id)
                if record is not None:
                    example = self.known[example_id]
                    self._end(
                        example,
                        now - run.started,
                        line_status(record),
                        unfinished=is_unfinished(record),
                    )

    def _read(self, handle: int) -> None:
        buffer = b""
        try:
            while True:
                chunk = os.read(handle, 65536)
                if not chunk:
                    return
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    if line + b"\n" == _STOP:
                        return
                    with contextlib.suppress(ValueError, TypeError, KeyError):
                        self.handle(json.loads(line))
        finally:
            os.close(handle)

    # Events ---------------------------------------------------------------------------

    def handle(self, event: Mapping[str, Any]) -> None:
        """Log one event: ``start``, ``end`` or ``near`` (see :class:`ProgressChannel`)."""
        with self._lock:
            example = self.known.get(event["id"])
            if example is None:
                return
            kind = event["event"]
            if kind == "start":
                self._start(example)
            elif kind == "end":
                peak = event.get("peak")
                peak = peak if isinstance(peak, int) and not isinstance(peak, bool) else None
                by = event.get("by") if event.get("by") in (BY_MEMORY, BY_CEILING) else None
                left = event.get("left") if isinstance(event.get("left"), str) else None
                seconds, status = float(event["seconds"]), str(event["status"])
                self.ending = self.ending or event.get("ends_build") is True
                unfinished = event.get("unfinished") is True
                self._end(example, seconds, status, peak, by, left, unfinished)
                signals = event.get("signals")
                if signals and isinstance(signals, list):
                    self.log(signals_text(example.id, [str(name) for name in signals]))
            elif kind == "near":
                self._near(example, float(event["seconds"]))

    def _total(self) -> int:
        return len(self.planned) + len((set(self.running) | set(self.done)) - set(self.planned))

    def _start(self, example: Example) -> None:
        """Number the example; its line comes when it ends (one line per example)."""
        self.started += 1
        self.running[example.id] = _Running(self.started, time.monotonic())

    def _end(
        self,
        example: Example,
        seconds: float,
        status: str,
        peak: int | None = None,
        by: str | None = None,
        leftover: str | None = None,
        unfinished: bool = False,
    ) -> None:
        """Log the example's line; ``leftover``: what it left that may keep the build's process
        from ending (:func:`.process_end.left_by`), which its status then depends on;
        ``unfinished``: the build's end stopped it."""
        run = self.running.pop(example.id, None)
        number = run.number if run else self.started
        self.done[example.id] = seconds
        share = _share(example, seconds, peak, by, unfinished)
        estimate = "" if self.ending else _estimate_text(*self.remaining())
        if leftover is not None:
            status += f" unless what it left keeps the build's process from ending ({leftover})"
        self.log(
            f"docsaccel: [{number}/{self._total()}] {example.id}: "
            f"{format_measured(seconds)}, {status}{share}{estimate}"
        )

    def _near(self, example: Example, seconds: float) -> None:
        budget = example.budget.seconds
        if budget is None or example.id not in self.running:
            return
        self.log(
            f"docsaccel: {example.id}: still running after {format_measured(seconds)}, "
            f"{seconds / budget:.0%} of its budget of {format_seconds(budget)}"
        )

    def remaining(self) -> tuple[float | None, int]:
        """What is left of the planned examples: the estimate of the time of those with an
        expected time (``None`` when none has one), and how many have none."""
        now = time.monotonic()
        times: list[float] = []
        untimed = 0
        for example_id in self.planned:
            if example_id in self.done:
                continue
            expected = self.expected.get(example_id)
            if expected is None:
                untimed += 1
                continue
            run = self.running.get(example_id)
            times.append(max(expected - (now - run.started), 0.0) if run else expected)
        if not times:
            return None, untimed
        # However many processes, the longest example left runs in one of them.
        return max(sum(times) / self.jobs, max(times)), untimed


def _estimate_text(seconds: float | None, untimed: int) -> str:
    """The end of an example's line: what is left, as far as the expected times tell.

    >>> _estimate_text(12.0, 0), _estimate_text(0.01, 0), _estimate_text(None, 0)
    ('; about 12s left', '; under 0.1s left', '')
    >>> _estimate_text(12.0, 2), _estimate_text(None, 1)
    ('; about 12s left, plus 2 examples not timed before', '; 1 example left, not timed before')
    """
    examples = f"{untimed} example{'s' if untimed != 1 else ''}"
    if seconds is None:
        return f"; {examples} left, not timed before" if untimed else ""
    # Quick examples leave an estimate that would round to "about 0s".
    text = f"; about {format_measured(seconds)} left" if seconds >= 0.05 else "; under 0.1s left"
    return f"{text}, plus {examples} not timed before" if untimed else text


class NearBudgetWatch:
    """Calls back once when the running example passes :data:`NEAR_BUDGET` of its budget.

    One daemon thread per process, started on first use and re-armed for every example:
    arming and disarming cost a lock and a notification, not a thread per example.
    """

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._due: float | None = None
        self._callback: Callable[[float], None] | None = None
        self._armed_at = 0.0
        self._thread: threading.Thread | None = None
        self._pid: int | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__()  # type: ignore[misc]

    def arm(self, budget_seconds: float, callback: Callable[[float], None]) -> None:
        """Call ``callback(elapsed)`` at ``NEAR_BUDGET * budget_seconds`` unless disarmed."""
        with self._condition:
            now = time.monotonic()
            self._armed_at = now
            self._due = now + NEAR_BUDGET * budget_seconds
            self._callback = callback
            if self._pid != os.getpid():
                self._pid = os.getpid()
                self._thread = threading.Thread(
                    target=self._watch, name="docsaccel-near-budget", daemon=True
                )
                self._thread.start()
            self._condition.notify()

    def disarm(self) -> None:
        with self._condition:
            self._due = None
            self._callback = None

    def _watch(self) -> None:
        with self._condition:
            while True:
                if self._due is None:
                    self._condition.wait()
                    continue
                wait = self._due - time.monotonic()
                if wait > 0:
                    self._condition.wait(wait)
                    continue
                callback, elapsed = self._callback, time.monotonic() - self._armed_at
                self._due = self._callback = None
                if callback is not None:
                    with contextlib.suppress(Exception):
                        callback(elapsed)
