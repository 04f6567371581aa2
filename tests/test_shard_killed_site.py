"""The site folder's report of a ``docsaccel shard-local`` that has not finished tells a
run still going from one killed outright (``SIGKILL``, the out-of-memory killer: no
handler of its own was left to say so): ``check`` refuses both (exit 2), saying it is
running, then that it was killed before finishing.

Real runs: ``shard-local`` on a small project, held on an example until the test has
read the site folder and killed it.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

import pytest
from helpers.gallery_build import make_project, run_cli
from helpers.processes import (
    hold,
    kill_children,
    shard_projects,
    start_shard_local,
    wait_until_a_shard_runs,
)

pytestmark = pytest.mark.slow


def test_check_tells_a_running_shard_local_from_one_killed_outright(tmp_path: Path) -> None:
    src = make_project(tmp_path, ["plot_quick.py", "plot_wait.py"])
    outdir = src / "_build" / "html"
    hold(src)  # copied into each shard's copy of the project: plot_wait.py waits there
    process = start_shard_local(src, "--docs", ".", "--shards", "2")
    try:
        wait_until_a_shard_runs(src, process)
        running = run_cli("check", str(outdir))
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=300)
        killed = run_cli("check", str(outdir))
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        for project in shard_projects(src):
            kill_children(project)

    said = running.stdout + running.stderr
    assert running.returncode == 2, said
    assert f"docsaccel shard-local (process {process.pid})" in said, said
    assert "is running now" in said and "killed" not in said, said
    said = killed.stdout + killed.stderr
    assert killed.returncode == 2, said
    assert f"docsaccel shard-local (process {process.pid})" in said, said
    assert "ended before finishing: it was killed" in said, said
    assert "running now" not in said, said
