"""sphinx-gallery's JUnit XML at the gates, written outside the output folder.

The JUnit XML marks a raising example, but knows nothing of a build failing otherwise
(``-W`` turning a warning into an error) or killed before it rewrote the file, and its
path is the user's (``"../test-results/junit.xml"``, outside the output and source
folders). The gates judge it as they judge ``sg_execution_times.rst``: by its build's
report, and refuse it when a later build did not rewrite it.
"""

from __future__ import annotations

import json
import shutil
import signal

import pytest
from helpers.gallery_build import build, make_project
from helpers.processes import flag_waiter, held_build

from docsaccel.report.check import EXIT_BUILD_FAILED
from docsaccel.report.commands import run_check, run_compare, run_history_append, run_report

pytestmark = pytest.mark.slow

JUNIT = 'sphinx_gallery_conf["junit"] = "../test-results/junit.xml"\n'
BROKEN_REF = "\n\nSee :ref:`nowhere-label`.\n"


def test_junit_xml_of_a_failed_or_killed_build_passes_no_gate(tmp_path) -> None:
    """A build ``-W`` fails (an undefined label; its example passed): its JUnit XML fails
    ``check`` and ``compare`` (exit 3) naming the warning, ``history append`` refuses it.
    Mended, the next build passes and so does its file. A build killed while an example
    runs leaves that file as it was: every gate refuses it, while the build runs and
    after, rather than pass the earlier build's times as this one's."""
    src = make_project(tmp_path, ["plot_quick.py"], conf=JUNIT)
    outdir = tmp_path / "out" / "html"
    junit = tmp_path / "out" / "test-results" / "junit.xml"
    index = src / "index.rst"
    good_index = index.read_text(encoding="utf-8")
    index.write_text(good_index + BROKEN_REF, encoding="utf-8")
    history = tmp_path / "history.jsonl"

    built = build(src, "-W", outdir=outdir)
    assert built.returncode != 0, built.output
    assert junit.is_file(), built.output
    base = tmp_path / "base.xml"
    shutil.copy2(junit, base)
    text, code = run_check([str(junit)])
    assert code == EXIT_BUILD_FAILED, text
    assert "treated as errors (-W)" in text, text
    text, code = run_compare(str(base), str(junit))
    assert code == EXIT_BUILD_FAILED and text.startswith("The head build failed: "), text
    text, code = run_history_append(str(junit), history)
    assert code == 2 and text.count("\n") == 1 and "the build failed" in text, text
    assert not history.exists()
    # The copy kept elsewhere is no build's: its example passed, and the gate says that the
    # file cannot tell a build failed otherwise, as of sg_execution_times.rst.
    text, code = run_check([str(base)])
    assert code == 0, text
    assert f"note: {base}: sphinx-gallery's JUnit XML says how each example ended" in text
    assert "not whether its build finished or failed otherwise (-W" in text, text
    text, code = run_check([str(base)], fmt="github")
    assert code == 0, text
    assert "::notice title=Failures not known::" in text and str(base) in text, text

    index.write_text(good_index, encoding="utf-8")
    # Changed, so sphinx-gallery runs it again: its JUnit XML lists only the examples run.
    with (src / "examples" / "plot_quick.py").open("a", encoding="utf-8") as example:
        example.write("# changed\n")
    built = build(src, "-W", outdir=outdir)
    assert built.returncode == 0, built.output
    text, code = run_check([str(junit)])
    assert code == 0, text
    text, code = run_history_append(str(junit), history)
    assert code == 0, text

    waiter = flag_waiter(tmp_path)
    (src / "examples" / "plot_wait.py").write_text(waiter, encoding="utf-8")
    before = junit.read_bytes()
    with held_build(src, outdir, tmp_path / "running.flag") as process:
        running = [run_check([str(junit)]), run_history_append(str(junit), history)]
        process.kill()
        output = process.communicate(timeout=120)[0]
    assert junit.read_bytes() == before, output
    killed = [
        run_check([str(junit)]),
        run_check([str(junit)], allow_incomplete=True),
        run_compare(str(base), str(junit), allow_incomplete=True),
        run_history_append(str(junit), history),
    ]
    for text, code in running + killed:
        assert code == 2 and text.count("\n") == 1, text
        assert "an earlier build's" in text or "started" in text, text


#: Listed after the plugin: holds the build in its set-up (docsaccel's ran, Sphinx has not
#: read its settings yet) until the test ends it.
SETUP_HOLD = """
import time
from pathlib import Path


def setup(app):
    here = Path(app.srcdir)
    (here / "setup.flag").touch()
    deadline = time.monotonic() + 120
    while not (here / "go.flag").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
"""


def _gates_refuse(files, history, said) -> None:
    """Every gate given each of ``files`` refuses it in one line saying ``said``."""
    for given in files:
        for text, code in (
            run_check([str(given)]),
            run_check([str(given)], allow_incomplete=True),
            run_history_append(str(given), history),
        ):
            assert code == 2 and text.count("\n") == 1, (given, text)
            assert said in text, (given, text)
    assert not history.exists()


def test_sphinx_gallerys_files_of_a_later_build_that_stopped_early_or_ran_nothing(
    tmp_path,
) -> None:
    """After a passing build, each later build leaves sphinx-gallery's files (the JUnit XML
    outside the output folder, the times files) as they were, and the gates refuse them
    as they refuse its report: one whose conf.py no longer reads; one stopped by SIGTERM
    in its set-up, before Sphinx read its settings; one that ran no example."""
    conf = JUNIT + "import os, sys\nsys.path.insert(0, os.path.dirname(__file__))\n"
    src = make_project(tmp_path, ["plot_quick.py"], conf=conf)
    outdir = tmp_path / "out" / "html"
    junit = tmp_path / "out" / "test-results" / "junit.xml"
    files = [
        junit,
        src / "sg_execution_times.rst",
        src / "auto_examples" / "sg_execution_times.rst",
    ]
    built = build(src, outdir=outdir)
    assert built.returncode == 0, built.output
    for given in files:
        text, code = run_check([str(given)])
        assert code == 0, text
    conf_py = src / "conf.py"
    good_conf = conf_py.read_text(encoding="utf-8")

    conf_py.write_text(good_conf + "x = = 1\n", encoding="utf-8")
    built = build(src, outdir=outdir)
    assert built.returncode != 0, built.output
    _gates_refuse(files, tmp_path / "h2.jsonl", "conf.py changed since")

    (src / "setup_hold.py").write_text(SETUP_HOLD, encoding="utf-8")
    conf_py.write_text(good_conf + "extensions.append('setup_hold')\n", encoding="utf-8")
    with held_build(src, outdir, src / "setup.flag") as process:
        process.send_signal(signal.SIGTERM)
        output = process.communicate(timeout=120)[0]
    assert process.returncode != 0, output
    _gates_refuse(files, tmp_path / "h1.jsonl", "a later build started")

    conf_py.write_text(good_conf, encoding="utf-8")
    built = build(src, "-D", "plot_gallery=0", outdir=outdir)
    assert built.returncode == 0, built.output
    _gates_refuse(files, tmp_path / "h3.jsonl", "ran none of its")


def test_a_copied_junit_xml_says_how_each_example_ended_and_not_its_build(tmp_path) -> None:
    """A real build's JUnit XML, copied elsewhere (no report of its build is found): an
    example in ``expected_failing_examples`` that raised is failed as expected (its
    ``<skipped>``), not ``ok``; one that raised fails the gates; one expected to fail that
    passed fails its build, as its report says; and every gate and view notes that the
    file cannot say whether its build finished or failed otherwise."""
    expected = "sphinx_gallery_conf['expected_failing_examples'] = "
    expected += '["examples/plot_xfail.py", "examples/plot_xpass.py"]\n'
    src = make_project(tmp_path, ["plot_quick.py", "plot_crash.py"], conf=JUNIT + expected)
    shutil.copy(src / "examples" / "plot_crash.py", src / "examples" / "plot_xfail.py")
    shutil.copy(src / "examples" / "plot_quick.py", src / "examples" / "plot_xpass.py")
    built = build(src, outdir=tmp_path / "out" / "html")
    assert built.returncode != 0, built.output
    kept = tmp_path / "kept" / "junit.xml"
    kept.parent.mkdir()
    shutil.copy2(tmp_path / "out" / "test-results" / "junit.xml", kept)
    note = f"{kept}: sphinx-gallery's JUnit XML says how each example ended, not whether"

    text, code = run_check([str(kept)])
    assert code == EXIT_BUILD_FAILED, text
    assert "examples/plot_crash.py (RuntimeError: this example crashes on purpose)" in text
    assert "1 example expected to fail did not: examples/plot_xpass.py" in text, text
    assert "plot_xfail" not in text, text
    assert f"note: {note}" in text, text
    text, code = run_check([str(kept)], fmt="github")
    assert code == EXIT_BUILD_FAILED, text
    assert f"::notice title=Failures not known::{note}" in text, text

    view, code = run_report(str(kept), fmt="json")
    assert code == 0, view
    summary = json.loads(view)
    assert summary["status_counts"] == {"failed": 1, "failed (expected)": 1, "ok": 2}
    assert summary["failed"] == ["examples/plot_crash.py"]
    assert note in summary["no_status"]
    view, code = run_report(str(kept), fmt="md")
    assert code == 0, view
    assert "Examples only: " in view and "failed \\(expected\\)" in view, view

    # Against the build's own report: each example ended alike in both.
    text, code = run_compare(str(built.report_path), str(kept), allow_mixed=True)
    assert code == EXIT_BUILD_FAILED, text
    assert "examples/plot_xfail.py: failed (expected) after" in text, text
    assert "-> failed (expected) after" in text, text
    assert f"note: {note}" in text, text
    text, code = run_compare(str(built.report_path), str(kept), allow_mixed=True, fmt="github")
    assert f"::notice title=Failures not known::{note}" in text, text
