"""Two sharded builds of one project never run at once: they share its shard work folder
(``<docs>/_build/shard-work``), whose copies of the project each would replace under the
other. The second ``shard-local`` is refused up front in one line naming the first's
process, as a second ``sphinx-build`` into one output folder is, and the first finishes
as if alone; the lock a dead process left is taken over. ``shard-build`` holds the same
lock: its shard's folder in there and its artifact folder are replaced whole too.

Real runs: ``shard-local`` or ``shard-build`` held on an example while a second one starts.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.gallery_build import child_env, make_project, run_cli
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


def test_a_second_shard_local_is_refused_naming_the_first_which_finishes(tmp_path) -> None:
    src = make_project(tmp_path, ["plot_quick.py", "plot_wait.py"])
    # The lock a killed run left: its process is gone, so the first run takes it over.
    stale = layout.lock_path(layout.shard_dir(src, "shard-work"))
    stale.parent.mkdir(parents=True)
    stale.write_text("999999999\n", encoding="ascii")
    first_site, second_site = tmp_path / "L1", tmp_path / "L2"

    hold(src)  # copied into each shard's copy of the project: plot_wait.py waits there
    first = start_shard_local(src, "--docs", ".", "--shards", "2", "--out", str(first_site))
    try:
        wait_until_a_shard_runs(src, first)
        second = run_cli(
            *("shard-local", "--docs", str(src), "--root", str(src), "--shards", "2"),
            *("--out", str(second_site)),
            env={"DOCSACCEL_FAST": "1"},
        )
        for copy in shard_projects(src):
            release(copy)
        out, err = first.communicate(timeout=300)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(first.pid, signal.SIGKILL)
        for copy in shard_projects(src):
            kill_children(copy)

    assert second.returncode == 2, second.stdout + second.stderr
    lines = second.stderr.splitlines()
    assert len(lines) == 1, second.stderr
    assert lines[0].startswith("docsaccel shard-local: error: "), lines[0]
    assert f"(process {first.pid})" in lines[0], lines[0]
    assert str(layout.shard_dir(src, "shard-work").resolve()) in lines[0], lines[0]
    assert not second_site.exists()

    assert first.returncode == 0, out + err
    assert "merged 2 executed examples" in out, out + err
    assert (first_site / "index.html").is_file()
    check = run_cli("check", str(first_site))
    assert check.returncode == 0, check.stdout + check.stderr


def _held(src: Path, *command: str) -> subprocess.Popen[str]:
    """``docsaccel COMMAND`` in ``src``, once ``plot_wait.py`` runs in one of its shards
    (held there until :func:`release`)."""
    hold(src)  # copied into each shard's copy of the project: plot_wait.py waits there
    process = subprocess.Popen(
        [sys.executable, "-m", "docsaccel.cli", *command],
        cwd=src,
        env=child_env({"DOCSACCEL_FAST": "1"}),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        wait_until_a_shard_runs(src, process)
    except BaseException:
        _end(src, process)
        raise
    release(src)  # a second command's copies are not held: it ends, refused or not
    return process


def _end(src: Path, process: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    for copy in shard_projects(src):
        kill_children(copy)


def _finish(src: Path, process: subprocess.Popen[str]) -> tuple[str, str]:
    for copy in shard_projects(src):
        release(copy)
    return process.communicate(timeout=300)


def _assert_refused_naming(
    done: subprocess.CompletedProcess[str], command: str, src: Path, pid: int
) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"docsaccel {command}: error: "), lines[0]
    assert f"(process {pid})" in lines[0], lines[0]
    assert str(layout.shard_dir(src, "shard-work").resolve()) in lines[0], lines[0]


def test_a_shard_build_beside_a_running_shard_build_or_shard_local_is_refused(tmp_path) -> None:
    src = make_project(tmp_path, ["plot_quick.py", "plot_wait.py"])
    artifact = layout.shard_dir(src, "shard")
    one_shard = ("--docs", str(src), "--root", str(src), "--shards", "1", "--index", "0")

    first = _held(src, "shard-build", "--docs", ".", "--shards", "1", "--index", "0")
    try:
        second = run_cli("shard-build", *one_shard, env={"DOCSACCEL_FAST": "1"})
        local = run_cli(
            *("shard-local", "--docs", str(src), "--root", str(src), "--shards", "2"),
            *("--out", str(tmp_path / "site")),
            env={"DOCSACCEL_FAST": "1"},
        )
        out, err = _finish(src, first)
    finally:
        _end(src, first)

    _assert_refused_naming(second, "shard-build", src, first.pid)
    _assert_refused_naming(local, "shard-local", src, first.pid)
    assert not (tmp_path / "site").exists()
    assert first.returncode == 0, out + err
    assert "shard 0: executed 2" in out, out + err
    manifest = json.loads((artifact / "manifest.json").read_text("utf-8"))
    assert sorted(manifest["executed"]) == ["examples/plot_quick.py", "examples/plot_wait.py"]

    # shard-build while shard-local runs: the shard-local's shards and site are its own.
    # The ended shard-build's copy goes first: its example's pids would pass for the new run's.
    shutil.rmtree(layout.shard_dir(src, "shard-work"))
    site = tmp_path / "L"
    first = _held(src, "shard-local", "--docs", ".", "--shards", "2", "--out", str(site))
    try:
        second = run_cli("shard-build", *one_shard, env={"DOCSACCEL_FAST": "1"})
        out, err = _finish(src, first)
    finally:
        _end(src, first)

    _assert_refused_naming(second, "shard-build", src, first.pid)
    assert (artifact / "manifest.json").is_file()  # the earlier shard-build's, untouched
    assert first.returncode == 0, out + err
    assert "merged 2 executed examples" in out, out + err
    check = run_cli("check", str(site))
    assert check.returncode == 0, check.stdout + check.stderr
