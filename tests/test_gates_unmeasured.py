"""A fast build after a full one: the gates judge only the times this build measured.

sphinx-gallery runs again only the examples whose source changed; the others keep the
outputs of the full build, and their records (``cached``) its times. The fast build's
budgets must not judge those times (a false overrun, or a false pass): ``check``, the
report, ``compare`` and the history say the examples were not measured by this build.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers.gallery_build import Built, build, make_project

from docsaccel.report.commands import run_check, run_compare, run_history_append, run_report
from docsaccel.report.history import read_history

pytestmark = pytest.mark.slow

#: A full budget plot_sleep.py (1.5 s) keeps, a fast one it would go over.
BUDGETS = 'default = "1m"\nfast_default = "1s"\n'


@pytest.fixture(scope="module")
def fast_after_full(tmp_path_factory) -> tuple[Path, Built]:
    """The full build's report (kept aside), and the fast build made after it."""
    tmp_path = tmp_path_factory.mktemp("unmeasured")
    src = make_project(tmp_path, ["plot_sleep.py"], budgets=BUDGETS)
    full = build(src)
    assert full.returncode == 0, full.output
    assert full.record("plot_sleep.py")["status"] == "ok"
    full_report = shutil.copy(full.report_path, tmp_path / "full.json")
    fast = build(src, env={"DOCSACCEL_FAST": "1"})
    assert fast.returncode == 0, fast.output
    return Path(full_report), fast


def test_the_fast_build_reuses_the_full_builds_time(fast_after_full) -> None:
    full_report, fast = fast_after_full
    record = fast.record("plot_sleep.py")
    assert record["status"] == "cached"
    ran = json.loads(full_report.read_text("utf-8"))["examples"][0]
    assert record["wall_seconds"] == ran["wall_seconds"] > 1.0
    assert record["budget_seconds"] == 1.0  # the fast build's budget: not the one it ran under


def test_check_judges_no_time_the_build_did_not_measure(fast_after_full) -> None:
    _, fast = fast_after_full
    text, code = run_check([str(fast.report_path)])
    assert code == 0, text
    assert "over budget" not in text.replace("none over budget", "")
    assert "1 example not measured by this build" in text
    annotations, code = run_check([str(fast.report_path)], fmt="github")
    assert code == 0, annotations
    assert "::error" not in annotations and "::warning" not in annotations
    assert "::notice title=Not measured::1 example not measured by this build" in annotations


def test_the_report_calls_a_reused_time_neither_within_budget_nor_over(fast_after_full) -> None:
    _, fast = fast_after_full
    for fmt in ("md", "html"):
        text, code = run_report(str(fast.report_path), fmt=fmt)
        assert code == 0, text
        assert "All examples within budget" not in text
        assert "1 example not measured by this build" in text
        assert "over budget." not in text
    summary = json.loads(run_report(str(fast.report_path), fmt="json")[0])
    assert summary["over_budget"] == [] and summary["unmeasured_count"] == 1


def test_compare_and_history_take_no_reused_time_for_a_measured_one(
    fast_after_full, tmp_path
) -> None:
    full_report, fast = fast_after_full
    text, code = run_compare(str(full_report), str(fast.report_path), allow_mixed=True)
    assert code == 0, text
    line = next(line for line in text.splitlines() if "examples/plot_sleep.py" in line)
    assert line.endswith("-> cached (not measured by this build)"), text
    history = tmp_path / "history.jsonl"
    assert run_history_append(str(fast.report_path), history)[1] == 0
    assert "examples/plot_sleep.py" not in read_history(history, last=10)
