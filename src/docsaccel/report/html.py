"""The HTML view of a report: one self-contained page, or a fragment to embed in Sphinx.

The design, in full: the reports guide's *Design* section.

Example: a name that holds markup stays text.

>>> from docsaccel.report.model import LoadedInput, Timing
>>> from docsaccel.report.summary import summarize
>>> timings = [Timing("tutorials/plot_<b>.py", "plot_<b>.py", 42.0, budget_seconds=30.0)]
>>> page = render_html(summarize(LoadedInput("report.json", "docsaccel-report", timings)))
>>> page.startswith("<!DOCTYPE html>"), "<summary>tutorials/plot_&lt;b&gt;.py</summary>" in page
(True, True)
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from docsaccel.budgets import format_headroom, format_measured, format_seconds
from docsaccel.contract import NOT_EXECUTED, near_budget_text
from docsaccel.memory_sizes import format_size
from docsaccel.report.chart import render_chart_svg
from docsaccel.report.summary import ReportSummary, Row

if TYPE_CHECKING:
    from docsaccel.report.trend import Trends

__all__ = ["begins_html_report", "is_html_report", "render_html", "render_html_fragment"]

#: How every page :func:`render_html` writes starts, and the block its report sits in.
_PAGE_START = "<!DOCTYPE html>\n"
_REPORT_BLOCK = '<div class="docsaccel-report">'
_PAGE_END = "</html>\n"


def is_html_report(head: str, tail: str) -> bool:
    """Whether a file starting with ``head`` and ending with ``tail`` is a page
    :func:`render_html` wrote: its doctype first, its report block, ``</html>`` last.

    ``docsaccel report -o`` replaces only such a file, so a site's page is never
    overwritten.
    """
    return begins_html_report(head) and tail.endswith(_PAGE_END)


def begins_html_report(head: str) -> bool:
    """Whether ``head``, the start of a file, is how :func:`render_html` begins a page:
    what tells the HTML view given where another file was meant (its end may not have
    been read)."""
    return head.startswith(_PAGE_START) and _REPORT_BLOCK in head


_STYLE = """
.docsaccel-report{max-width:100%;overflow-wrap:anywhere}
.docsaccel-report table{border-collapse:collapse;font-size:0.85em;width:100%}
.docsaccel-report th,.docsaccel-report td{border:1px solid #ccc;padding:2px 6px;vertical-align:top}
.docsaccel-report th{cursor:pointer;background:#f2f2f2;user-select:none;overflow-wrap:normal}
.docsaccel-report th+th{width:1%}
.docsaccel-report td.status{white-space:nowrap;overflow-wrap:normal}
.docsaccel-report td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.docsaccel-report tr.over td{background:#fde2e2}
.docsaccel-report tr.near td{background:#fff3d6}
.docsaccel-report .incomplete{border-left:4px solid #c62828;padding:4px 8px;font-weight:bold}
.docsaccel-report .chart svg{max-width:100%;height:auto}
.docsaccel-report summary{cursor:pointer}
.docsaccel-report dl.more{display:grid;grid-template-columns:max-content 1fr;gap:0 1em;margin:4px 0}
.docsaccel-report dl.more dt,.docsaccel-report dl.more dd{margin:0;font-weight:normal}
.docsaccel-report dl.more svg{vertical-align:middle}
.docsaccel-report td.trend{white-space:nowrap}
.docsaccel-report td.trend svg{vertical-align:middle;display:block}
.docsaccel-report td.trend small{white-space:normal}
"""

# Sorts the table of the enclosing report on a header click: a numeric cell (class num)
# by the number in data-sort, any other by data-sort when set (the example cell, whose
# text includes its folded details), else by its text.
_SCRIPT = """
(function(){
  document.querySelectorAll('.docsaccel-report table.sortable').forEach(function(table){
    table.querySelectorAll('th').forEach(function(th, column){
      th.addEventListener('click', function(){
        var body = table.tBodies[0];
        var ascending = th.getAttribute('aria-sort') !== 'ascending';
        table.querySelectorAll('th').forEach(function(h){h.removeAttribute('aria-sort');});
        th.setAttribute('aria-sort', ascending ? 'ascending' : 'descending');
        var key = function(row){
          var cell = row.cells[column];
          var value = cell.getAttribute('data-sort');
          if (cell.classList.contains('num')) { return parseFloat(value); }
          return value === null ? cell.textContent : value;
        };
        Array.from(body.rows).sort(function(a, b){
          var x = key(a), y = key(b);
          var order = (typeof x === 'number') ? x - y : String(x).localeCompare(String(y));
          return ascending ? order : -order;
        }).forEach(function(row){ body.appendChild(row); });
      });
    });
  });
})();
"""

# What a row shows at a glance: few enough columns that the table fits a theme's text
# column at 1280 px (alabaster's 940 px body, furo's narrower one). Everything else about
# the example is folded into a <details> in its first cell (see _details).
_COLUMNS = (
    "example",
    "status",
    "time",
    "budget",
    "use",
    "Δ vs baseline",
    "peak memory",
)


def _number(value: float | None, text: str | None = None) -> str:
    """A numeric cell sorted by ``value`` (``text``: what it shows, default ``value``)."""
    if value is None:
        # Unknown values sort after every number.
        return '<td class="num" data-sort="Infinity">–</td>'
    shown = f"{value:.2f}" if text is None else text
    return f'<td class="num" data-sort="{value!r}">{escape(shown)}</td>'


def _seconds(value: float | None, signed: bool = False) -> str:
    """A cell of seconds, written as the build log writes them (:func:`format_measured`)."""
    if value is None:
        return _number(None)
    text = format_measured(value, signed=signed)
    return _number(value, text)


def _time(row: Row) -> str:
    """The time cell (:meth:`Row.time_text`): an example never run sorts below every time."""
    return _number(-1.0 if row.status == NOT_EXECUTED else row.seconds, row.time_text())


def _percent(value: float | None) -> str:
    return _number(None if value is None else value * 100, f"{(value or 0):.0%}")


def _size(value: int | None, text: str | None = None) -> str:
    """A cell of bytes, shown as a size (``text`` instead, when given), sorted by bytes."""
    if value is None:
        return _number(None)
    return _number(value, format_size(value) if text is None else text)


def _budget(row: Row) -> str:
    if row.budget_seconds is None:
        return '<td class="num" data-sort="Infinity">unbounded</td>'
    return _number(row.budget_seconds, format_seconds(row.budget_seconds))


def _details(row: Row, trends: Trends | None) -> str:
    """The example's other facts, folded: a ``<dl>`` inside ``<details>``."""
    headroom = row.headroom_seconds
    facts = [
        ("headroom", "–" if headroom is None else format_headroom(headroom)),
        ("retained memory", row.retained_text()),
        (
            "median of history",
            "–" if row.median_seconds is None else format_measured(row.median_seconds),
        ),
        ("fast-path knobs", row.knobs_text() or "–"),
        (
            "render saved",
            format_measured(row.render_saved_seconds) if row.render_saved_seconds else "–",
        ),
    ]
    items = "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in facts)
    if trends is not None and trends.memory_moved(row.id):
        items += (
            f"<dt>memory trend</dt><dd>{trends.memory_sparkline(row.id, row.memory_budget_bytes)} "
            f"{escape(trends.memory_text(row.id))}</dd>"
        )
    noisy = " <em>(noisy)</em>" if row.noisy else ""
    return (
        f"<details><summary>{escape(row.id)}{noisy}</summary>"
        f'<dl class="more">{items}</dl></details>'
    )


def _row(row: Row, trends: Trends | None = None) -> str:
    state = "over" if row.over else "near" if row.near else ""
    cells = [
        f'<td data-sort="{escape(row.id)}">{_details(row, trends)}</td>',
        # A status is one word to read at a glance: never broken ("interr/upted").
        f'<td class="status">{escape(row.status_label)}</td>',
        _time(row),
        _budget(row),
        _percent(row.budget_use),
        _seconds(row.delta_seconds, signed=True),
        _size(row.memory_bytes, row.memory_text()),
    ]
    if trends is not None:
        text = trends.text(row.id)
        cells.append(
            f'<td class="trend" data-sort="{escape(text)}">'
            f"{trends.sparkline(row.id, row.budget_seconds)}<small>{escape(text)}</small></td>"
        )
    return f'<tr class="{state}">' + "".join(cells) + "</tr>"


def _totals(summary: ReportSummary) -> str:
    items = [
        summary.verdict(),
        f"Execution time: {summary.execution_text()}",
        f"Over budget: {len(summary.over)}; near budget (above {near_budget_text()}): "
        f"{len(summary.near)}; "
        f"noisy: {len(summary.noisy)}",
    ]
    if summary.build_wall_seconds is not None:
        fast = " (fast path)" if summary.fast else ""
        items.insert(0, f"Build wall time: {format_measured(summary.build_wall_seconds)}{fast}")
    if summary.reused_count:
        items.append(f"Reused: {summary.reused_text()}")
    if summary.has_baseline:
        items.append(f"Against the baseline: {summary.baseline_text()}")
    if summary.baseline_failed:
        items.append(f"The baseline build failed: {summary.baseline_failed}")
    if summary.baseline_no_status:
        items.append(f"Baseline failures not known: {summary.baseline_no_status}")
    if summary.memory_text():
        items.append(f"Memory: {summary.memory_text()}")
    if summary.render_saved_seconds:
        items.append(f"Render gating saved: {format_measured(summary.render_saved_seconds)}")
    if summary.cache_hits or summary.cache_misses:
        items.append(f"Example cache: {summary.cache_text()}")
    if summary.audit_text():
        items.append(f"Example cache audit: {summary.audit_text()}")
    return "<ul>" + "".join(f"<li>{escape(item)}</li>" for item in items) + "</ul>"


def render_html_fragment(
    summary: ReportSummary,
    chart_limit: int = 40,
    chart: str | None = None,
    trends: Trends | None = None,
    trend_chart: str | None = None,
) -> str:
    """Totals, chart and sortable table in one ``<div>``, with its style and script.

    ``chart``: markup to use instead of drawing the chart here (the docs build puts a
    placeholder and draws the chart in another process meanwhile); ``""``: no chart.
    ``trends`` (:mod:`.trend`): a chart of the total time over the recorded builds
    (``trend_chart``: markup instead of drawing it) and a trend column with a sparkline.
    """
    if chart is None:
        chart = render_chart_svg(summary.rows, chart_limit)
    if trends is not None and trend_chart is None:
        from docsaccel.report.trend import total_chart_svg

        trend_chart = total_chart_svg(trends)
    columns = (*_COLUMNS, "trend") if trends is not None else _COLUMNS
    head = "".join(f'<th scope="col">{escape(name)}</th>' for name in columns)
    body = "\n".join(_row(row, trends) for row in summary.rows)
    chart_block = f'<div class="chart">{chart}</div>\n' if chart else ""
    warning = ""
    why, times = summary.warning()
    if why:
        text = f"Warning: {why}. {times}".rstrip()
        warning = f'<p class="incomplete" role="alert">{escape(text)}</p>\n'
    if trend_chart:
        chart_block += f'<div class="chart trend">{trend_chart}</div>\n'

    return (
        f"{_REPORT_BLOCK}\n{warning}<style>{_STYLE}</style>\n"
        f"{_totals(summary)}\n{chart_block}"
        f'<table class="sortable"><thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n'
        f"</tbody></table>\n<p><small>from {escape(summary.source)} "
        f"({escape(summary.format)})</small></p>\n<script>{_SCRIPT}</script>\n</div>\n"
    )


def render_html(summary: ReportSummary, chart_limit: int = 40, trends: Trends | None = None) -> str:
    """A complete, self-contained HTML page of the report (with ``trends`` from history)."""
    title = "Docs build budget report"
    if summary.title_note():
        title += f": {summary.title_note()}"
    return (
        f'{_PAGE_START}<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{escape(title)}</title>\n</head>\n<body>\n"
        f"<h1>{escape(title)}</h1>\n"
        f"{render_html_fragment(summary, chart_limit, trends=trends)}</body>\n{_PAGE_END}"
    )
