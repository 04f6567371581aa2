"""A sharded build into the folder of an earlier serial build never lets a gate read that
build's report, journals or lock as its own: while ``docsaccel shard-local`` runs, and
after it was interrupted, ``check``, ``compare`` and ``report`` on the site folder refuse
it, naming ``shard-local``.

Real runs: a serial ``sphinx-build``, then ``shard-local`` into the same folder, held on
an example until the test has read the folder and interrupted it; and ``shard-local``
interrupted while its merge copies the shards' outputs, held there by a file it reads
from a terminal.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from helpers.gallery_build import build, make_project, run_cli
from helpers.processes import (
    hold,
    kill_children,
    release,
    shard_projects,
    start_shard_local,
    wait_until_a_shard_runs,
)

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
    process = start_shard_local(src, "--docs", ".", "--shards", "2")
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


def _manifest_of(src: Path, example: str, process: subprocess.Popen[str]) -> tuple[Path, dict]:
    """The artifact folder and manifest of the shard of ``process`` that executed
    ``example``, once that shard has kept it (a guard, not a timing)."""
    artifacts = layout.shard_dir(src, "shard-artifacts")
    for _ in range(3000):
        for path in sorted(artifacts.glob("*/manifest.json")):
            manifest = json.loads(path.read_text("utf-8"))
            if example in manifest["executed"]:
                return path.parent, manifest
        assert process.poll() is None, process.communicate()
        time.sleep(0.2)
    raise AssertionError(f"no shard kept {example}")


def test_ctrl_c_while_the_merge_copies_the_shards_outputs_says_interrupted(tmp_path) -> None:
    src = make_project(tmp_path, ["plot_quick.py", "plot_wait.py"])
    outdir = src / "_build" / "html"
    # A terminal no one writes to: a file of the shards' outputs read from it holds the
    # merge in its copy until the test interrupts it.
    terminal, terminal_end = os.openpty()
    hold(src)  # copied into each shard's copy of the project: plot_wait.py waits there
    process = start_shard_local(src, "--docs", ".", "--shards", "2")
    try:
        wait_until_a_shard_runs(src, process)
        artifact, manifest = _manifest_of(src, SERIAL_EXAMPLE, process)
        relative = manifest["executed"][SERIAL_EXAMPLE][0]
        kept = artifact / "files" / relative
        kept.unlink()
        kept.symlink_to(os.ttyname(terminal_end))
        for project in shard_projects(src):
            release(project)
        while not (src / relative).exists():  # the merge opened its copy of the file
            assert process.poll() is None, process.communicate()
            time.sleep(0.1)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=300)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        for project in shard_projects(src):
            kill_children(project)
        os.close(terminal)
        os.close(terminal_end)

    assert process.returncode == 130, out + err
    check = run_cli("check", str(outdir))
    said = check.stdout + check.stderr
    assert check.returncode == 2, said
    assert "docsaccel shard-local ended before its shards were merged" in said, said
    assert "interrupted by Ctrl-C (SIGINT)" in said, said
    assert "killed" not in said and "has not finished" not in said, said
