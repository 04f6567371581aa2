"""The HTML report as a reader sees it: in a 1280 px browser window, in alabaster and furo.

The report page inside a built site (:func:`~docsaccel.gallery.report_page.page_text`, in a
real Sphinx build of each theme) and the standalone ``docsaccel report --format html``,
with 30 examples whose budgets run from 2 s to 7 m: no horizontal scroll, and every
example's bar in the chart wide enough to see. Screenshots are kept beside each test's
files (``*.png``) for a person to look at.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.browser import PageProblems, serve
from helpers.report_factory import record, write_report

from docsaccel.cli import main
from docsaccel.gallery.report_page import page_text

pytestmark = pytest.mark.slow

WIDTH = 1280
THEMES = ("alabaster", "furo")


def thirty_examples() -> list[dict]:
    """Quick examples on 2 s budgets, slow ones on 7 m, a few near or over either."""
    records = []
    for index in range(30):
        quick = index % 2 == 0
        budget = 2.0 if quick else 420.0
        seconds = budget * (0.05 + 0.04 * index)
        name = f"plot_{'quick' if quick else 'training_run'}_{index:02d}.py"
        # As a warn-mode build records them: an example past its budget is over-budget.
        status = "over-budget" if seconds > budget else "ok"
        records.append(record(name, round(seconds, 2), budget=budget, status=status))
    return records


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    return write_report(tmp_path_factory.mktemp("report") / "report.json", thirty_examples())


def site_with_report_page(folder: Path, report: Path, theme: str) -> Path:
    """A Sphinx site in ``theme`` whose page ``budget_report`` is the plugin's report page."""
    src = folder / "src"
    src.mkdir()
    (src / "conf.py").write_text(f'project = "demo"\nhtml_theme = "{theme}"\n', encoding="utf-8")
    (src / "index.rst").write_text("Demo\n====\n\n.. toctree::\n\n   budget_report\n")
    text = page_text(json.loads(report.read_text(encoding="utf-8")), history=None)
    (src / "budget_report.rst").write_text(text, encoding="utf-8")
    out = folder / "html"
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-q", "-b", "html", str(src), str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def look(browser, folder: Path, page_name: str, shot: Path) -> dict:
    """Open the page at 1280 px, screenshot it whole; what a reader would measure."""
    with serve(folder) as url:
        page = browser.new_page(viewport={"width": WIDTH, "height": 900})
        problems = PageProblems(page)
        page.goto(f"{url}/{page_name}")
        page.wait_for_load_state("load")
        page.screenshot(path=str(shot), full_page=True)
        found = {
            "scroll_width": page.evaluate("document.documentElement.scrollWidth"),
            # The widest box of the report: a table wider than its column scrolls inside
            # a theme's wrapper without widening the document.
            "report_overflow": page.evaluate(
                """() => Array.from(document.querySelectorAll('.docsaccel-report, '
                    + '.docsaccel-report *')).filter(e => e.scrollWidth > e.clientWidth + 1
                    && getComputedStyle(e).overflowX !== 'visible').length"""
            ),
            "table_fits": page.evaluate(
                """() => { const t = document.querySelector('.docsaccel-report table');
                    const r = t.getBoundingClientRect();
                    const p = t.closest('.docsaccel-report').getBoundingClientRect();
                    return r.right <= p.right + 1 && r.right <= window.innerWidth; }"""
            ),
            "bars": [
                box["width"]
                for box in (
                    page.locator(f"#{bar.get_attribute('id')}").bounding_box()
                    for bar in page.locator(".docsaccel-report .chart svg g[id^=bar-]").all()
                )
                if box is not None
            ],
            "rows": page.locator(".docsaccel-report table tbody tr").count(),
        }
        # Unfolded, every example's details still fit.
        page.evaluate(
            "document.querySelectorAll('.docsaccel-report details')"
            ".forEach(d => { d.open = true; })"
        )
        page.screenshot(path=str(shot.with_name(f"{shot.stem}-unfolded.png")), full_page=True)
        found["unfolded_scroll_width"] = page.evaluate("document.documentElement.scrollWidth")
        page.close()
    assert problems.items == []
    return found


def assert_readable(found: dict) -> None:
    assert found["scroll_width"] <= WIDTH, found
    assert found["unfolded_scroll_width"] <= WIDTH, found
    assert found["report_overflow"] == 0, found
    assert found["table_fits"], found
    assert found["rows"] == 30
    # Every example has a bar, and a bar a reader can see (a 2 s example beside 7 m ones).
    assert len(found["bars"]) == 30, found
    assert min(found["bars"]) >= 3, found


@pytest.mark.parametrize("theme", THEMES)
def test_the_report_page_fits_1280_px_with_every_bar_visible(
    tmp_path, report, browser, theme
) -> None:
    out = site_with_report_page(tmp_path, report, theme)
    shot = tmp_path / f"report-page-{theme}.png"

    found = look(browser, out, "budget_report.html", shot)

    assert_readable(found)
    assert shot.stat().st_size > 0


def history_of(folder: Path, records: list[dict], builds: int) -> Path:
    """A history of ``builds`` builds of ``records``, each a little slower than the last."""
    history = folder / "history.jsonl"
    for index in range(builds):
        grown = [{**r, "wall_seconds": r["wall_seconds"] * (1 + index / 20)} for r in records]
        report = write_report(folder / f"build{index}.json", grown)
        data = json.loads(report.read_text(encoding="utf-8"))
        data["generated_at"] = f"2026-11-29T17:{index:02d}:00+00:00"
        report.write_text(json.dumps(data), encoding="utf-8")
        assert main(["history", "append", str(report), "--to", str(history)]) == 0
    return history


def test_the_standalone_html_report_fits_1280_px_with_its_trends(tmp_path, report, browser) -> None:
    history = history_of(tmp_path, thirty_examples(), builds=5)
    site = tmp_path / "site"
    site.mkdir()
    out = site / "report.html"
    assert (
        main(["report", str(report), "--history", str(history), "--format", "html", "-o", str(out)])
        == 0
    )
    shot = tmp_path / "report-standalone.png"

    found = look(browser, site, "report.html", shot)

    assert_readable(found)
    # The trend chart counts builds: its axis reads 1, 2, 3, not 1.00, 1.25, 1.50.
    page = out.read_text(encoding="utf-8")
    chart = page[page.index('class="trend-chart"') :]
    chart = chart[: chart.index("</svg>")]
    ticks = re.findall(r"<text[^>]*>([^<]*)</text>", chart)
    assert "1" in ticks and "5" in ticks, ticks
    assert not any(re.fullmatch(r"\d+\.\d+", tick) for tick in ticks), ticks


def mixed_statuses() -> list[dict]:
    """Long example names beside every short status a row can have."""
    long = "plot_a_tutorial_with_a_long_descriptive_name_{:02d}.py"
    restored = {"hit": True, "saved_seconds": 3.0}
    records = [record(long.format(i), 2.0 + i, status="cached", cache=restored) for i in range(5)]
    records.append(
        record(
            "plot_zz_stop.py",
            1.03,
            budget=1.0,
            status="interrupted",
            interrupted_by="time",
            error="tutorials/plot_zz_stop.py was interrupted after 1 s",
        )
    )
    records.append(record("plot_over.py", 1.03, budget=1.0, status="over-budget"))
    # The longest chart label: a long name and a memory stop's words.
    records.append(
        record(
            long.format(99),
            0.5,
            status="interrupted",
            interrupted_by="memory",
            error="stopped by its memory budget",
        )
    )
    return records


def test_the_html_report_never_breaks_a_status_word(tmp_path, browser) -> None:
    report = write_report(tmp_path / "report.json", mixed_statuses())
    site = tmp_path / "site"
    site.mkdir()
    out = site / "report.html"
    assert main(["report", str(report), "--format", "html", "-o", str(out)]) == 0

    with serve(site) as url:
        page = browser.new_page(viewport={"width": WIDTH, "height": 900})
        problems = PageProblems(page)
        page.goto(f"{url}/report.html")
        page.screenshot(path=str(tmp_path / "statuses.png"), full_page=True)
        # One line box per status cell: "interrupted" is never "interr/upted".
        lines = page.evaluate(
            """() => Array.from(document.querySelectorAll('.docsaccel-report tbody tr'))
                .map(row => { const cell = row.cells[1]; const range = document.createRange();
                    range.selectNodeContents(cell);
                    return [cell.textContent, range.getClientRects().length]; })"""
        )
        page.close()
    assert problems.items == []
    assert sorted({status for status, _ in lines}) == ["cached", "interrupted", "over-budget"]
    assert all(count == 1 for _, count in lines), lines
    text = out.read_text(encoding="utf-8")
    # Restored examples did not run: they are not counted as executed.
    assert (
        "over 3 examples run (2 interrupted, 1 over-budget); 5 restored from the example cache"
        in text
    )
    assert "-0s" not in text  # 1.03 s on a 1 s budget: headroom -0.03s, never "-0s"
