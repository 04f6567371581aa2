"""What every report view shows, computed once: totals, and one row per example.

The Markdown, HTML and JSON views all render a :class:`ReportSummary`; none of them
re-measures or re-derives anything.

Example:

>>> from docsaccel.report.model import LoadedInput, Timing
>>> head = [Timing("tutorials/plot_a.py", "plot_a.py", 42.0, budget_seconds=30.0),
...         Timing("tutorials/plot_b.py", "plot_b.py", 26.0, budget_seconds=30.0)]
>>> base = [Timing("tutorials/plot_a.py", "plot_a.py", 20.0)]
>>> summary = summarize(LoadedInput("pr.json", "docsaccel-report", head), baseline=base)
>>> [row.id for row in summary.over], [row.id for row in summary.near]
(['tutorials/plot_a.py'], ['tutorials/plot_b.py'])
>>> summary.execution_seconds, summary.baseline_delta, summary.top(1)[0].delta_seconds
(68.0, 48.0, 22.0)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from docsaccel.contract import CACHED, is_near_budget, is_over_budget
from docsaccel.report.model import LoadedInput, Timing

if TYPE_CHECKING:  # the docs build summarizes without loading the history reader
    from docsaccel.report.history import ExampleHistory

__all__ = ["ReportSummary", "Row", "summarize"]


@dataclass(frozen=True)
class Row:
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

    @property
    def over(self) -> bool:
        return is_over_budget(self.status, self.seconds, self.budget_seconds)

    @property
    def near(self) -> bool:
        return is_near_budget(self.status, self.seconds, self.budget_seconds)

    def knobs_text(self) -> str:
        """``"rollouts=1 (full 4)"``-style summary of the fast-path knobs."""
        parts = []
        for name, knob in sorted(self.knobs.items()):
            if isinstance(knob, Mapping):
                value, full = knob.get("value"), knob.get("full")
                parts.append(f"{name}={value}" + (f" (full {full})" if full != value else ""))
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
    baseline_total: float | None = None
    #: ``"the build did not finish (... was running)"``, or ``""`` for a complete build.
    incomplete: str = ""

    @property
    def execution_seconds(self) -> float:
        """Time of the examples this build ran (reused ones are :attr:`reused_seconds`)."""
        return sum(row.seconds for row in self.rows if row.status != CACHED)

    @property
    def reused_seconds(self) -> float:
        """The recorded time of the examples whose outputs this build reused (``cached``)."""
        return sum(row.seconds for row in self.rows if row.status == CACHED)

    @property
    def reused_count(self) -> int:
        return sum(1 for row in self.rows if row.status == CACHED)

    @property
    def baseline_delta(self) -> float | None:
        """Execution time against the baseline's, ``None`` without a baseline."""
        if self.baseline_total is None:
            return None
        return self.execution_seconds - self.baseline_total

    @property
    def render_saved_seconds(self) -> float:
        return sum(row.render_saved_seconds for row in self.rows)

    @property
    def over(self) -> list[Row]:
        return [row for row in self.rows if row.over]

    @property
    def near(self) -> list[Row]:
        return [row for row in self.rows if row.near]

    @property
    def noisy(self) -> list[Row]:
        return [row for row in self.rows if row.noisy]

    def top(self, count: int) -> list[Row]:
        return self.rows[:count]

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
        text = f"{len(self.cache_hits)} restored (saved {self.cache_saved_seconds:.1f}s)"
        if misses:
            shown = [f"{row.id} ({row.cache.get('reason') or 'no reason given'})" for row in misses]
            more = f", and {len(shown) - listed} more" if len(shown) > listed else ""
            text += f"; {len(misses)} ran: {', '.join(shown[:listed])}{more}"
        return text

    def to_json(self) -> dict[str, Any]:
        """The JSON view: totals and every row, plain data."""
        return {
            "schema": "docsaccel.report-summary",
            "version": 1,
            "source": self.source,
            "format": self.format,
            "build_wall_seconds": self.build_wall_seconds,
            "execution_seconds": self.execution_seconds,
            "reused_seconds": self.reused_seconds,
            "baseline_execution_seconds": self.baseline_total,
            "render_saved_seconds": self.render_saved_seconds,
            "fast": self.fast,
            "complete": not self.incomplete,
            "incomplete": self.incomplete or None,
            "status_counts": self.status_counts,
            "over_budget": [row.id for row in self.over],
            "near_budget": [row.id for row in self.near],
            "noisy": [row.id for row in self.noisy],
            "cache": {
                "hits": len(self.cache_hits),
                "misses": {row.id: row.cache.get("reason") for row in self.cache_misses},
                "saved_seconds": self.cache_saved_seconds,
            },
            "examples": [asdict(row) for row in self.rows],
        }


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
) -> ReportSummary:
    """The summary of ``loaded``, with deltas against ``baseline`` and noise from ``history``."""
    base = {timing.id: timing.seconds for timing in baseline or ()}
    history = history or {}
    rows = []
    for t in loaded.timings:
        known = history.get(t.id)
        rows.append(
            Row(
                id=t.id,
                status=t.status,
                seconds=t.seconds,
                budget_seconds=t.budget_seconds,
                budget_source=t.budget_source,
                headroom_seconds=None if t.budget_seconds is None else t.budget_seconds - t.seconds,
                budget_use=t.budget_use,
                delta_seconds=t.seconds - base[t.id] if t.id in base else None,
                memory_bytes=t.memory_bytes,
                fast=t.fast,
                knobs=dict(t.knobs),
                render_saved_seconds=_render_saved(t),
                median_seconds=known.median_seconds if known else None,
                noisy=bool(known and known.noisy),
                cache=dict(t.cache),
            )
        )
    rows.sort(key=lambda row: (-row.seconds, row.id))
    wall = loaded.build.get("wall_seconds")
    return ReportSummary(
        source=loaded.path,
        format=loaded.format,
        rows=rows,
        build_wall_seconds=float(wall) if isinstance(wall, (int, float)) else None,
        fast=loaded.build.get("fast"),
        status_counts=dict(sorted(Counter(t.status for t in loaded.timings).items())),
        baseline_total=(
            sum(t.seconds for t in baseline or () if t.status != CACHED)
            if baseline is not None
            else None
        ),
        incomplete=loaded.incomplete_text(),
    )
