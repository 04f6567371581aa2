"""Nothing a build finished is lost on a fault: an interrupted build (Ctrl-C, SIGTERM)
keeps in the example cache the examples that finished, a refused build leaves a report
that says so, and a build killed outright (SIGKILL) is read from its journal and named by
the next build. Real Sphinx builds in temporary folders."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest
from helpers.gallery_build import build, child_env, make_project, sphinx_command

from docsaccel import layout
from docsaccel.cache import manage
from docsaccel.records import read_records

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


def wait_until_running(src: Path, name: str, process: subprocess.Popen[str]) -> None:
    """Wait until ``name`` has started (journalled) and started its child process."""
    records = layout.records_dir(src / "_build" / "html")
    end = time.monotonic() + 120
    while time.monotonic() < end and process.poll() is None:
        started = f"examples/{name}" in read_records(records)
        if started and (src / "examples" / "child_pids.txt").is_file():
            return
        time.sleep(0.1)
    raise AssertionError(f"{name} never started: {process.communicate()[0]}")


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_build_keeps_the_examples_that_finished(tmp_path, signum) -> None:
    cache = tmp_path / "cache"
    env = {"DOCSACCEL_CACHE": str(cache)}
    src = make_project(tmp_path, [*FINISHED, "plot_wait.py"], conf=ORDERED)
    process = start_build(src, env)
    wait_until_running(src, "plot_wait.py", process)

    process.send_signal(signum)
    output = process.communicate(timeout=120)[0]

    assert process.returncode != 0, output
    assert "2 entries" in manage.stats(cache)[0], output
    for name in FINISHED:  # sphinx-gallery's note that the example is unchanged stays
        assert (src / "auto_examples" / f"{name}.md5").is_file()

    again = build(src, env=env)

    assert again.returncode == 0, again.output
    for name in FINISHED:
        record = again.record(name)
        assert record["status"] == "cached" and record["cache"]["hit"] is True, record
    assert again.record("plot_wait.py")["status"] == "ok"
