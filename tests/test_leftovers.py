"""A thread or an exit handler an example leaves cannot keep a finished build from ending."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from helpers.gallery_build import build, make_project

from docsaccel.report.check import EXIT_BUILD_FAILED
from docsaccel.report.commands import run_check

pytestmark = pytest.mark.slow

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
