"""A build failed after docsaccel wrote its report: the report and the gate say so.

The report is written as the build ends (``build-finished``), but handlers after it may
still fail the build: sphinx-gallery's summary (an example expected to fail that passed),
a project's own handler raising, or warning under ``-W``. ``docsaccel check`` must fail
each (exit 3, naming why) as ``sphinx-build`` does, never print ``OK``.
"""

from __future__ import annotations

import subprocess

import pytest
from helpers.gallery_build import Built, build, make_project, run_cli

pytestmark = pytest.mark.slow

LATE_WARNING = """
def _late(app, exception):
    from sphinx.util import logging

    logging.getLogger("late").warning("a warning after the report")


def setup(app):
    app.connect("build-finished", _late)
"""
LATE_ERROR = """
def _late(app, exception):
    if exception is None:
        raise RuntimeError("a failure after the report")


def setup(app):
    app.connect("build-finished", _late)
"""


def _check(built: Built, *options: str) -> subprocess.CompletedProcess:
    return run_cli("check", str(built.report_path), *options)


def test_an_expected_failure_that_passed_fails_the_gate(tmp_path) -> None:
    conf = 'sphinx_gallery_conf["expected_failing_examples"] = ["examples/plot_quick.py"]\n'
    built = build(make_project(tmp_path, ["plot_quick.py"], conf=conf))
    assert built.returncode == 2, built.output
    assert "expected to fail did not: examples/plot_quick.py" in built.report["build"].get(
        "sphinx_failed", ""
    ), built.report["build"]
    checked = _check(built)
    assert checked.returncode == 3, checked.stdout + checked.stderr
    assert "expected to fail did not: examples/plot_quick.py" in checked.stdout


def test_a_warning_after_the_report_under_w_fails_the_gate(tmp_path) -> None:
    built = build(make_project(tmp_path, ["plot_quick.py"], conf=LATE_WARNING), "-W")
    assert built.returncode == 1, built.output
    checked = _check(built)
    assert checked.returncode == 3, checked.stdout + checked.stderr
    assert "treated as errors (-W)" in checked.stdout


def test_a_handler_raising_after_the_report_fails_the_gate(tmp_path) -> None:
    built = build(make_project(tmp_path, ["plot_quick.py"], conf=LATE_ERROR))
    assert built.returncode == 2, built.output
    checked = _check(built)
    assert checked.returncode == 3, checked.stdout + checked.stderr
    assert "a failure after the report" in checked.stdout


#: A handler of the build's end that fails it whatever Sphinx passes it: on the second
#: emission of ``build-finished`` (with the error) too, so no handler after it runs.
ALWAYS_RAISING = """
def _late(app, exception):
    raise {error}


def setup(app):
    app.connect("build-finished", _late)
    return {{"parallel_read_safe": True}}
"""
LOCAL_EXTENSION = "import os, sys\nsys.path.insert(0, os.path.dirname(__file__))\n"
LOCAL_EXTENSION += "extensions.append('lateext')\n"


@pytest.mark.parametrize(
    "error",
    ['RuntimeError("a failure after the report")', "KeyboardInterrupt"],
    ids=["raises-on-every-emission", "keyboard-interrupt"],
)
def test_an_extension_failing_every_end_handler_fails_the_gate(tmp_path, error) -> None:
    """An extension listed after docsaccel whose ``build-finished`` handler always raises:
    the handlers after it never run, on either emission, yet the report must not pass."""
    conf = LOCAL_EXTENSION + 'docsaccel_report_page = "budget_report"\n'
    src = make_project(tmp_path, ["plot_quick.py"], conf=conf)
    (src / "lateext.py").write_text(ALWAYS_RAISING.format(error=error), "utf-8")
    built = build(src)
    assert built.returncode == 2, built.output
    assert built.report["build"].get("sphinx_failed") or built.report["build"].get(
        "verdict_pending"
    ), built.report["build"]
    checked = _check(built)
    assert checked.returncode == 3, checked.stdout + checked.stderr
    assert checked.stdout.startswith("FAIL: the build failed: "), checked.stdout
    if error.startswith("RuntimeError"):
        assert "a failure after the report" in checked.stdout.splitlines()[0]
        # The site's page says what report.json says.
        html = (built.outdir / "budget_report.html").read_text("utf-8")
        assert "The build failed" in html and "a failure after the report" in html
        assert "All examples within budget" not in html


#: A handler of ``{event}`` that raises once (the build's end: on its first emission only).
RAISING_ONCE = """
def _raise(app, *args):
    if len(args) == 1 and isinstance(args[0], BaseException):
        return  # build-finished again, with the error: raised once
    raise RuntimeError("boom in a handler")


def setup(app):
    app.connect("{event}", _raise)
"""


@pytest.mark.parametrize(
    ("event", "named"),
    [
        ("html-page-context", "html-page-context"),
        ("env-before-read-docs", "env-before-read-docs"),
        ("build-finished", "the build's end"),
        # docsaccel's own event, emitted while Sphinx is set up: no build-finished follows.
        ("docsaccel-report-ready", "docsaccel-report-ready"),
    ],
)
def test_a_raising_handler_is_named_by_its_event(tmp_path, event, named) -> None:
    """The failure names the event whose handler raised, and the handler's own error,
    never "the build's end" for a handler of another phase."""
    src = make_project(tmp_path, ["plot_quick.py"], conf=LOCAL_EXTENSION)
    (src / "lateext.py").write_text(RAISING_ONCE.replace("{event}", event), "utf-8")
    built = build(src)
    assert built.returncode == 2, built.output
    checked = _check(built)
    assert checked.returncode == 3, checked.stdout + checked.stderr
    first = checked.stdout.splitlines()[0]
    assert f"a handler of {named} raised RuntimeError: boom in a handler" in first, first
    # A failed build is failed, unfinished or not: allowing an incomplete one lets none pass.
    allowed = _check(built, "--allow-incomplete")
    assert allowed.returncode == 3, allowed.stdout + allowed.stderr
