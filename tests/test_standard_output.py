"""A command whose standard output cannot be written says so in one line, exit 2, never a
traceback, and never an exit code that reads as a verdict (1 is "over budget")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.report_factory import record, write_report

COMMANDS = [["check", "{report}"], ["report", "{report}"], ["doctor"]]


def run(args: list[str], **streams) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "docsaccel.cli", *args],
        stderr=subprocess.PIPE,
        text=True,
        check=False,
        timeout=120,
        **streams,
    )


@pytest.fixture
def report(tmp_path) -> Path:
    return write_report(tmp_path / "report.json", [record("plot_a.py", 1.0)])


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_a_full_standard_output_is_one_line_and_exit_2(report, command) -> None:
    args = [part.format(report=report) for part in command]
    with open("/dev/full", "w") as full:
        done = run(args, stdout=full)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert "cannot write to standard output" in done.stderr and "Traceback" not in done.stderr


def test_a_closed_standard_output_gives_the_verdict_without_a_traceback(report) -> None:
    """``docsaccel check report.json >&-``: what it would say goes nowhere, as ``print``'s
    does then; its exit code is still its verdict."""
    done = subprocess.run(
        [sys.executable, "-m", "docsaccel.cli", "check", str(report)],
        stderr=subprocess.PIPE,
        text=True,
        check=False,
        timeout=120,
        preexec_fn=lambda: os.close(1),
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
