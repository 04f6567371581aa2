"""A file the user put in the site folder (a ``CNAME``) outlives a sharded build into it.

Serial builds with the cache on, the file added between them, then ``shard-local``, or
``shard-build`` and ``shard-merge`` as CI runs them: the merge build keeps its doctrees
out of the site, where the serial builds' record is not, and still keeps the file. The
site is otherwise what a clean build publishes.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers.clean_site import clean_differences
from helpers.gallery_build import build, child_env, make_project

pytestmark = pytest.mark.slow

EXAMPLES = ["plot_quick.py", "plot_figure.py"]
CONF = 'docsaccel_cache = "../.docsaccel-cache"\n'
USER_TEXT = "example.org\n"


def _docsaccel(src: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "docsaccel.cli", *args, "--docs", "."],
        cwd=src,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _serial_builds_around_a_user_file(tmp_path: Path) -> tuple[Path, Path]:
    """The project (its cache its own, out of the clean build's way) built twice, the
    user's ``CNAME`` added to its site between the builds."""
    src = make_project(tmp_path / "work", EXAMPLES, conf=CONF)
    first = build(src)
    assert first.returncode == 0, first.output
    user_file = first.outdir / "CNAME"
    user_file.write_text(USER_TEXT)
    again = build(src)
    assert again.returncode == 0, again.output
    assert user_file.read_text() == USER_TEXT, again.output
    return src, user_file


def test_shard_local_keeps_the_users_file_in_the_site(tmp_path) -> None:
    src, user_file = _serial_builds_around_a_user_file(tmp_path)
    done = _docsaccel(src, "shard-local", "--shards", "2")
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    assert user_file.read_text() == USER_TEXT, said
    user_file.unlink()
    assert clean_differences(src, tmp_path) == []


def test_shard_merge_keeps_the_users_file_in_the_site(tmp_path) -> None:
    src, user_file = _serial_builds_around_a_user_file(tmp_path)
    artifacts = src.parent / "shards"
    for index in range(2):
        done = _docsaccel(
            src, "shard-build", "--shards", "2", "--index", str(index),
            "--artifact", str(artifacts / f"docs-shard-{index}"),
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
    done = _docsaccel(src, "shard-merge", str(artifacts))
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    assert user_file.read_text() == USER_TEXT, said
    user_file.unlink()
    assert clean_differences(src, tmp_path) == []
