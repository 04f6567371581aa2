"""What every report view shows, computed once: totals, and one row per example.

The design, in full: the reports guide's *Design* section.

Example:

>>> from docsaccel.report.model import LoadedInput, Timing, Verdicts, whole_run_totals
>>> head = [Timing("tutorials/plot_a.py", "plot_a.py", 42.0, budget_seconds=30.0),
...         Timing("tutorials/plot_b.py", "plot_b.py", 26.0, budget_seconds=30.0)]
>>> base = [Timing("tutorials/plot_a.py", "plot_a.py", 20.0)]
>>> summary = summarize(LoadedInput("pr.json", "docsaccel-report", head), baseline=base)
>>> [row.id for row in summary.over], [row.id for row in summary.near]
(['tutorials/plot_a.py'], ['tutorials/plot_b.py'])
>>> summary.execution_seconds, summary.baseline_delta, summary.top(1)[0].delta_seconds
(68.0, 22.0, 22.0)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from docsaccel.budgets import format_measured
from docsaccel.contract import (
    AUDIT_STATUSES,
    CACHED,
    DID_NOT_FINISH,
    EXECUTED,
    KILLED_RUNNING,
    NOT_EXECUTED,
    NOT_RUN,
    RUNNING,
    VERIFIED,
    build_failed_text,
    knob_picks,
    knob_value_text,
    ran_none,
    unmeasured_text,
)
from docsaccel.counts import counted
from docsaccel.memory_sizes import format_size
from docsaccel.report.model import (
    NO_TOTAL,
    LoadedInput,
    Timing,
    Verdicts,
    budget_failures_text,
    matched,
    one_side_ids,
    whole_run_totals,
)

if TYPE_CHECKING:  # the docs build summarizes without loading the history reader
    from docsaccel.report.history import ExampleHistory

__all__ = [
    "EARLIER_BUILD",
    "STORED_BY_CACHE",
    "SUMMARY_SCHEMA",
    "THIS_BUILD",
    "ReportSummary",
    "Row",
    "summarize",
]

#: The schema of the JSON view (``docsaccel report --format json``).
SUMMARY_SCHEMA = "docsaccel.report-summary"
#: Whose measurement a row's time is, in the JSON view's ``seconds_from``.
THIS_BUILD = "this build"
EARLIER_BUILD = "an earlier build"
STORED_BY_CACHE = "a run the example cache stored"


#: What every view says of the times of a build that did not finish.
PARTIAL_TIMES = "Its times are partial."


@dataclass(frozen=True)
class Row(Verdicts):
    """One example as the views show it."""

    id: str
    status: str
    seconds: float
    budget_seconds: float | None
    budget_source: str | None
    headroom_seconds: float | None
    budget_use: float | None
    delta_seconds: float | None
    memory_bytes: int | None
    fast: bool | None
    knobs: dict[str, Any]
    render_saved_seconds: float
    median_seconds: float | None
    noisy: bool
    #: The example cache's verdict (see :class:`~docsaccel.report.model.Timing`).
    cache: dict[str, Any] = field(default_factory=dict)
    memory_budget_bytes: int | None = None
    #: ``peak / memory budget``, ``None`` without one.
    memory_use: float | None = None
    retained_bytes: int | None = None
    gpu_peak_bytes: int | None = None
    gpu_retained_bytes: int | None = None
    #: Its peak against the baseline's.
    memory_delta_bytes: int | None = None
    interrupted_by: str | None = None
    #: It failed as sphinx-gallery was told to expect.
    expected_failure: bool = False
    #: It was running when the build stopped (see :class:`~docsaccel.report.model.Timing`).
    unfinished: bool = False
    #: It was running when its build was killed outright (see
    #: :class:`~docsaccel.report.model.Timing`).
    killed: bool = False
    #: It runs now (see :class:`~docsaccel.report.model.Timing`).
    running_now: bool = False
    #: Its reused outputs' run kept no time (see :class:`~docsaccel.report.model.Timing`).
    time_unknown: bool = False

    @property
    def seconds_from(self) -> str | None:
        """Whose measurement its time is, as the JSON view says it (:data:`THIS_BUILD`,
        :data:`STORED_BY_CACHE`, :data:`EARLIER_BUILD`), ``None`` for none: an example
        never run, one running when its build was killed or running now, one whose reused
        outputs' run kept no time (their records' ``0.0`` is no time). A reused example's
        (``cached``) is the run's that made its outputs, as the other views label it
        (:meth:`time_text`)."""
        if self.status == NOT_EXECUTED or self.no_time:
            return None
        if self.status != CACHED:
            return THIS_BUILD
        return STORED_BY_CACHE if self.restored else EARLIER_BUILD

    def time_text(self) -> str:
        """Its time as the views write it: ``"41.2s"``; ``"not run"`` for an example the
        build never ran (its record's 0 is no time); ``"2.1s (partial)"`` for one the
        build stopped while it ran; ``"–"`` for one running when its build was killed or
        running now (its record was written as it started: no time at all), or reused
        from a run that kept none; ``"3.0s (stored run)"`` for one this build did not run
        (:meth:`time_origin`)."""
        if self.status == NOT_EXECUTED:
            return NOT_RUN
        if self.no_time:
            return "–"
        return self.labelled_seconds() if self.timed else f"{self.labelled_seconds()} (partial)"

    @property
    def over(self) -> bool:
        """Over its time budget or its memory budget."""
        return self.over_budget

    @property
    def near(self) -> bool:
        """Over neither budget, but near one of them."""
        return self.near_budget

    def memory_text(self) -> str:
        """``"606M / 400M (152%), GPU 1.2G, +20M"``: peak, memory budget and use, GPU
        peak, change against the baseline; ``"–"`` when not measured."""
        if self.memory_bytes is None:
            return "–"
        text = format_size(self.memory_bytes)
        if self.memory_budget_bytes is not None:
            text += f" / {format_size(self.memory_budget_bytes)} ({(self.memory_use or 0):.0%})"
        if self.gpu_peak_bytes is not None:
            text += f", GPU {format_size(self.gpu_peak_bytes)}"
        if self.memory_delta_bytes:
            sign = "+" if self.memory_delta_bytes > 0 else "-"
            text += f", {sign}{format_size(abs(self.memory_delta_bytes))}"
        return text

    def retained_text(self) -> str:
        """``"200M"`` (and ``", GPU 1G"``), ``"–"`` when not measured."""
        if self.retained_bytes is None:
            return "–"
        text = format_size(self.retained_bytes)
        if self.gpu_retained_bytes:
            text += f", GPU {format_size(self.gpu_retained_bytes)}"
        return text

    def knobs_text(self) -> str:
        """``"rollouts=1 (full 4)"``-style summary of the fast-path knobs: every pick, as
        the page's fast-path note lists them (a name picked with two pairs of values is
        there twice, in the order picked), values written as the note writes them."""
        parts = []
        for name, pick in knob_picks(self.knobs):
            value, full = pick["value"], pick["full"]
            differs = f" (full {knob_value_text(full)})" if full != value else ""
            parts.append(f"{name}={knob_value_text(value)}{differs}")
        return ", ".join(parts)


@dataclass(frozen=True)
class ReportSummary:
    """Totals and rows (slowest first) of one build."""

    source: str
    format: str
    rows: list[Row]
    build_wall_seconds: float | None
    fast: bool | None
    status_counts: dict[str, int]
    #: What to say of an input that does not say how its build ended (sphinx-gallery's
    #: files, :meth:`~docsaccel.report.model.LoadedInput.no_status_text`); ``""`` for one
    #: that says (a docsaccel report).
    no_status: str = ""
    #: Whether the input says how each example ended
    #: (:attr:`~docsaccel.report.model.LoadedInput.holds_status`): the rows of one that
    #: does not (``sg_execution_times.rst``) read ``ok``, but a failure would read so too.
    holds_status: bool = True
    #: The baseline's total and this build's, like with like
    #: (:func:`~docsaccel.report.model.whole_run_totals`); ``None`` without a baseline,
    #: or where no example has a time to compare in both (:attr:`has_baseline` says which).
    baseline_total: float | None = None
    compared_total: float | None = None
    #: Whether a baseline was given.
    has_baseline: bool = False
    #: The examples only this build holds, and only the baseline holds
    #: (:func:`~docsaccel.report.model.one_side_ids`): in neither total, said apart.
    baseline_added: tuple[str, ...] = ()
    baseline_removed: tuple[str, ...] = ()
    #: Why the baseline's build failed (``LoadedInput.judged_failures``), ``""`` for one
    #: that did not: its times (an example that raised early) are no measure, said beside
    #: the delta as ``compare`` says a failed base.
    baseline_failed: str = ""
    #: What every view says of a baseline that does not say how its examples ended
    #: (:meth:`~docsaccel.report.model.LoadedInput.no_status_text`), ``""`` for one that
    #: does: a baseline example that raised reads as a run, said as ``compare`` says it.
    baseline_no_status: str = ""
    #: ``"the build did not finish (... was running)"``, or ``""`` for a complete build.
    incomplete: str = ""
    #: Whether the times are not all the build's (:attr:`LoadedInput.times_partial`): not
    #: so of a report written complete whose build's process runs on.
    times_partial: bool = True
    #: Its build runs now (journals read as it writes them): not finished, not failed.
    running_now: bool = False
    #: The build's memory ceiling (``docsaccel_memory_limit``), when it had one.
    memory_limit: int | None = None
    #: Why the build failed although its examples ran (Sphinx's ``-W``, a process an
    #: example kept from ending: :func:`docsaccel.contract.build_failures`), or ``""``.
    sphinx_failed: str = ""

    @property
    def execution_seconds(self) -> float:
        """Time of the examples this build ran (reused ones are :attr:`reused_seconds`)."""
        return sum(row.seconds for row in self.rows if row.status != CACHED)

    @property
    def restored(self) -> list[Row]:
        """The examples the example cache restored (``cached``, ``"hit": true``): their
        time is the one their stored run took, said in the example cache's line."""
        return [row for row in self.rows if row.status == CACHED and row.cache.get("hit") is True]

    @property
    def reused(self) -> list[Row]:
        """The other ``cached`` examples: sphinx-gallery kept their outputs, or a fast or
        merge build reused their timings; each counted once, apart from :attr:`restored`."""
        return [
            row for row in self.rows if row.status == CACHED and row.cache.get("hit") is not True
        ]

    @property
    def reused_seconds(self) -> float:
        """The time earlier builds recorded for the :attr:`reused` examples."""
        return sum(row.seconds for row in self.reused if not row.time_unknown)

    def reused_text(self) -> str:
        """What every view says of the :attr:`reused` examples: ``"3s recorded by earlier
        builds for 2 examples reused from an earlier build (not run in this build)"``,
        counting apart those whose earlier run kept no time (``"; 13 with no time kept"``)."""
        unknown = sum(1 for row in self.reused if row.time_unknown)
        timed = self.reused_count - unknown
        recorded = format_measured(self.reused_seconds) if timed else "no time"
        text = f"{recorded} recorded by earlier builds for {counted(timed or unknown, 'example')}"
        text += " reused from an earlier build (not run in this build)"
        if unknown and timed:
            text += f"; {unknown} more with no time kept"
        return text

    @property
    def reused_count(self) -> int:
        return len(self.reused)

    @property
    def executed_count(self) -> int:
        """The examples this build ran (:data:`~docsaccel.contract.EXECUTED`): neither
        reused (``cached``: kept by sphinx-gallery or restored by the example cache) nor
        left out (``not-executed``)."""
        return sum(1 for row in self.rows if row.status in EXECUTED)

    def execution_text(self, quote: Callable[[str], str] = str) -> str:
        """The execution-time total of every view: the time, then every example listed in
        exactly one group, so the counts add up to the examples listed: those this build
        ran (by status), those the example cache restored, those sphinx-gallery reused,
        those not run (``quote``: how to write a status).

        ``"1m over 3 examples run (1 did not finish, 2 ok); 2 restored from the example cache;
        1 not run (not-executed)"``
        """
        ran = Counter(row.status_label for row in self.rows if row.status in EXECUTED)
        counts = ", ".join(f"{n} {quote(label)}" for label, n in sorted(ran.items()))
        if not self.holds_status:
            counts = ""  # every row reads "ok": the input does not say
        text = f"{format_measured(self.execution_seconds)} over {self.executed_count} "
        text += f"example{'s' if self.executed_count != 1 else ''} run"
        text += f" ({counts})" if counts else ""
        groups = (
            (len(self.restored), "restored from the example cache"),
            (self.reused_count, f"reused from an earlier build ({quote(CACHED)})"),
            (self.not_run_count, f"{NOT_RUN} ({quote(NOT_EXECUTED)})"),
        )
        return text + "".join(f"; {count} {words}" for count, words in groups if count)

    @property
    def not_run_count(self) -> int:
        """The examples this build listed but never ran (``not-executed``)."""
        return sum(1 for row in self.rows if row.status == NOT_EXECUTED)

    @property
    def unmeasured_count(self) -> int:
        """The examples this build did not measure (:func:`~docsaccel.contract.is_measured`:
        restored, reused, not run)."""
        return sum(1 for row in self.rows if not row.measured)

    def unmeasured_text(self) -> str:
        """What every view says of the examples this build did not measure, the restored
        ones apart (:func:`~docsaccel.contract.unmeasured_text`)."""
        restored = len(self.restored)
        return unmeasured_text(self.unmeasured_count - restored, restored)

    @property
    def baseline_delta(self) -> float | None:
        """This build's total against the baseline's, over whole runs in both (a stopped
        example is no speed-up); ``None`` without a baseline."""
        if self.baseline_total is None or self.compared_total is None:
            return None
        return self.compared_total - self.baseline_total

    def baseline_text(self, quote: Callable[[str], str] = str) -> str:
        """The delta against the baseline, its total, and the examples in one build only
        (left out of both totals), for every view; ``""`` without a baseline.

        ``quote`` escapes example ids for the view's markup (Markdown)."""
        if not self.has_baseline:
            return ""
        delta = self.baseline_delta
        if delta is None or self.baseline_total is None:
            text = f"{NO_TOTAL} (no example has a time to compare in both"
        else:
            text = (
                f"{format_measured(delta, signed=True)} (baseline "
                f"{format_measured(self.baseline_total)}, over the examples both ran whole"
            )
        for ids, where in (
            (self.baseline_added, "not in the baseline"),
            (self.baseline_removed, "not in this build"),
        ):
            if ids:
                text += f"; {where}: {', '.join(quote(i) for i in ids)}"
        return text + ")"

    @property
    def render_saved_seconds(self) -> float:
        return sum(row.render_saved_seconds for row in self.rows)

    @property
    def over(self) -> list[Row]:
        return [row for row in self.rows if row.over]

    @property
    def failed(self) -> list[Row]:
        """The examples that failed unexpectedly (by id): the build failed."""
        return sorted((row for row in self.rows if row.build_failure), key=lambda row: row.id)

    def warning(self) -> tuple[str, str]:
        """What every view says first of a build that has not finished (``("", "")`` for
        one that did): why (:attr:`incomplete`), then what that makes of its times,
        ``""`` when they are all there (its report written, its process running on)."""
        if not self.incomplete:
            return "", ""
        return self.incomplete, PARTIAL_TIMES if self.times_partial else ""

    def title_note(self) -> str:
        """What a page's title adds for a build that has not finished (``""``: it did)."""
        if not self.incomplete:
            return ""
        return "the build did not finish" if self.times_partial else "its process runs on"

    def verdict(self, quote: Callable[[str], str] = str) -> str:
        """The report's one-line verdict: a failed build first, then budgets. A failed or
        unfinished build is never "within budget". ``quote``: how to write an id."""
        verdict = self._verdict(quote)
        if not self.no_status:
            return verdict
        # What the verdict covers: the examples' times, or how each example ended too.
        covers = "Examples only" if self.holds_status else "Times only"
        return f"{verdict} {covers}: {quote(self.no_status)}."

    def _verdict(self, quote: Callable[[str], str]) -> str:
        # A build that did not finish failed, as the gates judge it
        # (LoadedInput.judged_failures); one running now has not finished yet.
        ended_unfinished = bool(self.incomplete) and not self.running_now
        if self.sphinx_failed or self.failed or ended_unfinished:
            # Each once, causes first: the failed examples, then the build's own reasons
            # (those the failed examples do not say, :meth:`LoadedInput.build_failures`),
            # such as -W turning their warnings into errors, then that it did not finish.
            why = []
            if self.failed:
                count = len(self.failed)
                names = ", ".join(quote(row.id) for row in self.failed[:5])
                more = f" and {count - 5} more" if count > 5 else ""
                why.append(f"{count} example{'s' if count != 1 else ''} failed: {names}{more}")
            if self.sphinx_failed:
                why.append(self.sphinx_failed)
            if ended_unfinished:
                why.append(quote(self.incomplete))
            failed = build_failed_text("; ".join(why))
            notes = self._unfinished_notes(quote) if ended_unfinished else []
            return " ".join([failed, *([f"{'; '.join(notes)}."] if notes else [])])
        if self.over:
            return f"{counted(len(self.over), 'example')} over budget."
        if self.incomplete and not self.times_partial:
            # Every example's time is there; the build's verdict is not in yet.
            return "No example over budget; the verdict is in once the build's process ends."
        if self.incomplete:  # the examples that never ran cannot be called within budget
            said = [
                "No example over budget among those the report holds",
                *self._unfinished_notes(quote),
            ]
            return "; ".join(said) + "."

        unmeasured = self.unmeasured_count
        if not unmeasured:
            return "All examples within budget."
        if ran_none(row.status for row in self.rows):
            # Nothing ran: "within budget" would pass a build that measured nothing.
            return f"No example ran: all {len(self.rows)} are {NOT_EXECUTED}; nothing was judged."
        # A reused time is another build's: neither within this build's budgets nor over.
        measured = len(self.rows) - unmeasured
        if not measured:  # every one restored or reused: none is "measured" here
            # Only restored ones are judged (by their stored runs): none was over.
            judged = "; none over budget" if self.restored else ""
            return f"{self.unmeasured_text()}{judged}."
        return f"All {measured} measured examples within budget; {self.unmeasured_text()}."

    def _unfinished_notes(self, quote: Callable[[str], str]) -> list[str]:
        """What became of the examples an unfinished build stopped, was killed or is
        while they ran: their times are not judged."""
        stopped = [quote(row.id) for row in self.rows if row.unfinished and not row.started_only]
        killed = [quote(row.id) for row in self.rows if row.unfinished and row.killed]
        running = [quote(row.id) for row in self.rows if row.unfinished and row.running_now]
        notes = []
        if stopped:
            examples = f"{len(stopped)} example{'s' if len(stopped) != 1 else ''}"
            notes.append(
                f"{examples} {DID_NOT_FINISH} when the build ended (a partial time, not "
                f"judged): {', '.join(stopped)}"
            )
        if killed:
            notes.append(f"{', '.join(killed)} {KILLED_RUNNING} (no time, not judged)")
        if running:
            notes.append(f"{', '.join(running)} {RUNNING} (no time yet, not judged)")
        return notes

    @property
    def near(self) -> list[Row]:
        return [row for row in self.rows if row.near]

    @property
    def noisy(self) -> list[Row]:
        return [row for row in self.rows if row.noisy]

    def top(self, count: int) -> list[Row]:
        return self.rows[:count]

    @property
    def measured_memory(self) -> list[Row]:
        """The rows with a peak, largest first."""
        rows = [row for row in self.rows if row.memory_bytes is not None]
        return sorted(rows, key=lambda row: (-(row.memory_bytes or 0), row.id))

    def top_memory(self, count: int) -> list[Row]:
        return self.measured_memory[:count]

    @property
    def retained_bytes(self) -> int:
        """What the examples this build ran left behind, together."""
        return sum(row.retained_bytes or 0 for row in self.rows if row.status != CACHED)

    def memory_text(self) -> str:
        """``"largest peak 1.2G (tutorials/plot_a.py); retained 300M; memory ceiling 6.5G"``:
        the retained memory of the examples this build ran, together."""
        measured = self.measured_memory
        if not measured:
            return ""
        largest = measured[0]
        parts = [
            f"largest peak {format_size(largest.memory_bytes or 0)} ({largest.id})",
            f"retained {format_size(self.retained_bytes)}",
        ]
        gpu = [row.gpu_peak_bytes for row in self.rows if row.gpu_peak_bytes is not None]
        if gpu:
            parts.append(f"largest GPU peak {format_size(max(gpu))}")
        if self.memory_limit is not None:
            parts.append(f"memory ceiling {format_size(self.memory_limit)}")
        return "; ".join(parts)

    @property
    def cache_hits(self) -> list[Row]:
        """Examples restored from the example cache."""
        return [row for row in self.rows if row.cache.get("hit") is True]

    @property
    def cache_misses(self) -> list[Row]:
        """Examples the example cache did not hold: they ran (``cache["reason"]`` says why)."""
        return [row for row in self.rows if row.cache.get("hit") is False]

    @property
    def cache_saved_seconds(self) -> float:
        return sum(float(row.cache.get("saved_seconds") or 0.0) for row in self.cache_hits)

    def cache_text(self, listed: int = 10) -> str:
        """``"3 restored (saved 42.0s); 2 ran: a.py (mylib/x.py changed), ..."``."""
        misses = self.cache_misses
        text = (
            f"{len(self.cache_hits)} restored (saved {format_measured(self.cache_saved_seconds)})"
        )
        if misses:
            shown = [f"{row.id} ({row.cache.get('reason') or 'no reason given'})" for row in misses]
            more = f", and {len(shown) - listed} more" if len(shown) > listed else ""
            text += f"; {len(misses)} ran: {', '.join(shown[:listed])}{more}"
        return text

    def audited(self, status: str) -> list[Row]:
        """The examples an audit of the example cache found ``status`` (by id)."""
        return sorted(
            (row for row in self.rows if (row.cache.get("audit") or {}).get("status") == status),
            key=lambda row: row.id,
        )

    def audit_text(self, listed: int = 10) -> str:
        """``"5 verified; 1 stale: a.py (...); 1 nondeterministic: b.py (...)"``, or ``""``
        when the build audited no entry."""
        parts = []
        for status in AUDIT_STATUSES:
            rows = self.audited(status)
            if not rows:
                continue
            text = f"{len(rows)} {status}"
            if status != VERIFIED:
                shown = [
                    f"{row.id} ({((row.cache['audit'].get('differences')) or ['?'])[0]})"
                    for row in rows[:listed]
                ]
                more = f", and {len(rows) - listed} more" if len(rows) > listed else ""
                text += f": {', '.join(shown)}{more}"
            parts.append(text)
        return "; ".join(parts)

    def to_json(self) -> dict[str, Any]:
        """The JSON view: totals and every row, plain data."""
        return {
            "schema": SUMMARY_SCHEMA,
            # 2: an example's "status" is the word the views show (was its record's).
            # 3: an example's "seconds" is null when no run measured it (was 0.0), and
            # "seconds_from" says whose measurement it is.
            # 4: "unmeasured_count" counts the examples the example cache restored too
            # (this build did not run them), "restored_count" says how many; a restored
            # example's "seconds_from" is "a run the example cache stored".
            "version": 4,
            "source": self.source,
            "format": self.format,
            "build_wall_seconds": self.build_wall_seconds,
            "execution_seconds": self.execution_seconds,
            "reused_seconds": self.reused_seconds,
            "unmeasured_count": self.unmeasured_count,
            "restored_count": len(self.restored),
            "baseline_execution_seconds": self.baseline_total,
            # Over the examples both ran whole, as the other views say it.
            "baseline_delta_seconds": self.baseline_delta,
            "not_in_baseline": list(self.baseline_added),
            "not_in_this_build": list(self.baseline_removed),
            "baseline_failed": self.baseline_failed or None,
            "baseline_no_status": self.baseline_no_status or None,
            "render_saved_seconds": self.render_saved_seconds,
            "fast": self.fast,
            # Whether its examples finished and all their times are here, as the other
            # views say it: so of a report written complete whose process runs on, whose
            # warning is still "incomplete".
            "complete": not self.times_partial,
            "incomplete": self.incomplete or None,
            "status_counts": self.status_counts,
            "failed": [row.id for row in self.failed],
            "sphinx_failed": self.sphinx_failed or None,
            "no_status": self.no_status or None,
            "over_budget": [row.id for row in self.over],
            "near_budget": [row.id for row in self.near],
            "over_memory_budget": [row.id for row in self.rows if row.over_memory_budget],
            "retained_bytes": self.retained_bytes,
            "memory_limit": self.memory_limit,
            "noisy": [row.id for row in self.noisy],
            "cache": {
                "hits": len(self.cache_hits),
                "misses": {row.id: row.cache.get("reason") for row in self.cache_misses},
                "saved_seconds": self.cache_saved_seconds,
                "audit": {
                    status: {
                        row.id: (row.cache.get("audit") or {}).get("differences", [])
                        for row in self.audited(status)
                    }
                    for status in AUDIT_STATUSES
                },
            },
            # Each row's status is the word status_counts counts and the other views
            # show; its record's own status (a stopped example's "failed") is kept apart.
            # A time no run measured is null: its record's 0.0 reads as a run of no time.
            "examples": [
                {
                    **asdict(row),
                    "status": row.status_label,
                    "record_status": row.status,
                    "seconds": None if row.seconds_from is None else row.seconds,
                    "seconds_from": row.seconds_from,
                }
                for row in self.rows
            ],
        }


def _delta(timing: Timing, base: Mapping[str, float]) -> float | None:
    """How much longer ``timing`` took than its baseline's time to compare (``base``, by
    id), when both have one (:attr:`~docsaccel.report.model.Timing.compared_seconds`)."""
    seconds = timing.compared_seconds
    if seconds is None or timing.id not in base:
        return None
    return seconds - base[timing.id]


def _render_saved(timing: Timing) -> float:
    total = 0.0
    for env in timing.render.values():
        if isinstance(env, Mapping) and isinstance(env.get("saved_seconds"), (int, float)):
            total += float(env["saved_seconds"])
    return total


def summarize(
    loaded: LoadedInput,
    baseline: Sequence[Timing] | None = None,
    history: Mapping[str, ExampleHistory] | None = None,
    baseline_failed: Sequence[str] = (),
    baseline_no_status: str = "",
) -> ReportSummary:
    """The summary of ``loaded``, with deltas against ``baseline`` and noise from ``history``;
    ``baseline_failed``: why the baseline's build failed, if it did; ``baseline_no_status``:
    the baseline's :meth:`~docsaccel.report.model.LoadedInput.no_status_text`."""
    timings = loaded.timings
    if baseline is not None:
        baseline, timings = matched(baseline, timings)
    # Only times to compare are: a stopped example's time is its budget, not its speed.
    base = {
        timing.id: seconds
        for timing in baseline or ()
        if (seconds := timing.compared_seconds) is not None
    }
    base_memory = {t.id: t.memory_bytes for t in baseline or () if t.memory_bytes is not None}
    history = history or {}
    rows = []
    for t in timings:
        known = history.get(t.id)
        rows.append(
            Row(
                id=t.id,
                status=t.status,
                seconds=t.seconds,
                budget_seconds=t.budget_seconds,
                budget_source=t.budget_source,
                headroom_seconds=t.headroom_seconds,
                budget_use=t.budget_use,
                delta_seconds=_delta(t, base),
                memory_bytes=t.memory_bytes,
                fast=t.fast,
                knobs=dict(t.knobs),
                render_saved_seconds=_render_saved(t),
                median_seconds=known.median_seconds if known else None,
                noisy=bool(known and known.noisy),
                cache=dict(t.cache),
                memory_budget_bytes=t.memory_budget_bytes,
                memory_use=t.memory_use,
                retained_bytes=t.retained_bytes,
                gpu_peak_bytes=t.gpu_peak_bytes,
                gpu_retained_bytes=t.gpu_retained_bytes,
                memory_delta_bytes=(
                    t.memory_bytes - base_memory[t.id]
                    if t.memory_bytes is not None and t.id in base_memory
                    else None
                ),
                interrupted_by=t.interrupted_by,
                expected_failure=t.expected_failure,
                unfinished=t.unfinished,
                killed=t.killed,
                running_now=t.running_now,
                time_unknown=t.time_unknown,
            )
        )
    rows.sort(key=lambda row: (-row.seconds, row.id))
    totals = None if baseline is None else whole_run_totals(baseline, timings)
    added, removed = one_side_ids(baseline or [], timings) if baseline else ([], [])
    wall = loaded.build.get("wall_seconds")
    return ReportSummary(
        source=loaded.path,
        format=loaded.format,
        rows=rows,
        build_wall_seconds=float(wall) if isinstance(wall, (int, float)) else None,
        fast=loaded.build.get("fast"),
        status_counts=dict(sorted(Counter(t.status_label for t in loaded.timings).items())),
        baseline_total=totals[0] if totals else None,
        compared_total=totals[1] if totals else None,
        has_baseline=baseline is not None,
        baseline_added=tuple(added),
        baseline_removed=tuple(removed),
        baseline_failed="; ".join(baseline_failed),
        baseline_no_status=baseline_no_status,
        incomplete=loaded.incomplete_text(),
        times_partial=loaded.times_partial,
        running_now=loaded.building_now is not None,
        memory_limit=_size(loaded.build.get("memory_limit")),
        sphinx_failed="; ".join(
            why
            for why in (budget_failures_text(loaded.budget_failures), *loaded.build_failures())
            if why
        ),
        no_status=loaded.no_status_text(),
        holds_status=loaded.holds_status,
    )


def _size(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
