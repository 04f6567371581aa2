"""What runs around every example, in whichever process sphinx-gallery runs it in.

The design, in full: the adopting guide's *Design* section.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sphinx.util import logging as sphinx_logging

from docsaccel import outputs, registry, sg_compat
from docsaccel.budgets import format_over
from docsaccel.contract import (
    BY_CEILING,
    BY_MEMORY,
    BY_TIME,
    EXPECTED_FAILURE,
    FAILED,
    HARD_STOP,
    INTERRUPTED,
    KNOBS_SECTION,
    OK,
    OVER_BUDGET,
    RENDER_SECTION,
    UNFINISHED_ERROR,
    is_unfinished,
    unfinished_error,
)
from docsaccel.examples import Example, Planner
from docsaccel.gallery import process_end
from docsaccel.gallery.interrupt import Deadline, MemoryExceeded, Tripwire, cancel_all
from docsaccel.gallery.memory import SAMPLE_SECONDS, MemoryMeter, Sample, hard_line, rss_bytes
from docsaccel.gallery.processes import (
    Process,
    descendants,
    end_processes,
    end_started,
    end_with_build,
    process_name,
)
from docsaccel.gallery.progress import NearBudgetWatch, ProgressChannel, line_status
from docsaccel.memory_sizes import ceiling_room, format_size, machine_bytes
from docsaccel.records import RecordJournal, base_record, now_iso, write_run_marker
from docsaccel.schema import peak_bytes
from docsaccel.settings import env_name, given_as, given_value

if TYPE_CHECKING:
    from docsaccel.cache.cache_build import CacheRecording

__all__ = [
    "ExampleHook",
    "ended_text",
    "fail_mode_text",
    "hard_stop_message",
    "interruption_message",
    "memory_hard_stop_message",
    "memory_interruption_message",
    "memory_limit_text",
]

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


def fail_mode_text(given: str | None = None) -> str:
    """How an interruption's error names fail mode: ``given`` (the build's process says
    where it came from, :attr:`ExampleHook.fail_mode`), else from this process's
    environment (the variable, or ``conf.py``'s key)."""
    return given or given_value("on_overrun", "fail")


def memory_limit_text(given: str | None = None) -> str:
    """How an error names the build's memory ceiling setting: ``given`` (the build's
    process says where it came from, :attr:`ExampleHook.memory_limit_given`: ``-D``, the
    variable or ``conf.py``), else from this process's environment."""
    return given or given_as("memory_limit")


def interruption_message(
    example: Example, elapsed: float, tier: str | None = None, fail_mode: str | None = None
) -> str:
    """The error shown in the log and on the page of an example stopped at its budget;
    ``fail_mode``: the setting as given (:func:`fail_mode_text`)."""
    by = f" {_TIERS[tier]}" if tier in _TIERS else ""
    return (
        f"{example.id} was interrupted after {elapsed:.1f} s{by}: its time budget is "
        f"{example.budget.describe()} ({fail_mode_text(fail_mode)}). {_ADVICE}"
    )


def hard_stop_message(example: Example, elapsed: float, grace: float) -> str:
    """The error of an example still running ``grace`` seconds after its budget."""
    return (
        f"{example.id} {HARD_STOP} {elapsed:.1f} s (its process was ended): it "
        f"was still running {grace:g} s after its time budget of "
        f"{example.budget.describe()} ran out, although it was interrupted (it ignores or "
        f"swallows the interruption, or waits in native code). {_ADVICE}"
    )


_MEMORY_ADVICE = (
    "Make it use less memory in CI with docsaccel.fast.pick(full=..., fast=..., name=...) "
    "and build with DOCSACCEL_FAST=1"
)


def _memory_limit_text(
    example: Example, why: str, sample: Sample, ceiling: int | None, given: str | None = None
) -> str:
    if why == BY_CEILING:
        return (
            f"the build's processes held {format_size(sample.build)} (each page they share "
            f"counted once), over the build's memory ceiling of {format_size(ceiling or 0)} "
            f"({memory_limit_text(given)}), and "
            "this example (its process and the processes it started) held the most of it"
        )
    return f"its memory budget is {example.budget.memory.describe()}"


def memory_interruption_message(
    example: Example,
    why: str,
    sample: Sample,
    ceiling: int | None,
    started_at: int,
    peak: int,
    ended: str = "",
    fail_mode: str | None = None,
    limit_given: str | None = None,
) -> str:
    """The error of an example stopped by its memory budget or by the build's ceiling;
    ``started_at``: what its process held when it started (what earlier examples left);
    ``peak``: its peak so far, as its record and the report count it (never below
    ``started_at``: both count every page its process maps); ``ended``: the processes it
    started that were ended for it (:func:`ended_text`); ``fail_mode``: the setting as
    given (:func:`fail_mode_text`); ``limit_given``: the ceiling's setting as given
    (:func:`memory_limit_text`)."""
    mode = "" if why == BY_CEILING else f" ({fail_mode_text(fail_mode)})"
    advice = "or raise the ceiling" if why == BY_CEILING else "or raise its memory budget"
    if why == BY_CEILING:
        blame = _ceiling_to_blame(sample, ceiling, started_at, peak, limit_given)
        if blame:
            return (
                f"{example.id} was interrupted at a peak of {format_size(peak)} (its process "
                f"held {format_size(started_at)} when it started{'; ' if ended else ''}"
                f"{ended}): {_memory_limit_text(example, why, sample, ceiling, limit_given)}. "
                f"{blame}"
            )
    return (
        f"{example.id} was interrupted at a peak of {format_size(peak)} (its process held "
        f"{format_size(started_at)} when it started{'; ' if ended else ''}{ended}): "
        f"{_memory_limit_text(example, why, sample, ceiling, limit_given)}{mode}. "
        f"{_MEMORY_ADVICE}, {advice}."
    )


def _ceiling_to_blame(
    sample: Sample, ceiling: int | None, started_at: int, peak: int, given: str | None = None
) -> str:
    """The advice when the ceiling, not the example, is the cause (``""`` otherwise): the
    example's own use (its peak above what its process held when it started) is less than
    the room a ceiling should leave above the rest of the build's memory
    (:func:`docsaccel.memory_sizes.ceiling_room`), so any example would have been stopped."""
    own = max(peak - started_at, 0)
    rest = max(sample.build - own, 0)
    if own >= ceiling_room(rest):
        return ""
    return (
        f"The ceiling is the cause, not this example: it used {format_size(own)} of its "
        f"own, and the ceiling leaves less than {format_size(ceiling_room(rest))} above the "
        f"{format_size(rest)} the rest of the build held; raise the ceiling "
        f"({memory_limit_text(given)}), a little under the machine's memory."
    )


def _peak_fields_so_far(meter: MemoryMeter) -> dict[str, int | None]:
    """The record's peak fields now: counted as the record counts them (:func:`peak_bytes`).

    The sample that trips a limit counts a shared page once, a fraction in each process,
    so it reads below what the process held at the start; the peak, like the record and
    the report, counts every page the process maps."""
    fields = meter.so_far()
    return {key: fields.get(key) for key in ("peak_rss_bytes", "children_peak_bytes")}


def _as_stopped(run: _Run, fields: dict[str, int | None]) -> dict[str, int | None]:
    """``fields`` (a record's memory fields) with the peak an example stopped for its
    memory had when it was stopped: the one its error names, so that its record, the
    report and every line of the log say one peak. What it grows by while the
    interruption reaches it is not what the limit judged."""
    if run.tripped_memory is None:
        return fields
    return {**fields, **run.tripped_memory}


def ended_text(held: dict[Process, int], names: dict[Process, str]) -> str:
    """``"the processes it started held 600M and were ended so that it could be
    interrupted: pid 42 (python3)"``."""
    listed = ", ".join(
        f"pid {pid} ({names.get((pid, started)) or '?'})" for pid, started in sorted(held)
    )
    return (
        f"the processes it started held {format_size(sum(held.values()))} and were ended "
        f"so that it could be interrupted: {listed}"
    )


def memory_hard_stop_message(
    example: Example,
    elapsed: float,
    why: str,
    tripped: Sample,
    last: Sample,
    ceiling: int | None,
    peak: int,
    limit_given: str | None = None,
) -> str:
    """The error of an example the hard stop ended after its memory interruption:
    ``tripped`` is the sample that interrupted it, ``last`` the one that ended it,
    ``peak`` its peak when it was interrupted (as :func:`memory_interruption_message`)."""
    return (
        f"{example.id} {HARD_STOP} {elapsed:.1f} s (its process was ended): it "
        f"went on after its interruption at a peak of {format_size(peak)} "
        f"({_memory_limit_text(example, why, tripped, ceiling, limit_given)}), and held "
        f"{format_size(last.example)} (the build {format_size(last.build)}) when it was "
        f"ended (it ignores or swallows the interruption, or runs native code: it allocates, "
        "or waits for a process that does not end). "
        f"{_MEMORY_ADVICE}."
    )


class _Run:
    """One example's run, from its "before" call to its end: mutable state of the hook.

    A plain class rather than a dataclass: a run is never compared, shown or copied, so
    the methods a dataclass would compile at import, for each of these fields, would
    serve nothing.
    """

    def __init__(self, example: Example, started_at: str, wall_start: float, cpu_start: float):
        self.example = example
        self.started_at = started_at
        self.wall_start = wall_start
        self.cpu_start = cpu_start
        self.processes: set[tuple[int, int]] = set()
        self.pid = os.getpid()
        self.tier: str | None = None
        self.deadline: Deadline | None = None
        self.interrupted_after: float | None = None
        #: What interrupted it (:data:`~docsaccel.contract.INTERRUPTED_BY`), and the error.
        self.interrupted_by: str | None = None
        self.interruption: str | None = None
        self.ended = False  # its final record is written
        #: The record last journalled for it (its status and limits, for its log line).
        self.record: dict[str, Any] | None = None
        self.meter: MemoryMeter | None = None
        #: Its memory fields once it ended (:meth:`MemoryMeter.finish`).
        self.memory: dict[str, int | None] | None = None
        self.tripwire: Tripwire | None = None
        #: The memory sample the tripwire last took, and the one that tripped it.
        self.sample: Sample | None = None
        self.tripped: Sample | None = None
        #: Its peak when the tripwire tripped, and the record's fields that count it
        #: (:func:`_peak_fields_so_far`): its record's peak (:func:`_as_stopped`).
        self.tripped_peak = 0
        self.tripped_memory: dict[str, int | None] | None = None
        #: The processes it started that hold its memory, ended once it is interrupted.
        self.memory_children: set[tuple[int, int]] = set()
        self.cost_before: tuple[int, int] | None = None
        #: Threads, exit and stop handlers before it ran (:func:`.process_end.before_example`).
        self.left_mark: process_end.ExampleMark | None = None
        #: The source dir, and its image folders' files before it ran
        #: (:mod:`docsaccel.outputs`).
        self.srcdir = ""
        self.images_before: dict[str, tuple[int, int, int, int]] = {}
        #: The gallery folders, and the file system's time when its outputs were first
        #: watched (:func:`docsaccel.outputs.collect`).
        self.galleries: list[str] = []
        self.outputs_since: int | None = None


# repr=False: its own __repr__ below is the one shown.
@dataclass(eq=False, repr=False)
class ExampleHook:
    """sphinx-gallery ``reset_modules`` callable that measures, bounds and records examples."""

    examples: dict[str, Example]  # by source path (absolute, normalised)
    records_dir: str
    fast: bool
    on_overrun: str
    #: Plans an example that reaches the hook without being in ``examples``.
    planner: Planner | None = None
    #: The build's id, in its journals' names (:func:`docsaccel.layout.journal_name`).
    build_id: str | None = None
    #: The example cache's dependency recording (``None``: no cache).
    cache: CacheRecording | None = None
    #: Where start and end events go (``None``: no progress in the log).
    progress: ProgressChannel | None = None
    #: The build's memory ceiling in bytes (``docsaccel_memory_limit``; None: none).
    memory_limit: int | None = None
    #: ``docsaccel_on_overrun`` as the user gave it, for the errors of fail mode
    #: (:func:`.settings.given_value`: the variable, ``-D`` or ``conf.py``); None: named
    #: from the environment of the process that runs the example.
    fail_mode: str | None = None
    #: ``docsaccel_memory_limit`` as the user gave it (:func:`.settings.given_as`), for the
    #: errors of the ceiling; None: named from the example's process's environment.
    memory_limit_given: str | None = None
    #: The process of the build (Sphinx's): the ceiling bounds it and its descendants.
    build_pid: int = field(default_factory=os.getpid)
    #: Writes the build's report now (in the build's process only; never pickled).
    save_report: Callable[[], Any] | None = None
    #: Locks the output folder again if an example removed its lock (build's process only).
    keep_lock: Callable[[], Any] | None = None
    #: Called as each example starts, in the build's process only: the examples before
    #: it have finished, their outputs written (the example cache stores them then).
    between_examples: Callable[[], Any] | None = None
    #: The Sphinx state's watch of what the build generates in the source folder
    #: (:class:`docsaccel.incremental.generated.GeneratedFiles`; ``None``: none): a worker
    #: joins it, so what the examples' pages are made of is seen there too.
    generated: Any = None
    #: Whether the build's log is coloured (Sphinx turns colour off when its output is
    #: no terminal): a worker, where Sphinx never decided, follows the build.
    colour: bool = field(default_factory=lambda: colour_on())
    _near: NearBudgetWatch = field(default_factory=NearBudgetWatch, repr=False)
    _run: _Run | None = field(default=None, repr=False)
    _journal: RecordJournal = field(init=False, repr=False)
    #: ``{folder: (number of examples, stems)}`` (:meth:`_stems`).
    _stems_by_folder: dict[str, tuple[int, list[str]]] = field(
        default_factory=dict, init=False, repr=False
    )

    def __post_init__(self) -> None:
        self._journal = RecordJournal(self.records_dir, self.build_id)

    @classmethod
    def for_examples(cls, examples: Iterable[Example], **kwargs: Any) -> ExampleHook:
        return cls({e.src_file: e for e in examples}, **kwargs)

    def __repr__(self) -> str:
        # sphinx-gallery shows resetters by repr; keep it short and stable.
        return f"docsaccel.gallery.ExampleHook({len(self.examples)} examples)"

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_run"] = None  # a run in progress never travels to another process
        state["save_report"] = None  # the build's state stays in the build's process
        state["keep_lock"] = None
        state["between_examples"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        # A worker process runs examples with its own import of sphinx-gallery.
        sg_compat.remove_our_config_comments()
        if not self.colour:
            # Its messages (sphinx-gallery's red traceback of a failing example) go to
            # the build's output as they are: no escape codes in a log file.
            colour_off()
        if self.generated is not None:
            self.generated.join()

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
            self._start(fname, gallery_conf)
        else:
            self._finish(fname)
            sg_compat.call_user_resetters(gallery_conf, fname, "after")

    def _start(self, fname: str, gallery_conf: dict[str, Any]) -> None:
        # The previous example never got its "after" call (abort_on_example_error): its
        # alarm and processes must not outlive it.
        cancel_all()
        if self._run is not None:
            self._wind_up(self._run)
        if self.between_examples is not None and os.getpid() == self.build_pid:
            self.between_examples()
        example = self.example_for(fname)
        if example is None:
            self._run = None
            return
        process_end.install(sigterm=False)
        sg_compat.check_after_blocks(self._block_done)
        if os.getpid() != self.build_pid:  # a worker of a parallel build: not past the build
            end_with_build(self.build_pid)
        registry.clear()
        os.environ[FAST_ENV_VAR] = "1" if self.fast else "0"
        run = _Run(example, now_iso(), time.perf_counter(), time.process_time())
        run.processes = descendants()
        run.meter = MemoryMeter.start(run.processes)
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
        self._watch_memory(run)
        self._watch_outputs(run, gallery_conf)
        if self.cache is not None:
            self.cache.start(example)

    def _memory_budget(self, example: Example) -> int | None:
        """The memory budget the tripwire enforces: in fail mode only."""
        return example.budget.memory.bytes if self.on_overrun == "fail" else None

    def _watch_memory(self, run: _Run) -> None:
        budget, ceiling = self._memory_budget(run.example), self.memory_limit
        if budget is None and ceiling is None:
            return
        hard = None if ceiling is None else hard_line(ceiling, machine_bytes())

        def measure(past: Callable[[Sample], bool]) -> Sample:
            # The quick sample counts a shared page in every process that maps it, so it
            # is never below the careful one: only past a limit is the careful one taken.
            assert run.meter is not None
            sample = run.meter.sample(self.build_pid)
            if past(sample):
                sample = run.meter.sample(self.build_pid, shared_once=True)
            run.sample = sample
            return sample

        def past_a_limit(sample: Sample) -> bool:
            return (ceiling is not None and sample.build > ceiling) or (
                budget is not None and sample.example > budget
            )

        def verdict(sample: Sample) -> str | None:
            if ceiling is not None and sample.build > ceiling and sample.largest:
                return BY_CEILING
            if budget is not None and sample.example > budget:
                return BY_MEMORY
            return None

        def tripped() -> str | None:
            return verdict(measure(past_a_limit))

        def at_check() -> str | None:
            """At the end of a code block, in the example's thread: the memory now, then
            its peak. What came and went between two samples (one call that allocates
            and frees) only the high-water mark saw: judged by the same limits, with the
            rest of the build as it holds now."""
            why = tripped()
            now = run.sample
            if why is not None or now is None:
                return why
            assert run.meter is not None
            peak = peak_bytes(run.meter.so_far()) or 0
            if peak <= now.example:
                return None
            at_peak = Sample(peak, now.build - now.example + peak, now.largest)
            why = verdict(at_peak)
            if why is not None:
                run.sample = at_peak
            return why

        def beyond_hard_line() -> bool:
            return hard is not None and measure(lambda s: s.build >= hard).build >= hard

        run.tripwire = Tripwire(
            tripped,
            lambda why: self._memory_interrupted(run, why),
            code_file=run.example.src_file,
            every=SAMPLE_SECONDS,
            on_hard_stop=lambda elapsed: self._memory_hard_stop(run, elapsed),
            hard=None if hard is None else beyond_hard_line,
            on_delivered=lambda: self._end_memory_children(run),
            at_check=at_check,
        ).start()

    def _block_done(self, last: bool, failed: bool) -> BaseException | None:
        """A code block of the running example is over (:func:`.sg_compat.check_after_blocks`):
        the memory interruption to raise in its place, if its limits stop it.

        The tripwire delivers its interruption only while the example's code runs: one
        decided as the code returns would never reach it, and sphinx-gallery would show
        a success that its record calls stopped. Raised here, every file says it failed.
        """
        run = self._run
        if run is None or run.pid != os.getpid() or run.tripwire is None:
            return None
        if failed:
            # It raised (sphinx-gallery shows that error): its status is decided.
            if last:
                run.tripwire.cancel()
            return None
        message = run.tripwire.decide_now(last)
        return None if message is None else MemoryExceeded(message)

    def _memory_interrupted(self, run: _Run, why: str) -> str:
        """The tripwire tripped (its watch thread): end the processes the example started
        when they hold the memory, record the example, save the report."""
        assert run.sample is not None and run.meter is not None
        ended = self._memory_children(run) if run.interrupted_after is None else ""
        if run.tripped is None:
            run.tripped_memory = _peak_fields_so_far(run.meter)
            run.tripped, run.tripped_peak = run.sample, peak_bytes(run.tripped_memory) or 0
        message = memory_interruption_message(
            run.example,
            why,
            run.sample,
            self.memory_limit,
            run.meter.rss_before,
            run.tripped_peak,
            ended,
            self.fail_mode,
            self.memory_limit_given,
        )
        if run.interrupted_after is None:
            run.interrupted_after = time.perf_counter() - run.wall_start
            run.interrupted_by, run.interruption = why, message
            self._write(run, INTERRUPTED, error=message)
        if why == BY_CEILING:
            # Before anything can kill the process: the report names the example.
            self._say(f"docsaccel: {message}")
            if self.save_report is not None:
                self.save_report()
        return message

    def _memory_children(self, run: _Run) -> str:
        """Choose the processes the example started to end, when they hold more of its
        memory than its own process gained since it started; say which (``""``: none).

        The interruption is an exception raised in the example's thread: it cannot land
        while the example waits for a child (``subprocess.run`` blocks in ``waitpid``),
        and the child would go on growing. Ended once the exception is pending
        (:meth:`_end_memory_children`), the child lets the wait return, the interruption
        land, and the build go on to the next example.
        """
        assert run.meter is not None
        held = {p: rss_bytes(p[0]) for p in descendants() - run.processes}
        grown = max(rss_bytes() - run.meter.rss_before, 0)
        if not held or sum(held.values()) <= grown:
            return ""
        run.memory_children = set(held)
        return ended_text(held, {p: process_name(p[0]) for p in held})

    def _end_memory_children(self, run: _Run) -> None:
        """``SIGTERM``, then ``SIGKILL`` after a short wait, the processes chosen above."""
        chosen, run.memory_children = run.memory_children, set()
        end_processes(chosen)

    def _memory_hard_stop(self, run: _Run, elapsed: float) -> None:
        tripped, last = run.tripped, run.sample
        why = run.tripwire.why if run.tripwire is not None else None
        assert tripped is not None and last is not None and why is not None
        message = memory_hard_stop_message(
            run.example,
            elapsed,
            why,
            tripped,
            last,
            self.memory_limit,
            run.tripped_peak,
            self.memory_limit_given,
        )
        self._end_hard(run, message)

    def _watch_outputs(self, run: _Run, gallery_conf: dict[str, Any]) -> None:
        """Note what the example's processing writes into the galleries (its outputs)."""
        run.srcdir = str(gallery_conf.get("src_dir") or "")
        folders = [os.path.join(run.srcdir, g) for _, g in sg_compat.gallery_dirs(gallery_conf)]
        run.galleries = folders
        # A file outside the galleries is an output only when the run changed it.
        run.outputs_since = outputs.file_clock(os.path.dirname(run.example.target_file))
        outputs.OutputWatch.get().start(folders)
        target = run.example.target_file
        stem = os.path.splitext(os.path.basename(target))[0]
        run.images_before = outputs.folder_status(
            sg_compat.image_folders(target), sg_compat.image_prefix(stem)
        )

    def _outputs(self, run: _Run) -> list[str] | None:
        """The files sphinx-gallery and the scrapers wrote for the example, inside the
        source dir; ``None`` when they were not watched."""
        written = outputs.OutputWatch.get().stop()
        if not run.srcdir:
            return None
        folder = os.path.dirname(run.example.target_file)
        return outputs.collect(
            run.example.target_file,
            run.srcdir,
            written,
            run.images_before,
            self._stems(folder),
            galleries=run.galleries,
            since=run.outputs_since,
        )

    def _stems(self, folder: str) -> list[str]:
        """The stems of the examples whose outputs go to ``folder``: worked out once per
        folder (again when the plan grows), not for each of its examples."""
        cached = self._stems_by_folder.get(folder)
        if cached is not None and cached[0] == len(self.examples):
            return cached[1]
        stems = [
            os.path.splitext(os.path.basename(e.target_file))[0]
            for e in self.examples.values()
            if os.path.dirname(e.target_file) == folder
        ]
        self._stems_by_folder[folder] = (len(self.examples), stems)
        return stems

    def _interrupted(self, run: _Run, elapsed: float) -> str:
        tier = run.deadline.tier if run.deadline is not None else None
        message = interruption_message(run.example, elapsed, tier, self.fail_mode)
        if run.interrupted_after is None:
            run.interrupted_after = elapsed
            run.tier = tier
            run.interrupted_by, run.interruption = BY_TIME, message
            # Recorded now: with abort_on_example_error the "after" call never comes.
            self._write(run, INTERRUPTED, error=message)
        return message

    def _hard_stop(self, run: _Run, elapsed: float) -> None:
        """The watchdog's last resort: record the example, end its processes and this one."""
        grace = run.deadline.grace if run.deadline is not None else 0.0
        run.interrupted_by = run.interrupted_by or BY_TIME
        self._end_hard(run, hard_stop_message(run.example, elapsed, grace))

    def _end_hard(self, run: _Run, message: str) -> None:
        run.interrupted_after = run.interrupted_after or time.perf_counter() - run.wall_start
        record = self._write(run, INTERRUPTED, error=message, finished=True)
        # Its process ends here: sphinx-gallery's "after" call never comes for it.
        self._announce_end(run, record, record["wall_seconds"], ends_build=True)
        run.ended = True
        self._say(message)
        process_end.end_of_process(process_end.EXIT_STATUS)

    def _say(self, message: str) -> None:
        """An error in the build's log, from any thread of any process that runs examples."""
        if process_end.builds_here():
            logger.error(message)
        else:
            # A parallel worker has no Sphinx logging: its stderr is the build's.
            print(f"ERROR: {message}", file=sys.__stderr__, flush=True)

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
        _cancel(run)
        if self.progress is not None:
            self._near.disarm()
        live = descendants()
        if run.meter is not None:
            run.memory = _as_stopped(run, run.meter.finish(live))
        total = time.perf_counter() - run.wall_start
        measured = sg_compat.measured_seconds(run.example.target_file, run.cost_before)
        # sphinx-gallery's time when it measured this run (a passing example), else ours.
        wall = total if measured is None else min(measured, total)
        status, error = _verdict(run, wall)
        failure = sg_compat.running_example_failure(run.example.target_file)
        expected = False
        if failure is not None and status != INTERRUPTED:
            # It raised: a failure, whatever its time (the status all views then show).
            (error, expected), status = failure, FAILED
        overhead = None if measured is None else round(total - wall, 3)
        record = self._write(
            run,
            status,
            error=error,
            finished=True,
            wall=wall,
            overhead=overhead,
            expected_failure=expected,
        )
        run.ended = True
        if self.keep_lock is not None:
            self.keep_lock()
        changed: list[str] = []
        if run.left_mark is not None:
            changed = process_end.after_example(run.example.id, run.left_mark)
            process_end.tell_build(self.records_dir, run.example.id)
        if changed and self.progress is None:  # else its progress line's next line says it
            logger.info(process_end.signals_text(run.example.id, changed))
        self._announce_end(run, record, wall, changed)
        # After the record: the time spent ending its processes is not the example's.
        self._wind_up(run)
        write_run_marker(
            run.example.target_file,
            self.fast,
            record["knobs"],
            self._outputs(run),
            cache=self.cache is not None,
        )
        if self.cache is not None and seen is not None:
            self.cache.save(run.example, seen)

    def _announce_end(
        self,
        run: _Run,
        record: dict[str, Any],
        wall: float,
        changed: Iterable[str] = (),
        ends_build: bool = False,
    ) -> None:
        """Send the example's end to the build's log (its one progress line), with the
        status its record has, however it ended; ``ends_build``: its end is the build's
        (its error with abort_on_example_error, a signal, the hard stop)."""
        if self.progress is None:
            return
        self.progress.send(
            event="end",
            id=run.example.id,
            seconds=wall,
            status=line_status(record),
            # The build's end stopped it: its time is no share of its budget.
            unfinished=is_unfinished(record),
            # No example is left to run after it, whatever the plan counted.
            ends_build=ends_build,
            peak=peak_bytes(record),
            # Which limit stopped it: a memory stop's line shows its memory, not its time.
            by=record.get("interrupted_by"),
            # Its status holds only if what it left lets the build's process end.
            left=process_end.left_by(run.example.id),
            # The stop signals whose handler it changed (put back): a worker's own log
            # lines do not reach the build's log, its progress events do.
            signals=list(changed),
        )

    def _wind_up(self, run: _Run) -> None:
        """What every example end needs, however it ended: no process or module left over."""
        end_started(run.processes)
        if run.interrupted_after is not None:
            _forget_half_imported_modules()

    def running_file(self) -> str | None:
        """The source of the example running in this process (not in a forked copy of it)."""
        run = self._run
        return run.example.src_file if run is not None and run.pid == os.getpid() else None

    def end_running(self, why: str | None) -> None:
        """The process ends while an example runs: record why (if known), end its processes."""
        self._end(None if why is None else unfinished_error(why), finished=False)

    def fail_running(self, error: str) -> None:
        """The running example raised, and that ends the build: record it failed so."""
        self._end(error, finished=True)

    def _end(self, error: str | None, finished: bool) -> None:
        run = self._run
        if run is None or run.pid != os.getpid():
            return
        _cancel(run)
        if self.progress is not None:
            self._near.disarm()
        end_started(run.processes)
        if error is not None and not run.ended:
            if run.interrupted_after is None:
                self._write(run, FAILED, error=error, finished=finished)
            elif finished:
                # Its budget's interruption is what ended the build: it finished so, its
                # status the one it had when its budget stopped it.
                self._write(run, INTERRUPTED, error=run.interruption, finished=True)
        if not run.ended and run.record is not None:
            # Its error ends the build (abort_on_example_error), or the build's process
            # ends while it runs (a signal, os._exit): sphinx-gallery's "after" call,
            # which logs an example's end, never comes for it.
            self._announce_end(run, run.record, run.record["wall_seconds"], ends_build=True)
        run.ended = True
        if not finished:
            # The process ends mid-run: sphinx-gallery would take what the run wrote so
            # far (its copy, some images) for the example's outputs in every later build,
            # even once its source is gone.
            sg_compat.remove_outputs(run.example.target_file)

    def _write(
        self,
        run: _Run,
        status: str,
        error: str | None,
        finished: bool = False,
        provisional: bool = False,
        wall: float | None = None,
        overhead: float | None = None,
        expected_failure: bool = False,
    ) -> dict[str, Any]:
        """Journal the example's record as it stands now; return it."""
        facts = registry.snapshot()
        cache = {} if self.cache is None else {"cache": self.cache.record_field(run.example.id)}
        if wall is None:
            wall = time.perf_counter() - run.wall_start
        # Nothing has run yet at the provisional record: no memory to measure.
        memory: dict[str, Any] = {}
        if run.memory is not None:
            memory = run.memory
        elif run.meter is not None and not provisional:
            memory = _as_stopped(run, run.meter.so_far())
        if status == INTERRUPTED and run.interrupted_by is not None:
            memory = {**memory, "interrupted_by": run.interrupted_by}
        record = base_record(
            run.example,
            status,
            self.fast,
            wall_seconds=round(wall, 3),
            cpu_seconds=round(time.process_time() - run.cpu_start, 3),
            **memory,
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
        if expected_failure:
            record[EXPECTED_FAILURE] = True
        self._journal.append(record)
        run.record = record
        return record


def colour_on() -> bool:
    """Whether Sphinx colours the messages logged in this process. Sphinx turns colour off
    when its output is no terminal (``NO_COLOR``, a log file, a pipe); a process it did
    not start (a ``parallel`` worker) colours them until told otherwise."""
    from sphinx.util import console

    try:
        return console.colorize("red", "x") != "x"
    except Exception:  # a Sphinx whose console helpers differ: leave its colours alone
        return True


def colour_off() -> None:
    """Turn Sphinx's colours off in this process, as ``sphinx-build`` does in its own."""
    from sphinx.util import console

    console.nocolor()


def _forget_half_imported_modules() -> None:
    """Drop modules whose import was cut short, so the next example imports them afresh."""
    for name, module in list(sys.modules.items()):
        spec = getattr(module, "__spec__", None)
        if getattr(spec, "_initializing", False):
            sys.modules.pop(name, None)


def _cancel(run: _Run) -> None:
    for armed in (run.deadline, run.tripwire):
        if armed is not None:
            armed.cancel()


def _verdict(run: _Run, wall: float) -> tuple[str, str | None]:
    """The status of a run that ended, and its error: interrupted, over budget or ok."""
    if run.interrupted_after is not None:
        return INTERRUPTED, run.interruption
    over = []
    budget = run.example.budget
    if budget.seconds is not None and wall > budget.seconds:
        over.append(f"took {format_over(wall, budget.seconds)}, over its budget")
    peak = peak_bytes(run.memory or {})
    if budget.memory.bytes is not None and peak is not None and peak > budget.memory.bytes:
        over.append(
            f"peaked at {format_size(peak)}, over its memory budget of {budget.memory.describe()}"
        )
    return (OVER_BUDGET, "; ".join(over)) if over else (OK, None)
