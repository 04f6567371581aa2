"""Like with like, and trends from the history: fast vs full builds never mix."""

from __future__ import annotations

import json
import re

import pytest
from helpers.browser import PageProblems, serve
from helpers.report_factory import record, write_report

from docsaccel.cli import main
from docsaccel.report.commands import run_compare, run_report
from docsaccel.report.history import read_history, read_runs
from docsaccel.report.trend import sparkline_svg, trend_text
from docsaccel.shard.plan import load_durations

NAMES = ["plot_a.py", "plot_b.py", "plot_c.py"]


def write_kind(path, records, fast: bool):
    report = write_report(path, [{**r, "fast": fast} for r in records])
    data = json.loads(report.read_text())
    data["build"]["fast"] = fast
    report.write_text(json.dumps(data))
    return report


def append(tmp_path, history, index: int, seconds: dict[str, float], fast: bool = True):
    records = [record(name, value, budget=60.0) for name, value in seconds.items()]
    report = write_kind(tmp_path / f"r{index}.json", records, fast)
    # Each its own build: a history refuses the same build twice.
    data = json.loads(report.read_text())
    data["generated_at"] = f"2026-11-29T17:{index:02d}:00+00:00"
    report.write_text(json.dumps(data))
    assert main(["history", "append", str(report), "--to", str(history)]) == 0
    return report


def test_compare_refuses_a_fast_build_against_a_full_one(tmp_path, capsys) -> None:
    fast = write_kind(tmp_path / "fast.json", [record("plot_a.py", 2.0)], fast=True)
    full = write_kind(tmp_path / "full.json", [record("plot_a.py", 40.0)], fast=False)

    text, code = run_compare(str(fast), str(full))
    assert code == 2
    assert "fast build" in text and "full build" in text and "--allow-mixed" in text
    assert str(fast) in text and str(full) in text
    assert main(["compare", str(fast), str(full)]) == 2
    assert "--allow-mixed" in capsys.readouterr().err

    text, code = run_compare(str(fast), str(full), allow_mixed=True)
    assert code == 0 and "2s -> 40s" in text


def test_compare_allowed_to_mix_kinds_says_so_first_in_every_format(tmp_path) -> None:
    """``--allow-mixed`` compares a fast build with a full one, never silently: one line
    first, naming both and their kinds, in text, Markdown and GitHub annotations."""
    fast = write_kind(tmp_path / "fast.json", [record("plot_a.py", 2.0)], fast=True)
    full = write_kind(tmp_path / "full.json", [record("plot_a.py", 40.0)], fast=False)
    said = f"{fast} is a fast build and {full} a full build (fast path on in one only)"
    for fmt in ("text", "md", "github"):
        text, code = run_compare(str(fast), str(full), allow_mixed=True, fmt=fmt)
        assert code == 0, text
        first = text.splitlines()[0]
        assert said in first.replace("\\", ""), (fmt, text)
    same = write_kind(tmp_path / "same.json", [record("plot_a.py", 3.0)], fast=True)
    text, _ = run_compare(str(fast), str(same), allow_mixed=True)
    assert "kinds" not in text and "fast path on in one only" not in text, text


def test_report_refuses_a_baseline_of_the_other_kind(tmp_path, capsys) -> None:
    fast = write_kind(tmp_path / "fast.json", [record("plot_a.py", 2.0)], fast=True)
    full = write_kind(tmp_path / "full.json", [record("plot_a.py", 40.0)], fast=False)

    assert main(["report", str(fast), "--baseline", str(full)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "fast build" in err and "full build" in err and "baseline" in err, err
    assert "--allow-mixed" not in err, err
    # A baseline of its own kind is taken.
    same = write_kind(tmp_path / "same.json", [record("plot_a.py", 3.0)], fast=True)
    assert main(["report", str(fast), "--baseline", str(same)]) == 0


def test_a_history_of_mixed_builds_flags_no_noise_from_the_mix(tmp_path) -> None:
    history = tmp_path / "h.jsonl"
    for index in range(8):
        fast = index % 2 == 0
        append(tmp_path, history, index, {"plot_a.py": 2.0 if fast else 40.0}, fast=fast)
    lines = [json.loads(line) for line in history.read_text().splitlines()]
    assert [line["fast"] for line in lines] == [True, False] * 4

    fast_stats = read_history(history, fast=True)["tutorials/plot_a.py"]
    full_stats = read_history(history, fast=False)["tutorials/plot_a.py"]
    assert fast_stats.durations == (2.0,) * 4 and not fast_stats.noisy
    assert full_stats.durations == (40.0,) * 4 and not full_stats.noisy
    # Default: the kind of the latest build (full here).
    assert read_runs(history) == [{"tutorials/plot_a.py": 40.0}] * 4
    # Shard predictions read the same kind, not a median of the mix.
    assert load_durations([history]) == {"tutorials/plot_a.py": 40.0}
    # The report of a fast build uses only the fast builds: nothing noisy.
    report = write_kind(tmp_path / "now.json", [record("plot_a.py", 2.0)], fast=True)
    text, code = run_report(str(report), history=str(history), fmt="json")
    assert code == 0 and json.loads(text)["noisy"] == []


def test_trend_text_and_sparkline() -> None:
    assert trend_text([10.0 * 1.02**i for i in range(10)]) == "+20% over 10 builds"
    assert trend_text([5.0]) == "1 build" and trend_text([]) == "–"
    assert trend_text([3.0, 3.0, 3.0]) == "+0% over 3 builds"
    svg = sparkline_svg([1.0, 2.0, 3.0], budget_seconds=4.0, label="a<b")
    assert svg.startswith("<svg") and svg.count("<polyline") == 1 and 'class="budget"' in svg
    assert "a&lt;b" in svg and "a<b" not in svg


def test_markdown_gives_each_example_its_trend(tmp_path) -> None:
    history = tmp_path / "h.jsonl"
    for index in range(10):
        append(tmp_path, history, index, {"plot_a.py": 10.0 * 1.02**index, "plot_b.py": 5.0})
    report = tmp_path / "r9.json"
    text, code = run_report(str(report), history=str(history), fmt="md")
    assert code == 0
    row_a = next(line for line in text.splitlines() if line.startswith("| tutorials/plot\\_a"))
    assert row_a.rstrip().endswith("| \\+20% over 10 builds |")
    assert "over the last 10 recorded builds" in text


def append_records(tmp_path, history, index: int, records: list[dict]):
    """Append a fast build of ``records`` (any statuses) as build ``index``."""
    report = write_kind(tmp_path / f"r{index}.json", records, fast=True)
    data = json.loads(report.read_text())
    data["generated_at"] = f"2026-11-29T17:{index:02d}:00+00:00"
    report.write_text(json.dumps(data))
    assert main(["history", "append", str(report), "--to", str(history)]) == 0
    return report


def test_a_stopped_example_never_reads_as_a_speed_up_in_the_history(tmp_path) -> None:
    history = tmp_path / "h.jsonl"
    for index in range(2):
        append_records(
            tmp_path, history, index, [record("plot_a.py", 1.0), record("plot_zz_stop.py", 2.5)]
        )
    stopped = record(
        "plot_zz_stop.py",
        1.1,
        budget=1.0,
        status="interrupted",
        interrupted_by="time",
        error="tutorials/plot_zz_stop.py was interrupted after 1.0 s",
    )
    report = append_records(tmp_path, history, 2, [record("plot_a.py", 1.0), stopped])

    text, code = run_report(str(report), history=str(history), fmt="md")
    assert code == 0
    line = next(line for line in text.splitlines() if line.startswith("Total execution time"))
    assert "3.5s -> 1s" not in line and "-> 0s" not in line, line
    assert "1s -> 1s (over the 1 example that ran whole in both" in line, line
    assert "1 left out" in line, line

    text, code = run_report(str(report), history=str(history), fmt="html")
    assert code == 0
    chart = text[text.index('<svg class="trend-chart"') :]
    assert "build 3 left out: an example was stopped: its total is no timing" in chart


def test_the_chart_says_a_build_of_cache_hits_only_has_no_timing(tmp_path) -> None:
    history = tmp_path / "h.jsonl"
    append_records(tmp_path, history, 0, [record("plot_a.py", 1.0)])
    hit = record("plot_a.py", 1.0, status="cached", cache={"hit": True, "saved_seconds": 1.0})
    report = append_records(tmp_path, history, 1, [hit])

    text, code = run_report(str(report), history=str(history), fmt="html")
    assert code == 0
    chart = text[text.index('<svg class="trend-chart"') :]
    # Not "an example did not run whole": none ran, each was restored from the cache.
    assert "build 2 left out: its examples were restored from the cache" in chart
    assert "a build of cache hits only has no timing to trend" in chart
    assert "did not run whole" not in chart


def test_the_history_chart_of_one_build_has_whole_build_ticks(tmp_path) -> None:
    history = tmp_path / "h.jsonl"
    report = append(tmp_path, history, 0, {"plot_a.py": 1.0})
    text, code = run_report(str(report), history=str(history), fmt="html")
    assert code == 0
    chart = text[text.index('<svg class="trend-chart"') :]
    ticks = re.findall(r'<g id="xtick_\d+">.*?<text[^>]*>([^<]*)</text>', chart, re.S)
    assert ticks and all(re.fullmatch(r"\d+", tick.strip()) for tick in ticks), ticks


def test_report_from_twelve_builds_shows_the_trend_chart_and_sparklines(tmp_path, browser) -> None:
    history = tmp_path / "h.jsonl"
    for index in range(12):
        append(tmp_path, history, index, {n: 1.0 + index * (i + 1) for i, n in enumerate(NAMES)})
    out = tmp_path / "site" / "report.html"
    out.parent.mkdir()
    report = tmp_path / "r11.json"
    assert (
        main(["report", str(report), "--history", str(history), "--format", "html", "-o", str(out)])
        == 0
    )

    with serve(out.parent) as url:
        page = browser.new_page()
        problems = PageProblems(page)
        page.goto(f"{url}/report.html")
        chart = page.locator("svg.trend-chart")
        assert chart.count() == 1 and chart.bounding_box()["width"] > 100
        assert "Total execution time over 12 builds" in chart.text_content()
        rows = page.locator(".docsaccel-report tbody tr")
        assert rows.count() == len(NAMES)
        for index in range(rows.count()):
            row = rows.nth(index)
            line = row.locator("td.trend svg.sparkline polyline")
            assert line.count() == 1
            assert len(line.get_attribute("points").split()) == 10  # --last 10
            assert re.search(r"[+-]\d+% over 10 builds", row.locator("td.trend").inner_text())
        page.close()
    assert problems.items == []


@pytest.mark.slow
def test_the_site_report_page_shows_trends_from_docsaccel_history(tmp_path) -> None:
    from helpers.gallery_build import build, make_project

    conf = 'docsaccel_report_page = "budget_report"\ndocsaccel_history = "ci/h.jsonl"\n'
    src = make_project(tmp_path, ["plot_quick.py", "plot_inline.py"], conf=conf)
    history = src / "ci" / "h.jsonl"
    history.parent.mkdir()
    for index in range(3):
        line = {
            "schema": "docsaccel.history",
            "version": 1,
            "fast": False,
            "examples": {
                "examples/plot_quick.py": {"seconds": 1.0 + index},
                "examples/plot_inline.py": {"seconds": 2.0},
            },
        }
        with history.open("a", encoding="utf-8") as stream:
            stream.write(json.dumps(line) + "\n")

    built = build(src, "-W")

    assert built.returncode == 0, built.output
    page = (built.outdir / "budget_report.html").read_text(encoding="utf-8")
    assert page.count('class="trend-chart"') == 1
    assert page.count('class="sparkline"') == 2
    assert "+200% over 3 builds" in page


@pytest.mark.slow
def test_a_history_line_cut_short_is_said_once_per_build(tmp_path) -> None:
    """The progress estimate, the report page and its rewrite with the final verdict
    (``-W`` fails the build on the warning itself) each read the history: one fault, one
    warning."""
    from helpers.gallery_build import build, make_project

    conf = 'docsaccel_report_page = "budget_report"\ndocsaccel_history = "ci/h.jsonl"\n'
    src = make_project(tmp_path, ["plot_quick.py"], conf=conf)
    history = src / "ci" / "h.jsonl"
    history.parent.mkdir()
    line = {
        "schema": "docsaccel.history",
        "version": 1,
        "fast": False,
        "examples": {"examples/plot_quick.py": {"seconds": 1.0}},
    }
    history.write_text(json.dumps(line) + '\n{"schema": "docsaccel.hist', encoding="utf-8")

    built = build(src, "-W", "--keep-going")

    assert built.returncode != 0, built.output
    assert built.output.count("last line is cut short") == 1, built.output
