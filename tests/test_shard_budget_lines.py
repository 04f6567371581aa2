"""A sharded build in fail mode whose shards each stop an example at its budget: ``check``
says each failure of the merged site once, as it does of the serial build's site."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from helpers.gallery_build import build, make_project, run_cli

pytestmark = pytest.mark.slow

ENV = {"DOCSACCEL_FAST": "1", "DOCSACCEL_ON_OVERRUN": "fail"}
# Two examples, each over its budget, so each shard of two stops one.
BUDGETS = '[examples]\n"plot_sleep.py" = "0.5s"\n"plot_sleep_again.py" = "0.5s"\n'


def check_lines(report: Path, cwd: Path) -> list[str]:
    """``check``'s lines, each without the report path a build line ends with (the
    serial and the merged site's reports lie in different folders) and with its
    measured times masked."""
    done = run_cli("check", str(report), cwd=cwd)
    assert done.returncode == 3, done.stdout + done.stderr
    lines = [line.replace(f" ({report})", "") for line in done.stdout.splitlines()]
    # The examples over budget are listed slowest first: the order of equal sleeps is chance.
    return sorted(re.sub(r"\b\d+(\.\d+)?s\b", "<time>", line) for line in lines)


def test_a_sharded_build_says_each_budget_failure_once_as_a_serial_build(tmp_path) -> None:
    src = make_project(tmp_path, ["plot_sleep.py"], budgets=BUDGETS)
    examples = src / "examples"
    shutil.copy(examples / "plot_sleep.py", examples / "plot_sleep_again.py")

    serial = build(src, "-W", env=ENV, outdir=tmp_path / "serial")
    assert serial.returncode != 0, serial.output
    done = run_cli("shard-local", "-W", "--docs", ".", "--shards", "2", "--out", "public",
                   env=ENV, cwd=src)  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr

    merged = check_lines(src / "public" / "docsaccel" / "report.json", src)
    assert merged == check_lines(serial.report_path, src)
    assert "shard-work" not in (src / "public" / "docsaccel" / "report.json").read_text("utf-8")
