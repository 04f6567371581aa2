"""Every report view says what a stopped or unrun example is, and measures neither.

An example the build was running when it was terminated did not fail by itself: each view
(Markdown, HTML, the site's report page, the chart, the JSON summary) writes it
``did not finish``, as the gates name it, with its time marked partial and no share of its
budget, no headroom and no bar. An example never run has no time: ``not run``, never
``0s``, ``0%`` or a headroom. The totals count every example listed once, in words that
say what each group is. Unit tests on crafted records; ``test_report_stopped_build.py``
checks a real terminated build.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers.report_factory import record, write_report

from docsaccel.budgets import format_over
from docsaccel.cli import main
from docsaccel.contract import DID_NOT_FINISH, KILLED_RUNNING, NOT_RUN, UNFINISHED_ERROR
from docsaccel.gallery.report_page import page_text
from docsaccel.report.chart import (
    LABEL_CHARS,
    chart_label,
    chart_percent,
    fitted_label,
    render_chart_svg,
)
from docsaccel.report.compare import run_text
from docsaccel.report.html import render_html
from docsaccel.report.inputs import load_input
from docsaccel.report.markdown import render_markdown
from docsaccel.report.model import LoadedInput, Timing
from docsaccel.report.summary import summarize

SLOW, QUICK, NEVER = "tutorials/plot_slow.py", "tutorials/plot_quick.py", "tutorials/plot_never.py"
TOTALS = "2.6s over 2 examples run (1 did not finish, 1 ok); 1 not run (not-executed)"


def terminated_report(path: Path) -> Path:
    """The report of a build terminated while ``plot_slow.py`` ran, after ``plot_quick.py``
    and before ``plot_never.py``, as the plugin writes it."""
    write_report(
        path,
        [
            record(
                "plot_slow.py",
                2.084,
                status="failed",
                finished_at=None,
                error="did not finish: the build was terminated (SIGTERM) while it ran",
            ),
            record("plot_quick.py", 0.5, budget=20.0, finished_at="2026-12-06T16:04:15+00:00"),
            record(
                "plot_never.py",
                0.0,
                budget=15.0,
                status="not-executed",
                peak_rss_bytes=None,
                cpu_seconds=None,
            ),
        ],
    )
    report = json.loads(path.read_text(encoding="utf-8"))
    report["build"].update(complete=False, ended_because="it was terminated (SIGTERM)")
    path.write_text(json.dumps(report), encoding="utf-8")
    return path


@pytest.fixture
def summary(tmp_path):
    return summarize(load_input(str(terminated_report(tmp_path / "report.json"))))


def md_row(markdown: str, example_id: str) -> list[str]:
    """The cells of the first table row of ``example_id`` in a Markdown report."""
    escaped = example_id.replace("_", "\\_")
    line = next(line for line in markdown.splitlines() if line.startswith(f"| {escaped} |"))
    return [cell.strip() for cell in line.strip("|").split("|")]


def html_row(html: str, example_id: str) -> list[str]:
    """The text of the visible cells (the example's name, not its folded facts) of the
    row of ``example_id`` in an HTML report."""
    row = re.search(rf'<tr class="[^"]*"><td data-sort="{re.escape(example_id)}">(.*?)</tr>', html)
    assert row, example_id
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row.group(0))
    return [re.sub(r"<[^>]+>", "", cell) for cell in cells[1:]]


def headroom(html: str, example_id: str) -> str:
    details = html.split(f"<summary>{example_id}</summary>", 1)[1]
    return re.search(r"<dt>headroom</dt><dd>(.*?)</dd>", details).group(1)


def test_the_example_running_when_the_build_was_terminated_is_stopped_not_failed(summary):
    rows = {row.id: row for row in summary.rows}
    assert rows[SLOW].status_label == DID_NOT_FINISH
    assert summary.failed == [] and summary.status_counts == {
        "not-executed": 1,
        "ok": 1,
        DID_NOT_FINISH: 1,
    }
    for text in (render_markdown(summary), render_html(summary)):
        # The build failed because it did not finish, as the gates say; no example failed.
        assert "1 example failed" not in text and "examples failed" not in text
        assert "The build failed: the build did not finish (" in text.replace("\\", "")
        assert (
            f"1 example {DID_NOT_FINISH} when the build ended (a partial time, not judged): {SLOW}"
            in (text.replace("\\_", "_"))
        )


def test_every_view_and_the_gate_say_one_word_for_it(tmp_path, capsys):
    """The Markdown, HTML and JSON views and ``check --allow-incomplete`` call the example
    the build stopped while it ran by the same word, and say it once per mention: a reader
    of the report and of the gate's line meets one status, never a second for the same."""
    path = terminated_report(tmp_path / "report.json")
    summary = summarize(load_input(str(path)))
    markdown, html, data = render_markdown(summary), render_html(summary), summary.to_json()
    verdict = f"1 example {DID_NOT_FINISH} when the build ended (a partial time, not judged)"

    assert md_row(markdown, SLOW)[1] == DID_NOT_FINISH and verdict in markdown
    assert html_row(html, SLOW)[0] == DID_NOT_FINISH and verdict in html
    rows = {row["id"]: row for row in data["examples"]}
    assert rows[SLOW]["status"] == DID_NOT_FINISH and data["status_counts"][DID_NOT_FINISH] == 1
    assert main(["check", str(path), "--allow-incomplete"]) == 3
    gate = capsys.readouterr().out
    assert (
        f"1 example {DID_NOT_FINISH}: {SLOW} (the build was terminated (SIGTERM) while it ran)"
    ) in gate
    for text in (markdown, html, json.dumps(data), gate):
        assert not re.search(r"\bstopped\b", text), text
        assert f"({DID_NOT_FINISH}:" not in text, text  # the record's error, said again


def test_a_partial_time_has_no_share_no_headroom_and_no_bar(summary):
    row = next(row for row in summary.rows if row.id == SLOW)
    assert (row.budget_use, row.headroom_seconds) == (None, None)
    # status, time, budget (use), headroom
    assert md_row(render_markdown(summary), SLOW)[1:5] == [
        DID_NOT_FINISH,
        "2.1s \\(partial\\)",
        "1m (–)",
        "–",
    ]
    html = render_html(summary)
    # status, time, budget, use
    assert html_row(html, SLOW)[:4] == [DID_NOT_FINISH, "2.1s (partial)", "1m", "–"]
    assert headroom(html, SLOW) == "–"
    assert chart_percent(row) is None
    assert chart_label(row) == f"{SLOW} ({DID_NOT_FINISH} after 2.1s; budget 1m)"
    assert "2.1s of 1m" not in render_chart_svg(summary.rows)


def test_an_example_never_run_has_no_time_not_a_zero(summary):
    row = next(row for row in summary.rows if row.id == NEVER)
    assert (row.budget_use, row.headroom_seconds, row.time_text()) == (None, None, NOT_RUN)
    assert md_row(render_markdown(summary), NEVER)[1:5] == [
        "not\\-executed",
        NOT_RUN,
        "15s (–)",
        "–",
    ]
    html = render_html(summary)
    assert html_row(html, NEVER)[:4] == ["not-executed", NOT_RUN, "15s", "–"]
    assert headroom(html, NEVER) == "–"
    assert chart_percent(row) is None and chart_label(row) == f"{NEVER} ({NOT_RUN}; budget 15s)"
    # A measured example keeps its time, share and headroom.
    html_cells = html_row(html, QUICK)
    assert html_cells[:4] == ["ok", "0.5s", "20s", "2%"] and headroom(html, QUICK) == "19.5s"


def test_the_totals_count_each_example_once_in_words_that_say_what_it_is(summary):
    assert summary.execution_text() == TOTALS
    assert f"Execution time: {TOTALS}" in render_html(summary)
    assert "**Execution time:** " + TOTALS.replace("-", "\\-") in render_markdown(summary)
    numbers = [int(n) for n in re.findall(r"(\d+) (?:examples run|not run)", TOTALS)]
    assert sum(numbers) == len(summary.rows)


def test_the_sites_report_page_says_the_same(tmp_path):
    report = json.loads(terminated_report(tmp_path / "report.json").read_text(encoding="utf-8"))
    page = page_text(report, chart="")
    assert f"Execution time: {TOTALS}" in page and "1 example failed" not in page
    assert "The build failed: the build did not finish (" in page
    assert html_row(page, SLOW)[:4] == [DID_NOT_FINISH, "2.1s (partial)", "1m", "–"]
    assert html_row(page, NEVER)[:4] == ["not-executed", NOT_RUN, "15s", "–"]


def test_the_json_summary_gives_a_stopped_example_no_headroom(summary):
    data = summary.to_json()
    assert data["failed"] == [] and data["status_counts"][DID_NOT_FINISH] == 1
    rows = {row["id"]: row for row in data["examples"]}
    assert rows[SLOW]["unfinished"] is True
    assert rows[SLOW]["headroom_seconds"] is None and rows[NEVER]["budget_use"] is None


def test_the_json_summary_writes_each_status_with_the_word_it_counts(tmp_path):
    """One view, one word per example: the JSON view's ``status`` of a stopped example and
    of an expected failure is the word its ``status_counts`` counts and the Markdown view
    shows; the record's own status stays under ``record_status``."""
    path = terminated_report(tmp_path / "report.json")
    report = json.loads(path.read_text(encoding="utf-8"))
    report["examples"].append(
        record("plot_raise.py", 0.2, status="failed", expected_failure=True, error="boom")
    )
    path.write_text(json.dumps(report), encoding="utf-8")
    summary = summarize(load_input(str(path)))
    data = summary.to_json()
    rows = {row["id"]: row for row in data["examples"]}
    counted = {}
    for row in data["examples"]:
        counted[row["status"]] = counted.get(row["status"], 0) + 1
    assert counted == data["status_counts"]
    assert rows[SLOW]["status"] == DID_NOT_FINISH and rows[SLOW]["record_status"] == "failed"
    raised = rows["tutorials/plot_raise.py"]
    assert (raised["status"], raised["record_status"]) == ("failed (expected)", "failed")
    assert raised["expected_failure"] is True and rows[QUICK]["status"] == "ok"
    markdown = render_markdown(summary)
    assert r"failed \(expected\)" in markdown and DID_NOT_FINISH in markdown  # Markdown-escaped


def test_an_example_its_budget_interrupted_keeps_its_status_and_its_share(tmp_path):
    """Interrupted at its budget, then the build ended: its budget stopped it, so it is
    ``interrupted``, over its budget, with its bar."""
    records = [
        record(
            "plot_loop.py",
            3.2,
            budget=3.0,
            status="interrupted",
            interrupted_by="time",
            error="tutorials/plot_loop.py was interrupted after 3 s",
        )
    ]
    row = summarize(load_input(str(write_report(tmp_path / "r.json", records)))).rows[0]
    assert row.status_label == "interrupted" and row.over
    assert chart_percent(row) == pytest.approx(106.7, abs=0.1) and row.headroom_seconds < 0
    # Its bar says it was stopped, in words and drawing: it is no run's end.
    label = "tutorials/plot_loop.py (3.2s of 3s, interrupted by its time budget)"
    assert chart_label(row) == label
    svg = render_chart_svg([row])
    assert label in svg and "<pattern " in svg, svg
    ran = summarize(load_input(str(write_report(tmp_path / "ok.json", [record("plot_a.py", 1.0)]))))
    assert "<pattern " not in render_chart_svg(ran.rows)


@pytest.mark.parametrize("by", ["memory", "ceiling"])
def test_an_example_a_memory_limit_interrupted_has_no_time_bar(tmp_path, by):
    """A memory limit cut its run short: the time it ran is no share of its time budget,
    so the chart draws no bar for it and says what stopped it."""
    records = [
        record(
            "plot_big.py",
            1.5,
            budget=3.0,
            status="interrupted",
            interrupted_by=by,
            error="tutorials/plot_big.py was interrupted by memory",
        )
    ]
    row = summarize(load_input(str(write_report(tmp_path / "r.json", records)))).rows[0]
    assert chart_percent(row) is None
    what = "its memory budget" if by == "memory" else "the build's memory ceiling"
    label = f"tutorials/plot_big.py (interrupted by {what} after 1.5s; budget 3s)"
    assert chart_label(row) == label
    svg = render_chart_svg([row])
    assert all(line in svg for line in fitted_label(label).split("\n")), svg


def test_an_unfinished_record_as_the_plugin_first_writes_it_is_stopped(tmp_path):
    records = [record("plot_a.py", 1.0, status="failed", error=UNFINISHED_ERROR)]
    row = summarize(load_input(str(write_report(tmp_path / "r.json", records)))).rows[0]
    assert row.status_label == DID_NOT_FINISH and not row.build_failure


@pytest.mark.parametrize(
    ("seconds", "budget", "said"),
    [
        (0.004, 0.0001, "0.004s"),
        (0.019, 0.0001, "0.02s"),
        (60.4, 60.0, "60.4s"),
        (75.0, 60.0, "1m15s"),
    ],
)
def test_a_time_over_its_budget_reads_over_it(seconds, budget, said):
    assert format_over(seconds, budget) == said


def test_compare_says_the_example_was_stopped(tmp_path):
    loaded = load_input(str(terminated_report(tmp_path / "report.json")))
    slow = next(timing for timing in loaded.timings if timing.id == SLOW)
    assert run_text(slow) == f"{DID_NOT_FINISH} after 2.1s"


def test_an_example_running_when_its_build_was_killed_has_no_time_anywhere() -> None:
    """A killed build's journal: its running example's record was written as it started,
    so no view gives it a time (``0s``, ``after 0s``), only the one wording."""
    killed = Timing(
        SLOW,
        "plot_slow.py",
        0.0,
        status="failed",
        budget_seconds=60.0,
        unfinished=True,
        killed=True,
    )
    loaded = LoadedInput("journal", "docsaccel-journal", [killed], {"complete": False})
    (row,) = summarize(loaded).rows
    assert killed.status_label == row.status_label == KILLED_RUNNING
    assert run_text(killed) == KILLED_RUNNING
    assert row.time_text() == "–"
    assert chart_label(row) == f"{SLOW} ({KILLED_RUNNING}; budget 1m)"


def test_an_example_reused_from_a_run_that_kept_no_time_has_no_time_anywhere(tmp_path):
    """sphinx-gallery kept its outputs from a build made before docsaccel, by a release
    that stores no time: its record's ``0.0`` is no time. No view shows ``0s``, a share
    of its budget or a headroom, and the reused total counts it apart."""
    records = [
        record(
            "plot_kept.py",
            0.0,
            budget=30.0,
            status="cached",
            time_unknown=True,
            cpu_seconds=None,
            peak_rss_bytes=None,
        ),
        record("plot_ran.py", 2.0, budget=30.0),
    ]
    path = write_report(tmp_path / "r.json", records)
    summary = summarize(load_input(str(path)))
    row = next(r for r in summary.rows if r.id == "tutorials/plot_kept.py")
    assert row.time_text() == "–" and row.seconds_from is None
    assert row.budget_use is None and row.headroom_seconds is None and not row.timed
    assert chart_percent(row) is None
    assert chart_label(row) == "tutorials/plot_kept.py (cached; budget 30s)"
    reused = "no time recorded by earlier builds for 1 example reused from an earlier build"
    assert summary.reused_text().startswith(reused)
    markdown = render_markdown(summary).replace("\\", "")
    assert reused in markdown and "0s (earlier build)" not in markdown, markdown
    kept = next(line for line in markdown.splitlines() if line.startswith("| tutorials/plot_kept"))
    assert "| – |" in kept and "0%" not in kept, kept
    assert reused in render_html(summary)
    data = {e["id"]: e for e in summary.to_json()["examples"]}
    assert data["tutorials/plot_kept.py"]["seconds_from"] is None


def test_a_label_longer_than_the_chart_margin_is_broken_not_cut(tmp_path):
    """A long example id with a memory stop's words: the chart breaks its label before
    the parenthesis, so no line runs past the figure's edge (a reader saw it cut)."""
    name = "plot_a_long_descriptive_name_of_a_memory_hungry_example.py"
    records = [
        record(name, 0.5, status="interrupted", interrupted_by="memory", error="stopped"),
        record("plot_quick.py", 1.0),
    ]
    summary = summarize(load_input(str(write_report(tmp_path / "r.json", records))))
    row = next(r for r in summary.rows if r.id.endswith(name))
    label = chart_label(row)
    assert len(label) > LABEL_CHARS
    svg = render_chart_svg(summary.rows)
    shown = fitted_label(label)
    assert all(len(line) <= LABEL_CHARS for line in shown.split("\n")), shown
    for line in shown.split("\n"):
        assert line in svg, line
