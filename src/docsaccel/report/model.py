"""One normalized timing per example, whatever file it was read from.

The design, in full: the reports guide's *Design* section.

Example:

>>> timing = Timing(id="tutorials/plot_quick.py", name="plot_quick.py", seconds=42.0,
...                 budget_seconds=30.0, budget_source="default")
>>> timing.over_budget, timing.budget_use
(True, 1.4)
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from docsaccel.budgets import format_measured
from docsaccel.contract import (
    BUDGETS_FAILED,
    BY_CEILING,
    BY_MEMORY,
    CACHED,
    EARLIER_RUN,
    INTERRUPTED,
    NOT_EXECUTED,
    OK,
    SHARD_COMMAND,
    STOPPED_BEFORE_EXAMPLES,
    STOPPED_WHILE_GENERATING,
    STORED_RUN,
    VERDICT_PENDING_KEY,
    WHOLE_RUNS,
    InputError,
    build_failures,
    conf_changed,
    distributions_changed,
    fails_build,
    is_finite_number,
    is_judged,
    is_measured,
    is_near_budget,
    is_near_memory_budget,
    is_over_budget,
    is_over_memory_budget,
    is_timed,
    modules_changed,
    ran_none,
    shard_command_text,
    status_text,
)
from docsaccel.layout import (
    building_since,
    in_output_folder,
    lock_holder,
    outdir_of,
    report_path,
    started_after,
    where_written,
)
from docsaccel.memory_sizes import format_size
from docsaccel.process_stat import runs
from docsaccel.report.journal import damage_text
from docsaccel.schema import ended_phase

# InputError is the contract's one class of unreadable inputs, importable from here too.
__all__ = [
    "BUILDING_NOW",
    "LATER_BUILD_STARTED",
    "NO_TOTAL",
    "SG_FORMATS",
    "SG_JUNIT",
    "SG_RST_BULLETS",
    "SG_RST_FORMATS",
    "SG_RST_GRID",
    "SG_RST_LIST_TABLE",
    "IncompleteBuildError",
    "InputError",
    "LoadedInput",
    "StaleReportError",
    "Timing",
    "Verdicts",
    "budget_failures_text",
    "matched",
    "one_side_ids",
    "pair_indices",
    "running_text",
    "unique_timings",
    "whole_run_totals",
]


#: The formats of sphinx-gallery's ``sg_execution_times.rst`` (:mod:`.inputs`): its bullet
#: list, its grid table, its list-table. A time (and a peak) per example, listed alike
#: whether the example passed or raised: nothing of how it ended.
SG_RST_BULLETS = "sg-rst-bullets"
SG_RST_GRID = "sg-rst-grid"
SG_RST_LIST_TABLE = "sg-rst-list-table"
SG_RST_FORMATS = (SG_RST_BULLETS, SG_RST_GRID, SG_RST_LIST_TABLE)
#: The ``build`` key of journals read as a report (a build killed outright wrote none)
#: beside a later build's note that it started, which wrote no report either: when it
#: started (:func:`docsaccel.layout.started_after`).
LATER_BUILD_STARTED = "later_build_started"
#: The ``build`` key of journals read as a report while the build that writes them runs
#: (it holds their output folder's lock): its pid. Not a build killed outright.
BUILDING_NOW = "building_now"
#: The ``build`` key of journals read as a report when one is damaged: where and how
#: each is (:attr:`docsaccel.report.journal.JournalRead.damage`), read up to there.
JOURNAL_DAMAGED = "journal_damaged"
#: sphinx-gallery's JUnit XML (its ``junit`` option): how each example ended, and its time.
SG_JUNIT = "sg-junit"
#: Every format sphinx-gallery writes: no note of docsaccel's is beside such a file, so
#: whether a later build replaced it is asked of the folders it is in
#: (:meth:`LoadedInput.require_current`).
SG_FORMATS = (*SG_RST_FORMATS, SG_JUNIT)


class IncompleteBuildError(InputError):
    """A gate was given the report of a build that stopped before its end."""


def running_text(path: str | Path, holder: str, then: str, written: bool = False) -> str:
    """What every command says of the report in ``path`` (a file, or the output folder
    that holds it) while the build ``holder`` (a pid) runs there: it is not finished,
    whatever it holds yet; ``written``: the build wrote it complete, and its process
    runs on (:func:`runs_on_text`). ``then``: what to do (``"check after it ends"``).

    >>> print(running_text("out", "42", "wait"))
    out: a build is running now (process 42) and has not finished this report; wait
    """
    if written:
        return f"{path}: {runs_on_text(holder)}; {then}"
    return (
        f"{path}: a build is running now (process {holder}) and has not finished this "
        f"report; {then}"
    )


def runs_on_text(holder: str) -> str:
    """What every view and gate says of a build that wrote its report complete while its
    process (``holder``, a pid) runs on: its last handlers, or what an example left (a
    thread), keep it alive. Its examples are done and their times whole; only its
    verdict may still change, as the process ends.

    >>> print(runs_on_text("42")[:56])
    a build is running now (process 42) past its report: its
    """
    return (
        f"a build is running now (process {holder}) past its report: its examples "
        "finished and the report holds all their times, but the build may still fail as "
        "its process ends"
    )


class StaleReportError(InputError):
    """A command was given a report that a later build of its project did not replace:
    that build failed before docsaccel ran (see :func:`docsaccel.contract.conf_changed`)."""


class Verdicts:
    """The budget rules of :mod:`docsaccel.contract`, applied to an example's fields:
    what a :class:`Timing` and a view's row both say about an example."""

    status: str
    seconds: float
    budget_seconds: float | None
    memory_bytes: int | None
    memory_budget_bytes: int | None
    interrupted_by: str | None
    cache: dict[str, Any]
    expected_failure: bool
    unfinished: bool
    killed: bool
    running_now: bool
    time_unknown: bool

    def interruption_text(self) -> str:
        """``"interrupted by its memory budget"``-style words, or ``""``."""
        if self.status != INTERRUPTED:
            return ""
        by = {BY_MEMORY: "its memory budget", BY_CEILING: "the build's memory ceiling"}
        return f"interrupted by {by.get(self.interrupted_by or '', 'its time budget')}"

    @property
    def stopped_by_memory(self) -> bool:
        """A memory limit interrupted it: its time is how long it ran until then, no
        timing of the example (a time budget's stop is: it ran out of its budget)."""
        return self.status == INTERRUPTED and self.interrupted_by in (BY_MEMORY, BY_CEILING)

    @property
    def status_label(self) -> str:
        """Its status as every view writes it (``"failed (expected)"``, ``"did not finish"``,
        ``"was running when the build was killed"``, ``"running"``:
        :func:`docsaccel.contract.status_text`)."""
        return status_text(
            self.status, self.expected_failure, self.unfinished, self.killed, self.running_now
        )

    @property
    def started_only(self) -> bool:
        """Its record is the one written as it started: it was running when its build was
        killed, or it runs now. Its time is no time at all, neither partial nor whole."""
        return self.unfinished and (self.killed or self.running_now)

    @property
    def no_time(self) -> bool:
        """Its record's time is no time at all: written as it started
        (:attr:`started_only`), or its reused outputs' run kept none (``time_unknown``)."""
        return self.started_only or self.time_unknown

    def ended_text(self) -> str:
        """How a run whose time says nothing of its speed ended, as every view writes it:
        ``"did not finish after 2.1s"``, ``"failed after 3s"``; one running when its build was
        killed, ``"was running when the build was killed"`` alone, and one its build runs
        now, ``"running"`` alone, as one reused from a run that kept no time, ``"cached"``
        (:attr:`no_time`)."""
        if self.no_time:
            return self.status_label
        return f"{self.status_label} after {format_measured(self.seconds)}"

    @property
    def build_failure(self) -> bool:
        """It failed, and not as expected: its build failed
        (:func:`docsaccel.contract.fails_build`). One the build stopped while it ran
        (``unfinished``) did not fail by itself: that is the build's incompleteness, which
        the views say as such and the gates judge on its own."""
        return fails_build(self.status, self.expected_failure) and not self.unfinished

    @property
    def timed(self) -> bool:
        """Its time is that of a run (:func:`docsaccel.contract.is_timed`), so a view may
        set it against its budget: not one never run, nor one stopped part-way."""
        if self.stopped_by_memory:  # its run was cut short by memory, not its time budget
            return False
        return is_timed(self.status, self.unfinished) and not self.time_unknown

    @property
    def measured(self) -> bool:
        """This build ran and timed it (:func:`docsaccel.contract.is_measured`)."""
        return is_measured(self.status)

    @property
    def restored(self) -> bool:
        """The example cache restored it: its time is that of the run that stored it."""
        return self.status == CACHED and self.cache.get("hit") is True

    @property
    def judged(self) -> bool:
        """Its budgets judge it (:func:`docsaccel.contract.is_judged`): measured by this
        build, or restored (:attr:`restored`); otherwise it is neither within them nor
        over them."""
        return is_judged(self.status, cache_hit=self.restored)

    def time_origin(self) -> str:
        """Whose run its time is, when not this build's: ``"stored run"`` for one the
        example cache restored, ``"earlier build"`` for other reused outputs, ``""``
        otherwise (:data:`docsaccel.contract.STORED_RUN`)."""
        if self.status != CACHED:
            return ""
        return STORED_RUN if self.restored else EARLIER_RUN

    def labelled_seconds(self) -> str:
        """Its time as the build log writes it, labelled with whose run it is when not
        this build's: ``"3.0s (stored run)"`` (:meth:`time_origin`)."""
        origin = self.time_origin()
        text = format_measured(self.seconds)
        return f"{text} ({origin})" if origin else text

    @property
    def over_time_budget(self) -> bool:
        """Slower than a finite budget (an example its time budget interrupted always is)."""
        return self.judged and is_over_budget(
            self.status, self.seconds, self.budget_seconds, self.interrupted_by
        )

    @property
    def over_memory_budget(self) -> bool:
        """Its peak above a finite memory budget (an example interrupted by its memory
        budget or by the build's memory ceiling always is)."""
        return self.judged and is_over_memory_budget(
            self.status, self.memory_bytes, self.memory_budget_bytes, self.interrupted_by
        )

    @property
    def over_budget(self) -> bool:
        """Over its time budget or its memory budget."""
        return self.over_time_budget or self.over_memory_budget

    @property
    def near_time_budget(self) -> bool:
        return self.judged and is_near_budget(
            self.status, self.seconds, self.budget_seconds, self.interrupted_by
        )

    @property
    def near_memory_budget(self) -> bool:
        return self.judged and is_near_memory_budget(
            self.status, self.memory_bytes, self.memory_budget_bytes, self.interrupted_by
        )

    @property
    def near_budget(self) -> bool:
        """Over neither budget, but near one of them."""
        return not self.over_budget and (self.near_time_budget or self.near_memory_budget)


@dataclass(frozen=True)
class Timing(Verdicts):
    """What is known about one example's run.

    ``id`` is unique within an input; two inputs are matched on ``ref`` where both
    carry one, else on ``id`` (:func:`matched`); ``name`` is
    the example's path inside its gallery folder (what budget patterns match). Fields
    the input format does not carry are ``None`` (budget, memory) or empty.
    ``memory_bytes`` is the example's peak (:func:`docsaccel.schema.peak_bytes`; a
    sphinx-gallery file's memory column), what its memory budget bounds.
    """

    id: str
    name: str
    seconds: float
    status: str = OK
    budget_seconds: float | None = None
    budget_source: str | None = None
    budget_detail: str | None = None
    memory_bytes: int | None = None
    #: What its process held more after it than before (a docsaccel report's).
    retained_bytes: int | None = None
    #: torch's CUDA peak and retained bytes, when the example used CUDA.
    gpu_peak_bytes: int | None = None
    gpu_retained_bytes: int | None = None
    memory_budget_bytes: int | None = None
    memory_budget_source: str | None = None
    memory_budget_detail: str | None = None
    #: What interrupted it (:data:`docsaccel.contract.INTERRUPTED_BY`), if anything did.
    interrupted_by: str | None = None
    fast: bool | None = None
    knobs: dict[str, Any] = field(default_factory=dict)
    render: dict[str, Any] = field(default_factory=dict)
    #: It was running when the build stopped (:func:`docsaccel.contract.is_unfinished`),
    #: or was interrupted and the build stopped before it had finished.
    unfinished: bool = False
    #: It was running when its build was killed outright (SIGKILL: the build wrote no
    #: report and its journal was read): its record's time is that of its start, no time.
    killed: bool = False
    #: It runs now: its build holds its output folder's lock and its journal was read
    #: (:data:`~docsaccel.report.model.BUILDING_NOW`). Its record's time is that of its
    #: start, no time.
    running_now: bool = False
    #: Its record's ``seconds`` is no time at all: its outputs were reused from a run whose
    #: time no file kept (:data:`docsaccel.schema.TIME_UNKNOWN`), or its record is the one
    #: written as it started, which no end replaced
    #: (:func:`docsaccel.contract.is_start_record`).
    time_unknown: bool = False
    #: The hard stop ended it, and the build with it
    #: (:func:`docsaccel.contract.is_stopped_hard`).
    stopped_hard: bool = False
    #: The record's ``cache`` value: ``{"hit": True, "saved_seconds": ...}`` for an example
    #: restored from the example cache, ``{"hit": False, "reason": ...}`` for one it ran.
    cache: dict[str, Any] = field(default_factory=dict)
    #: sphinx-gallery's label of its page (``sphx_glr_tutorials_plot_a.py``), which its
    #: root and per-gallery files and docsaccel's report share (:func:`matched`);
    #: ``None`` where the input does not say (a JUnit XML, a report written before
    #: records kept it).
    ref: str | None = None
    #: Why it failed or was interrupted (the record's ``error``), if the input says.
    error: str | None = None
    #: It failed as sphinx-gallery was told to expect (``expected_failing_examples``).
    expected_failure: bool = False

    @property
    def judged_failed(self) -> bool:
        """No gate that judges it passes it: it failed, not as expected, by its own doing
        (:attr:`build_failure`) or because its build stopped while it ran (Ctrl-C, SIGTERM,
        an ``os._exit``, a worker that died). ``check --allow-incomplete`` judges an
        unfinished build's examples, and one that did not finish is not one that passed."""
        return fails_build(self.status, self.expected_failure)

    @property
    def whole_run(self) -> bool:
        """Its time is that of a whole run (:data:`docsaccel.contract.WHOLE_RUNS`): one a
        view may compare or trend. An example stopped at its budget, one that raised or
        one that never ran has a time that says nothing of its speed."""
        return self.status in WHOLE_RUNS

    @property
    def stored_seconds(self) -> float | None:
        """The time of the run that stored it, for an example the example cache restored
        (:attr:`restored`), when its input holds it (a report's ``cache.saved_seconds``);
        ``None`` otherwise. A restore's own time (sphinx-gallery's file of its build
        times the restore) is no run's."""
        saved = self.cache.get("saved_seconds") if self.restored else None
        return float(saved) if is_finite_number(saved) and saved >= 0 else None

    @property
    def compared_seconds(self) -> float | None:
        """Its time as ``compare`` and ``report --baseline`` compare and total it: a whole
        run's (:attr:`whole_run`), or for an example the example cache restored, judged by
        the run that stored it (:func:`docsaccel.contract.is_judged`), that run's time
        (:attr:`stored_seconds`). ``None`` for any other: not a timing to compare, its
        status says why (a stopped example, one not run, one whose only time is its
        restore's).

        >>> Timing("a.py", "a.py", 0.004, status="cached",
        ...        cache={"hit": True, "saved_seconds": 3.0}).compared_seconds
        3.0
        >>> Timing("a.py", "a.py", 0.004, status="cached", cache={"hit": True}).compared_seconds
        """
        if self.whole_run:
            return self.seconds
        return self.stored_seconds if self.judged else None

    @property
    def audit(self) -> dict[str, Any]:
        """What an audit of the example cache found of its entry (``status``, one of
        :data:`docsaccel.contract.AUDIT_STATUSES`, ``differences``...), or ``{}``."""
        audit = self.cache.get("audit")
        return audit if isinstance(audit, dict) else {}

    def with_budget(self, seconds: float | None, source: str, detail: str) -> Timing:
        """A copy with another budget (used when command-line budgets apply)."""
        return replace(self, budget_seconds=seconds, budget_source=source, budget_detail=detail)

    def with_memory_budget(self, size: int | None, source: str, detail: str) -> Timing:
        """A copy with another memory budget (a budget file given to ``check``)."""
        return replace(
            self, memory_budget_bytes=size, memory_budget_source=source, memory_budget_detail=detail
        )

    @property
    def memory_use(self) -> float | None:
        """``peak / memory budget`` (1.0 = exactly at it), ``None`` without one."""
        if not self.memory_budget_bytes or self.memory_bytes is None:
            return None
        return self.memory_bytes / self.memory_budget_bytes

    @property
    def budget_use(self) -> float | None:
        """``seconds / budget`` (1.0 = exactly at budget); ``None`` when unbounded, or when
        its time is no run's (:attr:`timed`: never run, or stopped part-way)."""
        if not self.budget_seconds or not self.timed:  # a zero budget never validates
            return None
        return self.seconds / self.budget_seconds

    @property
    def headroom_seconds(self) -> float | None:
        """``budget - seconds``; ``None`` when unbounded or not :attr:`timed`."""
        if self.budget_seconds is None or not self.timed:
            return None
        return self.budget_seconds - self.seconds


def budget_failures_text(timings: Sequence[Timing]) -> str:
    """The examples whose budgets failed their build (:attr:`LoadedInput.budget_failures`)
    on one line, as every view says them, ``""`` for none: ``"1 example stopped at its
    budget: a.py; 2 examples over their budget: b.py, c.py"``.

    >>> budget_failures_text([Timing("a.py", "a.py", 3.0, status="interrupted")])
    '1 example stopped at its budget: a.py'
    """
    ceiling = [t for t in timings if t.status == INTERRUPTED and t.interrupted_by == BY_CEILING]
    groups = (
        (
            [t for t in timings if t.status == INTERRUPTED and t not in ceiling],
            "stopped at {} budget",
        ),
        (ceiling, "stopped by the build's memory ceiling"),
        ([t for t in timings if t.status != INTERRUPTED], "over {} budget"),
    )
    parts = []
    for group, what in groups:
        if not group:
            continue
        many = len(group) != 1
        more = f" and {len(group) - 5} more" if len(group) > 5 else ""
        named = ", ".join(t.id for t in group[:5]) + more
        what = what.format("their" if many else "its")
        parts.append(f"{len(group)} example{'s' if many else ''} {what}: {named}")
    return "; ".join(parts)


@dataclass(frozen=True)
class LoadedInput:
    """The timings read from one file, its detected format and build facts (if any)."""

    path: str
    format: str
    timings: list[Timing]
    build: dict[str, Any] = field(default_factory=dict)
    #: Whether it lists every example its build planned, reached or not: a report does
    #: (those its build did not reach as ``not-executed``), the journals of a build that
    #: wrote none only with the plan it wrote first. An example it does not list is then
    #: not in its build; else it may be one the build did not reach.
    lists_plan: bool = True
    #: The docsaccel report of the build this input is a file of, when known: itself for a
    #: report, the build's report for a sphinx-gallery file judged by it
    #: (:func:`~docsaccel.report.inputs.judged_input`). Every file of one build names the
    #: same one, so it says which build an input is (:func:`build_identity`).
    build_report: str | None = None
    #: Whether it lists fewer examples than its build's report: a gallery's own
    #: ``sg_execution_times.rst`` is part of its build.
    part_of_build: bool = False

    @property
    def complete(self) -> bool:
        """False for the report of a build that stopped early (``"complete": false``).

        Inputs that do not say (sphinx-gallery's files) count as complete.
        """
        return self.build.get("complete", True) is not False

    @property
    def read_with_its_report(self) -> bool:
        """Whether it is a sphinx-gallery file (:data:`SG_FORMATS`) read with its build's
        report (:attr:`build_report`): each example's status is the report's, and the
        report said its build finished and no gate fails it
        (:func:`~docsaccel.report.inputs.judged_input`)."""
        return self.format in SG_FORMATS and self.build_report is not None

    @property
    def holds_status(self) -> bool:
        """Whether the input says how each example ended. sphinx-gallery's
        ``sg_execution_times.rst`` (:data:`SG_RST_FORMATS`) lists an example that raised
        with its time, as any other: a gate reading it alone cannot see a failure; read
        with its build's report (:attr:`read_with_its_report`), it says what the report
        says."""
        return self.format not in SG_RST_FORMATS or self.read_with_its_report

    def no_status_text(self) -> str:
        """What every view says of a sphinx-gallery file (:data:`SG_FORMATS`), ``""`` for
        any other input and for one read with its build's report
        (:attr:`read_with_its_report`): nothing in such a file ties it to a build that
        finished, or to the last build, so a gate passing it says so.
        ``sg_execution_times.rst`` does not say how an example ended either
        (:attr:`holds_status`); the JUnit XML does, but not a build failed otherwise
        (``-W``, a budget in fail mode, killed after its examples).

        >>> LoadedInput("junit.xml", SG_JUNIT, []).no_status_text()[:60]
        "junit.xml: sphinx-gallery's JUnit XML says how each example "
        >>> LoadedInput("r.json", "docsaccel-report", []).no_status_text()
        ''
        """
        if self.format not in SG_FORMATS or self.read_with_its_report:
            return ""
        check = f"check the build's report ({report_path('<outdir>')})"
        if self.holds_status:
            return (
                f"{self.path}: sphinx-gallery's JUnit XML says how each example ended, not "
                "whether its build finished or failed otherwise (-W, a budget in fail mode, "
                f"killed after its examples), nor whether it is the last build's: {check}"
            )
        return (
            f"{self.path}: sphinx-gallery's file does not say whether an example failed, "
            "nor whether its build finished (a stopped build leaves the files of the "
            f"galleries it ended): {check}"
        )

    @property
    def running(self) -> list[str]:
        """The examples that were running when the build stopped: their ids, and for one
        interrupted before then, by what and at which peak."""
        found = []
        for timing in self.timings:
            if not timing.unfinished:
                continue
            found.append(timing.id)
            if timing.status == INTERRUPTED:
                peak = (
                    "" if timing.memory_bytes is None else f" at {format_size(timing.memory_bytes)}"
                )
                found[-1] += f" ({timing.interruption_text()}{peak})"
        return found

    @property
    def stopped_hard(self) -> list[str]:
        """The ids of the examples the hard stop ended (it stopped the build)."""
        return [timing.id for timing in self.timings if timing.stopped_hard]

    def failures(self) -> list[str]:
        """Why this build failed although it finished, causes before consequences: each
        example that failed unexpectedly, with its error, then the build's own reasons
        that its failed examples do not say (:meth:`build_failures`: ``-W`` turning their
        warnings into errors); empty for a build that did not fail so.

        >>> build = {"exit_blocked": "a thread held it"}
        >>> LoadedInput("r.json", "docsaccel-report", [], build=build).failures()
        ['a thread held it']
        """
        failed = [
            f"{t.id} failed ({t.error.splitlines()[0]})" if t.error else f"{t.id} failed"
            for t in self.failed_examples
        ]
        overruns = budget_failures_text(self.budget_failures)
        return [*failed, *([overruns] if overruns else []), *self.build_failures()]

    def judged_failures(self) -> list[str]:
        """Why no gate passes this build: its :meth:`failures`, each example it stopped
        while it ran (:attr:`Timing.judged_failed`, not by its own doing), ``"<id> did
        not finish"`` (or ``"<id> was running when the build was killed"``, in its
        :attr:`Timing.status_label`), then that it did not finish and why
        (:meth:`incomplete_text`: a build that did not finish failed, whatever its
        examples did; ``--allow-incomplete`` lets a gate list them, never pass it).
        The rule ``check`` exits 3 on, which ``compare`` asks of its head too, so the two
        gates agree on every status; empty for a build no gate fails.

        >>> stopped = Timing("a.py", "a.py", 1.0, status="failed", unfinished=True)
        >>> LoadedInput("r.json", "docsaccel-report", [stopped]).judged_failures()
        ['a.py did not finish']
        >>> killed = replace(stopped, killed=True)
        >>> LoadedInput("r.json", "docsaccel-report", [killed]).judged_failures()
        ['a.py was running when the build was killed']
        >>> ended = {"complete": False, "ended_because": "it was terminated (SIGTERM)"}
        >>> LoadedInput("r.json", "docsaccel-report", [], build=ended).judged_failures()
        ['the build did not finish (it was terminated (SIGTERM))']
        """
        # Its status as every view writes it: one running when its build was killed
        # outright is said so, as check and the views say it.
        stopped = [
            f"{t.id} {t.status_label}"
            for t in self.timings
            if t.judged_failed and not t.build_failure
        ]
        unfinished = [] if self.complete else [self.incomplete_text()]
        return [*self.failures(), *stopped, *unfinished]

    @property
    def failed_examples(self) -> list[Timing]:
        """The examples that failed unexpectedly (:attr:`Timing.build_failure`)."""
        return [timing for timing in self.timings if timing.build_failure]

    @property
    def budget_failures(self) -> list[Timing]:
        """The examples whose budgets failed this build, by id: each one the hard stop
        ended (:attr:`Timing.stopped_hard`: it ignored its budget's interruption, and its
        process ended before the build could say why it failed), and when its ``build``
        holds :data:`~docsaccel.contract.BUDGETS_FAILED`, each one stopped at its budget
        or by the memory ceiling, and in fail mode each one over its budget (one restored
        from the example cache with a run over it too); empty for any other build.

        >>> hard = Timing("a.py", "a.py", 3.0, status="interrupted", stopped_hard=True)
        >>> [t.id for t in LoadedInput("r.json", "docsaccel-report", [hard]).budget_failures]
        ['a.py']
        """
        said = isinstance(self.build.get(BUDGETS_FAILED), str)
        fail_mode = self.build.get("on_overrun") == "fail"
        found = (
            t
            for t in self.timings
            if t.stopped_hard
            or (said and (t.status == INTERRUPTED or (fail_mode and t.over_budget)))
        )
        return sorted(found, key=lambda t: t.id)

    def build_failures(self) -> list[str]:
        """The build's own reasons for failing that its failed examples and the examples
        its budgets failed it on (:attr:`budget_failures`) do not say already
        (:func:`docsaccel.contract.build_failures`): each failure said once."""
        errors = [t.error for t in self.failed_examples]
        build = self.build
        if VERDICT_PENDING_KEY in build and self.building_now is not None:
            # Its verdict waits for its process, which runs: no failure yet.
            build = {key: value for key, value in build.items() if key != VERDICT_PENDING_KEY}
        return build_failures(build, errors, overruns=len(self.budget_failures))

    @property
    def building_now(self) -> str | None:
        """The pid of the build running now in this report's output folder (it holds the
        folder's lock: :func:`docsaccel.layout.lock_holder`), whose report this is until
        it ends; ``None`` for a copy kept elsewhere, or when no build runs there. A build
        holds its lock until its verdict is in its report: one that wrote its report
        ``complete`` runs on while its last handlers may still fail it
        (:data:`~docsaccel.contract.VERDICT_PENDING`), and is no finished build yet."""
        if self.build.get(BUILDING_NOW):
            return str(self.build[BUILDING_NOW])  # journals read while their build runs
        if not in_output_folder(self.path):
            return None
        holder = lock_holder(outdir_of(self.path))
        # The build reading its own report (its report page as it stops) is ending, not
        # running on: what it says is why it stopped.
        return None if holder == str(os.getpid()) else holder

    @property
    def times_partial(self) -> bool:
        """Whether the times this input holds are not all its build's: it did not finish
        (``"complete": false``, journals read while their build runs). A report written
        complete holds every time, even while its build's process runs on."""
        return not self.complete

    def incomplete_text(self) -> str:
        """``""`` for a finished build, else why not, naming the examples it stopped at.

        ``"the build did not finish (tutorials/plot_a.py was running)"``,
        ``"the build did not finish (tutorials/plot_x.py was stopped hard after its
        budget)"``, ``"... (tutorials/plot_b.py ran, but its record was lost)"`` (a file of
        the records folder was removed while the build ran), ``"... (its examples ran;
        it ended while its pages were written)"`` (or ``"while Sphinx read the
        documents"``, before it wrote any), ``"... (it stopped before its examples
        ran: <why>)"`` (a refused setting), ``"... (it stopped while generating the
        galleries: <why>)"`` (sphinx-gallery refused an example once others ran), with
        what ended its process first when a signal did (``"... (it was terminated
        (SIGTERM); its examples ran; ...)"``), or
        ``"the build did not finish"`` when no record says.
        """
        # Asked first: a build whose process runs on past a passing report (what an
        # example left holds it) may still fail as that process ends.
        holder = self.building_now
        if holder is not None and self.complete:
            return runs_on_text(holder)
        if holder is not None:
            return f"the build has not finished: it is running now (process {holder})"
        if self.complete:
            return ""
        why = []
        ended = self._shard_command_text() or self.build.get("ended_because")
        if isinstance(ended, str) and ended:
            why.append(ended)
        stopped = self.build.get("stopped_before_examples")
        if stopped:
            why.append(f"it {STOPPED_BEFORE_EXAMPLES}: {stopped}")
        generating = self.build.get("stopped_while_generating")
        if generating:
            why.append(f"it {STOPPED_WHILE_GENERATING}: {generating}")
        if self.stopped_hard:
            why.append(
                _state(
                    self.stopped_hard,
                    "was stopped hard after its budget",
                    "were stopped hard after their budgets",
                )
            )
        if self.running:
            why.append(_state(self.running, "was running", "were running"))
        lost = self.build.get("records_lost")
        if lost:
            names = [str(item) for item in lost]
            why.append(
                _state(names, "ran, but its record was lost", "ran, but their records were lost")
            )
        if self.build.get("lock_lost"):
            why.append("another build wrote into its output folder")
        if self.build.get("report_missing"):
            why.append(
                "it wrote no report: it was killed outright (SIGKILL, out of memory), or still runs"
            )
        damaged = self.build.get(JOURNAL_DAMAGED)
        if damaged:
            why.append(damage_text([str(item) for item in damaged]))
        phase = ended_phase({**self.build, "complete": False})
        if phase is not None:
            why.append(f"its examples ran; it ended {phase}")
        if not why:
            return "the build did not finish"
        return f"the build did not finish ({'; '.join(why)})"

    def _shard_command_text(self) -> str | None:
        """What the report of a shard command that has not finished
        (:data:`~docsaccel.contract.SHARD_COMMAND`) says of it now, read in its output
        folder: whether its process runs on or was killed outright. ``None`` for any
        other report, a copy kept elsewhere (whose pid is no process of this machine's),
        or one whose process start was not read (a pid alone may be reused)."""
        started = self.build.get(SHARD_COMMAND)
        path = where_written(self.path)
        # Its own folder only, not in_output_folder(): the command removed the records
        # and the note a build started, which that asks for.
        if not isinstance(started, dict) or path != report_path(path.parent.parent):
            return None
        pid, start = started.get("pid"), started.get("process_start")
        if type(pid) is not int or pid <= 0 or type(start) is not int:
            return None
        running = runs(pid, start)
        return shard_command_text(
            str(started.get("command")), pid, str(started.get("started_at")), running
        )

    @property
    def ran_nothing(self) -> bool:
        """Whether the build ran none of the examples it lists (every one
        ``not-executed``): it stopped before them, or was told to run none (an empty
        ``DOCSACCEL_SHARD_EXAMPLES``). Such a build measured nothing a gate could judge."""
        return ran_none(t.status for t in self.timings)

    def require_current(self) -> None:
        """Raise :class:`StaleReportError` naming the file if a later build of the
        project failed before docsaccel ran, leaving this report behind in its output
        folder: its ``conf.py`` changed since (:func:`docsaccel.contract.conf_changed`),
        or a later build noted beside it that it started and never replaced it
        (:func:`docsaccel.layout.started_after`).

        Every reader asks it, of every input. Only a report read in its build's output
        folder (:func:`docsaccel.layout.in_output_folder`) can be one left behind (also
        when a module its build loaded before docsaccel changed after it was written:
        :func:`docsaccel.contract.modules_changed`, or the installed version of one of
        its extensions: :func:`docsaccel.contract.distributions_changed`): a copy
        kept elsewhere (an archived ``main-report.json``) is the build it names."""
        if in_output_folder(self.path):
            conf = self.build.get("conf")
            why = (
                conf_changed(conf)
                or modules_changed(conf, _written(self.path))
                or distributions_changed(conf)
            )
            if why is not None:
                raise StaleReportError(f"{self.path}: {why}")
        if self.format in SG_FORMATS:
            self._require_rewritten()
            return
        started = self.build.get(LATER_BUILD_STARTED) or started_after(self.path)
        if started is not None:
            raise StaleReportError(
                f"{self.path}: a later build of this project started ({started}) and wrote "
                "no report: it failed before docsaccel ran (an extension that failed to "
                "load, a conf.py that raised), or still runs; this is an earlier build's "
                "report; rebuild"
            )

    def _require_rewritten(self) -> None:
        """Raise :class:`StaleReportError` if a build of a folder holding this file (a
        sphinx-gallery file: no note of docsaccel's is beside it) started after it was
        written and did not reach its end (:func:`docsaccel.layout.building_since`)."""
        building = building_since(self.path)
        if building is not None:
            raise StaleReportError(
                f"{self.path}: a later build started ({building}) and did not finish "
                "(interrupted, failed, or still running) before rewriting this file: it is "
                "an earlier build's; rebuild"
            )

    def require_examples_ran(self) -> None:
        """Raise :class:`IncompleteBuildError` naming the file if the build ran none of
        its examples, whether or not it finished: ``--allow-incomplete`` judges the
        examples a build holds, and this one holds none that ran."""
        if self.build.get("stopped_before_examples"):
            self.require_complete()
        if self.build.get(JOURNAL_DAMAGED):
            # What ran after the damage is unknown: no judgement of those read stands.
            raise IncompleteBuildError(
                f"{self.path}: {self.incomplete_text()}: what ran after the damage is "
                "unknown; rebuild"
            )
        if self.ran_nothing:
            count = len(self.timings)
            why = self.incomplete_text() or "the build finished"
            raise IncompleteBuildError(
                f"{self.path}: {why}, but ran none of its {count} example"
                f"{'s' if count != 1 else ''} (every one {NOT_EXECUTED}): it measured "
                "nothing to judge; rebuild running them"
            )

    def require_complete(self, option: str | None = "--allow-incomplete") -> None:
        """Raise :class:`IncompleteBuildError` naming the file if the build did not finish.

        ``option``: the command's option that judges such a build all the same, which the
        message suggests; ``None`` for a command without one (``report --baseline``)."""
        holder = self.building_now
        if holder is not None:
            raise IncompleteBuildError(
                running_text(self.path, holder, "check after it ends", written=self.complete)
            )
        if not self.complete and self.build.get("stopped_before_examples"):
            raise IncompleteBuildError(
                f"{self.path}: {self.incomplete_text()}: it measured no example; rebuild "
                "once that is fixed"
            )
        if not self.complete and not self.timings:
            # Nothing an option could judge (a sharded build's report before its merge;
            # journals damaged before any record, which may have held some).
            read = (
                "no record was read before the damage"
                if self.build.get(JOURNAL_DAMAGED)
                else "it measured no example"
            )
            raise IncompleteBuildError(f"{self.path}: {self.incomplete_text()}: {read}")
        if not self.complete:
            raise IncompleteBuildError(
                f'{self.path}: {self.incomplete_text()}: the report says "complete": false, '
                "so its examples are not all measured; rebuild"
                + (f", or pass {option} to judge the examples it holds" if option else "")
            )


def _written(path: str) -> int:
    """When the file at ``path`` was last written (ns); 0 when it cannot be asked."""
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0


def matched(base: Sequence[Timing], head: Sequence[Timing]) -> tuple[list[Timing], list[Timing]]:
    """``base`` and ``head`` with each example both hold under one id, the one rule by
    which two inputs are paired. An example is its page's label (:attr:`Timing.ref`)
    where both inputs carry one: a gallery's ``sg_execution_times.rst`` names it by its
    path inside the gallery (``plot_a.py``), the root one and docsaccel's report from the
    source folder (``tutorials/plot_a.py``). Two timings with different labels are two
    examples, whatever their ids; the others are paired on their id, as inputs without
    labels (a JUnit XML, a report written before records kept them) always were. A pair
    shows the fuller of its two ids (the one with more folders; ``head``'s on a tie); an
    example of one input only whose id the other input gives another example shows its
    label.

    >>> per_gallery = [Timing("plot_a.py", "plot_a.py", 1.0, ref="sphx_glr_auto_plot_a.py")]
    >>> report = [Timing("tutorials/plot_a.py", "plot_a.py", 2.0, ref="sphx_glr_auto_plot_a.py")]
    >>> base, head = matched(per_gallery, report)
    >>> [t.id for t in base], [t.id for t in head]
    (['tutorials/plot_a.py'], ['tutorials/plot_a.py'])
    """
    pairs = pair_indices(base, head)
    base_ids, head_ids = [t.id for t in base], [t.id for t in head]
    for b, h in pairs:
        old, new = base[b].id, head[h].id
        base_ids[b] = head_ids[h] = old if old.count("/") > new.count("/") else new
    # An example of one input only that has another's id (``plot_a.py`` of two galleries)
    # is shown by its label, as one file shows two of its examples of one name.
    paired_base, paired_head = {b for b, _ in pairs}, {h for _, h in pairs}
    for ids, timings, paired, other in (
        (base_ids, base, paired_base, set(head_ids)),
        (head_ids, head, paired_head, set(base_ids)),
    ):
        for i, timing in enumerate(timings):
            if i not in paired and ids[i] in other and timing.ref:
                ids[i] = timing.ref
    return (
        [replace(t, id=i) if i != t.id else t for t, i in zip(base, base_ids, strict=True)],
        [replace(t, id=i) if i != t.id else t for t, i in zip(head, head_ids, strict=True)],
    )


def pair_indices(base: Sequence[Timing], head: Sequence[Timing]) -> list[tuple[int, int]]:
    """``(base index, head index)`` of each example both hold, by the rule of
    :func:`matched`: its page's label where both carry one, else its id."""
    head_by_ref = {t.ref: i for i, t in enumerate(head) if t.ref}
    pairs = [(b, head_by_ref[t.ref]) for b, t in enumerate(base) if t.ref in head_by_ref]
    paired_base, paired_head = {b for b, _ in pairs}, {h for _, h in pairs}
    head_by_id = {t.id: i for i, t in enumerate(head) if i not in paired_head}
    for b, old in enumerate(base):
        h = head_by_id.get(old.id)
        if b in paired_base or h is None or (old.ref and head[h].ref):
            continue  # paired on its label, or two labels that differ: two examples
        pairs.append((b, h))
    return pairs


#: What every view says where no example has a time to compare in both inputs
#: (:func:`whole_run_totals` is ``None``): a total over none is no time, never ``0s``.
NO_TOTAL = "no total to compare"


def whole_run_totals(base: Sequence[Timing], head: Sequence[Timing]) -> tuple[float, float] | None:
    """The total time of ``base`` and of ``head`` over the examples with a time to compare
    in both (:attr:`Timing.compared_seconds`: a whole run, or a restored example's stored
    run), like with like: a stopped, failed or reused example never reads as a speed-up,
    and an example in one input only (added, removed: see :func:`one_side_ids`) adds to
    neither, so a removed example is no speed-up either. ``None`` when no example has a
    time to compare in both (:data:`NO_TOTAL`).
    ``compare`` and ``report --baseline`` both total so.

    >>> stopped = Timing("a.py", "a.py", 1.0, status="interrupted")
    >>> whole_run_totals([Timing("a.py", "a.py", 2.5)], [stopped]) is None
    True
    >>> whole_run_totals([Timing("a.py", "a.py", 2.5), Timing("b.py", "b.py", 4.6)],
    ...                  [Timing("a.py", "a.py", 2.0)])
    (2.5, 2.0)
    """
    base, head = matched(base, head)
    base_by_id = {timing.id: timing.compared_seconds for timing in base}
    head_by_id = {timing.id: timing.compared_seconds for timing in head}
    both = sorted(
        example_id
        for example_id in base_by_id.keys() & head_by_id.keys()
        if base_by_id[example_id] is not None and head_by_id[example_id] is not None
    )
    if not both:
        return None
    return (
        sum((base_by_id[example_id] or 0.0 for example_id in both), 0.0),
        sum((head_by_id[example_id] or 0.0 for example_id in both), 0.0),
    )


def one_side_ids(base: Sequence[Timing], head: Sequence[Timing]) -> tuple[list[str], list[str]]:
    """The examples only ``head`` holds (added) and only ``base`` holds (removed), sorted:
    listed apart from the totals (:func:`whole_run_totals`).

    >>> one_side_ids([Timing("a.py", "a.py", 1.0)], [Timing("b.py", "b.py", 1.0)])
    (['b.py'], ['a.py'])
    """
    base, head = matched(base, head)
    base_ids = {timing.id for timing in base}
    head_ids = {timing.id for timing in head}
    return sorted(head_ids - base_ids), sorted(base_ids - head_ids)


def unique_timings(inputs: Sequence[LoadedInput]) -> list[Timing]:
    """The timings of several inputs, an example the inputs describe alike counted once.

    sphinx-gallery's root file and a gallery's own file list the same runs, under other
    ids (``tutorials/plot_a.py``, ``plot_a.py``) but the same label: a run is its label
    (its id where the input has none), status, time and peak. Two inputs that timed an
    example differently (two builds) keep both timings, each judged.
    """
    found: dict[tuple[object, ...], Timing] = {}
    for loaded in inputs:
        for timing in loaded.timings:
            key = (timing.ref or timing.id, timing.status, timing.seconds, timing.memory_bytes)
            found.setdefault(key, timing)
    return list(found.values())


def _state(ids: list[str], one: str, many: str) -> str:
    """``"a.py was running"``, ``"a.py, b.py were running"``."""
    return f"{', '.join(ids)} {one if len(ids) == 1 else many}"
