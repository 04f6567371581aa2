"""The outputs sphinx-gallery generated in a gallery folder for an example deleted since
do not outlive it, whether the builds that generated them had the example cache on or
off: a later build publishes what a clean build of the same tree does. Real Sphinx
builds of a small gallery in temporary folders."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.clean_site import clean_differences, put
from helpers.gallery_build import build, make_project
from helpers.incremental_build import needs_state

pytestmark = pytest.mark.slow


@needs_state
def test_an_uncached_build_between_cached_ones_does_not_bring_back_a_deleted_example(
    tmp_path: Path,
) -> None:
    """A build without the cache generated the page of an example added since the last
    cached build; that example deleted, the next cached build does not publish it."""
    cache = {"DOCSACCEL_CACHE": str(tmp_path / "cache")}
    src = make_project(tmp_path, [])
    put(src, "plot_a.py")
    assert build(src, env=cache).returncode == 0
    put(src, "plot_b.py")
    uncached = build(src)
    assert uncached.returncode == 0, uncached.output
    (src / "examples" / "plot_b.py").unlink()
    again = build(src, env=cache)
    assert again.returncode == 0, again.output
    assert clean_differences(src, tmp_path) == []
    index = (again.outdir / "auto_examples" / "index.html").read_text("utf-8")
    assert "plot_b" not in index


def test_a_build_without_the_cache_removes_a_deleted_examples_generated_files(
    tmp_path: Path,
) -> None:
    src = make_project(tmp_path, [])
    put(src, "plot_a.py")
    put(src, "plot_b.py")
    assert build(src).returncode == 0
    gallery = src / "auto_examples"
    assert (gallery / "plot_b.rst").is_file() and (gallery / "plot_b.py").is_file()
    (src / "examples" / "plot_b.py").unlink()
    again = build(src)
    assert again.returncode == 0, again.output
    assert not [path.name for path in gallery.rglob("*plot_b*")]
    assert (gallery / "plot_a.rst").is_file()
