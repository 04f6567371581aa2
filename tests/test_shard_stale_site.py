"""A sharded build into the folder of an earlier serial build never lets a gate read that
build's report, journals or lock as its own: while ``docsaccel shard-local`` runs, and
after it was interrupted, ``check``, ``compare`` and ``report`` on the site folder refuse
it, naming ``shard-local``.

Real runs: a serial ``sphinx-build``, then ``shard-local`` into the same folder, held on
an example until the test has read the folder and interrupted it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.gallery_build import build, child_env, make_project, run_cli
from helpers.processes import hold, kill_children, shard_projects, wait_until_a_shard_runs

from docsaccel import layout

pytestmark = pytest.mark.slow

#: What only the serial build's data names: the sharded build had run no example yet.
SERIAL_EXAMPLE = "examples/plot_quick.py"


def _gates(outdir: Path, base: Path) -> dict[str, subprocess.CompletedProcess[str]]:
    return {
        "check": run_cli("check", str(outdir)),
        "compare": run_cli("compare", str(base), str(outdir), "--allow-incomplete"),
        "report": run_cli("report", str(outdir), "--format", "md"),
    }


def _assert_refused(gates: dict[str, subprocess.CompletedProcess[str]], state: str) -> None:
    for name, done in gates.items():
        said = done.stdout + done.stderr
        assert done.returncode in (2, 3), f"{name}: rc {done.returncode}\n{said}"
        assert SERIAL_EXAMPLE not in said, f"{name} read the serial build's data:\n{said}"
        assert "SIGKILL" not in said, f"{name}:\n{said}"
        assert "shard-local" in said and state in said, f"{name}:\n{said}"
        assert "it measured no example" in said, f"{name}:\n{said}"


def test_gates_never_read_a_serial_build_while_shard_local_runs_or_after_ctrl_c(
    tmp_path,
) -> None:
    src = make_project(tmp_path, ["plot_quick.py", "plot_wait.py"])
    serial = build(src, env={"DOCSACCEL_FAST": "1"})
    assert serial.returncode == 0, serial.output
    assert layout.journals(layout.records_dir(serial.outdir))
    base = tmp_path / "good.json"
    shutil.copy(serial.report_path, base)

    hold(src)  # copied into each shard's copy of the project: plot_wait.py waits there
    process = subprocess.Popen(
        [sys.executable, "-m", "docsaccel.cli", "shard-local", "--docs", ".", "--shards", "2"],
        cwd=src,
        env=child_env({"DOCSACCEL_FAST": "1"}),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        wait_until_a_shard_runs(src, process)
        running = _gates(serial.outdir, base)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=300)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        for project in shard_projects(src):
            kill_children(project)

    assert process.returncode == 130, out + err
    _assert_refused(running, "has not finished")
    _assert_refused(_gates(serial.outdir, base), "interrupted")
    assert not layout.records_dir(serial.outdir).exists()
    assert not layout.lock_path(serial.outdir).exists()
