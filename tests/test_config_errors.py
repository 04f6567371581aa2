"""Every configuration error of docsaccel's (a ``DOCSACCEL_*`` variable, a ``docsaccel_*``
value, the budget file) stops ``sphinx-build`` with one line naming the setting and the
value, and exit status 2: no crash report, no traceback (Sphinx 9 prints one for any
exception out of a build)."""

from __future__ import annotations

import pytest
from helpers.gallery_build import build, make_project

pytestmark = pytest.mark.slow

#: What Sphinx prints around an exception it did not expect, in any release.
CRASH_WORDS = ("Traceback", "Exception occurred", "crash", "Versions", "sphinx-err-")


@pytest.mark.parametrize(
    ("env", "conf", "budgets", "named"),
    [
        ({"DOCSACCEL_CACHE": "1"}, "", None, "DOCSACCEL_CACHE='1'"),
        ({"DOCSACCEL_CACHE_SPHINX": "maybe"}, "", None, "DOCSACCEL_CACHE_SPHINX='maybe'"),
        ({}, 'docsaccel_cache_granularity = "line"\n', None, "docsaccel_cache_granularity"),
        ({}, "", "[budgets\n", "budgets.toml"),
        ({}, "docsaccel_videos = None\n", None, "docsaccel_videos must be True or False"),
    ],
    ids=["cache-variable", "sphinx-state-variable", "conf-value", "budget-file", "conf-none"],
)
def test_a_configuration_error_is_one_line_and_status_2(tmp_path, env, conf, budgets, named):
    src = make_project(tmp_path, ["plot_quick.py"], conf=conf, budgets=budgets)
    if "DOCSACCEL_CACHE_SPHINX" in env:
        env = {**env, "DOCSACCEL_CACHE": str(tmp_path / "cache")}
    built = build(src, env=env)
    assert built.returncode == 2, built.output
    for word in CRASH_WORDS:
        assert word not in built.output, built.output
    lines = [line for line in built.output.splitlines() if line.strip()]
    assert len(lines) == 1 and named in lines[0], built.output
