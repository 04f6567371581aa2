"""The Markdown view of a report: fit for a PR comment or ``$GITHUB_STEP_SUMMARY``.

The design, in full: the reports guide's *Design* section.

Example:

>>> from docsaccel.report.model import LoadedInput, Timing
>>> from docsaccel.report.summary import summarize
>>> timings = [Timing("tutorials/plot_a.py", "plot_a.py", 42.0, budget_seconds=30.0,
...                   memory_bytes=600 << 20, memory_budget_bytes=400 << 20)]
>>> print(render_markdown(summarize(LoadedInput("report.json", "docsaccel-report", timings))))
## Docs build budget report
<BLANKLINE>
- **Build wall time:** –
- **Execution time:** 42s over 1 example run (1 ok)
- **Memory:** largest peak 600M \\(tutorials/plot\\_a.py\\); retained 0B
<BLANKLINE>
**1 example over budget.**
<BLANKLINE>
### Over budget
...
| tutorials/plot\\_a.py | ok | 42s | 30s (140%) | -12s | – | 600M / 400M (150%) | – |  | – |
...
"""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING

from docsaccel.budgets import format_headroom, format_measured, format_seconds
from docsaccel.contract import near_budget_text
from docsaccel.counts import counted
from docsaccel.report.model import NO_TOTAL
from docsaccel.report.summary import ReportSummary, Row

if TYPE_CHECKING:
    from docsaccel.report.trend import TotalChange, Trends


#: The title line every Markdown report has (after the warning of an unfinished build).
TITLE = "## Docs build budget report"
#: The last line of every Markdown report: where its data came from.
_SOURCE_OPEN, _SOURCE_CLOSE = "<sub>from ", ")</sub>"


def is_markdown_report(head: str, tail: str) -> bool:
    """Whether a file starting with ``head`` and ending with ``tail`` is a Markdown report
    :func:`render_markdown` wrote: its title line near the top, its source line last.

    ``docsaccel report -o`` replaces only such a file, so a README is never overwritten.
    """
    lines = tail.rstrip("\n").rsplit("\n", 1)
    return (
        TITLE in head.split("\n", 4)[:4]
        and lines[-1].startswith(_SOURCE_OPEN)
        and lines[-1].endswith(_SOURCE_CLOSE)
    )


__all__ = ["TITLE", "escape_md", "is_markdown_report", "render_markdown"]

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|~>-])")


def escape_md(text: str) -> str:
    """``text`` safe inside a Markdown table cell: HTML-escaped, specials backslashed."""
    one_line = " ".join(str(text).split())
    return _MD_SPECIAL.sub(r"\\\1", html.escape(one_line, quote=False))


def _seconds(value: float | None, signed: bool = False) -> str:
    """Seconds as the build log writes them (``signed``: a change)."""
    if value is None:
        return "–"
    return format_measured(value, signed=signed)


def _headroom(value: float | None) -> str:
    return "–" if value is None else format_headroom(value)


def _budget(row: Row) -> str:
    """``"30s (140%)"``; ``"30s (–)"`` when its time is no run's (never run, or did not finish)."""
    if row.budget_seconds is None:
        return "unbounded"
    use = "–" if row.budget_use is None else f"{row.budget_use * 100:.0f}%"
    return f"{format_seconds(row.budget_seconds)} ({use})"


_HEADER = (
    "| example | status | time | budget (use) | headroom | Δ vs baseline | peak memory "
    "(budget, use) | retained | fast-path knobs | render saved |\n"
    "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |"
)


def _table(rows: list[Row], trends: Trends | None = None) -> str:
    lines = [_HEADER]
    if trends is not None:
        lines = [_HEADER.replace(" |\n", " | trend |\n", 1) + " --- |"]
    for row in rows:
        noisy = " (noisy)" if row.noisy else ""
        trend = f" {escape_md(trends.both_text(row.id))} |" if trends is not None else ""
        lines.append(
            f"| {escape_md(row.id)}{noisy} | {escape_md(row.status_label)} "
            f"| {escape_md(row.time_text())} "
            f"| {_budget(row)} | {_headroom(row.headroom_seconds)} "
            # Sizes and percentages only, as the time cells: nothing there to escape.
            f"| {_seconds(row.delta_seconds, signed=True)} | {row.memory_text()} "
            f"| {row.retained_text()} | {escape_md(row.knobs_text())} "
            f"| {_seconds(row.render_saved_seconds) if row.render_saved_seconds else '–'} |" + trend
        )
    return "\n".join(lines)


def _totals(summary: ReportSummary) -> list[str]:
    lines = [
        f"- **Build wall time:** {_seconds(summary.build_wall_seconds)}"
        + (" (fast path)" if summary.fast else ""),
        f"- **Execution time:** {summary.execution_text(escape_md)}",
    ]
    if summary.reused_count:
        lines.append(f"- **Reused:** {escape_md(summary.reused_text())}")
    if summary.has_baseline:
        lines.append(f"- **Against the baseline:** {summary.baseline_text(escape_md)}")
    if summary.baseline_failed:
        lines.append(f"- **The baseline build failed:** {escape_md(summary.baseline_failed)}")
    if summary.baseline_no_status:
        lines.append(f"- **Baseline failures not known:** {escape_md(summary.baseline_no_status)}")
    if summary.memory_text():
        lines.append(f"- **Memory:** {escape_md(summary.memory_text())}")
    if summary.render_saved_seconds:
        lines.append(f"- **Render gating saved:** {_seconds(summary.render_saved_seconds)}")
    if summary.cache_hits or summary.cache_misses:
        lines.append(f"- **Example cache:** {escape_md(summary.cache_text())}")
    if summary.audit_text():
        lines.append(f"- **Example cache audit:** {escape_md(summary.audit_text())}")
    return lines


def _total_change(builds: int, change: TotalChange) -> str:
    """The history's total line: first against latest build, over the same examples."""
    start = f"Total execution time over the last {builds} recorded builds of this kind"
    if not change.examples:
        return (
            f"{start}: no example ran whole in both the first and the latest, so there is "
            f"{NO_TOTAL}."
        )
    line = f"{start}: {_seconds(change.first)} -> {_seconds(change.latest)}"
    if change.left_out:
        line += (
            f" (over the {counted(change.examples, 'example')} that ran whole in both the first "
            f"and the latest; {change.left_out} left out: added, removed, stopped, failed or not "
            "measured in one of them)"
        )
    return line + "."


def render_markdown(summary: ReportSummary, top: int = 10, trends: Trends | None = None) -> str:
    """The whole Markdown report of ``summary``; ``trends``: a trend column from history."""
    if top < 1:
        raise ValueError(f"--top must be 1 or more, got {top!r}")
    over, near, noisy = summary.over, summary.near, summary.noisy
    parts = [TITLE, ""]
    why, times = summary.warning()
    if why:
        parts[0:0] = [f"> **Warning: {escape_md(why)}.** {times}".rstrip(), ""]
    parts += [*_totals(summary), ""]
    parts += [f"**{summary.verdict(escape_md)}**", ""]
    for title, rows in (
        ("Failed", summary.failed),
        ("Over budget", over),
        (f"Near budget (above {near_budget_text()})", near),
        ("Noisy (durations vary a lot between builds)", noisy),
    ):
        if rows:
            parts += [f"### {title}", "", _table(rows, trends), ""]
    top_rows = _table(summary.top(top), trends)
    parts += [f"### Top {min(top, len(summary.rows))} by time", "", top_rows, ""]
    if summary.measured_memory:
        count = min(top, len(summary.measured_memory))
        parts += [f"### Top {count} by peak memory", "", _table(summary.top_memory(top)), ""]
    if trends is not None and trends.change is not None:
        parts += [_total_change(len(trends.totals), trends.change), ""]
    parts.append(f"{_SOURCE_OPEN}{escape_md(summary.source)} ({summary.format}{_SOURCE_CLOSE}")
    return "\n".join(parts) + "\n"
