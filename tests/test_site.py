"""The built site in a real browser: a small fast build with the gallery plugin.

Chromium opens every example page and the budget report page, as a reader would: no
console errors, the video plays, the fast-path note shows, the report's table and chart
render and the table sorts.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.browser import PageProblems, serve
from helpers.gallery_build import build, make_project

pytestmark = pytest.mark.slow

EXAMPLES = ["plot_quick.py", "plot_knobs.py", "plot_video_knobs.py", "plot_figure.py"]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    src = make_project(
        tmp_path_factory.mktemp("site"),
        EXAMPLES,
        conf='docsaccel_report_page = "budget_report"\ndocsaccel_report_chart = True\n',
        budgets='default = "1m"\n[examples]\n"plot_video_*.py" = "30s"\n',
    )
    built = build(src, "-W", env={"DOCSACCEL_FAST": "1", "DOCSACCEL_ON_OVERRUN": "fail"})
    assert built.returncode == 0, built.output[-3000:]
    return built.outdir


@pytest.fixture
def open_page(site, browser):
    with serve(site) as base:
        opened = []

        def open_(path: str):
            page = browser.new_page()
            problems = PageProblems(page)
            page.goto(f"{base}/{path}")
            page.wait_for_load_state("load")
            opened.append((page, problems))
            return page, problems

        yield open_
        for page, _ in opened:
            page.close()


@pytest.mark.parametrize("example", EXAMPLES)
def test_example_pages_load_cleanly(open_page, example) -> None:
    page, problems = open_page(f"auto_examples/{Path(example).stem}.html")
    assert page.locator("h1").first.is_visible()
    assert problems.items == []


def test_fast_note_shows_the_knobs(open_page) -> None:
    page, _ = open_page("auto_examples/plot_video_knobs.html")
    note = page.locator(".docsaccel-fast-note")
    assert note.is_visible()
    assert "Built with the CI fast path" in note.inner_text()
    assert "frames = 8 (full build: 24)" in note.inner_text()
    # Examples that picked nothing get no note.
    other, _ = open_page("auto_examples/plot_quick.html")
    assert other.locator(".docsaccel-fast-note").count() == 0


def test_video_plays(open_page) -> None:
    page, problems = open_page("auto_examples/plot_video_knobs.html")
    page.wait_for_function("document.querySelector('video').readyState >= 1", timeout=15000)
    state = page.evaluate(
        """async () => {
            const video = document.querySelector('video');
            video.muted = true;
            await video.play();
            await new Promise(resolve => setTimeout(resolve, 300));
            return {ready: video.readyState, duration: video.duration, time: video.currentTime,
                    poster: video.poster};
        }"""
    )
    assert state["ready"] >= 1 and state["duration"] > 0 and state["time"] > 0
    assert state["poster"].endswith(".png")
    assert problems.items == []


def test_report_page_table_and_chart(open_page) -> None:
    page, problems = open_page("budget_report.html")
    rows = page.locator(".docsaccel-report table tbody tr")
    assert rows.count() == len(EXAMPLES)
    names = rows.locator("td:first-child").all_inner_texts()
    assert sorted(Path(n).name for n in names) == sorted(EXAMPLES)
    chart = page.locator(".docsaccel-report svg").first
    box = chart.bounding_box()
    assert box is not None and box["width"] > 200 and box["height"] > 50
    # Sorting by the example column orders the rows by name.
    page.locator(".docsaccel-report table thead th").first.click()
    first_sorted = rows.locator("td:first-child").all_inner_texts()
    assert first_sorted in (sorted(first_sorted), sorted(first_sorted, reverse=True))
    page.locator(".docsaccel-report table thead th").first.click()
    assert rows.locator("td:first-child").all_inner_texts() == first_sorted[::-1]
    assert problems.items == []
