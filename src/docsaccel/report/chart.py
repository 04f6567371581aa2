"""The time-vs-budget chart of the HTML report, drawn by matplotlib as inline SVG.

The design, in full: the reports guide's *Design* section.

Example:

>>> from docsaccel.report.model import LoadedInput, Timing
>>> from docsaccel.report.summary import summarize
>>> timings = [Timing("tutorials/plot_a.py", "plot_a.py", 42.0, budget_seconds=30.0)]
>>> summary = summarize(LoadedInput("report.json", "docsaccel-report", timings))
>>> svg = render_chart_svg(summary.rows, limit=40)
>>> svg.startswith("<svg"), "tutorials/plot_a.py (42s of 30s)" in svg
(True, True)
>>> chart_percent(summary.rows[0])
140.0
"""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Sequence
from pathlib import Path

from docsaccel.budgets import format_measured, format_seconds
from docsaccel.contract import INTERRUPTED, NOT_EXECUTED, NOT_RUN, InputError, require_extra
from docsaccel.report.summary import Row

__all__ = [
    "LABEL_CHARS",
    "TITLE",
    "chart_label",
    "chart_percent",
    "chart_rows",
    "fitted_label",
    "is_chart_svg",
    "render_chart_svg",
]

#: The chart's title, which every chart drawn here holds as text (near its end).
TITLE = "Time vs budget per example"


def is_chart_svg(head: str, tail: str) -> bool:
    """Whether a file starting with ``head`` and ending with ``tail`` is a chart
    :func:`render_chart_svg` drew: an ``<svg>`` with its title. ``python -m
    docsaccel.report.chart`` replaces only such a file (or an empty one)."""
    return head.startswith("<svg") and tail.rstrip().endswith("</svg>") and TITLE in tail


_OVER, _NEAR, _OK = "#c62828", "#ef8f00", "#4f7cac"
_WIDTH_IN, _ROW_IN, _LABEL_PT = 8.0, 0.28, 8
# Average glyph width of the default sans-serif font, in ems: sizes the label margin.
_EM_PER_CHAR = 0.6
# The widest the label margin gets, as a share of the figure: the bars keep the rest.
_MAX_LEFT = 0.6
#: The most characters of a label line the widest margin holds: a longer label breaks
#: before its parenthesis, and a line still longer loses its start (:func:`fitted_label`).
LABEL_CHARS = int((_MAX_LEFT * _WIDTH_IN * 72 - 16) / (_EM_PER_CHAR * _LABEL_PT))
# The axis spans at least the budget and a little more, at most three budgets.
_MIN_PERCENT, _MAX_PERCENT = 110.0, 300.0


def chart_rows(rows: Sequence[Row], limit: int) -> list[Row]:
    """The rows the chart draws: highest budget use first, then unbounded ones by time,
    then those whose time is no run's (:attr:`Row.timed`)."""
    ranked = sorted(
        rows,
        key=lambda r: (not r.timed, r.budget_use is None, -(r.budget_use or 0), -r.seconds, r.id),
    )
    return ranked[:limit]


def chart_percent(row: Row) -> float | None:
    """What the chart draws for ``row``: its time in percent of its budget (None: no bar,
    unbounded, not :attr:`Row.timed`, or stopped by a memory limit, which cut its time
    short)."""
    if row.budget_use is None or row.stopped_by_memory:
        return None
    return row.budget_use * 100


def chart_label(row: Row) -> str:
    """``"tutorials/plot_a.py (41.2s of 7m)"``: the bar's label, in the build log's units.
    A time this build did not measure says whose it is: ``"a.py (3.0s of 7m, stored
    run)"``; one its time budget stopped says so: ``"a.py (7m of 7m, interrupted by its
    time budget)"``. An example without a bar says why: ``"a.py (not run; budget 7m)"``,
    ``"a.py (did not finish after 2.1s; budget 7m)"``, ``"a.py (interrupted by its memory
    budget after 2.1s; budget 7m)"``."""
    budget = "unbounded" if row.budget_seconds is None else format_seconds(row.budget_seconds)
    if row.status == NOT_EXECUTED:
        return f"{row.id} ({NOT_RUN}; budget {budget})"
    time = format_measured(row.seconds)
    if row.stopped_by_memory:
        return f"{row.id} ({row.interruption_text()} after {time}; budget {budget})"
    if not row.timed:
        return f"{row.id} ({row.ended_text()}; budget {budget})"
    # A restored example's bar is its stored run's time, a stopped one's its budget's end:
    # said so.
    origin = f", {row.time_origin()}" if row.time_origin() else ""
    origin += f", {row.interruption_text()}" if row.status == INTERRUPTED else ""
    if row.budget_seconds is None:
        return f"{row.id} ({time}, unbounded{origin})"
    return f"{row.id} ({time} of {budget}{origin})"


def fitted_label(label: str, width: int = LABEL_CHARS) -> str:
    """``label`` as the chart draws it within ``width`` characters a line: whole if it
    fits, else broken before its parenthesis, and a line still too long shortened from
    its start (the table beside the chart names the example in full), never cut by the
    figure's edge.

    >>> fitted_label("a.py (1s of 2s)", width=20)
    'a.py (1s of 2s)'
    >>> print(fitted_label("gallery/basics/plot_mem.py (interrupted after 1s)", width=28))
    gallery/basics/plot_mem.py
    (interrupted after 1s)
    >>> fitted_label("a/very/long/path/to/plot_a.py", width=12)
    '…o/plot_a.py'
    """
    if len(label) <= width:
        return label
    name, paren, rest = label.partition(" (")
    lines = [name, f"({rest}"] if paren else [label]
    return "\n".join(line if len(line) <= width else "…" + line[-(width - 1) :] for line in lines)


def _axis_end(shares: Sequence[float]) -> float:
    """Where the axis ends, in percent: past the budget line and the longest bar, but no
    further than :data:`_MAX_PERCENT`, so one example ten times over its budget does not
    squeeze every other bar to a sliver."""
    return max(_MIN_PERCENT, min(max(shares, default=0.0) * 1.05, _MAX_PERCENT))


def render_chart_svg(rows: Sequence[Row], limit: int = 40) -> str:
    """An ``<svg>`` element (no XML prolog) charting ``rows``; empty string if no rows.

    Without matplotlib, :class:`~docsaccel.contract.MissingExtraError` names the extra.
    """
    if limit < 1:
        raise ValueError(f"limit must be 1 or more, got {limit!r}")
    matplotlib = require_extra("matplotlib", "report")
    from matplotlib.figure import Figure
    from matplotlib.ticker import PercentFormatter

    drawn = chart_rows(rows, limit)
    if not drawn:
        return ""
    drawn.reverse()  # matplotlib draws the first bar at the bottom
    style = {"svg.fonttype": "none", "svg.hashsalt": "docsaccel", "text.parse_math": False}
    labels = [fitted_label(chart_label(r)) for r in drawn]
    # A label broken in two lines needs a taller row.
    row = _ROW_IN * (1.5 if any("\n" in label for label in labels) else 1)
    height = 1.1 + row * len(drawn)
    shares = [chart_percent(r) or 0.0 for r in drawn]
    end = _axis_end(shares)
    # Margins from the longest label line, not constrained layout: that layout measures
    # every text several times and costs more than drawing the whole chart.
    longest = max(len(line) for label in labels for line in label.split("\n"))
    left = min(_MAX_LEFT, (longest * _EM_PER_CHAR * _LABEL_PT + 16) / (_WIDTH_IN * 72))
    with matplotlib.rc_context(style):
        figure = Figure(figsize=(_WIDTH_IN, height))
        figure.subplots_adjust(left=left, right=0.97, top=1 - 0.4 / height, bottom=0.65 / height)
        axes = figure.add_subplot()
        positions = range(len(drawn))
        colors = [_OVER if r.over else _NEAR if r.near else _OK for r in drawn]
        bars = axes.barh(positions, [min(s, end) for s in shares], color=colors, height=0.7)
        for index, (bar, row) in enumerate(zip(bars, drawn, strict=True)):
            bar.set_gid(f"bar-{len(drawn) - 1 - index}")
            if row.status == INTERRUPTED:
                # Stopped at its budget: no run's end, so not drawn as one.
                bar.set_hatch("//")
                bar.set_edgecolor("white")
        for position, share in zip(positions, shares, strict=True):
            if share > end:
                axes.text(
                    end,
                    position,
                    f"{share:.0f}% ",
                    ha="right",
                    va="center",
                    fontsize=7,
                    color="white",
                )
        axes.axvline(100, color="black", linewidth=1.5, zorder=3)
        axes.set_xlim(0, end)
        axes.xaxis.set_major_formatter(PercentFormatter(decimals=0))
        axes.set_yticks(list(positions), labels, fontsize=_LABEL_PT)
        axes.set_ylim(-0.6, len(drawn) - 0.4)
        # Ended at the axes' right edge: centred under axes that long names push right,
        # the label ran past the figure's edge and was cut.
        axes.set_xlabel(
            "time in percent of the example's budget (black line: the budget)", loc="right"
        )
        title = TITLE
        if len(rows) > len(drawn):
            title += f" ({len(drawn)} of {len(rows)}: closest to or over budget)"
        axes.set_title(title, fontsize=10)
        buffer = io.StringIO()
        # No RDF metadata block: the page then holds no URL at all besides namespaces.
        metadata = dict.fromkeys(("Creator", "Date", "Format", "Type"))
        figure.savefig(buffer, format="svg", metadata=metadata)
    text = buffer.getvalue()
    return text[text.index("<svg") :]


def main(argv: Sequence[str] | None = None) -> int:
    """Draw the chart of a report file into an SVG file (see the reports guide's *Design*
    section)."""
    from docsaccel.report.commands import refuse_output
    from docsaccel.report.inputs import load_input
    from docsaccel.report.summary import summarize

    parser = argparse.ArgumentParser(prog="python -m docsaccel.report.chart")
    parser.add_argument("report", help="any input docsaccel report reads")
    parser.add_argument("output", help="SVG file to write")
    parser.add_argument("--limit", type=int, default=40, help="examples drawn (default 40)")
    args = parser.parse_args(argv)
    try:
        refuse_output(args.output, [args.report], "svg")
        svg = render_chart_svg(summarize(load_input(args.report)).rows, args.limit)
        Path(args.output).write_text(svg, encoding="utf-8")
    except (InputError, ValueError) as exc:
        print(f"docsaccel chart: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"docsaccel chart: {args.output}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
