"""Trends from the build history: total build time over builds, and each example's drift.

The design, in full: the reports guide's *Design* section.

Example: five full builds and a fast one, as :func:`~.history.read_builds` reads them.

>>> from docsaccel.report.history import HistoryBuild, same_kind
>>> builds = [HistoryBuild(None, False, {"tutorials/plot_a.py": seconds})
...           for seconds in (10.0, 10.5, 11.0, 11.5, 12.0)]
>>> builds.append(HistoryBuild(None, True, {"tutorials/plot_a.py": 1.0}))
>>> trends = build_trends(same_kind(builds, fast=False), last=10)
>>> trends.text("tutorials/plot_a.py")
'+20% over 5 builds'
>>> trends.sparkline("tutorials/plot_a.py", budget_seconds=60.0)
'<svg class="sparkline" ...<title>tutorials/plot_a.py: +20% over 5 builds</title>...</svg>'
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from html import escape

from docsaccel.memory_sizes import format_size
from docsaccel.report.history import HistoryBuild

__all__ = [
    "TotalChange",
    "Trends",
    "build_trends",
    "sparkline_svg",
    "total_change",
    "total_chart_svg",
    "trend_text",
]

_WIDTH, _HEIGHT, _PAD = 120, 24, 2
_LINE, _BUDGET = "#4f7cac", "#c62828"


@dataclass(frozen=True)
class TotalChange:
    """The first and the latest build's total time over the examples that ran whole in
    both: like with like, so a stopped or failed example never reads as a speed-up (its
    time is no timing) and an added one never as a slow-down."""

    first: float
    latest: float
    #: How many examples the totals count.
    examples: int
    #: Examples of either build left out: added, removed, or without a whole run in one.
    left_out: int


@dataclass(frozen=True)
class Trends:
    """Totals per build (oldest first) and each example's last durations."""

    #: Each build's label and total; ``None`` for a partial build (an example in it
    #: stopped, failed or was not measured), whose total is no timing to trend.
    totals: list[tuple[str, float | None]]
    durations: dict[str, tuple[float, ...]] = field(default_factory=dict)
    #: Each example's last peaks (bytes), where recorded.
    peaks: dict[str, tuple[float, ...]] = field(default_factory=dict)
    #: The first against the latest build, like with like (``None``: fewer than one build).
    change: TotalChange | None = None
    #: Why each partial build (by its number, from 1) is left out of the totals' trend
    #: (:meth:`~docsaccel.report.history.HistoryBuild.left_out_text`).
    left_out: dict[int, str] = field(default_factory=dict)

    def text(self, example_id: str) -> str:
        return trend_text(self.durations.get(example_id, ()))

    def sparkline(self, example_id: str, budget_seconds: float | None) -> str:
        return sparkline_svg(self.durations.get(example_id, ()), budget_seconds, example_id)

    @property
    def has_memory(self) -> bool:
        return bool(self.peaks)

    def memory_text(self, example_id: str) -> str:
        return trend_text(self.peaks.get(example_id, ()), unit="bytes")

    def memory_moved(self, example_id: str) -> bool:
        """Whether the example's peak moved by 1 % or more over the recorded builds: a
        steady peak is not worth a second trend beside the time's."""
        peaks = self.peaks.get(example_id, ())
        if len(peaks) < 2:
            return False
        start, end = _fitted_ends(peaks)
        return abs(end - start) >= 0.01 * max(start, 1.0)

    def both_text(self, example_id: str) -> str:
        """The time trend, and the memory trend after it when the peak moved."""
        time = self.text(example_id)
        if not self.memory_moved(example_id):
            return time
        return f"{time}; memory {self.memory_text(example_id)}"

    def memory_sparkline(self, example_id: str, budget_bytes: int | None) -> str:
        return sparkline_svg(self.peaks.get(example_id, ()), budget_bytes, f"{example_id} memory")


def build_trends(builds: Sequence[HistoryBuild], last: int = 10) -> Trends:
    """The trends of ``builds`` (one kind, oldest first); ``last`` durations per example."""
    if last < 1:
        raise ValueError(f"last must be 1 or more, got {last!r}")
    totals = [
        (build.recorded_at or f"build {index}", None if build.partial else build.total_seconds)
        for index, build in enumerate(builds, 1)
    ]
    return Trends(
        totals,
        _last((build.durations for build in builds), last),
        _last((build.peaks for build in builds), last),
        total_change(builds[0], builds[-1]) if builds else None,
        {number: build.left_out_text() for number, build in enumerate(builds, 1) if build.partial},
    )


def total_change(first: HistoryBuild, latest: HistoryBuild) -> TotalChange:
    """The totals of ``first`` and ``latest`` over the examples that ran whole in both."""
    both = first.durations.keys() & latest.durations.keys()
    recorded = {*first.durations, *first.not_whole, *latest.durations, *latest.not_whole}
    return TotalChange(
        sum(first.durations[key] for key in both),
        sum(latest.durations[key] for key in both),
        len(both),
        len(recorded) - len(both),
    )


def _last(runs: Iterable[Mapping[str, float]], last: int) -> dict[str, tuple[float, ...]]:
    found: dict[str, list[float]] = {}
    for run in runs:
        for example_id, value in run.items():
            found.setdefault(example_id, []).append(value)
    return {key: tuple(values[-last:]) for key, values in found.items()}


def trend_text(durations: Sequence[float], unit: str = "seconds") -> str:
    """``"+18% over 10 builds"``; ``"1 build"``; ``"–"`` without any.

    ``unit``: what the values are (``"seconds"``, ``"bytes"``), for a change from 0.
    """
    if not durations:
        return "–"
    if len(durations) < 2:
        return "1 build"
    start, end = _fitted_ends(durations)
    if start <= 0:
        grew = end - start
        sign = "+" if grew >= 0 else "-"
        change = f"{grew:+.1f}s" if unit == "seconds" else f"{sign}{format_size(abs(grew))}"
        return f"{change} over {len(durations)} builds"
    return f"{(end - start) / start * 100:+.0f}% over {len(durations)} builds"


def _fitted_ends(values: Sequence[float]) -> tuple[float, float]:
    """The least-squares line's values at the first and last point.

    Plain float sums: :func:`statistics.linear_regression` computes exactly with
    fractions, which a view of a thousand examples cannot afford.
    """
    count = len(values)
    mean_x, mean_y = (count - 1) / 2, sum(values) / count
    spread = sum((x - mean_x) ** 2 for x in range(count))
    slope = sum((x - mean_x) * (y - mean_y) for x, y in enumerate(values)) / spread
    return mean_y - slope * mean_x, mean_y + slope * (count - 1 - mean_x)


def sparkline_svg(
    durations: Sequence[float], budget_seconds: float | None = None, label: str = ""
) -> str:
    """An inline ``<svg>`` polyline of ``durations``, a dashed line at the budget."""
    if not durations:
        return ""
    top = max([*durations, budget_seconds or 0.0]) or 1.0
    inner_w, inner_h = _WIDTH - 2 * _PAD, _HEIGHT - 2 * _PAD
    step = inner_w / max(len(durations) - 1, 1)

    def y(value: float) -> str:
        return f"{_PAD + inner_h * (1 - value / top):.1f}"

    points = " ".join(f"{_PAD + i * step:.1f},{y(v)}" for i, v in enumerate(durations))
    budget = ""
    if budget_seconds is not None:
        budget = (
            f'<line class="budget" x1="{_PAD}" x2="{_WIDTH - _PAD}" y1="{y(budget_seconds)}" '
            f'y2="{y(budget_seconds)}" stroke="{_BUDGET}" stroke-dasharray="3,2" '
            'stroke-width="1"/>'
        )
    title = escape(f"{label}: {trend_text(durations)}" if label else trend_text(durations))
    return (
        f'<svg class="sparkline" width="{_WIDTH}" height="{_HEIGHT}" '
        f'viewBox="0 0 {_WIDTH} {_HEIGHT}" role="img" aria-label="{title}">'
        f"<title>{title}</title>{budget}"
        f'<polyline fill="none" stroke="{_LINE}" stroke-width="1.5" points="{points}"/></svg>'
    )


def _chart_title(trends: Trends) -> str:
    """The trend chart's title, saying which builds it leaves out and why.

    >>> _chart_title(Trends([("a", 1.0), ("b", None)], left_out={2: "its examples were..."}))
    'Total execution time over 2 builds (build 2 left out: its examples were...)'
    """
    totals = trends.totals
    title = f"Total execution time over {len(totals)} build{'s' if len(totals) != 1 else ''}"
    partial = [number for number, (_, total) in enumerate(totals, 1) if total is None]
    by_why: dict[str, list[str]] = {}
    for number in partial:
        why = trends.left_out.get(number) or "an example did not run whole"
        by_why.setdefault(why, []).append(str(number))
    said = [
        f"build{'s' if len(numbers) != 1 else ''} {', '.join(numbers)} left out: {why}"
        for why, numbers in by_why.items()
    ]
    if said:
        title += f" ({'; '.join(said)})"
    return title


def total_chart_svg(trends: Trends) -> str:
    """The total execution time per recorded build as an ``<svg>`` line chart ("" if no
    build has a total: every one is partial)."""
    if all(total is None for _, total in trends.totals):
        return ""
    import matplotlib
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    style = {"svg.fonttype": "none", "svg.hashsalt": "docsaccel", "text.parse_math": False}
    with matplotlib.rc_context(style):
        figure = Figure(figsize=(8.0, 2.6))
        figure.subplots_adjust(left=0.09, right=0.98, top=0.86, bottom=0.2)
        axes = figure.add_subplot()
        # A partial build has no point: the line joins the builds whose every example ran
        # whole, so a stopped example never draws a drop.
        drawn = [(number, total) for number, (_, total) in enumerate(trends.totals, 1)]
        drawn = [(number, total) for number, total in drawn if total is not None]
        axes.plot(*zip(*drawn, strict=True), marker="o", color=_LINE)
        # Builds are counted: a tick between two of them ("1.25") means nothing, and one
        # build alone still gets a whole-number axis around it.
        axes.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
        axes.set_xlim(0.5, len(trends.totals) + 0.5)
        axes.set_xlabel("recorded build (oldest first)")
        axes.set_ylabel("seconds")
        # Room above the highest point: a limit of the data alone cuts its marker in half.
        axes.set_ylim(0, max(total for _, total in drawn) * 1.1 or 1.0)
        axes.set_title(_chart_title(trends), fontsize=10)
        buffer = io.StringIO()
        metadata = dict.fromkeys(("Creator", "Date", "Format", "Type"))
        figure.savefig(buffer, format="svg", metadata=metadata)
    text = buffer.getvalue()
    return text[text.index("<svg") :].replace("<svg ", '<svg class="trend-chart" ', 1)
