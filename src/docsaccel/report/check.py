"""``docsaccel check``: did the build fail (or not finish), is any example over its budget,
or was a cache entry found stale? Exit 3 if the build failed or did not finish, else 1 if
over budget or stale, else 0.

The design, in full: the reports guide's *Design* section.

Example: two timings of a sphinx-gallery file (no budgets), checked with ``--budget 30``.

>>> from docsaccel.report.model import Timing
>>> timings = [Timing("plot_a.py", "plot_a.py", 42.0), Timing("plot_b.py", "plot_b.py", 3.0)]
>>> result = check_timings(apply_budgets(timings, flat_seconds=30))
>>> print(format_check(result))
FAIL: 1 of 2 examples over budget:
  plot_a.py: 42s > budget 30s from --budget 30s
>>> result.exit_code
1
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from docsaccel.budgets import NO_MEMORY_BUDGET, Budget, BudgetTable, MemoryBudget, format_seconds
from docsaccel.contract import (
    DID_NOT_FINISH,
    INTERRUPTED,
    KILLED_RUNNING,
    NONDETERMINISTIC,
    RUNNING,
    STALE,
    unfinished_why,
    unmeasured_text,
)
from docsaccel.counts import counted
from docsaccel.memory_sizes import format_size
from docsaccel.report.model import Timing

__all__ = [
    "EXIT_BUILD_FAILED",
    "EXIT_OVER_BUDGET",
    "CheckResult",
    "apply_budgets",
    "audit_text",
    "check_timings",
    "failed_text",
    "format_check",
]

#: The exit code of an example over its budget, or of a stale cache entry.
EXIT_OVER_BUDGET = 1
#: The exit code of a build that failed (an example failed unexpectedly, or the build did
#: not finish), budgets aside.
EXIT_BUILD_FAILED = 3


def apply_budgets(
    timings: Sequence[Timing],
    flat_seconds: float | None = None,
    table: BudgetTable | None = None,
) -> list[Timing]:
    """The timings with the budget the precedence above gives each of them."""
    if flat_seconds is not None and (not math.isfinite(flat_seconds) or flat_seconds <= 0):
        raise ValueError(f"--budget must be a number of seconds above 0, got {flat_seconds!r}")
    table = table if table is not None else BudgetTable()
    resolved = []
    for timing in timings:
        recorded = None
        if timing.budget_source is not None or timing.memory_budget_source is not None:
            source = timing.budget_source or "builtin"
            detail = timing.budget_detail or source
            memory = _recorded_memory(timing)
            recorded = Budget(timing.budget_seconds, source, detail, memory=memory)
        # A report says whether it was a fast build; sphinx-gallery's files do not.
        budget = table.resolve(
            timing.name, fast=bool(timing.fast), recorded=recorded, example_id=timing.id
        )
        # An inline budget (the example's own word) comes back as recorded: unchanged.
        if budget.source != "builtin":
            timing = timing.with_budget(budget.seconds, budget.source, budget.detail)
        elif flat_seconds is not None:
            detail = f"--budget {format_seconds(flat_seconds)}"
            timing = timing.with_budget(flat_seconds, "flat", detail)
        memory = budget.memory
        if memory.source != "builtin":
            timing = timing.with_memory_budget(memory.bytes, memory.source, memory.detail)
        resolved.append(timing)
    return resolved


def _recorded_memory(timing: Timing) -> MemoryBudget:
    if timing.memory_budget_source is None:
        return NO_MEMORY_BUDGET
    detail = timing.memory_budget_detail or timing.memory_budget_source
    return MemoryBudget(timing.memory_budget_bytes, timing.memory_budget_source, detail)


@dataclass(frozen=True)
class CheckResult:
    """The examples over budget (slowest first) among ``checked`` examples, and those whose
    cache entry an audit found ``stale`` or ``nondeterministic`` (by id)."""

    over: list[Timing]
    checked: int
    bounded: int
    stale: list[Timing] = field(default_factory=list)
    nondeterministic: list[Timing] = field(default_factory=list)
    #: The examples that failed unexpectedly (by id): the build failed. An example the
    #: build stopped while it ran is among them (:attr:`Timing.judged_failed`): a gate
    #: judging an unfinished build never passes one that did not finish.
    failed: list[Timing] = field(default_factory=list)
    #: Why a build whose examples ran failed all the same, one per input and reason (a
    #: report's :data:`docsaccel.schema.BUILD_FAILURES`: ``-W`` turning warnings into
    #: errors, a process that an example's leftovers kept from ending).
    sphinx_failed: list[str] = field(default_factory=list)
    #: The examples whose budgets failed their build, one line per input
    #: (:func:`docsaccel.report.model.budget_failures_text`): in fail mode, an example
    #: over its budget or stopped at it fails the build, as the memory ceiling's stop does
    #: in any mode. Their times and budgets are listed with the examples over budget.
    budgets_failed: list[str] = field(default_factory=list)
    #: How many examples the build did not measure (restored, reused outputs, not run):
    #: not in ``checked``. Those it does not judge are neither within budget nor over it.
    unmeasured: int = 0
    #: How many of :attr:`unmeasured` the example cache restored: judged by the time of the
    #: run that stored them (:func:`docsaccel.contract.is_judged`), so among :attr:`over`
    #: when it was over.
    restored: int = 0
    #: Why each judged input did not finish, ``"<path>: the build did not finish (...)"``
    #: (:meth:`docsaccel.report.model.LoadedInput.incomplete_text`): a build that did not
    #: finish failed, whatever its examples did (``--allow-incomplete`` lets the gate list
    #: them, never pass it), said after what else failed it, first when nothing did.
    incomplete: list[str] = field(default_factory=list)
    #: What to say of each input that does not say how its build ended (sphinx-gallery's
    #: files: :meth:`docsaccel.report.model.LoadedInput.no_status_text`): its examples
    #: are judged, but a build that failed otherwise cannot be seen.
    statusless: list[str] = field(default_factory=list)
    #: Whether an input does not say how its examples ended either
    #: (``sg_execution_times.rst``): only their times were checked.
    times_only: bool = False

    def unmeasured_text(self) -> str:
        """The note on the examples not measured (:func:`~docsaccel.contract.unmeasured_text`)."""
        return unmeasured_text(self.unmeasured - self.restored, self.restored)

    @property
    def exit_code(self) -> int:
        if self.incomplete or self.failed or self.budgets_failed or self.sphinx_failed:
            return EXIT_BUILD_FAILED
        return EXIT_OVER_BUDGET if self.over or self.stale else 0


def check_timings(timings: Sequence[Timing]) -> CheckResult:
    """Which of ``timings`` are over budget (time or memory), and which audits found stale
    or not reproducible. Only the examples the build measured are counted as checked; one
    the example cache restored is judged by its stored run's time (over budget there, it
    is over here: :func:`docsaccel.contract.is_judged`), and counted apart with the ones
    nothing judges (a reused time is another build's)."""
    over = sorted((t for t in timings if t.over_budget), key=lambda t: (-t.seconds, t.id))
    measured = [t for t in timings if t.measured]
    bounded = _count(
        t for t in measured if t.budget_seconds is not None or t.memory_budget_bytes is not None
    )
    by_id = sorted(timings, key=lambda t: t.id)
    stale = [t for t in by_id if t.audit.get("status") == STALE]
    varied = [t for t in by_id if t.audit.get("status") == NONDETERMINISTIC]
    failed = [t for t in by_id if t.judged_failed]
    unmeasured = _count(timings) - _count(measured)
    restored = _count(t for t in timings if t.restored)
    return CheckResult(
        over,
        _count(measured),
        bounded,
        stale,
        varied,
        failed,
        unmeasured=unmeasured,
        restored=restored,
    )


def _count(timings: Iterable[Timing]) -> int:
    """How many examples ``timings`` describe: two inputs may time one example (a root
    and a per-gallery ``sg_execution_times.rst`` and the build's report, which share its
    label, :attr:`~docsaccel.report.model.Timing.ref`; two builds), each timing judged,
    the example counted once."""
    return len({t.ref or t.id for t in timings})


def failed_text(failed: Sequence[Timing]) -> str:
    """Why the build failed, on one line: ``"FAIL: the build failed: 1 example failed:
    tutorials/plot_bad.py (ValueError: boom)"``; the examples the build stopped while they
    ran are named apart (``"...; 1 example did not finish: tutorials/plot_c.py (the build
    was terminated (SIGTERM) while it ran)"``, the words said once): they did not fail by
    their own doing, but no gate passes them. One running when its build was killed
    outright is said so (``"1 example was running when the build was killed: ..."``): its
    record's error was written as it started, and says nothing of the kill; one its build
    runs now, ``"1 example running: ..."``."""
    own = [t for t in failed if not t.unfinished]
    stopped = [
        replace(t, error=t.error and unfinished_why(t.error))
        for t in failed
        if t.unfinished and not t.started_only
    ]
    killed = [replace(t, error=None) for t in failed if t.unfinished and t.killed]
    running = [replace(t, error=None) for t in failed if t.unfinished and t.running_now]
    parts = [
        _named(own, "failed"),
        _named(stopped, DID_NOT_FINISH),
        _named(killed, KILLED_RUNNING),
        _named(running, RUNNING),
    ]
    return one_line(f"FAIL: the build failed: {'; '.join(part for part in parts if part)}")


def _named(timings: Sequence[Timing], what: str) -> str:
    """``"2 examples failed: a.py (ValueError: x), b.py"``, or ``""`` for none."""
    if not timings:
        return ""
    shown = [f"{t.id} ({t.error})" if t.error else t.id for t in timings[:5]]
    more = f" and {len(timings) - 5} more" if len(timings) > 5 else ""
    return f"{counted(len(timings), 'example')} {what}: {', '.join(shown)}{more}"


def audit_text(timing: Timing) -> str:
    """What an audit found of one example's entry, on one line."""
    audit = timing.audit
    first = (audit.get("differences") or ["its outputs differ"])[0]
    if audit.get("status") == STALE:
        deps = audit.get("dependencies") or []
        shown = ", ".join(deps[:8]) + (f" and {len(deps) - 8} more" if len(deps) > 8 else "")
        return (
            f"{timing.id}: the cache would have restored another page than a fresh run "
            f"({first}); the dependencies its entry recorded: {shown or 'none'}"
        )
    return f"{timing.id}: two runs with the same inputs differ ({first}); seed what varies"


def _budget_text(timing: Timing) -> str:
    if timing.budget_seconds is None:
        return "unbounded"
    return format_seconds(timing.budget_seconds)


def format_check(result: CheckResult) -> str:
    """Text for the terminal: the verdict, then one line per example over budget, per
    stale cache entry and per example that is not reproducible."""
    lines = failure_lines(result)
    if not result.over and not result.stale and not failure_lines(result):
        # Of an input that says nothing of failures only the times were checked.
        noun = "timing" if result.times_only else "example"
        checked = f"{counted(result.checked, noun)} checked"
        if result.times_only:
            checked += " against budgets"
        lines.append(f"OK: {checked}, {result.bounded} with a budget, none over budget.")
    if result.over:
        judged = counted(result.checked + result.restored, "example")
        lines.append(f"FAIL: {_count(result.over)} of {judged} over budget:")
    for timing in result.over:
        if timing.over_time_budget:
            source = timing.budget_detail or timing.budget_source or "the input"
            state = " (interrupted)" if timing.status == INTERRUPTED else ""
            if timing.time_origin():  # a restored example's time is its stored run's
                state = f" ({timing.time_origin()})"
            lines.append(
                f"  {one_line(timing.id)}: {format_seconds(round(timing.seconds, 3))}{state} "
                f"> budget {_budget_text(timing)} from {one_line(source)}"
            )
        if timing.over_memory_budget:
            lines.append(f"  {one_line(timing.id)}: {memory_over_text(timing)}")
    if result.unmeasured:
        lines.append(f"note: {result.unmeasured_text()}.")
    lines += [f"note: {one_line(text)}" for text in result.statusless]
    if result.stale:
        lines.append(f"FAIL: {len(result.stale)} stale cache entr{_ies(result.stale)} (audit):")
        lines += [f"  {one_line(audit_text(timing))}" for timing in result.stale]
    if result.nondeterministic:
        count = counted(len(result.nondeterministic), "example")
        lines.append(f"note: {count} not reproducible (audit):")
        lines += [f"  {one_line(audit_text(timing))}" for timing in result.nondeterministic]
    return "\n".join(lines)


def failure_lines(result: CheckResult) -> list[str]:
    """Why the build failed, causes before consequences: the examples that failed (with
    those the build stopped while they ran), then those its budgets failed it on (stopped
    at their budget or over it in fail mode, stopped by the memory ceiling, stopped hard;
    before the examples the build stopped when none failed), each a cause of the build's own reasons
    that follow (``-W`` turning the warnings they gave into errors), then that it did not
    finish and why: the first line when nothing else failed it. One line each; empty for
    a build that did not fail."""
    failed = [failed_text(result.failed)] if result.failed else []
    budgets = [one_line(f"FAIL: the build failed: {why}") for why in result.budgets_failed]
    # An example the build stopped while it ran (a parallel build's other workers, when
    # a budget's stop aborts it) is no cause: with no example failed by its own doing,
    # the budgets come first.
    if any(not timing.unfinished for timing in result.failed):
        lines = failed + budgets
    else:
        lines = budgets + failed
    lines += [one_line(f"FAIL: the build failed: {why}") for why in result.sphinx_failed]
    return lines + [one_line(f"FAIL: {why}") for why in result.incomplete]


def memory_over_text(timing: Timing) -> str:
    """``"peak 606M > memory budget 400M from budgets.toml memory_default"``, or, for an
    example the ceiling interrupted, ``"peak 467M (interrupted by the build's memory
    ceiling)"``."""
    peak = "unmeasured" if timing.memory_bytes is None else format_size(timing.memory_bytes)
    state = f" ({timing.interruption_text()})" if timing.status == INTERRUPTED else ""
    if timing.memory_budget_bytes is None:
        return f"peak {peak}{state}"
    source = timing.memory_budget_detail or timing.memory_budget_source or "the input"
    return (
        f"peak {peak}{state} > memory budget {format_size(timing.memory_budget_bytes)} "
        f"from {one_line(source)}"
    )


def _ies(items: Sequence[object]) -> str:
    return "y" if len(items) == 1 else "ies"


def one_line(text: str) -> str:
    """``text`` on one line: a name with a line break must not start a line of its own,
    which a CI runner would read as a command (``::error ...`` in GitHub Actions)."""
    if text.isprintable():
        return text
    return repr(text)[1:-1]
