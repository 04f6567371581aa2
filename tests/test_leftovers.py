"""A thread or an exit handler an example leaves cannot keep a finished build from ending."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.gallery_build import build, make_project

from docsaccel import layout
from docsaccel.contract import FAILED, OK
from docsaccel.records import read_records
from docsaccel.report.check import EXIT_BUILD_FAILED
from docsaccel.report.commands import run_check, run_compare, run_history_append, run_report

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fresh_processes")]

GRACE = 1.0
# A hung build hits gallery_build's subprocess timeout instead of this bound.
SLACK = 60.0


@pytest.mark.parametrize("example", ["plot_h_thread.py", "plot_h_atexit.py"])
def test_the_build_ends_after_the_grace_and_fails(tmp_path, example) -> None:
    src = make_project(tmp_path, ["plot_quick.py", example])
    started = time.monotonic()
    built = build(src, env={"DOCSACCEL_INTERRUPT_GRACE": str(GRACE)})
    elapsed = time.monotonic() - started
    assert built.returncode == 2, built.output
    assert f"examples/{example}" in built.output
    assert "had not ended" in built.output
    assert elapsed < SLACK
    # The build itself finished: its report is complete.
    assert (built.outdir / "docsaccel" / "report.json").is_file()


@pytest.mark.parametrize(
    ("example", "args"),
    [("plot_h_thread.py", ()), ("plot_h_atexit.py", ()), ("plot_h_thread.py", ("-j", "2"))],
)
def test_what_holds_the_process_fails_the_gate_and_is_not_kept(tmp_path, example, args) -> None:
    # Not the last example: plot_quick.py runs after it, and its run is kept.
    src = make_project(tmp_path, [example, "plot_quick.py"], conf='docsaccel_cache = "../cache"\n')
    culprit = f"examples/{example}"
    for attempt in ("first", "second"):
        built = build(src, *args, env={"DOCSACCEL_INTERRUPT_GRACE": str(GRACE)})
        assert built.returncode == 2, (attempt, built.output)
        record = built.record(example)
        # It ran (the cache kept no entry of it, sphinx-gallery no md5), and failed again.
        assert record["cache"]["hit"] is False, (attempt, record)
        assert record["status"] == "failed", (attempt, record)
        assert "the build's process could not end" in record["error"]
        assert built.report["build"]["complete"] is True
        assert culprit in built.report["build"]["exit_blocked"]
        text, code = run_check([str(built.report_path)])
        assert code == EXIT_BUILD_FAILED, (attempt, text)
        assert culprit in text.splitlines()[0]
    # The example after it finished and passed: the second build restored it.
    assert built.record("plot_quick.py")["status"] == "cached"


@pytest.mark.parametrize("parallel", [1, 2])
@pytest.mark.parametrize("example", ["plot_h_thread.py", "plot_h_atexit.py"])
def test_every_view_of_a_build_whose_process_could_not_end_says_it_failed(
    tmp_path, example, parallel
) -> None:
    # parallel: sphinx-gallery's joblib workers run the examples; the build's process
    # waits for them as it ends, and what an example left holds its worker.
    conf = 'docsaccel_cache = "../cache"\ndocsaccel_report_page = "budget_report"\n'
    if parallel > 1:
        conf += f'sphinx_gallery_conf["parallel"] = {parallel}\n'
    src = make_project(tmp_path, [example, "plot_quick.py"], conf=conf)
    culprit = f"examples/{example}"
    built = build(src, env={"DOCSACCEL_INTERRUPT_GRACE": str(GRACE)}, quiet=False)
    assert built.returncode == 2, built.output
    why = built.report["build"]["exit_blocked"]
    assert culprit in why
    # The progress line, written as the example ended, says a status that depends on
    # the thread it left is provisional (exit handlers, which libraries register on
    # import, are not named); the exit bound's error names the example.
    line = next(x for x in built.output.splitlines() if f"] {culprit}: " in x)
    provisional = "unless what it left keeps the build's process from ending"
    if example == "plot_h_thread.py":
        assert f"{provisional} (thread running: never-stops)" in line, line
    quick = next(x for x in built.output.splitlines() if "] examples/plot_quick.py: " in x)
    assert provisional not in quick, quick
    assert f"had not ended {GRACE:g} s after the build: {culprit}: " in built.output
    # No worker is left behind, held by what the example left.
    for pid in map(int, re.findall(r"in worker process (\d+)", why)):
        assert _ends(pid), f"worker {pid} still runs"
    # The records: the file and the journal's last line of it.
    records_dir = layout.records_dir(built.outdir)
    assert read_records(records_dir)[culprit]["status"] == FAILED
    assert read_records(records_dir, files=False)[culprit]["status"] == FAILED
    assert built.record(example)["status"] == FAILED
    # The report page, its HTML and its source, gives the build's verdict.
    html = (built.outdir / "budget_report.html").read_text("utf-8")
    # Said once: by the example that held the process, not again by the build's reason.
    assert f"The build failed: 1 example failed: {culprit}" in html
    assert "All examples within budget" not in html
    assert "The build failed" in (src / "budget_report.rst").read_text("utf-8")
    # The cache's summary of the build: the run is failed, and not counted as stored.
    last = json.loads((tmp_path / "cache" / "last-build.json").read_text("utf-8"))
    assert last["examples"][culprit]["status"] == FAILED
    assert last["examples"]["examples/plot_quick.py"]["status"] == OK
    assert last["stored"] == 1
    # The report's views, the gate and the comparison with a passing build.
    report = str(built.report_path)
    for fmt in ("md", "html"):
        text, code = run_report(report, fmt=fmt)
        assert code == 0 and "The build failed" in text, (fmt, text)
    summary = json.loads(run_report(report, fmt="json")[0])
    assert summary["failed"] == [culprit]
    assert summary["sphinx_failed"] is None  # its record says it: not said twice
    text, code = run_check([report])
    assert code == EXIT_BUILD_FAILED, text
    base = _passing_copy(built.report, tmp_path / "base.json")
    text, _ = run_compare(str(base), report)
    assert text.startswith(f"The head build failed: {culprit} failed ("), text
    assert "so the build's process could not end" in text.splitlines()[0], text
    # A history records passing builds only: the failed build is refused, saying why.
    history = tmp_path / "history.jsonl"
    text, code = run_history_append(report, history)
    assert code == 2 and text.count("\n") == 1, text
    assert f"the build failed ({culprit} failed (" in text, text
    assert not history.exists()


def _ends(pid: int, within: float = 10.0) -> bool:
    """Whether process ``pid`` is gone (or a zombie) within ``within`` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.1)
    return False


def _passing_copy(report: dict, path) -> object:
    """``report`` as a build in which every example passed, written to ``path``."""
    build = {k: v for k, v in report["build"].items() if k != "exit_blocked"}
    examples = [{**r, "status": OK, "error": None} for r in report["examples"]]
    path.write_text(json.dumps({**report, "build": build, "examples": examples}), "utf-8")
    return path


def test_a_build_whose_examples_leave_nothing_ends_as_usual(tmp_path) -> None:
    src = make_project(tmp_path, ["plot_quick.py"])
    built = build(src, env={"DOCSACCEL_INTERRUPT_GRACE": str(GRACE)})
    assert built.returncode == 0, built.output
    assert "had not ended" not in built.output


def test_an_example_ignoring_sigterm_leaves_the_build_its_handler() -> None:
    script = (
        "import signal\n"
        "from docsaccel.gallery import process_end\n"
        "process_end._install_sigterm_handler()\n"
        "ours = signal.getsignal(signal.SIGTERM)\n"
        "mark = process_end.before_example()\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)  # what the example did\n"
        "process_end.after_example('examples/plot_deaf.py', mark)\n"
        "print(signal.getsignal(signal.SIGTERM) is ours)\n"
    )
    assert _python(script) == "True"


@pytest.mark.parametrize("before", ["SIG_DFL", "SIG_IGN", "handler"])
def test_a_forked_child_gets_the_sigterm_handler_the_build_replaced(before) -> None:
    # The at-fork hook puts it back through the signal module's C functions, which take
    # SIG_DFL and SIG_IGN as plain ints only (an enum member is refused).
    handler = "handler" if before == "handler" else f"signal.{before}"
    script = (
        "import os, signal\n"
        "from docsaccel.gallery import process_end\n"
        "def handler(signum, frame): pass\n"
        f"signal.signal(signal.SIGTERM, {handler})\n"
        "process_end.install()\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    now = signal.getsignal(signal.SIGTERM)\n"
        "    print(getattr(now, '__name__', repr(now)), flush=True)\n"
        "    os._exit(0)\n"
        "os.waitpid(pid, 0)\n"
    )
    shown = {"SIG_DFL": "<Handlers.SIG_DFL: 0>", "SIG_IGN": "<Handlers.SIG_IGN: 1>"}
    assert _python(script) == shown.get(before, before)


def _python(script: str) -> str:
    """What a fresh Python running ``script`` printed (it must succeed)."""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()
