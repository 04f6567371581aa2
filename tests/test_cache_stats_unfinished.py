"""``docsaccel cache stats`` tells the last build, also when it did not finish: a build
whose new example was stopped hard after its budget (fail mode ends the build's process)
stored nothing, so before, ``stats`` showed the previous build's hits as the last
build's. Real Sphinx builds in temporary folders."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.gallery_build import FIXTURES, build, child_env, make_project
from helpers.processes import kill_children

pytestmark = pytest.mark.slow

FAIL_MODE = {"DOCSACCEL_ON_OVERRUN": "fail", "DOCSACCEL_INTERRUPT_GRACE": "1"}


def _stats(cache: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "docsaccel.cli", "cache", "stats", "--cache", str(cache)],
        capture_output=True,
        text=True,
        check=False,
        env=child_env(),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_stats_are_of_a_build_stopped_hard(tmp_path: Path) -> None:
    src = make_project(tmp_path, ["plot_quick.py"], budgets='default = "3s"\n')
    cache = tmp_path / "cache"
    env = {"DOCSACCEL_CACHE": str(cache)}
    first = build(src, env=env)
    assert first.returncode == 0, first.output
    assert "): 0 hits, 1 miss" in _stats(cache)

    shutil.copy(FIXTURES / "examples" / "plot_h_swallow.py", src / "examples")
    try:
        stopped = build(src, env={**env, **FAIL_MODE})
    finally:
        kill_children(src)
    assert stopped.returncode != 0, stopped.output
    assert stopped.report["build"]["complete"] is False

    said = _stats(cache)
    assert "last build that wrote the cache (did not finish; started " in said, said
    assert "): 1 hit, 1 miss" in said, said
    # The next build that finishes says so plainly.
    (src / "examples" / "plot_h_swallow.py").unlink()
    again = build(src, env=env)
    assert again.returncode == 0, again.output
    assert "): 1 hit, 0 misses" in _stats(cache)
