"""What runs around every example, in whichever process sphinx-gallery runs it in.

sphinx-gallery calls its ``reset_modules`` before and after each example, in the process
that runs it (the Sphinx process, or a worker with ``parallel: N``), and pickles its config,
this hook included, to those workers. So the hook carries everything it needs: the plan,
the records folder, the fast switch and the overrun mode.

Before an example: the user's own resetters (if they asked for "before"), then clear the
registry, set ``DOCSACCEL_FAST``, note the processes running, start the clocks, journal a
provisional record (so an example that takes the whole process down is still recorded),
and in fail mode arm a :class:`~docsaccel.gallery.interrupt.Deadline`. After it: stop the
clocks, end the processes the example started (:mod:`.processes`), journal the record
with the registry's facts, note next to its outputs whether they come from a fast or a
full run (:func:`~docsaccel.records.write_run_marker`), then the user's "after"
resetters.

However an example ends its process (the hard stop, ``os._exit``, ``SIGTERM``,
interpreter exit), :mod:`.process_end` tells the hook first (:meth:`ExampleHook.end_running`):
it records the example and ends the example's processes.

An example's recorded time is sphinx-gallery's own measurement of it
(:func:`docsaccel.sg_compat.measured_seconds`), so a report and ``sg_execution_times.rst`` agree;
the rest of the time between the two calls (sphinx-gallery writing the page, resetters,
docsaccel) is its ``overhead_seconds``. The hook also sends each start and end, and the
near-budget moment, to the build log's progress (:mod:`.progress`).

Example (what :func:`docsaccel.gallery.setup` does)::

    hook = ExampleHook.for_examples(examples, records_dir=str(records_dir),
                                    fast=True, on_overrun="fail")
    sg_compat.install_hook(sphinx_gallery_conf, hook)
"""

from __future__ import annotations

import contextlib
import os
import resource
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sphinx.util import logging as sphinx_logging

from docsaccel import registry, sg_compat
from docsaccel.budgets import format_seconds
from docsaccel.contract import (
    FAILED,
    HARD_STOP,
    INTERRUPTED,
    KNOBS_SECTION,
    OK,
    OVER_BUDGET,
    RENDER_SECTION,
    UNFINISHED_ERROR,
)
from docsaccel.examples import Example, Planner
from docsaccel.gallery import process_end
from docsaccel.gallery.interrupt import Deadline, cancel_all
from docsaccel.gallery.processes import descendants, end_processes
from docsaccel.gallery.progress import NearBudgetWatch, ProgressChannel
from docsaccel.records import RecordJournal, base_record, now_iso, write_run_marker
from docsaccel.settings import env_name

if TYPE_CHECKING:
    from docsaccel.cache.build import CacheRecording

__all__ = ["ExampleHook", "hard_stop_message", "interruption_message"]

logger = sphinx_logging.getLogger(__name__)

FAST_ENV_VAR = env_name("fast")

_TIERS = {
    "signal": "by its budget timer (SIGALRM)",
    "watchdog": "by the watchdog thread (the example had replaced, ignored or disarmed "
    "the SIGALRM timer)",
}

_ADVICE = (
    "Make it lighter in CI with docsaccel.fast.pick(full=..., fast=..., name=...) "
    "and build with DOCSACCEL_FAST=1, or raise its budget."
)


def interruption_message(example: Example, elapsed: float, tier: str | None = None) -> str:
    """The error shown in the log and on the page of an example stopped at its budget."""
    by = f" {_TIERS[tier]}" if tier in _TIERS else ""
    return (
        f"{example.id} was interrupted after {elapsed:.1f} s{by}: its time budget is "
        f"{example.budget.describe()} (docsaccel_on_overrun = 'fail'). {_ADVICE}"
    )


def hard_stop_message(example: Example, elapsed: float, grace: float) -> str:
    """The error of an example still running ``grace`` seconds after its budget."""
    return (
        f"{example.id} {HARD_STOP} {elapsed:.1f} s (its process was ended): it "
        f"was still running {grace:g} s after its time budget of "
        f"{example.budget.describe()} ran out, although it was interrupted (it ignores or "
        f"swallows the interruption, or waits in native code). {_ADVICE}"
    )


@dataclass
class _Run:
    example: Example
    started_at: str
    wall_start: float
    cpu_start: float
    processes: set[tuple[int, int]] = field(default_factory=set)
    pid: int = field(default_factory=os.getpid)
    tier: str | None = None
    deadline: Deadline | None = None
    interrupted_after: float | None = None
    ended: bool = False  # its final record is written
    cost_before: tuple[int, int] | None = None
    #: Threads and exit handlers before it ran (:func:`.process_end.before_example`).
    left_mark: tuple[frozenset[int | None], int] | None = None


@dataclass(eq=False)
class ExampleHook:
    """sphinx-gallery ``reset_modules`` callable that measures, bounds and records examples."""

    examples: dict[str, Example]  # by source path (absolute, normalised)
    records_dir: str
    fast: bool
    on_overrun: str
    #: Plans an example that reaches the hook without being in ``examples``.
    planner: Planner | None = None
    #: The example cache's dependency recording (``None``: no cache).
    cache: CacheRecording | None = None
    #: Where start and end events go (``None``: no progress in the log).
    progress: ProgressChannel | None = None
    _near: NearBudgetWatch = field(default_factory=NearBudgetWatch, repr=False)
    _run: _Run | None = field(default=None, repr=False)
    _journal: RecordJournal = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._journal = RecordJournal(self.records_dir)

    @classmethod
    def for_examples(cls, examples: Iterable[Example], **kwargs: Any) -> ExampleHook:
        return cls({e.src_file: e for e in examples}, **kwargs)

    def __repr__(self) -> str:
        # sphinx-gallery shows resetters by repr; keep it short and stable.
        return f"docsaccel.gallery.ExampleHook({len(self.examples)} examples)"

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_run"] = None  # a run in progress never travels to another process
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        # A worker process runs examples with its own import of sphinx-gallery.
        sg_compat.remove_our_config_comments()

    def example_for(self, fname: str) -> Example | None:
        """The example sphinx-gallery calls the hook for (it passes the file name only).

        Found by its full path; an example the plan missed is planned now, so every
        example that runs gets its budget and its record.
        """
        src_file = sg_compat.running_example(fname)
        if src_file is None:
            # Not called from sphinx-gallery's example loop: the name must be unambiguous.
            name = os.path.basename(fname)
            found = [e for e in self.examples.values() if os.path.basename(e.src_file) == name]
            return found[0] if len(found) == 1 else None
        example = self.examples.get(src_file)
        if example is None and self.planner is not None:
            example = self.planner.example(src_file)
            if example is not None:
                self.examples[src_file] = example
        return example

    def __call__(self, gallery_conf: dict[str, Any], fname: str, when: str) -> None:
        if when == "before":
            sg_compat.call_user_resetters(gallery_conf, fname, "before")
            self._start(fname)
        else:
            self._finish(fname)
            sg_compat.call_user_resetters(gallery_conf, fname, "after")

    def _start(self, fname: str) -> None:
        # The previous example never got its "after" call (abort_on_example_error): its
        # alarm and processes must not outlive it.
        cancel_all()
        if self._run is not None:
            self._wind_up(self._run)
        example = self.example_for(fname)
        if example is None:
            self._run = None
            return
        process_end.install(sigterm=False)
        registry.clear()
        os.environ[FAST_ENV_VAR] = "1" if self.fast else "0"
        _reset_peak_rss()
        run = _Run(example, now_iso(), time.perf_counter(), time.process_time())
        run.processes = descendants()
        run.left_mark = process_end.before_example()
        run.cost_before = sg_compat.cost_stamp(example.target_file)
        self._run = run
        process_end.running(self)
        self._write(run, FAILED, error=UNFINISHED_ERROR, provisional=True)
        if self.progress is not None:
            self.progress.send(event="start", id=example.id)
            if example.budget.seconds is not None:
                channel, example_id = self.progress, example.id
                self._near.arm(
                    example.budget.seconds,
                    lambda elapsed: channel.send(event="near", id=example_id, seconds=elapsed),
                )
        if self.on_overrun == "fail" and example.budget.seconds is not None:
            run.deadline = Deadline(
                example.budget.seconds,
                lambda elapsed: self._interrupted(run, elapsed),
                code_file=example.src_file,
                on_hard_stop=lambda elapsed: self._hard_stop(run, elapsed),
            ).start()
        if self.cache is not None:
            self.cache.start(example)

    def _interrupted(self, run: _Run, elapsed: float) -> str:
        tier = run.deadline.tier if run.deadline is not None else None
        message = interruption_message(run.example, elapsed, tier)
        if run.interrupted_after is None:
            run.interrupted_after = elapsed
            run.tier = tier
            # Recorded now: with abort_on_example_error the "after" call never comes.
            self._write(run, INTERRUPTED, error=message)
        return message

    def _hard_stop(self, run: _Run, elapsed: float) -> None:
        """The watchdog's last resort: record the example, end its processes and this one."""
        grace = run.deadline.grace if run.deadline is not None else 0.0
        message = hard_stop_message(run.example, elapsed, grace)
        run.interrupted_after = run.interrupted_after or elapsed
        self._write(run, INTERRUPTED, error=message, finished=True)
        run.ended = True
        if process_end.builds_here():
            logger.error(message)
        else:
            # A parallel worker has no Sphinx logging: its stderr is the build's.
            print(f"ERROR: {message}", file=sys.__stderr__, flush=True)
        process_end.end_of_process(process_end.EXIT_STATUS)

    def _finish(self, fname: str) -> None:
        if self._run is not None and self._run.pid != os.getpid():
            # A copy of the build's process that the example forked, back from the example:
            # it must not go on building beside the real one (and write into its outputs).
            process_end.real_exit(0)
        run, self._run = self._run, None
        process_end.running(None)
        if run is None or self.example_for(fname) is not run.example:
            return
        # Stopped first: the plugin's own bookkeeping is not the example's dependency.
        seen = self.cache.stop() if self.cache is not None else None
        if run.deadline is not None:
            run.deadline.cancel()
        if self.progress is not None:
            self._near.disarm()
        budget = run.example.budget.seconds
        total = time.perf_counter() - run.wall_start
        measured = sg_compat.measured_seconds(run.example.target_file, run.cost_before)
        # sphinx-gallery's time when it measured this run (a passing example), else ours.
        wall = total if measured is None else min(measured, total)
        error = None
        if run.interrupted_after is not None:
            status = INTERRUPTED
            error = interruption_message(run.example, run.interrupted_after, run.tier)
        elif budget is not None and wall > budget:
            status = OVER_BUDGET
            error = f"took {format_seconds(round(wall, 1))}, over its budget"
        else:
            status = OK
        overhead = None if measured is None else round(total - wall, 3)
        record = self._write(run, status, error=error, finished=True, wall=wall, overhead=overhead)
        run.ended = True
        if self.progress is not None:
            self.progress.send(event="end", id=run.example.id, seconds=wall, status=status)
        # After the record: the time spent ending its processes is not the example's.
        self._wind_up(run)
        if run.left_mark is not None:
            process_end.after_example(run.example.id, run.left_mark)
        write_run_marker(run.example.target_file, self.fast, record["knobs"])
        if self.cache is not None and seen is not None:
            self.cache.save(run.example, seen)

    def _wind_up(self, run: _Run) -> None:
        """What every example end needs, however it ended: no process or module left over."""
        end_processes(descendants() - run.processes)
        if run.interrupted_after is not None:
            _forget_half_imported_modules()

    def running_file(self) -> str | None:
        """The source of the example running in this process (not in a forked copy of it)."""
        run = self._run
        return run.example.src_file if run is not None and run.pid == os.getpid() else None

    def end_running(self, why: str | None) -> None:
        """The process ends while an example runs: record why (if known), end its processes."""
        run = self._run
        if run is None or run.pid != os.getpid():
            return
        if run.deadline is not None:
            run.deadline.cancel()
        end_processes(descendants() - run.processes)
        if why is not None and not run.ended and run.interrupted_after is None:
            self._write(run, FAILED, error=f"did not finish: {why}")
        run.ended = True

    def _write(
        self,
        run: _Run,
        status: str,
        error: str | None,
        finished: bool = False,
        provisional: bool = False,
        wall: float | None = None,
        overhead: float | None = None,
    ) -> dict[str, Any]:
        """Journal the example's record as it stands now; return it."""
        facts = registry.snapshot()
        cache = {} if self.cache is None else {"cache": self.cache.record_field(run.example.id)}
        if wall is None:
            wall = time.perf_counter() - run.wall_start
        record = base_record(
            run.example,
            status,
            self.fast,
            wall_seconds=round(wall, 3),
            cpu_seconds=round(time.process_time() - run.cpu_start, 3),
            # Nothing has run yet at the provisional record: no memory to measure.
            peak_rss_bytes=None if provisional else _peak_rss_bytes(),
            knobs=facts.get(KNOBS_SECTION, {}),
            render=facts.get(RENDER_SECTION, {}),
            error=error,
            started_at=run.started_at,
            finished_at=now_iso() if finished else None,
            pid=os.getpid(),
            **cache,
        )
        if overhead is not None:
            record["overhead_seconds"] = overhead
        self._journal.append(record)
        return record


def _forget_half_imported_modules() -> None:
    """Drop modules whose import was cut short, so the next example imports them afresh."""
    for name, module in list(sys.modules.items()):
        spec = getattr(module, "__spec__", None)
        if getattr(spec, "_initializing", False):
            sys.modules.pop(name, None)


def _reset_peak_rss() -> None:
    """Make the kernel's peak-RSS mark start over, so it measures this example (Linux)."""
    # Raw os calls: a Python file object adds four system calls to each of the two
    # /proc accesses every example makes.
    with contextlib.suppress(OSError):
        control = os.open("/proc/self/clear_refs", os.O_WRONLY | os.O_CLOEXEC)
        try:
            os.write(control, b"5")
        finally:
            os.close(control)


def _peak_rss_bytes() -> int | None:
    """Peak resident memory of this process since the last reset, in bytes."""
    try:
        status = os.open("/proc/self/status", os.O_RDONLY | os.O_CLOEXEC)
        try:
            text = os.read(status, 1 << 16)
        finally:
            os.close(status)
        for line in text.splitlines():
            if line.startswith(b"VmHWM:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024
    except (OSError, ValueError):
        return None
