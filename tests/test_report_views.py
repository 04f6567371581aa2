"""``docsaccel report``: Markdown, self-contained HTML (and its fragment) and JSON views."""

from __future__ import annotations

import json
from html.parser import HTMLParser

import pytest
from helpers.report_factory import record, write_report

from docsaccel.cli import main
from docsaccel.report.html import render_html_fragment
from docsaccel.report.inputs import load_input
from docsaccel.report.summary import summarize

EVIL = '<script>alert("x")</script>|`$x$`.py'
KNOBS = {"rollouts": {"value": 1, "fast": 1, "full": 4}}
RENDER = {
    "HalfCheetah-v5#0": {
        "fresh_renders": 7,
        "reused_frames": 105,
        "render_seconds": 0.3,
        "saved_seconds": 4.5,
    }
}


@pytest.fixture
def reports(tmp_path):
    head = write_report(
        tmp_path / "head.json",
        [
            record(
                "plot_over.py", 75.0, budget=60.0, status="over-budget", knobs=KNOBS, render=RENDER
            ),
            record("plot_near.py", 50.0, budget=60.0),
            record("plot_fine.py", 5.0, budget=60.0),
            record("plot_free.py", 90.0, budget=None),
            record(EVIL, 1.0, budget=60.0),
        ],
        wall_seconds=240.0,
    )
    base = write_report(
        tmp_path / "base.json", [record("plot_over.py", 60.0), record("plot_near.py", 50.0)]
    )
    history = tmp_path / "h.jsonl"
    for seconds in (1.0, 4.0, 2.0, 8.0):
        run = write_report(tmp_path / "run.json", [record("plot_fine.py", seconds)])
        assert main(["history", "append", str(run), "--to", str(history)]) == 0
    return head, base, history


def test_markdown_sections_and_numbers(reports, capsys) -> None:
    head, base, history = reports
    args = ["report", str(head), "--baseline", str(base), "--history", str(history)]
    assert main([*args, "--top", "3"]) == 0
    md = capsys.readouterr().out
    assert "- **Build wall time:** 4m (fast path)" in md
    assert "- **Execution time:** 3m41s over 5 examples (1 ok" not in md  # counts by status
    assert "(4 ok, 1 over\\-budget)" in md
    assert "- **Render gating saved:** 4.5s" in md
    assert "**1 example over budget.**" in md
    over = md.split("### Over budget")[1].split("###")[0]
    assert (
        # Times and budgets in the build log's units (budgets.format_measured, format_seconds).
        "| tutorials/plot\\_over.py | over\\-budget | 1m15s | 1m (125%) | -15s "
        "| +15s | 100M | – | rollouts=1 \\(full 4\\) | 4.5s |"
    ) in over
    near = md.split("### Near budget (above 80%)")[1].split("###")[0]
    assert "plot\\_near.py" in near and "plot\\_fine" not in near
    assert "tutorials/plot\\_fine.py (noisy)" in md.split("### Noisy")[1]
    top = md.split("### Top 3 by time")[1].split("###")[0]
    assert top.count("| tutorials/") == 3 and "plot\\_free.py" in top and "unbounded" in top


def test_markdown_escapes_names(reports, capsys) -> None:
    head, _, _ = reports
    assert main(["report", str(head), "--format", "md"]) == 0
    md = capsys.readouterr().out
    assert "<script>" not in md and "&lt;script&gt;" in md
    row = next(line for line in md.splitlines() if "alert" in line and line.startswith("| "))
    assert row.count(" | ") == 9  # the "|" in the name does not add a column


class _Collector(HTMLParser):
    """External references, scripts and the table's cell texts of an HTML page (an
    example's name: the text of the summary of its folded details)."""

    def __init__(self) -> None:
        super().__init__()
        self.external: list[str] = []
        self.scripts = 0
        self.cells: list[str] = []
        self._in_cell = False

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            # Namespace declarations are identifiers, never fetched.
            fetched = name in ("src", "href", "xlink:href") and not (value or "").startswith("#")
            if fetched or (not name.startswith("xmlns") and "://" in (value or "")):
                self.external.append(f"{tag} {name}={value}")
        self.scripts += tag == "script"
        if tag in ("td", "summary"):
            self._in_cell = True
            self.cells.append("")

    def handle_endtag(self, tag):
        if tag in ("td", "summary"):
            self._in_cell = False

    def handle_data(self, data):
        if self._in_cell:
            self.cells[-1] += data


def test_html_is_self_contained_sortable_and_escaped(reports, tmp_path) -> None:
    head, base, _ = reports
    out = tmp_path / "report.html"
    assert (
        main(["report", str(head), "--baseline", str(base), "--format", "html", "-o", str(out)])
        == 0
    )
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    collector = _Collector()
    collector.feed(page)
    assert collector.external == []  # no CDN script, stylesheet or font
    assert collector.scripts == 1  # only the sorting script; the name's <script> is text
    assert f"tutorials/{EVIL}" in collector.cells  # shown exactly, as text
    assert 'alert("x")</script>' not in page
    assert "<svg" in page and "Time vs budget per example" in page
    assert 'data-sort="75.0"' in page and "aria-sort" in page
    # The chart keeps the name as (escaped) text, not as mathtext or markup.
    svg = page[page.index("<svg") : page.index("</svg>")]
    assert "&lt;script&gt;" in svg and "$x$" in svg


def test_fragment_embeds_without_page_markup(reports) -> None:
    head, _, _ = reports
    fragment = render_html_fragment(summarize(load_input(head)), chart_limit=2)
    assert fragment.startswith('<div class="docsaccel-report">')
    assert "<html" not in fragment and "<body" not in fragment and "<script>" in fragment
    assert "(2 of 5: closest to or over budget)" in fragment


def test_json_view(reports, capsys) -> None:
    head, base, history = reports
    assert (
        main(
            [
                "report",
                str(head),
                "--baseline",
                str(base),
                "--history",
                str(history),
                "--format",
                "json",
            ]
        )
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert data["over_budget"] == ["tutorials/plot_over.py"]
    assert data["near_budget"] == ["tutorials/plot_near.py"]
    assert data["noisy"] == ["tutorials/plot_fine.py"]
    assert data["execution_seconds"] == 221.0 and data["baseline_execution_seconds"] == 110.0
    first = data["examples"][0]
    assert (first["id"], first["budget_seconds"], first["headroom_seconds"]) == (
        "tutorials/plot_free.py",
        None,
        None,
    )


def test_report_of_a_sphinx_gallery_file_and_bad_input(tmp_path, capsys) -> None:
    from pathlib import Path

    grid = Path(__file__).parent / "fixtures" / "sg_times" / "grid.rst"
    assert main(["report", str(grid)]) == 0
    md = capsys.readouterr().out
    assert "All 2 measured examples within budget" in md and "plot\\_train\\_agent.py" in md
    # sphinx-gallery's 00:00.000 is its time of an example it did not run: never a zero.
    assert "| plot\\_static.py | not\\-executed | not run |" in md
    assert main(["report", str(tmp_path / "none.json")]) == 2
    assert "none.json: cannot read" in capsys.readouterr().err


def test_chart_program_draws_the_report_chart(reports, tmp_path) -> None:
    from docsaccel.report.chart import main as chart_main

    head = reports[0]
    out = tmp_path / "chart.svg"
    assert chart_main([str(head), str(out), "--limit", "5"]) == 0
    svg = out.read_text(encoding="utf-8")
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    # Same drawing as the HTML view makes in-process.
    fragment = render_html_fragment(summarize(load_input(head)), chart_limit=5)
    assert svg in fragment
    placeholder = render_html_fragment(summarize(load_input(head)), chart="<!-- chart -->")
    assert "<!-- chart -->" in placeholder and "<svg" not in placeholder


def test_chart_program_fails_clearly_on_bad_input(tmp_path, capsys) -> None:
    from docsaccel.report.chart import main as chart_main

    bad = tmp_path / "report.json"
    bad.write_text("{", encoding="utf-8")
    assert chart_main([str(bad), str(tmp_path / "out.svg")]) == 2
    assert "report.json: the report is not valid JSON" in capsys.readouterr().err
    assert not (tmp_path / "out.svg").exists()


def test_restored_examples_are_not_called_executed_and_no_time_is_negative_zero(tmp_path):
    restored = {"hit": True, "saved_seconds": 3.0}
    records = [record(f"plot_{i}.py", 2.0, status="cached", cache=restored) for i in range(7)]
    records.append(record("plot_edge.py", 1.03, budget=1.0, status="over-budget"))
    summary = summarize(load_input(str(write_report(tmp_path / "r.json", records))))
    assert summary.executed_count == 1
    assert summary.execution_text() == (
        "1s over 1 example run (1 over-budget); 7 restored from the example cache"
    )
    for fmt in ("md", "html"):
        out = tmp_path / f"view.{fmt}"
        assert main(["report", str(tmp_path / "r.json"), "--format", fmt, "-o", str(out)]) == 0
        text = out.read_text(encoding="utf-8")
        assert "7 restored from the example cache" in text and "8 examples run" not in text
        assert "-0s" not in text, fmt  # 1.03 s on a 1 s budget: over, never -0s


def test_a_restored_example_is_counted_once_as_restored_never_as_reused(tmp_path, capsys):
    """Restored (``cached``, ``"hit": true``) and reused (``cached`` without a hit: kept
    by sphinx-gallery, or a fast or merge build's) are two groups, each example in one."""
    restored = {"hit": True, "saved_seconds": 3.0}
    records = [record(f"plot_{i}.py", 3.0, status="cached", cache=restored) for i in range(4)]
    records.append(record("plot_kept.py", 5.0, status="cached"))
    records.append(record("plot_ran.py", 1.0))
    report = str(write_report(tmp_path / "r.json", records))
    summary = summarize(load_input(report))
    assert summary.execution_text() == (
        "1s over 1 example run (1 ok); 4 restored from the example cache; "
        "1 reused from an earlier build (cached)"
    )
    assert (summary.reused_count, summary.reused_seconds) == (1, 5.0)
    for fmt in ("md", "html"):
        out = tmp_path / f"view.{fmt}"
        assert main(["report", report, "--format", fmt, "-o", str(out)]) == 0
        text = out.read_text(encoding="utf-8")
        assert "4 restored from the example cache" in text, fmt
        assert "5s recorded by earlier builds for 1 example reused" in text, fmt
        assert "17s" not in text and "for 5" not in text, fmt
    assert main(["report", report, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["reused_seconds"] == 5.0


def test_only_restored_examples_have_no_reused_line(tmp_path) -> None:
    restored = {"hit": True, "saved_seconds": 3.0}
    records = [record(f"plot_{i}.py", 2.0, status="cached", cache=restored) for i in range(4)]
    report = str(write_report(tmp_path / "r.json", records))
    for fmt in ("md", "html"):
        out = tmp_path / f"view.{fmt}"
        assert main(["report", report, "--format", fmt, "-o", str(out)]) == 0
        text = out.read_text(encoding="utf-8")
        assert "4 restored from the example cache" in text, fmt
        assert "Reused" not in text and "cached examples" not in text, fmt


def test_a_file_without_statuses_never_reads_as_a_build_that_passed(tmp_path, capsys):
    """sphinx-gallery's sg_execution_times.rst lists an example that raised as any other:
    the views say their verdict covers the times only, and count no status."""
    times = tmp_path / "sg_execution_times.rst"
    times.write_text(
        "- **00:42.000**: :ref:`sphx_glr_auto_examples_plot_a.py` (``plot_a.py``)\n"
        "- **00:01.000**: :ref:`sphx_glr_auto_examples_plot_b.py` (``plot_b.py``)\n",
        encoding="utf-8",
    )
    said = "sg_execution_times.rst: sphinx-gallery's file does not say whether an example failed"
    for fmt in ("md", "html"):
        out = tmp_path / f"view.{fmt}"
        assert main(["report", str(times), "--format", fmt, "-o", str(out)]) == 0
        text = out.read_text(encoding="utf-8")
        assert "All examples within budget. Times only: " in text, fmt
        assert "does not say whether an example failed, nor whether its build" in text, fmt
        assert "(2 ok)" not in text, fmt
    assert main(["report", str(times), "--format", "json"]) == 0
    assert said in json.loads(capsys.readouterr().out)["no_status"]
    report = write_report(tmp_path / "r.json", [record("plot_a.py", 1.0)])
    assert main(["report", str(report), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["no_status"] is None


def test_a_stopped_example_is_no_speed_up_against_the_baseline(tmp_path) -> None:
    base = write_report(
        tmp_path / "base.json", [record("plot_a.py", 1.0), record("plot_zz_stop.py", 2.5)]
    )
    stopped = record(
        "plot_zz_stop.py",
        1.03,
        budget=1.0,
        status="interrupted",
        interrupted_by="time",
        error="tutorials/plot_zz_stop.py was interrupted after 1 s",
    )
    head = write_report(tmp_path / "head.json", [record("plot_a.py", 1.0), stopped])
    out = tmp_path / "view.md"
    assert main(["report", str(head), "--baseline", str(base), "-o", str(out)]) == 0
    # Like with like: plot_zz_stop.py has no whole run in HEAD, so neither total counts it
    # (not "-1.5s (baseline 3.5s)").
    shown = out.read_text(encoding="utf-8")
    assert "**Against the baseline:** +0s (baseline 1s, over the examples both ran" in shown
    summary = summarize(load_input(str(head)), baseline=load_input(str(base)).timings)
    assert (summary.baseline_total, summary.baseline_delta) == (1.0, 0.0)


def test_the_knobs_column_shows_every_pick_as_the_page_note_does(tmp_path) -> None:
    """A knob picked twice with different values is shown once per pair, in the order
    picked, as the example page's fast-path note lists it: never the first pair only."""
    knobs = {
        "steps": {
            "value": 5,
            "fast": 5,
            "full": 1,
            "later": [{"value": 2, "fast": 2, "full": 3}],
        },
        "on": {"value": True, "fast": True, "full": False},
    }
    report = write_report(tmp_path / "r.json", [record("plot_reuse.py", 1.0, knobs=knobs)])
    (row,) = summarize(load_input(report)).rows
    assert row.knobs_text() == "on=true (full false), steps=5 (full 1), steps=2 (full 3)"


def test_report_says_its_baseline_build_failed_in_every_format(tmp_path) -> None:
    """A failed baseline (an example raised early: its time is no measure) is taken, as
    ``compare`` takes a failed base, but never silently: every view says it failed and
    why, as ``compare`` says "The base build failed: ..."."""
    error = "Traceback ...\nValueError: boom"
    base = write_report(
        tmp_path / "base.json",
        [record("plot_a.py", 0.2, status="failed", error=error), record("plot_b.py", 1.0)],
    )
    head = write_report(
        tmp_path / "head.json", [record("plot_a.py", 3.0), record("plot_b.py", 1.0)]
    )
    why = "tutorials/plot_a.py failed (Traceback ...)"
    for fmt in ("md", "html", "json"):
        out = tmp_path / f"view.{fmt}"
        args = ["report", str(head), "--baseline", str(base), "--format", fmt, "-o", str(out)]
        assert main(args) == 0, fmt
        text = out.read_text(encoding="utf-8").replace("\\_", "_")
        if fmt == "json":
            assert json.loads(text)["baseline_failed"] == why, text
        else:
            assert "The baseline build failed" in text and "plot_a.py failed" in text, fmt
    good = write_report(tmp_path / "good.json", [record("plot_a.py", 3.0)])
    out = tmp_path / "good.md"
    assert main(["report", str(head), "--baseline", str(good), "-o", str(out)]) == 0
    assert "baseline build failed" not in out.read_text(encoding="utf-8")


@pytest.mark.parametrize("view", ["md", "html"])
def test_a_removed_example_is_no_speed_up_against_the_baseline(tmp_path, view) -> None:
    base = write_report(
        tmp_path / "base.json", [record("plot_a.py", 2.0), record("plot_b.py", 4.6)]
    )
    head = write_report(tmp_path / "head.json", [record("plot_a.py", 2.0)])
    out = tmp_path / f"view.{view}"
    args = ["report", str(head), "--baseline", str(base), "--format", view, "-o", str(out)]
    assert main(args) == 0
    shown = out.read_text(encoding="utf-8").replace("\\_", "_")
    # Not "-4.6s": plot_b.py is not in this build, which is no speed-up; it is named.
    assert "Against the baseline:" in shown
    assert "+0s (baseline 2s, over the examples both ran whole; not in this build: " in shown
    assert "tutorials/plot_b.py)" in shown


def test_the_json_view_names_the_examples_in_one_build_only(tmp_path, capsys) -> None:
    base = write_report(
        tmp_path / "base.json", [record("plot_a.py", 2.0), record("plot_b.py", 4.6)]
    )
    head = write_report(tmp_path / "head.json", [record("plot_a.py", 2.0)])
    assert main(["report", str(head), "--baseline", str(base), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["baseline_execution_seconds"] == 2.0 and data["baseline_delta_seconds"] == 0.0
    assert data["not_in_this_build"] == ["tutorials/plot_b.py"]
    assert data["not_in_baseline"] == []


@pytest.mark.parametrize("seconds", [1.03, 91.0])
def test_a_negative_headroom_reads_as_negative_in_every_view(tmp_path, seconds) -> None:
    """An example interrupted past its budget has no headroom left: its headroom says by
    how much it went over, with its minus, never ``0s`` (the rounding of a small overrun),
    which reads as a time just within its budget."""
    stopped = record("plot_edge.py", seconds, budget=1.0, status="interrupted")
    path = write_report(tmp_path / "r.json", [stopped])
    over = {1.03: "-0.03s", 91.0: "-1m30s"}[seconds]
    md = tmp_path / "view.md"
    assert main(["report", str(path), "--format", "md", "-o", str(md)]) == 0
    row = next(line for line in md.read_text("utf-8").splitlines() if "plot\\_edge.py |" in line)
    cells = [cell.strip() for cell in row.split(" | ")]
    assert cells[4] == over, row
    html = tmp_path / "view.html"
    assert main(["report", str(path), "--format", "html", "-o", str(html)]) == 0
    assert f"<dt>headroom</dt><dd>{over}</dd>" in html.read_text("utf-8")
