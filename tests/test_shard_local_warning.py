"""A shard build of ``shard-local`` that fails on a warning (``-W``) says it in the
command's line, as the merge build's failure does: its log need not be opened."""

from __future__ import annotations

import pytest
from helpers.gallery_build import make_project, run_cli

pytestmark = pytest.mark.slow


def test_a_failed_shard_build_says_its_first_warning(tmp_path) -> None:
    src = make_project(tmp_path, ["plot_quick.py"])
    with (src / "index.rst").open("a", encoding="utf-8") as stream:
        stream.write("   missing\n")

    done = run_cli("shard-local", "-W", "--shards", "1", "--docs", str(src), "--root", str(src))

    assert done.returncode == 2, done.stdout + done.stderr
    said = [line for line in done.stderr.splitlines() if line.startswith("docsaccel ")]
    assert len(said) == 1, done.stderr
    assert "shard 0: sphinx-build of " in said[0]
    log = src / "_build" / "shard-work" / "0.log"
    _, _, first = said[0].partition(f"(log: {log}): ")
    assert "index.rst:4: WARNING: toctree contains reference to nonexisting document" in first


def test_a_failed_shard_build_says_its_first_error_not_an_earlier_warning(tmp_path) -> None:
    """A warning (a budget pattern that matches nothing) comes before the error the build
    failed on (an example raised): the line names the error, in full, not the warning."""
    budgets = 'default = "1m"\n[examples]\n"plot_nothing.py" = "1m"\n'
    src = make_project(tmp_path, ["plot_crash.py"], budgets=budgets)

    done = run_cli("shard-local", "--shards", "1", "--docs", str(src), "--root", str(src))

    assert done.returncode == 2, done.stdout + done.stderr
    said = [line for line in done.stderr.splitlines() if line.startswith("docsaccel ")]
    assert len(said) == 1, done.stderr
    log = src / "_build" / "shard-work" / "0.log"
    assert "pattern 'plot_nothing.py' matches no example" in log.read_text("utf-8")
    _, _, first = said[0].partition(f"(log: {log}): ")
    assert first.startswith("ERROR: sphinx-gallery: 1 example failed: examples/plot_crash.py")
    assert "WARNING" not in first, first
