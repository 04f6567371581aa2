"""A build stopped after an example left a thread running (Ctrl-C or ``SIGTERM`` while
its pages are written) ends within the grace, naming that example, and neither the
example cache nor sphinx-gallery's ``.md5`` keeps its run: its verdict (does the thread
let the process end?) never came, so the next build runs it again and it fails there as
in any build. The same holds when, with ``parallel``, a worker dies, and when ``SIGTERM``
ends a finished build's process while it waits for that thread. Real Sphinx builds in
temporary folders."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest
from helpers.gallery_build import build, child_env, make_project, sphinx_command

from docsaccel import layout
from docsaccel.gallery.process_end import EXIT_STATUS
from docsaccel.report.check import EXIT_BUILD_FAILED
from docsaccel.report.commands import run_check

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fresh_processes")]

GRACE = "1"
ENV = {"DOCSACCEL_INTERRUPT_GRACE": GRACE}
CULPRIT = "examples/plot_h_thread.py"
#: Pages are written slowly, so the build is stopped while it writes them, after the
#: examples ran; the cache folder is the test's.
CONF = """docsaccel_cache = "../cache"
import time as _time


def setup(app):
    app.connect("html-page-context", lambda *args: _time.sleep(1))
"""
#: A hung build fails here rather than hanging the test session.
HANG = 120


def _stop_while_writing(src: Path, signum: int) -> tuple[int, str]:
    """Build ``src``, send ``signum`` once its examples ran (the report is written at the
    gallery's end), and return its status and output."""
    outdir = src / "_build" / "html"
    process = subprocess.Popen(
        sphinx_command(src, outdir),
        env=child_env(ENV),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + HANG
        while not layout.report_path(outdir).is_file() and process.poll() is None:
            assert time.monotonic() < deadline, "the examples never ran"
            time.sleep(0.05)
        process.send_signal(signum)
        output = process.communicate(timeout=HANG)[0]
    finally:
        process.kill()
    return process.returncode, output


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_stopped_build_keeps_no_run_of_an_example_that_left_a_thread(tmp_path, signum):
    src = make_project(tmp_path, ["plot_h_thread.py", "plot_quick.py"], conf=CONF)
    code, output = _stop_while_writing(src, signum)

    assert code != 0, output
    assert "Traceback" not in output, output
    # One fault, one ERROR line, naming the example and its thread. On Ctrl-C the thread
    # would hold the process forever: the exit bound ends it after the grace.
    (line,) = [x for x in output.splitlines() if "ERROR" in x]
    assert "the build stopped before its end" in line, output
    assert f"{CULPRIT}: it left thread running: never-stops" in output, output
    outdir = src / "_build" / "html"
    assert not Path(src / "auto_examples" / "plot_h_thread.py.md5").exists()
    report = str(layout.report_path(outdir))
    assert json.loads(Path(report).read_text())["build"]["complete"] is False
    text, gate = run_check([report], allow_incomplete=True)
    assert gate == EXIT_BUILD_FAILED and CULPRIT in text, text

    # The next build, not stopped, runs it again (no cache entry, no md5): it fails.
    again = build(src, env=ENV)
    assert again.returncode == 2, again.output
    record = again.record("plot_h_thread.py")
    assert record["status"] == "failed" and record["cache"]["hit"] is False, record
    assert again.record("plot_quick.py")["status"] == "cached"
    text, gate = run_check([str(again.report_path)])
    assert gate == EXIT_BUILD_FAILED and CULPRIT in text, text


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_build_terminated_while_its_process_waits_for_a_thread_fails_the_example(
    tmp_path, sig
) -> None:
    """``SIGTERM`` or Ctrl-C after "build succeeded", while the process waits out the
    grace for the thread an example left: that example's verdict never came. The report
    fails it, a gate fails the build, and the one ERROR line names it."""
    src = make_project(tmp_path, ["plot_h_thread.py", "plot_quick.py"])
    outdir = src / "_build" / "html"
    process = subprocess.Popen(
        sphinx_command(src, outdir, quiet=False),
        env=child_env({"DOCSACCEL_INTERRUPT_GRACE": "60"}),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines = []
    try:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            if "build succeeded" in line:
                break
        else:
            pytest.fail("".join(lines))
        time.sleep(0.5)
        process.send_signal(sig)
        output = "".join(lines) + process.communicate(timeout=HANG)[0]
    finally:
        process.kill()

    expected = -signal.SIGTERM if sig == signal.SIGTERM else EXIT_STATUS
    assert process.returncode == expected, output
    assert "Traceback" not in output, output
    (error,) = [x for x in output.splitlines() if "ERROR" in x]
    assert sig.name in error and "plot_h_thread" in error, output
    report = layout.report_path(outdir)
    text, gate = run_check([str(report)])
    assert gate == EXIT_BUILD_FAILED and CULPRIT in text, text
    records = {r["id"]: r for r in json.loads(report.read_text(encoding="utf-8"))["examples"]}
    record = records[CULPRIT]
    assert record["status"] == "failed" and "never-stops" in record["error"], record
    assert not Path(src / "auto_examples" / "plot_h_thread.py.md5").exists()


#: Ends its worker process once the other worker's examples ran.
LATE_EXIT = '''"""
Late exit
=========
"""
import os
import time

time.sleep(3)
os._exit(0)
'''


def test_a_parallel_build_a_worker_ended_keeps_no_run_of_an_example_that_left_a_thread(
    tmp_path,
) -> None:
    """``parallel: 2``: one worker's example left a thread, the other worker ends while
    it runs its example, and the build stops there. The thread's example was never
    judged: it fails, and neither sphinx-gallery's ``.md5`` nor the cache keeps it."""
    conf = 'docsaccel_cache = "../cache"\nsphinx_gallery_conf["parallel"] = 2\n'
    conf += 'sphinx_gallery_conf["within_subsection_order"] = "FileNameSortKey"\n'
    src = make_project(tmp_path, ["plot_h_thread.py", "plot_quick.py"], conf=conf)
    (src / "examples" / "plot_late_exit.py").write_text(LATE_EXIT, encoding="utf-8")
    built = build(src, env=ENV)

    assert built.returncode != 0, built.output
    assert built.report["build"]["complete"] is False
    record = built.record("plot_h_thread.py")
    assert record["status"] == "failed" and "never-stops" in record["error"], record
    assert not Path(src / "auto_examples" / "plot_h_thread.py.md5").exists()
    assert not list((tmp_path / "cache").rglob("*plot_h_thread*"))
    text, gate = run_check([str(built.report_path)], allow_incomplete=True)
    assert gate == EXIT_BUILD_FAILED and CULPRIT in text, text
