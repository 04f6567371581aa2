"""A build that wrote its final report and runs on (its last ``build-finished`` handlers)
is named as running by every gate, through every file of it, never as failed.

The report is written ``"complete": true`` with its verdict pending
(:data:`docsaccel.contract.VERDICT_PENDING`) before the handlers that may still fail the
build; while the build's process runs them, it holds its output folder's lock, which
says it runs.
"""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest
from helpers.gallery_build import make_project, run_cli
from helpers.processes import held_build

from docsaccel import layout
from docsaccel.contract import VERDICT_PENDING, verdict_at_process_end
from docsaccel.report.model import runs_on_text

pytestmark = pytest.mark.slow

#: How a report whose verdict waits for its process's end begins to say so.
_WAITS = verdict_at_process_end("")[:40]

#: Holds the build in a ``build-finished`` handler after docsaccel's report, until the
#: test lets it end.
END_HOLD = """
import time
from pathlib import Path


def _hold(app, exception):
    here = Path(app.srcdir)
    (here / "end.flag").touch()
    deadline = time.monotonic() + 120
    while not (here / "go.flag").exists() and time.monotonic() < deadline:
        time.sleep(0.05)


def setup(app):
    app.connect("build-finished", _hold)
"""
CONF = (
    "import os, sys\nsys.path.insert(0, os.path.dirname(__file__))\n"
    "extensions.append('end_hold')\n"
    'sphinx_gallery_conf["junit"] = "junit.xml"\n'
)


def _build_files(src: Path, outdir: Path) -> list[Path]:
    """Every file of the build a gate may be given: its output folder, report, root and
    gallery ``sg_execution_times.rst`` and JUnit XML."""
    return [
        outdir,
        layout.report_path(outdir),
        src / "sg_execution_times.rst",
        src / "auto_examples" / "sg_execution_times.rst",
        outdir / "junit.xml",
    ]


def _gates(path: Path, report: Path, history: Path) -> dict[str, subprocess.CompletedProcess]:
    """What ``check``, ``compare --fail-on-regression`` (against ``report``) and ``history
    append`` (to ``history``) say of ``path``, by command."""
    return {
        "check": run_cli("check", str(path)),
        "compare": run_cli("compare", str(report), str(path), "--fail-on-regression"),
        "history": run_cli("history", "append", "--to", str(history), str(path)),
    }


def _assert_gates_say_running(path: Path, report: Path, history: Path, pid: int) -> None:
    """``check``, ``compare --fail-on-regression`` and ``history append`` of ``path`` each
    refuse it, naming the build running as process ``pid``, and never say it failed."""
    running = f"a build is running now (process {pid})"
    for command, done in _gates(path, report, history).items():
        output = done.stdout + done.stderr
        assert done.returncode != 0, (command, path, output)
        assert running in output, (command, path, output)
        assert "failed" not in output, (command, path, output)


def test_a_build_at_its_end_is_running_for_every_gate_and_input(tmp_path) -> None:
    src = make_project(tmp_path, ["plot_quick.py"], conf=CONF)
    (src / "end_hold.py").write_text(END_HOLD, encoding="utf-8")
    outdir = src / "_build" / "html"
    report = layout.report_path(outdir)
    inputs = _build_files(src, outdir)
    with held_build(src, outdir, src / "end.flag") as process:
        build = json.loads(report.read_text(encoding="utf-8"))["build"]
        assert build["complete"] is True and build.get("verdict_pending") == VERDICT_PENDING
        history = tmp_path / "history.jsonl"
        for path in inputs:
            _assert_gates_say_running(path, report, history, process.pid)
        assert not history.exists()
        (src / "go.flag").touch()
        output = process.communicate(timeout=120)[0]
    assert process.returncode == 0, output
    for path in inputs:
        done = run_cli("check", str(path))
        assert done.returncode == 0, (path, done.stdout + done.stderr)


#: Leaves a thread that outlives the build: once the build's main thread is done (its
#: verdict is in its report), it says so and keeps the process alive until the test lets
#: it end.
OUTLIVES_THE_BUILD = '''"""
Outlives the build
==================
"""
import threading
import time
from pathlib import Path

here = Path(FOLDER)


def hold():
    main = threading.main_thread()
    while main.is_alive():
        time.sleep(0.05)
    (here / "end.flag").touch()
    deadline = time.monotonic() + 120
    while not (here / "go.flag").exists() and time.monotonic() < deadline:
        time.sleep(0.05)


threading.Thread(target=hold, name="outlives-the-build").start()
'''


def _outliving_project(tmp_path: Path) -> Path:
    """A project with JUnit XML whose ``plot_outlives.py`` leaves the thread of
    :data:`OUTLIVES_THE_BUILD` holding the build's process past its report."""
    conf = 'sphinx_gallery_conf["junit"] = "junit.xml"\n'
    src = make_project(tmp_path, ["plot_quick.py"], conf=conf)
    example = src / "examples" / "plot_outlives.py"
    example.write_text(OUTLIVES_THE_BUILD.replace("FOLDER", repr(str(src))), encoding="utf-8")
    return src


def test_a_build_whose_process_runs_on_past_its_verdict_is_running_for_every_gate(
    tmp_path,
) -> None:
    """Its report says it passed, but a thread an example left keeps its process alive,
    and the process may still end failing (the exit bound): until it ends, every gate
    names the build as running, through every file of it; once it ends, they judge it."""
    src = _outliving_project(tmp_path)
    outdir = src / "_build" / "html"
    report = layout.report_path(outdir)
    inputs = _build_files(src, outdir)
    # A grace long enough that only the test ends the thread: not a timing.
    env = {"DOCSACCEL_INTERRUPT_GRACE": "300"}
    with held_build(src, outdir, src / "end.flag", env=env) as process:
        build = json.loads(report.read_text(encoding="utf-8"))["build"]
        # Complete, its verdict waiting for its process's end: a gate reading the report
        # once that process is gone without that end fails it.
        pending = build["complete"] is True and build.get("verdict_pending", "")
        assert pending.startswith(_WAITS) and "plot_outlives.py" in pending, build
        # Its examples finished, every time is in its report: only its verdict waits.
        runs_on = runs_on_text(str(process.pid))
        history = tmp_path / "history.jsonl"
        for path in inputs:
            _assert_gates_say_running(path, report, history, process.pid)
            checked = run_cli("check", str(path))
            assert runs_on in checked.stdout + checked.stderr, (path, checked.stderr)
            for fmt in ("md", "html"):
                shown = run_cli("report", "--format", fmt, str(path))
                view = (shown.stdout + shown.stderr).replace("\\", "")  # Markdown's escapes
                assert shown.returncode == 0 and f"Warning: {runs_on}." in view, (path, view)
                assert "partial" not in view and "did not finish" not in view, (path, view)
                assert "within budget." not in view and "failed" not in view, (path, view)
            shown = run_cli("report", "--format", "json", str(path))
            assert shown.returncode == 0, (path, shown.stderr)
            summary = json.loads(shown.stdout)
            assert summary["complete"] is True, (path, summary["incomplete"])
            assert summary["incomplete"] == runs_on and not summary["failed"], (path, summary)
        assert not history.exists()
        (src / "go.flag").touch()
        output = process.communicate(timeout=120)[0]
    assert process.returncode == 0, output
    assert layout.lock_holder(outdir) is None
    assert "verdict_pending" not in json.loads(report.read_text(encoding="utf-8"))["build"]
    for path in inputs:
        done = run_cli("check", str(path))
        assert done.returncode == 0, (path, done.stdout + done.stderr)


def test_a_build_killed_while_its_process_runs_on_past_its_report_passes_no_gate(
    tmp_path,
) -> None:
    """Killed outright (SIGKILL, an out-of-memory kill) while a thread an example left
    holds its process past its report: the verdict on that example never came, so every
    gate fails the build through every file of it, and no view says it passed."""
    src = _outliving_project(tmp_path)
    outdir = src / "_build" / "html"
    report = layout.report_path(outdir)
    env = {"DOCSACCEL_INTERRUPT_GRACE": "300"}
    with held_build(src, outdir, src / "end.flag", env=env) as process:
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=120)
    assert process.returncode == -signal.SIGKILL
    history = tmp_path / "history.jsonl"
    for path in _build_files(src, outdir):
        for command, done in _gates(path, report, history).items():
            output = done.stdout + done.stderr
            assert done.returncode != 0, (command, path, output)
            if command != "compare":  # the report given twice is refused as such
                assert _WAITS in output and "plot_outlives.py" in output, (command, path, output)
        for fmt in ("md", "html"):
            view = run_cli("report", "--format", fmt, str(path)).stdout.replace("\\", "")
            assert _WAITS in view and "within budget" not in view, (path, view)
    assert not history.exists()
