"""An expected failure reads as one in the history too, and a time no run measured is no 0.

One project built twice: an example sphinx-gallery was told to expect to fail
(``expected_failing_examples``), one ``filename_pattern`` leaves out (not run), and one
the second build reuses (``cached``: its time is the first build's).
"""

from __future__ import annotations

import json
import shutil

import pytest
from helpers.gallery_build import build, make_project

from docsaccel.budgets import format_measured
from docsaccel.contract import EARLIER_RUN
from docsaccel.report.commands import run_history_append, run_report
from docsaccel.report.history import read_builds, read_history
from docsaccel.report.markdown import escape_md
from docsaccel.report.summary import EARLIER_BUILD, THIS_BUILD
from docsaccel.report.trend import build_trends

pytestmark = pytest.mark.slow

CONF = (
    'sphinx_gallery_conf["filename_pattern"] = "(quick|crash)"\n'
    'sphinx_gallery_conf["expected_failing_examples"] = ["examples/plot_crash.py"]\n'
)
QUICK, CRASH, FIGURE = (
    f"examples/{name}" for name in ("plot_quick.py", "plot_crash.py", "plot_figure.py")
)


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """The first build's report and the second's, copied out of the output folder."""
    tmp_path = tmp_path_factory.mktemp("history_views")
    src = make_project(tmp_path, ["plot_quick.py", "plot_crash.py", "plot_figure.py"], conf=CONF)
    copies = []
    for number in (1, 2):
        built = build(src)
        assert built.returncode == 0, built.output
        copies.append(shutil.copy(built.report_path, tmp_path / f"build{number}.json"))
    return tmp_path, copies


def _by_name(examples):
    return {row["id"].rsplit("/", 1)[-1]: row for row in examples}


def test_history_marks_an_expected_failure_and_its_readers_say_so(reports) -> None:
    tmp_path, (first, _) = reports
    record = _by_name(json.loads(first.read_text("utf-8"))["examples"])["plot_crash.py"]
    assert record["status"] == "failed" and record["expected_failure"] is True
    history = tmp_path / "history.jsonl"

    text, code = run_history_append(str(first), history)

    assert code == 0, text
    line = json.loads(history.read_text("utf-8"))
    entry = _by_name({"id": i, **e} for i, e in line["examples"].items())["plot_crash.py"]
    assert entry["status"] == "failed" and entry["expected_failure"] is True, entry
    (recorded,) = read_builds(history)
    crash = next(i for i in recorded.not_whole if i.endswith("plot_crash.py"))
    assert recorded.not_whole_status[crash] == "failed (expected)"
    assert "an example failed (expected)" in recorded.left_out_text()
    assert "failed (expected)" in build_trends([recorded]).left_out[1]
    # Never a duration: no median, noise or trend takes its time.
    assert crash not in recorded.durations and crash not in read_history(history)


def test_report_with_a_history_and_a_baseline_never_compares_an_expected_failure(reports) -> None:
    tmp_path, (first, second) = reports
    history = tmp_path / "compared.jsonl"
    assert run_history_append(str(first), history)[1] == 0

    text, code = run_report(str(second), baseline=str(first), history=str(history), fmt="json")

    assert code == 0, text
    crash = _by_name(json.loads(text)["examples"])["plot_crash.py"]
    assert crash["status"] == "failed (expected)", crash
    assert crash["delta_seconds"] is None and crash["median_seconds"] is None, crash


def test_the_json_view_gives_no_time_to_an_example_no_run_measured(reports) -> None:
    """The record's ``0.0`` of an example not run is no time; a reused one's time is the
    earlier build's, as the Markdown view shows it, and said so."""
    _, (first, second) = reports
    records = _by_name(json.loads(second.read_text("utf-8"))["examples"])
    assert records["plot_figure.py"]["status"] == "not-executed"
    assert records["plot_quick.py"]["status"] == "cached"

    text, code = run_report(str(second), fmt="json")

    assert code == 0, text
    view = json.loads(text)
    rows = _by_name(view["examples"])
    assert rows["plot_figure.py"]["seconds"] is None, rows["plot_figure.py"]
    assert view["version"] == 4
    assert rows["plot_figure.py"]["seconds_from"] is None
    reused = rows["plot_quick.py"]
    assert reused["seconds"] == records["plot_quick.py"]["wall_seconds"], reused
    assert reused["seconds_from"] == EARLIER_BUILD
    markdown, _ = run_report(str(second), fmt="md")
    quick_row = next(line for line in markdown.splitlines() if "plot\\_quick.py | cached" in line)
    # Its time is labelled as the earlier build's.
    reused_time = f"{format_measured(reused['seconds'])} ({EARLIER_RUN})"
    assert f"| {escape_md(reused_time)} |" in quick_row, quick_row
    crash = rows["plot_crash.py"]
    assert crash["seconds_from"] == THIS_BUILD and crash["seconds"] is not None
    first_rows = _by_name(json.loads(run_report(str(first), fmt="json")[0])["examples"])
    assert first_rows["plot_quick.py"]["seconds_from"] == THIS_BUILD
    assert first_rows["plot_figure.py"]["seconds"] is None
