"""A build whose examples all pass but which Sphinx fails (``-W`` turning a warning into
an error): its report says so, and no gate passes it."""

from __future__ import annotations

import pytest
from helpers.gallery_build import build, make_project

from docsaccel import layout
from docsaccel.report.check import EXIT_BUILD_FAILED
from docsaccel.report.commands import run_check, run_report

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    src = make_project(tmp_path_factory.mktemp("sphinxfail"), ["plot_quick.py"])
    with (src / "index.rst").open("a", encoding="utf-8") as stream:
        stream.write("\nSee :doc:`/nonexistent`.\n")
    return src


def test_a_build_w_fails_is_failed_in_its_report_and_in_check(project) -> None:
    built = build(project, "-W", "--keep-going")
    assert built.returncode == 1, built.output
    report = layout.report_path(built.outdir)
    assert built.report["build"]["sphinx_failed"] == (
        "Sphinx gave 1 warning, treated as errors (-W)"
    )
    out, code = run_check([str(report)])
    assert code == EXIT_BUILD_FAILED, out
    assert out.splitlines()[0] == (
        f"FAIL: the build failed: Sphinx gave 1 warning, treated as errors (-W) ({report})"
    )
    assert "OK:" not in out
    github, code = run_check([str(report)], fmt="github")
    assert code == EXIT_BUILD_FAILED
    assert github.startswith("::error title=Build failed::the build failed: Sphinx gave 1")
    markdown, _ = run_report(str(report), fmt="md")
    assert "The build failed: Sphinx gave 1 warning, treated as errors (-W)." in markdown
    assert "All examples within budget" not in markdown


def test_the_same_warning_without_w_passes(project) -> None:
    built = build(project, outdir=project / "_build" / "plain")
    assert built.returncode == 0, built.output
    assert "sphinx_failed" not in built.report["build"]
    out, code = run_check([str(layout.report_path(built.outdir))])
    assert code == 0, out
