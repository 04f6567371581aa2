"""The example cache never mixes with the user's files: a cache folder left in the source
folder is no document of any later build, whatever that build's cache is, and a folder
of the user's is never taken as the cache (nor pruned). Real Sphinx builds in temporary
folders, as a newcomer walking the README lays them out: the cache in ``docs/``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers.gallery_build import build, child_env, make_project

pytestmark = pytest.mark.slow

CACHE_NAME = ".docsaccel-cache"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "docsaccel.cli", *args],
        capture_output=True,
        text=True,
        check=False,
        env=child_env(),
    )


def _published_from(outdir: Path, name: str) -> list[str]:
    """The files of the site whose path goes through a folder called ``name``."""
    return [p.relative_to(outdir).as_posix() for p in outdir.rglob("*") if name in p.parts]


@pytest.mark.parametrize("then", ["off", "elsewhere"])
def test_a_cache_left_in_the_sources_is_no_document(tmp_path: Path, then: str) -> None:
    """The cache in ``docs/`` filled by one build; the next build has the cache off (or
    another one): before, it read the kept pages as documents (duplicate labels, the
    entries published)."""
    src = make_project(tmp_path, ["plot_quick.py"])
    in_docs = src / CACHE_NAME
    filled = build(src, env={"DOCSACCEL_CACHE": str(in_docs)})
    assert filled.returncode == 0, filled.output
    assert (in_docs / "entries").is_dir()

    env = {"DOCSACCEL_CACHE": "0" if then == "off" else str(tmp_path / "other-cache")}
    again = build(src, "-W", env=env)

    assert again.returncode == 0, again.output
    assert "WARNING" not in again.output, again.output
    assert _published_from(again.outdir, CACHE_NAME) == []
    assert _published_from(again.outdir, "entries") == []
    # The cache left there is still one: a build using it again restores the example.
    restored = build(src, "-W", env={"DOCSACCEL_CACHE": str(in_docs)})
    assert restored.returncode == 0, restored.output
    assert restored.record("plot_quick.py")["status"] == "cached"


def test_a_folder_of_the_users_is_refused_as_the_cache(tmp_path: Path) -> None:
    """``docsaccel_cache = "_ext"`` named the folder of the user's extension code: the
    build would write its entries among those files, and pruning would delete there."""
    src = make_project(tmp_path, ["plot_quick.py"], conf='docsaccel_cache = "_ext"\n')
    ext = src / "_ext"
    ext.mkdir()
    (ext / "myext.py").write_text("def setup(app):\n    return {}\n", encoding="utf-8")

    refused = build(src)

    assert refused.returncode == 2, refused.output
    lines = [line for line in refused.output.splitlines() if line.strip()]
    assert len(lines) == 1, refused.output
    assert f"docsaccel_cache='_ext': {ext.resolve()} is not a docsaccel cache folder" in lines[0]
    assert "it holds myext.py" in lines[0]
    assert f"such as {src.resolve() / CACHE_NAME}" in lines[0]  # the project root: conf.py's
    assert refused.report["examples"] == []
    assert sorted(p.name for p in ext.iterdir()) == ["myext.py"]
    # Every command that deletes in the cache refuses it by the same rule.
    pruned = _cli("cache", "prune", "--docs", str(src), "--max-size", "0")
    assert pruned.returncode == 2, pruned.stdout + pruned.stderr
    assert "it holds myext.py" in pruned.stderr
    assert sorted(p.name for p in ext.iterdir()) == ["myext.py"]


def test_an_empty_folder_becomes_a_tagged_cache(tmp_path: Path) -> None:
    """An empty folder made for the cache is taken, and tagged as docsaccel's."""
    src = make_project(tmp_path, ["plot_quick.py"])
    cache = tmp_path / "cache"
    cache.mkdir()

    built = build(src, env={"DOCSACCEL_CACHE": str(cache)})

    assert built.returncode == 0, built.output
    assert "docsaccel" in (cache / "CACHEDIR.TAG").read_text("utf-8")
