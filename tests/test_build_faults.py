"""Nothing a build finished is lost on a fault: an interrupted build (Ctrl-C, SIGTERM)
keeps in the example cache the examples that finished, a refused build leaves a report
that says so, and a build killed outright (SIGKILL) is read from its journal and named by
the next build. Real Sphinx builds in temporary folders."""

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
from helpers.gallery_build import (
    FIXTURES,
    build,
    child_env,
    make_project,
    run_cli,
    sphinx_command,
)
from helpers.processes import alive, hold, release, wait_until_running

from docsaccel import layout
from docsaccel.cache import manage

pytestmark = pytest.mark.slow

#: plot_wait.py runs last (file name order) and runs long enough to be interrupted.
ORDERED = 'sphinx_gallery_conf["within_subsection_order"] = "FileNameSortKey"\n'
FINISHED = ["plot_figure.py", "plot_quick.py"]


def start_build(src: Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        sphinx_command(src, src / "_build" / "html"),
        env=child_env(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def stop_build(src: Path, process: subprocess.Popen[str], signum: int) -> str:
    """Send ``signum`` to the build; once it ended, end the child its example started (a
    killed build had no chance to) and return its output."""
    try:
        process.send_signal(signum)
        process.wait(timeout=120)
    finally:
        for pid in (src / "examples" / "child_pids.txt").read_text().split():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGKILL)
    return process.communicate(timeout=120)[0]  # the child held the output pipe open


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_an_interrupted_build_keeps_the_examples_that_finished(tmp_path, signum) -> None:
    cache = tmp_path / "cache"
    env = {"DOCSACCEL_CACHE": str(cache)}
    src = make_project(tmp_path, [*FINISHED, "plot_wait.py"], conf=ORDERED)
    hold(src)
    process = start_build(src, env)
    wait_until_running(src, "plot_wait.py", process)

    output = stop_build(src, process, signum)

    assert process.returncode != 0, output
    assert "2 entries" in manage.stats(cache)[0], output
    for name in FINISHED:  # sphinx-gallery's note that the example is unchanged stays
        assert (src / "auto_examples" / f"{name}.md5").is_file()
    release(src)

    again = build(src, env=env)

    assert again.returncode == 0, again.output
    for name in FINISHED:
        record = again.record(name)
        assert record["status"] == "cached" and record["cache"]["hit"] is True, record
    assert again.record("plot_wait.py")["status"] == "ok"


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_the_report_of_an_interrupted_build_lists_what_the_cache_restored(tmp_path, signum) -> None:
    """The examples the cache restored before the interruption are ``cached`` in the
    partial report (and counted as restored), not "not executed"."""
    env = {"DOCSACCEL_CACHE": str(tmp_path / "cache")}
    src = make_project(tmp_path, FINISHED, conf=ORDERED)
    assert build(src, env=env).returncode == 0
    shutil.copy(FIXTURES / "examples" / "plot_wait.py", src / "examples" / "plot_wait.py")
    hold(src)
    process = start_build(src, env)
    wait_until_running(src, "plot_wait.py", process)

    output = stop_build(src, process, signum)

    assert process.returncode != 0, output
    outdir = src / "_build" / "html"
    report = json.loads(layout.report_path(outdir).read_text("utf-8"))
    assert report["build"]["complete"] is False
    statuses = {record["name"]: record["status"] for record in report["examples"]}
    assert statuses == {
        "plot_figure.py": "cached",
        "plot_quick.py": "cached",
        "plot_wait.py": "failed",
    }
    shown = run_cli("report", str(outdir))
    assert "2 restored" in shown.stdout, shown.stdout + shown.stderr


@pytest.mark.parametrize(
    ("conf", "named"),
    [
        ('docsaccel_on_overrun = "bogus"\n', "docsaccel_on_overrun"),  # at config-inited
        ('docsaccel_report_page = "index"\n', "docsaccel_report_page"),  # once planned
    ],
)
def test_a_refused_build_writes_a_report_saying_why(tmp_path, conf, named) -> None:
    src = make_project(tmp_path, ["plot_quick.py"])
    first = build(src)
    assert first.returncode == 0, first.output
    with (src / "conf.py").open("a", encoding="utf-8") as stream:
        stream.write(conf)

    refused = build(src)

    assert refused.returncode != 0
    report = json.loads(refused.report_path.read_text("utf-8"))
    assert report["build"]["complete"] is False
    assert report["examples"] == [], "the last build's examples are no part of this one"
    assert named in report["build"]["stopped_before_examples"]
    for args in (
        ["check", str(refused.report_path)],
        ["check", "--allow-incomplete", str(refused.report_path)],
    ):
        gate = run_cli(*args)
        assert gate.returncode == 2, gate.stdout + gate.stderr
        assert len(gate.stderr.strip().splitlines()) == 1, gate.stderr
        assert "stopped before its examples ran" in gate.stderr and named in gate.stderr


def test_a_killed_build_is_read_from_its_journal_and_named_by_the_next(tmp_path) -> None:
    src = make_project(tmp_path, ["plot_quick.py", "plot_wait.py"], conf=ORDERED)
    outdir = src / "_build" / "html"
    records = layout.records_dir(outdir)
    hold(src)
    process = start_build(src)
    wait_until_running(src, "plot_wait.py", process)
    stop_build(src, process, signal.SIGKILL)  # the out-of-memory killer, say
    assert not layout.report_path(outdir).exists()
    assert list(records.glob("progress-*.pipe")), "the killed build's pipe is the stale one"

    journal = layout.journals(records)[0]
    for given in (outdir, journal):
        gate = run_cli("check", str(given))
        assert gate.returncode == 2, gate.stdout + gate.stderr
        assert len(gate.stderr.strip().splitlines()) == 1, gate.stderr
        assert "examples/plot_wait.py was running" in gate.stderr
        assert "wrote no report" in gate.stderr
    shown = run_cli("report", "--format", "json", str(outdir))
    assert shown.returncode == 0, shown.stderr
    assert "examples/plot_wait.py" in shown.stdout and "examples/plot_quick.py" in shown.stdout
    release(src)

    again = build(src, quiet=False)

    assert again.returncode == 0, again.output
    said = [line for line in again.output.splitlines() if "was killed" in line]
    assert len(said) == 1 and "while running examples/plot_wait.py" in said[0], said
    assert not list(records.glob("progress-*.pipe"))
    after = build(src, quiet=False)  # the build that finished is no killed one
    assert "was killed" not in after.output


#: An example that writes what a process of another build would into this build's records
#: folder: a worker of a build killed outright, still running when the next build began,
#: writes its journal again when it finds it gone (its pid's name, its build's name).
GHOST = '''"""
Ghost
=====

Writes another build's journal into this build's records folder.
"""
from pathlib import Path

here = Path.cwd()  # sphinx-gallery runs an example in its folder
records = here.parent / "_build" / "html" / "docsaccel" / "records"
line = (here / "ghost.jsonl").read_text()
for name in ("journal-99999.jsonl", "journal-0123abcd-99999.jsonl"):
    with open(records / name, "a") as stream:
        stream.write(line)
'''


def test_records_another_build_writes_into_the_folder_are_not_this_builds(tmp_path) -> None:
    """A build's report holds its own records only: those another build's process writes
    into its records folder while it runs are left out, and the report names its id."""
    src = make_project(tmp_path, ["plot_quick.py"])
    first = build(src)
    assert first.returncode == 0, first.output
    first_id = first.report["build"].get("id")
    ghost = {
        **first.record("plot_quick.py"),
        "id": "examples/plot_gone.py",
        "name": "plot_gone.py",
        "status": "failed",
        "error": "recorded by another build",
    }
    (src / "examples" / "ghost.jsonl").write_text(json.dumps(ghost) + "\n", "utf-8")
    (src / "examples" / "plot_ghost.py").write_text(GHOST, "utf-8")

    built = build(src)

    assert built.returncode == 0, built.output
    report = built.report
    assert sorted(r["name"] for r in report["examples"]) == ["plot_ghost.py", "plot_quick.py"]
    build_id = report["build"]["id"]
    assert build_id and build_id != first_id
    records = layout.records_dir(built.outdir)
    assert (records / "journal-99999.jsonl").is_file(), "the ghost wrote its journal"
    assert [p.name.split("-")[1] for p in layout.journals(records)] == [build_id]
    # Read as a killed build's (no report): its own journals only.
    layout.report_path(built.outdir).unlink()
    shown = run_cli("report", "--format", "json", str(built.outdir))
    assert shown.returncode == 0, shown.stderr
    assert "plot_ghost" in shown.stdout and "plot_gone" not in shown.stdout, shown.stdout


#: An example that notes its process's pid, then runs long past any test's wait.
LONG = '''"""
Long
====

Notes its process, then sleeps.
"""

import os
import time

open(f"worker-{os.getpid()}.pid", "w").close()
time.sleep(600)
'''


def test_a_killed_parallel_build_leaves_no_worker_running(tmp_path) -> None:
    """The build's process killed outright cannot end its joblib workers: each ends with
    it (the kernel's parent-death signal), rather than running its example on."""
    src = make_project(tmp_path, [], conf='sphinx_gallery_conf["parallel"] = 2\n')
    for name in ("plot_long_a.py", "plot_long_b.py"):
        (src / "examples" / name).write_text(LONG, encoding="utf-8")
    process = start_build(src)
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while len(workers) < 2:
            assert process.poll() is None and time.monotonic() < deadline, "no example ran"
            time.sleep(0.1)
            workers = [int(p.stem.split("-")[1]) for p in (src / "examples").glob("worker-*")]
        assert process.pid not in workers  # the examples run in the workers
        process.kill()
        process.wait(timeout=120)
        deadline = time.monotonic() + 60  # a hang guard: they end at once
        while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [pid for pid in workers if alive(pid)], "a worker outlived the build"
    finally:
        process.kill()
        for pid in workers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        process.communicate(timeout=120)
    # The journals name the workers that ran the examples, read as the killed build's.
    journals = layout.journals(layout.records_dir(src / "_build" / "html"))
    assert sorted(int(p.stem.rsplit("-", 1)[1]) for p in journals) == sorted(workers)


#: Holds the example cache in its restoring of an entry while ``restore.hold`` lies in the
#: source folder: ``restoring.flag`` says it got there, ``go.flag`` lets it go on.
RESTORE_HOLD = """
import time
from pathlib import Path

import docsaccel.cache.cache_build as _cache_build

_here = Path(__file__).parent
_look_up_one = _cache_build._look_up_one


def _held_look_up_one(*args, **kwargs):
    if (_here / "restore.hold").exists():
        (_here / "restoring.flag").touch()
        deadline = time.monotonic() + 120
        while not (_here / "go.flag").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
    return _look_up_one(*args, **kwargs)


_cache_build._look_up_one = _held_look_up_one
"""


def test_ctrl_c_while_the_cache_restores_is_named_as_why_the_build_stopped(tmp_path) -> None:
    """Ctrl-C while the example cache restores its entries (before any example ran): the
    build log, the report and ``check`` name Ctrl-C, not only "the error is in the build
    log", which holds none."""
    env = {"DOCSACCEL_CACHE": str(tmp_path / "cache")}
    src = make_project(tmp_path, ["plot_quick.py"], conf=RESTORE_HOLD)
    assert build(src, env=env).returncode == 0
    (src / "restore.hold").touch()
    process = start_build(src, env)
    try:
        deadline = time.monotonic() + 120
        while not (src / "restoring.flag").exists() and process.poll() is None:
            assert time.monotonic() < deadline, "the cache never restored an entry"
            time.sleep(0.1)
        process.send_signal(signal.SIGINT)
        output = process.communicate(timeout=120)[0]
    finally:
        (src / "go.flag").touch()
        if process.poll() is None:
            process.kill()
            process.communicate()

    assert process.returncode != 0, output
    named = "interrupted by Ctrl-C (SIGINT)"
    errors = [line for line in output.splitlines() if "docsaccel: the build stopped" in line]
    assert errors and named in errors[0], output
    assert "the error is in the build log" not in output, output
    outdir = src / "_build" / "html"
    gate = run_cli("check", "--allow-incomplete", str(outdir))
    said = gate.stdout + gate.stderr
    assert gate.returncode == 2 and f"before its examples ran: it was {named}" in said, said
    assert "the error is in the build log" not in said and "KeyboardInterrupt" not in said, said
