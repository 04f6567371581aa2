"""What runs around every example, in whichever process sphinx-gallery runs it in.

sphinx-gallery calls its ``reset_modules`` before and after each example, in the process
that runs it (the Sphinx process, or a worker with ``parallel: N``), and pickles its config,
this hook included, to those workers. So the hook carries everything it needs: the plan,
the records folder, the fast switch and the overrun mode.

Before an example: the user's own resetters (if they asked for "before"), then clear the
registry, set ``DOCSACCEL_FAST``, start the clocks, journal a provisional record (so an
example that takes the whole process down is still recorded), and in fail mode arm a
:class:`~docsaccel.gallery.interrupt.Deadline`. After it: stop the clocks, journal the
record with the registry's facts, then the user's "after" resetters.

An example's recorded time is sphinx-gallery's own measurement of it
(:func:`.sg_compat.measured_seconds`), so a report and ``sg_execution_times.rst`` agree;
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
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from docsaccel import registry
from docsaccel.budgets import format_seconds
from docsaccel.fast import ENV_VAR as FAST_ENV_VAR
from docsaccel.fast import KNOBS_SECTION
from docsaccel.gallery import sg_compat
from docsaccel.gallery.interrupt import Deadline
from docsaccel.gallery.plan import Example
from docsaccel.gallery.progress import NearBudgetWatch, ProgressChannel
from docsaccel.gallery.records import RecordJournal, base_record, now_iso

__all__ = ["ExampleHook", "interruption_message"]

_UNFINISHED = (
    "did not finish: the build stopped while this example was running "
    "(an error with abort_on_example_error, a crash, or an interrupted build)"
)


def interruption_message(example: Example, elapsed: float) -> str:
    """The error shown in the log and on the page of an example stopped at its budget."""
    return (
        f"{example.id} was interrupted after {elapsed:.1f} s: its time budget is "
        f"{example.budget.describe()} (docsaccel_on_overrun = 'fail'). "
        "Make it lighter in CI with docsaccel.fast.pick(full=..., fast=..., name=...) "
        "and build with DOCSACCEL_FAST=1, or raise its budget."
    )


@dataclass
class _Run:
    example: Example
    started_at: str
    wall_start: float
    cpu_start: float
    deadline: Deadline | None = None
    interrupted_after: float | None = None
    cost_before: tuple[int, int] | None = None


@dataclass(eq=False)
class ExampleHook:
    """sphinx-gallery ``reset_modules`` callable that measures, bounds and records examples."""

    examples: dict[str, Example]  # by file name, the name sphinx-gallery passes
    records_dir: str
    fast: bool
    on_overrun: str
    #: Where start and end events go (``None``: no progress in the log).
    progress: ProgressChannel | None = None
    _near: NearBudgetWatch = field(default_factory=NearBudgetWatch, repr=False)
    _run: _Run | None = field(default=None, repr=False)
    _journal: RecordJournal = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._journal = RecordJournal(self.records_dir)

    @classmethod
    def for_examples(cls, examples: Iterable[Example], **kwargs: Any) -> ExampleHook:
        return cls({os.path.basename(e.name): e for e in examples}, **kwargs)

    def __repr__(self) -> str:
        # sphinx-gallery shows resetters by repr; keep it short and stable.
        return f"docsaccel.gallery.ExampleHook({len(self.examples)} examples)"

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_run"] = None  # a run in progress never travels to another process
        return state

    def __call__(self, gallery_conf: dict[str, Any], fname: str, when: str) -> None:
        if when == "before":
            sg_compat.call_user_resetters(gallery_conf, fname, "before")
            self._start(fname)
        else:
            self._finish(fname)
            sg_compat.call_user_resetters(gallery_conf, fname, "after")

    def _start(self, fname: str) -> None:
        example = self.examples.get(os.path.basename(fname))
        if example is None:
            self._run = None
            return
        registry.clear()
        os.environ[FAST_ENV_VAR] = "1" if self.fast else "0"
        _reset_peak_rss()
        run = _Run(example, now_iso(), time.perf_counter(), time.process_time())
        run.cost_before = sg_compat.cost_stamp(example.target_file)
        self._run = run
        self._write(run, "failed", error=_UNFINISHED, provisional=True)
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
            ).start()

    def _interrupted(self, run: _Run, elapsed: float) -> str:
        message = interruption_message(run.example, elapsed)
        if run.interrupted_after is None:
            run.interrupted_after = elapsed
            # Recorded now: with abort_on_example_error the "after" call never comes.
            self._write(run, "interrupted", error=message)
        return message

    def _finish(self, fname: str) -> None:
        run, self._run = self._run, None
        if run is None or os.path.basename(fname) != os.path.basename(run.example.name):
            return
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
            status = "interrupted"
            error = interruption_message(run.example, run.interrupted_after)
        elif budget is not None and wall > budget:
            status = "over-budget"
            error = f"took {format_seconds(round(wall, 1))}, over its budget"
        else:
            status = "ok"
        overhead = None if measured is None else round(total - wall, 3)
        self._write(run, status, error=error, finished=True, wall=wall, overhead=overhead)
        if self.progress is not None:
            self.progress.send(event="end", id=run.example.id, seconds=wall, status=status)

    def _write(
        self,
        run: _Run,
        status: str,
        error: str | None,
        finished: bool = False,
        provisional: bool = False,
        wall: float | None = None,
        overhead: float | None = None,
    ) -> None:
        facts = registry.snapshot()
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
            render=facts.get(registry.RENDER_SECTION, {}),
            error=error,
            started_at=run.started_at,
            finished_at=now_iso() if finished else None,
            pid=os.getpid(),
        )
        if overhead is not None:
            record["overhead_seconds"] = overhead
        self._journal.append(record)


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
