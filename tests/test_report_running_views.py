"""Every view of a build running now says its running example is running: ``docsaccel
report`` of its output folder, in Markdown, HTML and JSON, writes that example
``running``, never ``did not finish`` nor killed, with no time. Real Sphinx builds in temporary
folders."""

from __future__ import annotations

import json
import subprocess
import time

import pytest
from helpers.gallery_build import child_env, make_project, run_cli, sphinx_command

from docsaccel.contract import DID_NOT_FINISH, KILLED_RUNNING, RUNNING

pytestmark = pytest.mark.slow

#: Runs until the test lets it end, so a view reads the build while it runs.
WAITER = '''"""
Waiter
======
"""
import time
from pathlib import Path

here = Path.cwd()
(here / "running.flag").touch()
deadline = time.monotonic() + 120
while not (here / "go.flag").exists() and time.monotonic() < deadline:
    time.sleep(0.05)
'''


def test_the_example_a_running_build_runs_reads_running_in_every_view(tmp_path) -> None:
    src = make_project(tmp_path, ["plot_quick.py"])
    (src / "examples" / "plot_wait.py").write_text(WAITER, encoding="utf-8")
    outdir = src / "_build" / "html"
    process = subprocess.Popen(
        sphinx_command(src, outdir),
        env=child_env({}),
        cwd=src / "examples",
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    flags = [src / "examples" / "running.flag", src / "running.flag"]
    try:
        deadline = time.monotonic() + 120
        while not any(flag.exists() for flag in flags) and process.poll() is None:
            assert time.monotonic() < deadline, "the example never started"
            time.sleep(0.1)
        shown = {
            fmt: run_cli("report", "--format", fmt, str(outdir)) for fmt in ("md", "html", "json")
        }
    finally:
        for flag in flags:
            flag.with_name("go.flag").touch()
        output = process.communicate(timeout=300)[0]
    assert process.returncode == 0, output
    for fmt, done in shown.items():
        assert done.returncode == 0, (fmt, done.stderr)
        text = done.stdout.replace("\\", "")
        assert f"running now (process {process.pid})" in text, (fmt, text)
        # The build itself did not finish (the pages' title says so): its example runs on.
        said_of_an_example = [
            f"| {DID_NOT_FINISH} |",  # Markdown's status cell
            f">{DID_NOT_FINISH}<",  # HTML's
            f'"{DID_NOT_FINISH}"',  # JSON's status, or its status_counts key
            f"1 {DID_NOT_FINISH}",  # a count
            f"example {DID_NOT_FINISH}",  # the verdict line
            f"{DID_NOT_FINISH} after",  # the chart's label
        ]
        assert not [said for said in said_of_an_example if said in text], (fmt, text)
        assert KILLED_RUNNING not in text, (fmt, text)
    markdown_row = next(
        line for line in shown["md"].stdout.splitlines() if "examples/plot\\_wait.py |" in line
    )
    assert f"| {RUNNING} | – |" in markdown_row, markdown_row
    assert f'<td class="status">{RUNNING}</td>' in shown["html"].stdout
    summary = json.loads(shown["json"].stdout)
    assert summary["status_counts"] == {RUNNING: 1, "ok": 1}, summary["status_counts"]
    (row,) = [row for row in summary["examples"] if row["id"] == "examples/plot_wait.py"]
    assert (row["status"], row["record_status"]) == (RUNNING, "failed"), row
