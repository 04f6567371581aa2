"""The time-vs-budget chart of the HTML report, drawn by matplotlib as inline SVG.

One horizontal bar per example (its time), a black tick at its budget; bars over budget
are red, near it (above 80 %) amber. With many examples only the ``limit`` closest to or
over their budget are drawn (the table lists all of them). Text stays text in the SVG
(``svg.fonttype = none``), mathtext is off so a ``$`` in a name is just a character,
and matplotlib XML-escapes every label.

Example::

    svg = render_chart_svg(summary.rows, limit=40)  # "<svg ...>...</svg>"
"""

from __future__ import annotations

import io
from collections.abc import Sequence

from docsaccel.report.summary import Row

__all__ = ["chart_rows", "render_chart_svg"]

_OVER, _NEAR, _OK = "#c62828", "#ef8f00", "#4f7cac"


def chart_rows(rows: Sequence[Row], limit: int) -> list[Row]:
    """The rows the chart draws: highest budget use first, then unbounded ones by time."""
    ranked = sorted(
        rows,
        key=lambda r: (r.budget_use is None, -(r.budget_use or 0), -r.seconds, r.id),
    )
    return ranked[:limit]


def render_chart_svg(rows: Sequence[Row], limit: int = 40) -> str:
    """An ``<svg>`` element (no XML prolog) charting ``rows``; empty string if no rows."""
    if limit < 1:
        raise ValueError(f"limit must be 1 or more, got {limit!r}")
    import matplotlib
    from matplotlib.figure import Figure

    drawn = chart_rows(rows, limit)
    if not drawn:
        return ""
    drawn.reverse()  # matplotlib draws the first bar at the bottom
    style = {"svg.fonttype": "none", "svg.hashsalt": "docsaccel", "text.parse_math": False}
    with matplotlib.rc_context(style):
        figure = Figure(figsize=(8, 1.0 + 0.28 * len(drawn)), layout="constrained")
        axes = figure.add_subplot()
        positions = range(len(drawn))
        colors = [_OVER if r.over else _NEAR if r.near else _OK for r in drawn]
        axes.barh(positions, [r.seconds for r in drawn], color=colors, height=0.7)
        budgets = [(i, r.budget_seconds) for i, r in enumerate(drawn) if r.budget_seconds]
        if budgets:
            axes.scatter(
                [b for _, b in budgets],
                [i for i, _ in budgets],
                marker="|",
                s=180,
                color="black",
                label="budget",
                zorder=3,
            )
            axes.legend(loc="lower right", fontsize=8)
        axes.set_yticks(list(positions), [r.id for r in drawn], fontsize=8)
        axes.set_xlabel("seconds")
        title = "Time vs budget per example"
        if len(rows) > len(drawn):
            title += f" ({len(drawn)} of {len(rows)}: closest to or over budget)"
        axes.set_title(title, fontsize=10)
        buffer = io.StringIO()
        # No RDF metadata block: the page then holds no URL at all besides namespaces.
        metadata = dict.fromkeys(("Creator", "Date", "Format", "Type"))
        figure.savefig(buffer, format="svg", metadata=metadata)
    text = buffer.getvalue()
    return text[text.index("<svg") :]
