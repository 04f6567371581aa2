"""An example the example cache restored is not measured by the build that restored it.

One project built twice with the cache, a local module edited between the builds: the
second build runs the one example that imports it and restores the others. Every view
(summary, ``check``, Markdown, HTML, the site's report page, JSON) counts only the
example it ran as measured, says the restored ones apart, and labels their times as the
stored run's.
"""

from __future__ import annotations

import json
import re

import pytest
from helpers.cache_project import ALL, CONF, Project

from docsaccel import layout
from docsaccel.contract import STORED_RUN, unmeasured_text
from docsaccel.report.commands import run_check, run_report
from docsaccel.report.summary import STORED_BY_CACHE, THIS_BUILD

pytestmark = pytest.mark.slow

BUDGETS = 'default = "10m"\n'
RESTORED = len(ALL) - 1
#: What every view says of the restored examples, from its one owner.
NOTE = unmeasured_text(0, restored=RESTORED)


@pytest.fixture(scope="module")
def second(tmp_path_factory):
    """The report of the build that ran ``plot_b_beta.py`` and restored the others."""
    project = Project(tmp_path_factory.mktemp("restored_views"))
    project.write("docs/budgets.toml", BUDGETS)
    project.write("docs/conf.py", project_conf())
    return project.built_then_beta_edited()[1]


def project_conf() -> str:
    return CONF + (
        'docsaccel_budgets = "budgets.toml"\n'
        'docsaccel_report_page = "budget_report"\n'
        "docsaccel_report_chart = True\n"
    )


def test_the_verdict_counts_only_the_example_the_build_ran(second) -> None:
    text, code = run_report(str(layout.report_path(second.outdir)), fmt="md")

    assert code == 0, text
    assert f"All 1 measured examples within budget; {NOTE}." in text, text
    assert f"All {len(ALL)} measured" not in text
    # A restored row's time is its stored run's, and says so (Markdown escapes brackets).
    assert f"\\({STORED_RUN}\\)" in text


def test_check_counts_the_restored_examples_apart(second) -> None:
    text, code = run_check([str(layout.report_path(second.outdir))])

    assert code == 0, text
    assert text.startswith("OK: 1 example checked, 1 with a budget, none over budget."), text
    assert f"note: {NOTE}." in text, text


def test_the_json_view_says_whose_run_each_time_is(second) -> None:
    text, code = run_report(str(layout.report_path(second.outdir)), fmt="json")

    assert code == 0, text
    view = json.loads(text)
    assert view["unmeasured_count"] == RESTORED and view["restored_count"] == RESTORED
    origins = {row["id"].rsplit("/", 1)[-1]: row["seconds_from"] for row in view["examples"]}
    assert origins.pop("plot_b_beta.py") == THIS_BUILD
    assert set(origins.values()) == {STORED_BY_CACHE}, origins


def test_the_html_view_the_chart_and_the_sites_report_page_say_so_too(second) -> None:
    html, code = run_report(str(layout.report_path(second.outdir)), fmt="html")
    page = (second.outdir / "budget_report.html").read_text("utf-8")

    assert code == 0, html
    for text in (html, page):
        assert "All 1 measured examples within budget" in text
        assert f"{RESTORED} restored from the example cache (judged by" in text
        assert f"({STORED_RUN})" in text
    # The chart's bar of a restored example is labelled with its stored run's time.
    assert re.search(rf"plot_a_alpha\.py \([^()]* of 10m, {STORED_RUN}\)", page), page
