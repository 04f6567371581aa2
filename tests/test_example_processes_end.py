"""However an example is stopped (SIGTERM to the build or to its process group, Ctrl-C,
its time budget in fail mode), every process it started is gone once the build ends:
workers a pool starts again while they are being ended, the pool's resource tracker, and
the children of its children. Real Sphinx builds of ``plot_h_pool.py``."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest
from helpers.gallery_build import child_env, make_project, sphinx_command
from helpers.processes import (
    assert_no_marked_process_survives,
    hold,
    kill_children,
    release,
    wait_until_running,
)

from docsaccel import layout
from docsaccel.contract import EXIT_BLOCKED_ERROR
from docsaccel.records import read_records

pytestmark = pytest.mark.slow

POOL = "plot_h_pool.py"


def _start(src: Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    # The output goes to a file: a process left behind would hold a pipe open.
    log = (src.parent / "build.log").open("w", encoding="utf-8")
    with log:
        return subprocess.Popen(
            sphinx_command(src, src / "_build" / "html"),
            env=child_env(env),
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )


def _output(src: Path) -> str:
    return (src.parent / "build.log").read_text(encoding="utf-8")


def _pool_error(src: Path) -> str:
    records = read_records(layout.records_dir(src / "_build" / "html"))
    return str(records[f"examples/{POOL}"].get("error"))


@pytest.mark.parametrize(
    ("signum", "group"),
    [(signal.SIGTERM, False), (signal.SIGTERM, True), (signal.SIGINT, False)],
    ids=["sigterm", "sigterm-group", "sigint"],
)
def test_a_stopped_build_leaves_no_process_an_example_started(tmp_path, signum, group) -> None:
    src = make_project(tmp_path, [POOL, "plot_quick.py"])
    hold(src)
    process = _start(src)
    try:
        wait_until_running(src, POOL, process)
        if group:  # as a cancelled CI job does
            os.killpg(process.pid, signum)
        else:
            process.send_signal(signum)
        process.wait(timeout=120)
        assert process.returncode != 0, _output(src)
        if signum == signal.SIGTERM:
            assert "terminated (SIGTERM)" in _pool_error(src), _output(src)
        assert_no_marked_process_survives(src)
    finally:
        kill_children(src)
        release(src)


def test_an_example_stopped_at_its_budget_leaves_no_process_it_started(tmp_path) -> None:
    src = make_project(tmp_path, [POOL, "plot_quick.py"], budgets='default = "3s"\n')
    hold(src)
    process = _start(src, {"DOCSACCEL_ON_OVERRUN": "fail"})
    try:
        process.wait(timeout=300)
        assert process.returncode != 0, _output(src)
        assert f"examples/{POOL} was interrupted after" in _output(src)
        assert_no_marked_process_survives(src)
    finally:
        kill_children(src)
        release(src)


def test_a_stopped_example_whose_exit_handler_hangs_says_its_budget_first(tmp_path) -> None:
    # The pool's exit handler waits for the workers docsaccel ended at the budget: the
    # build's process cannot end, and the example fails for it. Why it was stopped
    # leads its error, as for any stopped example; what held the process comes after.
    src = make_project(tmp_path, [POOL], budgets='default = "3s"\n')
    process = _start(src, {"DOCSACCEL_ON_OVERRUN": "fail"})
    try:
        process.wait(timeout=300)
        assert process.returncode != 0, _output(src)
        error = _pool_error(src)
        assert error.startswith(f"examples/{POOL} was interrupted after "), error
        assert "its time budget is 3s" in error, error
        held = error.index("an exit handler it registered did not return")
        assert held > error.index("its time budget is 3s"), error
        assert error.endswith(EXIT_BLOCKED_ERROR), error
        assert_no_marked_process_survives(src)
    finally:
        kill_children(src)
