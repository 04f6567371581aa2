"""A real build terminated (``SIGTERM``) while an example runs: its report page and its
HTML report say that example did not finish, and measure neither it nor those not run.

The build publishes its report page first (one quick example), then runs again with an
example that waits and another: terminated while the first waits, an example after it
never runs. The page the build left in its output folder and ``docsaccel report --format
html`` of its report must write the waiting example ``did not finish``, its time partial,
with no use of its budget and no headroom; the later one ``not run``; no "The build
failed".
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from helpers.browser import PageProblems, serve
from helpers.gallery_build import FIXTURES, build, child_env, make_project, sphinx_command
from helpers.processes import terminated_while_running

from docsaccel import layout
from docsaccel.cli import main
from docsaccel.contract import DID_NOT_FINISH, NOT_RUN

pytestmark = pytest.mark.slow

WAIT = "examples/plot_wait.py"
#: The execution-time line: its counts, in the groups it names.
TOTALS = re.compile(r"Execution time: [^<]*? over (\d+) examples? run \(([^)]*)\)((?:; [^;<]*)*)<")


def cells(html: str, example_id: str) -> list[str]:
    """The text of the row's visible cells after the example's name."""
    row = re.search(rf'<td data-sort="{re.escape(example_id)}">.*?</tr>', html, re.S)
    assert row, example_id
    return [re.sub(r"<[^>]+>", "", cell) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row[0])]


def headroom(html: str, example_id: str) -> str:
    details = html.split(f"<summary>{example_id}</summary>", 1)[1]
    return re.search(r"<dt>headroom</dt><dd>(.*?)</dd>", details)[1]


def assert_says_stopped(html: str, report: Path) -> None:
    """The waiting example is stopped, each one never run is not run, neither measured;
    the totals count every example of the report once, with one stopped."""
    examples = json.loads(report.read_text(encoding="utf-8"))["examples"]
    never = [e["id"] for e in examples if e["status"] == "not-executed"]
    assert never, "the build ran every example: it was terminated too late"
    # It failed because it did not finish, as the gates say; no example failed.
    assert "example failed" not in html and "The build failed: the build did not finish (" in html
    totals = TOTALS.search(html)
    assert totals, html
    ran, statuses, groups = totals.groups()
    assert (
        f"1 {DID_NOT_FINISH}" in statuses.split(", ")
        and f"{len(never)} not run (not-executed)" in groups
    )
    counted = int(ran) + sum(int(group.split()[0]) for group in groups.split("; ")[1:])
    assert counted == len(examples)
    # status, time, budget, use
    status, time, budget, use = cells(html, WAIT)[1:5]
    assert (status, budget, use) == (DID_NOT_FINISH, "1m", "–") and time.endswith("s (partial)")
    assert headroom(html, WAIT) == "–"
    for example_id in never:
        assert cells(html, example_id)[1:5] == ["not-executed", NOT_RUN, "1m", "–"]
        assert headroom(html, example_id) == "–"


@pytest.fixture(scope="module")
def terminated(tmp_path_factory) -> tuple[Path, Path]:
    """The page a terminated build left, and its report."""
    tmp_path = tmp_path_factory.mktemp("terminated")
    src = make_project(
        tmp_path,
        ["plot_quick.py"],
        conf='docsaccel_report_page = "budget_report"\n',
        budgets='default = "1m"\n',
    )
    first = build(src)
    assert first.returncode == 0, first.output
    shutil.copy(FIXTURES / "examples" / "plot_wait.py", src / "examples" / "plot_wait.py")
    shutil.copy(FIXTURES / "examples" / "plot_quick.py", src / "examples" / "plot_x_later.py")
    outdir = src / "_build" / "html"
    ended = terminated_while_running(
        sphinx_command(src, outdir), child_env({}), src, "plot_wait.py"
    )
    assert ended.returncode != 0, ended.stdout
    return outdir / "budget_report.html", layout.report_path(outdir)


def test_the_report_page_of_a_terminated_build_says_which_example_was_stopped(terminated):
    page, report = terminated
    shown = page.read_text(encoding="utf-8")
    assert "the build did not finish" in shown
    assert_says_stopped(shown, report)


def test_its_html_report_says_the_same_and_reads_at_1280_px(terminated, tmp_path, browser):
    _, report = terminated
    site = tmp_path / "site"
    site.mkdir()
    out = site / "report.html"
    assert main(["report", str(report), "--format", "html", "-o", str(out)]) == 0
    html = out.read_text(encoding="utf-8")
    assert_says_stopped(html, report)
    assert f"{WAIT} ({DID_NOT_FINISH} after " in html and f"({NOT_RUN}; budget 1m)" in html
    with serve(site) as url:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        problems = PageProblems(page)
        page.goto(f"{url}/report.html")
        page.screenshot(path=str(tmp_path / "terminated.png"), full_page=True)
        width = page.evaluate("() => document.documentElement.scrollWidth")
        page.close()
    assert problems.items == [] and width <= 1280
