"""The outputs sphinx-gallery generated in a gallery folder for an example deleted since
do not outlive it, whether the builds that generated them had the example cache on or
off: a later build publishes what a clean build of the same tree does. Real Sphinx
builds of a small gallery in temporary folders."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.clean_site import put
from helpers.gallery_build import build, make_project

pytestmark = pytest.mark.slow


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
