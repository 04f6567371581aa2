"""A thread or an exit handler an example leaves cannot keep a finished build from ending."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from helpers.gallery_build import build, make_project

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
