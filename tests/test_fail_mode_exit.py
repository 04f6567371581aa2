"""Fail mode ends ``sphinx-build`` as the docs say: the examples over budget as ``ERROR:``
lines, status 2, and nothing else (Sphinx 9 prints a crash report for an exception out of
a build), whether the example ran in this build or was restored from the example cache."""

from __future__ import annotations

import pytest
from helpers.gallery_build import build, make_project

pytestmark = pytest.mark.slow

#: What Sphinx prints around an exception it did not expect, in any release. (The
#: interrupted example's own traceback is sphinx-gallery's warning about it.)
CRASH_WORDS = ("Exception occurred", "Versions", "Loaded Extensions", "sphinx-err-", "issue")
SLEEP_BUDGET = '[examples]\n"plot_sleep.py" = "0.5s"\n'
FAIL = {"DOCSACCEL_ON_OVERRUN": "fail"}


def assert_no_crash_report(output: str) -> None:
    """The log ends with docsaccel's ``ERROR:`` line, not with Sphinx's crash report."""
    for word in CRASH_WORDS:
        assert word not in output, output
    last = output.strip().splitlines()[-1]
    assert last.startswith("ERROR: docsaccel: 1 example(s) ran out of their budget"), output


def test_an_example_over_its_budget_fails_the_build_with_error_lines(tmp_path) -> None:
    src = make_project(tmp_path, ["plot_sleep.py", "plot_quick.py"], budgets=SLEEP_BUDGET)

    built = build(src, env=FAIL)

    assert built.returncode == 2, built.output
    assert_no_crash_report(built.output)
    assert "examples/plot_sleep.py" in built.output
    assert built.record("plot_sleep.py")["status"] == "interrupted"


def test_an_example_restored_over_its_budget_fails_the_build_too(tmp_path) -> None:
    """Its run, in a warn-mode build, was over its budget: restored, it still fails the
    build in fail mode, as ``docsaccel check`` fails its report."""
    src = make_project(tmp_path, ["plot_sleep.py", "plot_quick.py"], budgets=SLEEP_BUDGET)
    cache = {"DOCSACCEL_CACHE": str(tmp_path / "cache")}
    warned = build(src, env=cache)
    assert warned.returncode == 0, warned.output
    assert warned.record("plot_sleep.py")["status"] == "over-budget"

    failed = build(src, env={**cache, **FAIL}, outdir=tmp_path / "again")

    sleep = failed.record("plot_sleep.py")
    assert sleep["status"] == "cached" and sleep["cache"]["hit"], failed.output
    assert "in its run the cache restored" in failed.output
    assert failed.returncode == 2, failed.output
    assert_no_crash_report(failed.output)
