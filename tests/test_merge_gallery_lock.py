"""A shard merge never writes into gallery folders a build of the project is generating:
it takes the gallery folders' locks the builds take before copying the shards' outputs
there, and is refused in one line naming the folder and the build's process, the folders
untouched; once the build ends, the merge succeeds.

Real runs: a serial ``sphinx-build`` held on an example while ``shard-merge`` (or
``shard-local``, whose shards run in copies of the project) merges into the project.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.gallery_build import child_env, make_project, run_cli, sphinx_command
from helpers.processes import (
    hold,
    kill_children,
    release,
    shard_projects,
    wait_until_a_shard_runs,
    wait_until_running,
)

from docsaccel.report.commands import run_check

pytestmark = pytest.mark.slow


def _files(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``folder``: its size and modification time."""
    return {
        path.relative_to(folder).as_posix(): (path.stat().st_size, path.stat().st_mtime_ns)
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def _held_serial_build(src: Path) -> subprocess.Popen[str]:
    """A serial ``sphinx-build`` of ``src``, once ``plot_wait.py`` runs (held there until
    :func:`release`)."""
    hold(src)
    process = subprocess.Popen(
        sphinx_command(src, src / "_build" / "html"),
        env=child_env({"DOCSACCEL_FAST": "1"}),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        wait_until_running(src, "plot_wait.py", process)
    except BaseException:
        _end(src, process)
        raise
    return process


def _end(src: Path, process: subprocess.Popen[str]) -> None:
    release(src)
    with contextlib.suppress(ProcessLookupError):
        process.kill()
    kill_children(src)


def _assert_refused_by(done: subprocess.CompletedProcess[str], command: str, src: Path, pid: int):
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"docsaccel {command}: error: "), lines[0]
    assert f"(process {pid}," in lines[0], lines[0]
    assert f"gallery folder {src / 'auto_examples'} " in lines[0], lines[0]


def test_shard_merge_beside_a_running_build_is_refused_and_copies_nothing(tmp_path) -> None:
    src = make_project(tmp_path, ["plot_quick.py", "plot_wait.py"])
    one_shard = ("--docs", str(src), "--root", str(src), "--shards", "1", "--index", "0")
    artifact = tmp_path / "artifact"
    shard = run_cli(
        "shard-build", *one_shard, "--artifact", str(artifact), env={"DOCSACCEL_FAST": "1"}
    )
    assert shard.returncode == 0, shard.stdout + shard.stderr
    site = tmp_path / "site"
    merge = ("shard-merge", str(artifact), "--docs", str(src), "--root", str(src))
    merge += ("--out", str(site))

    serial = _held_serial_build(src)
    try:
        before = _files(src / "auto_examples")
        refused = run_cli(*merge, env={"DOCSACCEL_FAST": "1"})
        after = _files(src / "auto_examples")
        release(src)
        out = serial.communicate(timeout=300)[0]
    finally:
        _end(src, serial)

    _assert_refused_by(refused, "shard-merge", src.resolve(), serial.pid)
    assert after == before
    assert not site.exists()
    assert serial.returncode == 0, out

    merged = run_cli(*merge, env={"DOCSACCEL_FAST": "1"})
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert "merged 2 executed examples" in merged.stdout, merged.stdout + merged.stderr
    check = run_cli("check", str(site))
    assert check.returncode == 0, check.stdout + check.stderr


def test_the_merge_of_shard_local_beside_a_running_build_is_refused(tmp_path) -> None:
    src = make_project(tmp_path, ["plot_quick.py", "plot_wait.py"])
    site = tmp_path / "site"
    serial = _held_serial_build(src)
    try:
        before = _files(src / "auto_examples")
        # Its shard's copy of the project holds plot_wait.py too, until released.
        local = subprocess.Popen(
            [
                *(sys.executable, "-m", "docsaccel.cli", "shard-local"),
                *("--docs", str(src), "--root", str(src), "--shards", "1"),
                *("--out", str(site)),
            ],
            env=child_env({"DOCSACCEL_FAST": "1"}),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            wait_until_a_shard_runs(src, local)
            for copy in shard_projects(src):
                release(copy)
            out, err = local.communicate(timeout=300)
        finally:
            with contextlib.suppress(ProcessLookupError):
                local.kill()
            for copy in shard_projects(src):
                kill_children(copy)
        after = _files(src / "auto_examples")
        release(src)
        serial.communicate(timeout=300)
    finally:
        _end(src, serial)

    refused = subprocess.CompletedProcess(local.args, local.returncode, out, err)
    _assert_refused_by(refused, "shard-local", src.resolve(), serial.pid)
    assert after == before
    assert serial.returncode == 0
    # The site's report says why the run ended, never that it was killed.
    text, code = run_check([str(site)], allow_incomplete=True)
    assert code != 0 and "killed" not in text, text
    assert "docsaccel shard-local failed: " in text and str(serial.pid) in text, text


#: Appended to conf.py: in the merge's build alone (the one given the merged records),
#: another process takes the gallery folder's lock, as a build starting in the moment
#: between the merge letting go and its build taking it would, and holds it.
TAKER = '''
import os, subprocess, sys, time
from pathlib import Path
if os.environ.get("DOCSACCEL_SHARD_RECORDS"):
    _here = Path(__file__).parent
    subprocess.Popen([sys.executable, "-c", """
import os, sys, time
from pathlib import Path
from docsaccel.gallery.lock import GalleryLock
GalleryLock(Path(sys.argv[1], "auto_examples")).acquire()
Path(sys.argv[1], "taker.pid").write_text(str(os.getpid()))
time.sleep(120)
""", str(_here)], start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _deadline = time.monotonic() + 60  # a guard against a taker that failed, not a timing
    while not (_here / "taker.pid").exists() and time.monotonic() < _deadline:
        time.sleep(0.05)
'''


def test_the_merge_build_refused_by_another_build_says_so_in_one_line(tmp_path) -> None:
    """The merge lets its build take the gallery folders; when another process takes one
    first, the refused build says why in one line, and the command adds none."""
    src = make_project(tmp_path, ["plot_quick.py"], conf=TAKER)
    one_shard = ("--docs", str(src), "--root", str(src), "--shards", "1", "--index", "0")
    artifact = tmp_path / "artifact"
    shard = run_cli(
        "shard-build", *one_shard, "--artifact", str(artifact), env={"DOCSACCEL_FAST": "1"}
    )
    assert shard.returncode == 0, shard.stdout + shard.stderr
    taker = src / "taker.pid"
    try:
        refused = run_cli(
            *("shard-merge", str(artifact), "--docs", str(src), "--root", str(src)),
            *("--out", str(tmp_path / "site")),
            env={"DOCSACCEL_FAST": "1"},
        )
    finally:
        if taker.exists():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(taker.read_text()), signal.SIGKILL)

    assert refused.returncode == 2, refused.stdout + refused.stderr
    lines = refused.stderr.splitlines()
    assert len(lines) == 1, refused.stderr
    expected = f"gallery folder {src.resolve() / 'auto_examples'} (process {taker.read_text()},"
    assert expected in lines[0], lines[0]
