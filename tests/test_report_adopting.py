"""A project built without docsaccel, then with it: sphinx-gallery keeps the examples it
built before (unchanged, by its ``.md5``), and docsaccel reuses them. Where no file kept
the time of the run that made them (no record of docsaccel's, a sphinx-gallery release
that writes no cost file), their records say the time is unknown, and no view reads it as
``0s``."""

from __future__ import annotations

import shutil

import pytest
from helpers.gallery_build import build, make_project, run_cli

from docsaccel.schema import TIME_UNKNOWN

pytestmark = pytest.mark.slow


def test_an_example_reused_from_a_build_that_kept_no_time_is_not_shown_as_0s(tmp_path):
    src = make_project(tmp_path, ["plot_quick.py", "plot_figure.py"], budgets='default = "30s"\n')
    first = build(src)
    assert first.returncode == 0, first.output
    # As a build without docsaccel leaves the project, with a sphinx-gallery that keeps
    # no time: its outputs and .md5 files, no output folder, no cost file.
    shutil.rmtree(first.outdir)
    for cost in (src / "auto_examples").glob("*.cost.json"):
        cost.unlink()

    again = build(src)

    assert again.returncode == 0, again.output
    for name in ("plot_quick.py", "plot_figure.py"):
        record = again.record(name)
        assert record["status"] == "cached" and record.get(TIME_UNKNOWN) is True, record
    shown = run_cli("report", "--format", "md", str(again.outdir))
    view = shown.stdout.replace("\\", "")
    assert shown.returncode == 0, shown.stderr
    assert "0s (earlier build)" not in view and "(0%)" not in view, view
    assert "no time recorded by earlier builds for 2 examples" in view, view
