"""``docsaccel compare BASE HEAD``: what got slower, faster, larger, added or removed.

The design, in full: the reports guide's *Design* section.

Example:

>>> from docsaccel.report.model import LoadedInput, Timing, whole_run_totals
>>> base = [Timing("plot_a.py", "plot_a.py", 20.0), Timing("plot_b.py", "plot_b.py", 3.0)]
>>> head = [Timing("plot_a.py", "plot_a.py", 42.0), Timing("plot_b.py", "plot_b.py", 3.5)]
>>> print(format_comparison(compare_timings(base, head)), end="")
Execution time: 45.5s (+22.5s vs base 23s); 1 regression (slower by > 20% and > 5s)
<BLANKLINE>
  plot_a.py: 20s -> 42s (+22s, +110%)  REGRESSED
  plot_b.py: 3s -> 3.5s (+0.5s, +17%)
>>> full_build = LoadedInput("main.json", "docsaccel-report", base, build={"fast": False})
>>> fast_build = LoadedInput("pr.json", "docsaccel-report", head, build={"fast": True})
>>> check_same_kind(full_build, fast_build)
Traceback (most recent call last):
...
docsaccel.report.compare.MixedBuildsError: main.json is a full build and pr.json a fast build ...
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from docsaccel.budgets import format_change, format_measured, format_seconds, shown_nonzero
from docsaccel.contract import (
    BY_TIME,
    FAILED,
    INTERRUPTED,
    NOT_MEASURED,
    NOT_REACHED,
    build_failed_text,
)
from docsaccel.counts import counted
from docsaccel.memory_sizes import format_size
from docsaccel.report.markdown import escape_md
from docsaccel.report.model import NO_TOTAL, LoadedInput, Timing, matched, whole_run_totals

__all__ = [
    "DEFAULT_ABSOLUTE_BYTES",
    "DEFAULT_ABSOLUTE_SECONDS",
    "DEFAULT_RELATIVE",
    "Comparison",
    "Delta",
    "MixedBuildsError",
    "check_same_kind",
    "compare_timings",
    "format_comparison",
    "mixed_kinds",
    "percent_text",
]

DEFAULT_RELATIVE = 0.20
DEFAULT_ABSOLUTE_SECONDS = 5.0
#: A peak that grew by less than this is noise (allocator caches, imports).
DEFAULT_ABSOLUTE_BYTES = 100 << 20


@dataclass(frozen=True)
class Delta:
    """One example present in both inputs."""

    id: str
    base_seconds: float
    head_seconds: float
    regressed: bool
    #: Its peak memory in each input (None where not measured), and whether it regressed.
    base_bytes: int | None = None
    head_bytes: int | None = None
    memory_regressed: bool = False
    #: Whose run each time is when not its build's own (:meth:`Timing.time_origin`: the
    #: stored run of an example the example cache restored), ``""`` otherwise.
    base_origin: str = ""
    head_origin: str = ""

    def times_text(self) -> str:
        """``"3s (stored run) -> 3.3s"``: each time, labelled with whose run it is."""
        return f"{_labelled(self.base_seconds, self.base_origin)} -> " + _labelled(
            self.head_seconds, self.head_origin
        )

    @property
    def grew_bytes(self) -> int | None:
        """HEAD's peak against BASE's, when both were measured."""
        if self.base_bytes is None or self.head_bytes is None:
            return None
        return self.head_bytes - self.base_bytes

    def memory_text(self) -> str:
        """``"300M -> 500M (+200M, +67%)"``, or ``""`` when not measured in both."""
        grew = self.grew_bytes
        if grew is None:
            return ""
        assert self.base_bytes is not None and self.head_bytes is not None
        if grew == 0:
            return format_size(self.head_bytes)
        percent = f", {percent_text(grew / self.base_bytes)}" if self.base_bytes > 0 else ""
        sign = "+" if grew >= 0 else "-"
        return (
            f"{format_size(self.base_bytes)} -> {format_size(self.head_bytes)} "
            f"({sign}{format_size(abs(grew))}{percent})"
        )

    @property
    def seconds(self) -> float:
        return self.head_seconds - self.base_seconds

    @property
    def relative(self) -> float | None:
        """Change as a fraction of BASE (``0.5`` = 50 % slower); ``None`` if BASE is 0."""
        return self.seconds / self.base_seconds if self.base_seconds > 0 else None


@dataclass(frozen=True)
class Comparison:
    """Per-example deltas (largest slow-down first), new and removed examples, totals
    (of whole runs: an example not compared, stopped, failed or reused in either input,
    adds nothing to either total)."""

    deltas: list[Delta]
    added: list[Timing]
    removed: list[Timing]
    #: ``None`` when no example has a time to compare in both (:data:`NO_TOTAL`).
    base_total: float | None
    head_total: float | None
    relative_threshold: float
    absolute_threshold: float
    absolute_bytes_threshold: int = DEFAULT_ABSOLUTE_BYTES
    #: ``(base, head)`` of the examples in both inputs that are not a whole run in both.
    not_compared: list[tuple[Timing, Timing]] = field(default_factory=list)
    #: Why the head build failed (:meth:`LoadedInput.judged_failures`, that it did not
    #: finish too): said first, so a comparison never reads as the verdict of a failed
    #: build.
    head_failed: list[str] = field(default_factory=list)
    #: Why the base build failed: said first too, as its times (an example that raised
    #: early) are no measure to compare with; the head's verdict is not changed by it.
    base_failed: list[str] = field(default_factory=list)
    #: ``(input's role, examples)``: the examples the other input holds that this input
    #: of an unfinished build, which does not list its whole plan, does not hold: its build
    #: may have stopped before them (:data:`~docsaccel.contract.NOT_REACHED`), so neither
    #: new nor removed.
    not_reached: list[tuple[str, list[Timing]]] = field(default_factory=list)
    #: That the two builds are of different kinds (:func:`mixed_kinds`), compared all the
    #: same (``--allow-mixed``): said first in every format, as their times differ by it.
    mixed: str | None = None
    #: What to say of each input that does not say how its build ended (sphinx-gallery's
    #: files: :meth:`~docsaccel.report.model.LoadedInput.no_status_text`), head first: a
    #: build that failed otherwise is not seen in it.
    statusless: list[str] = field(default_factory=list)

    @property
    def regressions(self) -> list[Delta]:
        """The examples that regressed, in time or in memory."""
        return [delta for delta in self.deltas if delta.regressed or delta.memory_regressed]

    @property
    def time_regressions(self) -> list[Delta]:
        return [delta for delta in self.deltas if delta.regressed]

    @property
    def memory_regressions(self) -> list[Delta]:
        return [delta for delta in self.deltas if delta.memory_regressed]

    @property
    def total_delta(self) -> float | None:
        if self.head_total is None or self.base_total is None:
            return None
        return self.head_total - self.base_total

    def total_text(self) -> str:
        """The totals as every format says them: the head's, its change and the base's,
        or that there is none, where no example has a time to compare in both."""
        delta = self.total_delta
        if delta is None or self.head_total is None or self.base_total is None:
            return f"{NO_TOTAL} (no example has a time to compare in both builds)"
        return (
            f"{format_measured(self.head_total)} ({_signed(delta)} vs base "
            f"{format_measured(self.base_total)})"
        )


class MixedBuildsError(ValueError):
    """BASE and HEAD are builds of different kinds (fast path on in one, off in the other)."""


def _kind(fast: object) -> str:
    return "fast" if fast else "full"


#: What ``compare`` says to do about a mixed pair; ``report --baseline`` has no such option.
ALLOW_MIXED_HINT = "Compare builds of one kind, or pass --allow-mixed to compare them anyway"


def mixed_kinds(base: LoadedInput, head: LoadedInput) -> str | None:
    """``"<base> is a fast build and <head> a full build (fast path on in one only)"``
    when one input is a fast build and the other a full one, else ``None``: what
    ``compare`` refuses, or says first when told ``--allow-mixed``.

    Inputs that do not say (sphinx-gallery's files) are taken as they are.
    """
    fast_base, fast_head = base.build.get("fast"), head.build.get("fast")
    if isinstance(fast_base, bool) and isinstance(fast_head, bool) and fast_base != fast_head:
        return (
            f"{base.path} is a {_kind(fast_base)} build and {head.path} a {_kind(fast_head)} "
            "build (fast path on in one only)"
        )
    return None


def check_same_kind(base: LoadedInput, head: LoadedInput, hint: str = ALLOW_MIXED_HINT) -> None:
    """Raise :class:`MixedBuildsError` when one input is a fast build and the other a full
    one (:func:`mixed_kinds`)."""
    mixed = mixed_kinds(base, head)
    if mixed is not None:
        raise MixedBuildsError(f"{mixed}: their times are not comparable. {hint}")


def _check_threshold(name: str, value: float) -> None:
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a number of 0 or more, got {value!r}")


def _regressed(before: float, after: float, relative: float, absolute: float) -> bool:
    """Grew by more than both thresholds."""
    grew = after - before
    return grew > absolute and grew > relative * before


def compare_timings(
    base: Sequence[Timing],
    head: Sequence[Timing],
    relative: float = DEFAULT_RELATIVE,
    absolute_seconds: float = DEFAULT_ABSOLUTE_SECONDS,
    absolute_bytes: int = DEFAULT_ABSOLUTE_BYTES,
    base_lists_plan: bool = True,
    head_lists_plan: bool = True,
) -> Comparison:
    """Compare HEAD against BASE with the regression thresholds described above, each
    example paired as :func:`~docsaccel.report.model.matched` pairs them.

    ``base_lists_plan``, ``head_lists_plan``: whether that input lists every example its
    build planned (:attr:`~docsaccel.report.model.LoadedInput.lists_plan`). An example
    absent from one that does not may be one its build did not reach: listed as
    such, never as removed (from HEAD) or new (in HEAD)."""
    _check_threshold("the relative threshold", relative)
    _check_threshold("the absolute threshold", absolute_seconds)
    _check_threshold("the absolute memory threshold", absolute_bytes)
    base, head = matched(base, head)
    base_by_id = {timing.id: timing for timing in base}
    head_by_id = {timing.id: timing for timing in head}
    deltas, not_compared = [], []
    for example_id in sorted(base_by_id.keys() & head_by_id.keys()):
        old, new = base_by_id[example_id], head_by_id[example_id]
        before, after = old.compared_seconds, new.compared_seconds
        if before is None or after is None:
            not_compared.append((old, new))
            continue
        regressed = _regressed(before, after, relative, absolute_seconds)
        grown = None not in (old.memory_bytes, new.memory_bytes) and _regressed(
            old.memory_bytes or 0, new.memory_bytes or 0, relative, absolute_bytes
        )
        delta = Delta(
            example_id,
            before,
            after,
            regressed,
            old.memory_bytes,
            new.memory_bytes,
            memory_regressed=grown,
            base_origin=old.time_origin(),
            head_origin=new.time_origin(),
        )
        deltas.append(delta)
    deltas.sort(key=lambda delta: (-delta.seconds, delta.id))
    base_total, head_total = whole_run_totals(base, head) or (None, None)
    added = [head_by_id[i] for i in sorted(head_by_id.keys() - base_by_id.keys())]
    removed = [base_by_id[i] for i in sorted(base_by_id.keys() - head_by_id.keys())]
    not_reached = [
        (role, missing)
        for role, listed, missing in (
            ("base", base_lists_plan, added),
            ("head", head_lists_plan, removed),
        )
        if missing and not listed
    ]
    return Comparison(
        deltas=deltas,
        added=added if base_lists_plan else [],
        removed=removed if head_lists_plan else [],
        not_reached=not_reached,
        # Whole runs only, and of an example in both inputs only when it is compared: a
        # stopped or reused example's time in one input alone would read as a speed-up.
        base_total=base_total,
        head_total=head_total,
        relative_threshold=relative,
        absolute_threshold=absolute_seconds,
        absolute_bytes_threshold=absolute_bytes,
        not_compared=not_compared,
    )


def _labelled(seconds: float, origin: str) -> str:
    """A time compared, labelled with whose run it is when not its build's own."""
    return f"{format_measured(seconds)} ({origin})" if origin else format_measured(seconds)


def run_text(timing: Timing) -> str:
    """What an example's run was: ``"3.0s"`` for a whole run (``"3.0s (stored run)"`` for
    a restored one, :attr:`Timing.compared_seconds`), else its status with its time and
    budget (``"interrupted at its budget of 2s (after 2.1s)"``)."""
    compared = timing.compared_seconds
    if compared is not None:
        return _labelled(compared, timing.time_origin())
    if timing.status == INTERRUPTED:
        budget = (
            f"its budget of {format_seconds(timing.budget_seconds)}"
            if timing.budget_seconds is not None and timing.interrupted_by in (None, BY_TIME)
            else timing.interruption_text().removeprefix("interrupted by ")
        )
        return f"interrupted at {budget} (after {format_measured(timing.seconds)})"
    if timing.status == FAILED:
        return timing.ended_text()
    if not timing.measured:  # a reused time is the run's that made the outputs
        return f"{timing.status} ({NOT_MEASURED})"
    return timing.status


def _signed(seconds: float) -> str:
    return format_change(seconds)


def percent_text(fraction: float) -> str:
    """A change as a fraction of its base, in whole percents, or with the digits that
    keep a change from reading as ``+0%`` (a regression with thresholds of 0 is one).

    >>> percent_text(1.1), percent_text(0.0013), percent_text(0.0)
    ('+110%', '+0.1%', '+0%')
    """
    text = f"{fraction * 100:+.0f}%"
    if fraction and text in ("+0%", "-0%"):
        return shown_nonzero(fraction * 100, "%")
    return text


def _percent(delta: Delta) -> str:
    return "n/a" if delta.relative is None else percent_text(delta.relative)


def _flags(delta: Delta, time: str, memory: str, join: str) -> str:
    flags = [flag for flag, on in ((time, delta.regressed), (memory, delta.memory_regressed)) if on]
    return join.join(flags)


def _one_side_text(comparison: Comparison) -> str:
    """What the totals leave out besides examples not compared: those in one build only
    (listed apart), which would read as a speed-up (removed) or a slow-down (added)."""
    apart = len(comparison.added) + len(comparison.removed)
    return f"; {apart} in one build only, not in the totals" if apart else ""


def format_comparison(comparison: Comparison, markdown: bool = False) -> str:
    """Text (or Markdown for a PR comment) listing regressions, changes and totals."""
    quote = escape_md if markdown else str
    c = comparison
    head = "### " if markdown else ""
    lines = [
        f"{head}Execution time: {c.total_text()}; "
        f"{counted(len(c.time_regressions), 'regression')} "
        f"(slower by > {c.relative_threshold * 100:g}% and > {c.absolute_threshold:g}s)"
        + (f"; {len(c.not_compared)} not compared" if c.not_compared else "")
        + _one_side_text(c),
        "",
    ]
    if any(d.grew_bytes is not None for d in c.deltas):
        lines[1:1] = [
            f"{head}Peak memory: {counted(len(c.memory_regressions), 'regression')} (larger by > "
            f"{c.relative_threshold * 100:g}% and > {format_size(c.absolute_bytes_threshold)})",
            "",
        ]
    said = []
    if c.base_failed:
        said.insert(0, head + build_failed_text(quote("; ".join(c.base_failed)), "base build"))
    if c.head_failed:
        said.insert(0, head + build_failed_text(quote("; ".join(c.head_failed)), "head build"))
    if c.mixed is not None:
        said.append(f"{head}Builds of different kinds: {quote(c.mixed)}; times compared anyway.")
    if said:
        lines[0:0] = [*said, ""]
    changed = [d for d in c.deltas if d.seconds != 0 or d.grew_bytes]
    if markdown and changed:
        lines += [
            "| example | base | head | change | peak memory | |",
            "| --- | ---: | ---: | ---: | ---: | --- |",
        ]
        for d in changed:
            lines.append(
                f"| {quote(d.id)} | {_labelled(d.base_seconds, d.base_origin)} "
                f"| {_labelled(d.head_seconds, d.head_origin)} | "
                f"{_signed(d.seconds)} ({_percent(d)}) | {d.memory_text()} | "
                f"{_flags(d, '**regressed**', '**memory regressed**', ', ')} |"
            )
    else:
        for d in changed:
            flag = _flags(d, "  REGRESSED", "  MEMORY REGRESSED", "")
            memory = f"; memory {d.memory_text()}" if d.grew_bytes else ""
            lines.append(
                f"  {d.id}: {d.times_text()} ({_signed(d.seconds)}, {_percent(d)}){memory}{flag}"
            )
    bullet = "- " if markdown else "  "
    if c.not_compared:
        lines += ["", "Not compared (not a whole run in both):"]
        lines += [
            f"{bullet}{quote(new.id)}: {run_text(old)} -> {run_text(new)}"
            for old, new in c.not_compared
        ]
    for title, items in (("New examples", c.added), ("Removed examples", c.removed)):
        if items:
            # A stopped, failed or reused example's time is no timing: its status says why.
            lines += ["", f"{title}:"]
            lines += [f"{bullet}{quote(t.id)}: {run_text(t)}" for t in items]
    for role, items in c.not_reached:
        # The build stopped before them: what the other input says of them, nothing more.
        lines += ["", f"{NOT_REACHED.capitalize()} by the {role} build (it did not finish):"]
        lines += [
            f"{bullet}{quote(t.id)}: {run_text(t)} -> {NOT_REACHED}"
            if role == "head"
            else f"{bullet}{quote(t.id)}: {NOT_REACHED} -> {run_text(t)}"
            for t in items
        ]
    if c.statusless:
        lines += ["", *(f"{bullet if markdown else ''}note: {quote(t)}" for t in c.statusless)]
    return "\n".join(lines).rstrip() + "\n"
