"""sphinx-gallery's ``image_srcset`` in real Sphinx builds of a small gallery: a figure is
saved once per resolution (``sphx_glr_<stem>_001.png`` and ``sphx_glr_<stem>_001_2_00x.png``),
and each is an output of its example, restored by the example cache as a clean build makes it
and removed with the example's other outputs once its source is gone."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers.clean_site import clean_differences
from helpers.gallery_build import build, make_project

from docsaccel import sg_compat

SRCSET = 'sphinx_gallery_conf["image_srcset"] = ["2x"]\n'


@pytest.mark.slow
def test_a_restored_example_publishes_its_high_resolution_images(tmp_path: Path) -> None:
    cache = {"DOCSACCEL_CACHE": str(tmp_path / "cache")}
    src = make_project(tmp_path, ["plot_figure.py"], conf=SRCSET)
    first = build(src, env=cache)
    assert first.returncode == 0, first.output
    high = src / "auto_examples" / "images" / "sphx_glr_plot_figure_001_2_00x.png"
    assert high.is_file()
    # A fresh CI checkout: no gallery folder, no site, only the cache.
    shutil.rmtree(src / "auto_examples")
    shutil.rmtree(src / "_build")
    again = build(src, env=cache)
    assert again.returncode == 0, again.output
    assert again.record("plot_figure.py")["status"] == "cached"
    assert high.is_file()
    assert clean_differences(src, tmp_path) == []


@pytest.mark.slow
def test_a_deleted_example_leaves_none_of_its_high_resolution_images(tmp_path: Path) -> None:
    src = make_project(tmp_path, ["plot_quick.py", "plot_figure.py"], conf=SRCSET)
    assert build(src).returncode == 0
    images = src / "auto_examples" / "images"
    assert (images / "sphx_glr_plot_figure_001_2_00x.png").is_file()
    (src / "examples" / "plot_figure.py").unlink()
    again = build(src)
    assert again.returncode == 0, again.output
    assert not [path.name for path in (src / "auto_examples").rglob("*plot_figure*")]


def test_each_example_owns_exactly_its_own_high_resolution_images(tmp_path: Path) -> None:
    """Of ``plot_x`` and ``plot_x_100``, whose names prefix each other, each example's
    outputs are its own figures at every resolution, never the other's."""
    images = tmp_path / "images"
    images.mkdir()
    names = {
        "plot_x": ["sphx_glr_plot_x_001.png", "sphx_glr_plot_x_001_2_00x.png"],
        "plot_x_100": ["sphx_glr_plot_x_100_001.png", "sphx_glr_plot_x_100_001_1_50x.svg"],
    }
    for name in (name for listed in names.values() for name in listed):
        (images / name).write_bytes(b"")
    for stem, expected in names.items():
        found = sg_compat.output_files(tmp_path / f"{stem}.py")
        assert [path.name for path in found] == sorted(expected)
