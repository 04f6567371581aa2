"""A real build whose examples fail: every view says so, and no gate passes it.

One build of four examples: one that passes, one that raises, one that calls
``sys.exit`` and one that fails as sphinx-gallery was told to expect. The progress line,
the record, ``docsaccel check`` and the Markdown report all give each its true status.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest
from helpers.gallery_build import Built, build, make_project

from docsaccel import layout
from docsaccel.report.check import EXIT_BUILD_FAILED
from docsaccel.report.commands import run_check, run_report

pytestmark = pytest.mark.slow

NAMES = ["plot_quick.py", "plot_crash.py", "plot_h_sysexit.py"]
XFAIL = "plot_xfail.py"


@pytest.fixture(scope="module")
def failed_build(tmp_path_factory) -> Built:
    tmp_path = tmp_path_factory.mktemp("gates")
    conf = f'sphinx_gallery_conf["expected_failing_examples"] = ["examples/{XFAIL}"]\n'
    src = make_project(tmp_path, NAMES, conf=conf, budgets='default = "1m"\n')
    shutil.copy(src / "examples" / "plot_crash.py", src / "examples" / XFAIL)
    return build(src, quiet=False)


def _end_line(built: Built, name: str) -> str:
    match = re.search(
        rf"docsaccel: \[\d/4\] examples/{re.escape(name)}: [^,]+, ([^,;\n]+)", built.output
    )
    assert match, built.output
    return match.group(1)


def test_the_progress_line_and_the_record_give_each_example_its_true_status(failed_build) -> None:
    assert failed_build.returncode != 0
    assert _end_line(failed_build, "plot_quick.py") == "ok"
    assert _end_line(failed_build, "plot_crash.py") == "failed"
    assert _end_line(failed_build, "plot_h_sysexit.py") == "failed"
    assert _end_line(failed_build, XFAIL) == "failed (expected)"
    assert failed_build.record("plot_crash.py")["status"] == "failed"
    assert failed_build.record("plot_h_sysexit.py")["status"] == "failed"
    expected = failed_build.record(XFAIL)
    assert expected["status"] == "failed" and expected["expected_failure"] is True
    assert "expected_failure" not in failed_build.record("plot_crash.py")


def test_the_journal_a_stopped_build_reports_from_says_failed_at_the_example_end(
    failed_build,
) -> None:
    # A build stopped after an example ends (SIGTERM) makes its report from these lines.
    ends = {}
    for journal in layout.records_dir(failed_build.outdir).glob("journal-*.jsonl"):
        for line in journal.read_text("utf-8").splitlines():
            entry = json.loads(line)
            if entry.get("finished_at"):
                ends[entry["name"]] = entry["status"]
    assert ends["plot_crash.py"] == ends["plot_h_sysexit.py"] == ends[XFAIL] == "failed"
    assert ends["plot_quick.py"] == "ok"


def test_check_fails_the_build_naming_what_failed_apart_from_budgets(failed_build) -> None:
    text, code = run_check([str(failed_build.report_path)])
    assert code == EXIT_BUILD_FAILED
    first = text.splitlines()[0]
    assert first.startswith("FAIL: the build failed: 2 examples failed: ")
    assert "examples/plot_crash.py (RuntimeError: this example crashes on purpose)" in first
    assert "examples/plot_h_sysexit.py" in first and XFAIL not in first
    assert "OK" not in text


def test_the_report_never_calls_a_failed_build_within_budget(failed_build) -> None:
    text, code = run_report(str(failed_build.report_path))
    assert code == 0
    assert "All examples within budget" not in text
    assert "**The build failed: 2 examples failed:" in text
    assert "failed \\(expected\\)" in text
