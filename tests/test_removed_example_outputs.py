"""The outputs sphinx-gallery generated in a gallery folder for an example deleted since
do not outlive it, whether the builds that generated them had the example cache on or
off: a later build publishes what a clean build of the same tree does. Real Sphinx
builds of a small gallery in temporary folders."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers.clean_site import clean_differences, example, put
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


def test_a_generated_page_no_record_names_goes_when_its_source_is_gone(tmp_path: Path) -> None:
    """The records of the builds before need not name every example whose page is in the
    gallery folder (a killed build's journal names only the examples it started; an
    output folder deleted takes them all): a page sphinx-gallery generated whose source
    is gone goes all the same, in a sub-gallery too, where a page the user wrote stays."""
    src = make_project(tmp_path, [])
    put(src, "plot_a.py")
    put(src, "plot_b.py")
    sub = src / "examples" / "sub"
    sub.mkdir()
    (sub / "README.txt").write_text("Sub\n===\n", encoding="utf-8")
    (sub / "plot_c.py").write_text(example("plot_c.py"), encoding="utf-8")
    assert build(src).returncode == 0
    gallery = src / "auto_examples"
    # What the user had: the example's page, zip and checksum, and no record of them.
    for name, folder in (("plot_b", gallery), ("plot_c", gallery / "sub")):
        assert (folder / f"{name}.rst").is_file() and (folder / f"{name}.zip").is_file()
        (src / "examples" / folder.relative_to(gallery) / f"{name}.py").unlink()
        (folder / f"{name}.py").unlink()
        (folder / f"{name}.ipynb").unlink()
    shutil.rmtree(src / "_build")
    again = build(src, "-W")
    assert again.returncode == 0, again.output
    assert not [path.name for path in gallery.rglob("*plot_[bc]*")]
    assert clean_differences(src, tmp_path) == []
    # A page the user wrote in a gallery folder has no generated header: it stays.
    notes = gallery / "plot_notes.rst"
    notes.write_text(":orphan:\n\nNotes\n=====\n\nWritten by hand.\n", encoding="utf-8")
    third = build(src, "-W")
    assert third.returncode == 0, third.output
    assert notes.is_file() and (third.outdir / "auto_examples" / "plot_notes.html").is_file()
    assert (gallery / "index.rst").is_file() and (gallery / "sub" / "index.rst").is_file()


def test_the_last_example_of_a_sub_gallery_deleted_leaves_no_times_entry(tmp_path: Path) -> None:
    """sphinx-gallery rewrites a folder's execution times page only when some example of
    it ran; its last example deleted, the page no longer names the example's page, which
    no build generates any more (read from a fresh output folder, a reference to no
    label)."""
    src = make_project(tmp_path, [])
    put(src, "plot_a.py")
    sub = src / "examples" / "sub"
    sub.mkdir()
    (sub / "README.txt").write_text("Sub\n===\n", encoding="utf-8")
    (sub / "plot_c.py").write_text(example("plot_c.py"), encoding="utf-8")
    assert build(src).returncode == 0
    times = src / "auto_examples" / "sub" / "sg_execution_times.rst"
    assert "plot_c" in times.read_text("utf-8")
    (sub / "plot_c.py").unlink()
    again = build(src, "-W")
    assert again.returncode == 0, again.output
    assert "plot_c" not in times.read_text("utf-8")


def test_a_build_without_the_cache_removes_the_pages_of_a_deleted_example(
    tmp_path: Path,
) -> None:
    """Sphinx never deletes the page of a document removed since it wrote it: a rebuild
    in the same folders leaves no page (nor copied source) of the deleted example, as a
    clean build of the same tree has none, and keeps a file the user put there."""
    src = make_project(tmp_path, [])
    put(src, "plot_a.py")
    put(src, "plot_b.py")
    first = build(src)
    assert first.returncode == 0, first.output
    page = first.outdir / "auto_examples" / "plot_b.html"
    copied = first.outdir / "_sources" / "auto_examples" / "plot_b.rst.txt"
    assert page.is_file() and copied.is_file()
    mine = first.outdir / "auto_examples" / "plot_b.notes.txt"
    mine.write_text("the user's\n", encoding="utf-8")
    (src / "examples" / "plot_b.py").unlink()
    again = build(src)
    assert again.returncode == 0, again.output
    assert not page.exists() and not copied.exists()
    assert mine.is_file() and (again.outdir / "auto_examples" / "plot_a.html").is_file()


def test_an_example_now_ignored_leaves_its_outputs_as_a_deleted_one_does(tmp_path: Path) -> None:
    """An example whose source stays but that sphinx-gallery's ``ignore_pattern`` now
    matches is built no more: its generated page, copy and outputs leave the gallery
    folder, and its page the HTML folder, as a clean build of the same tree has none."""
    src = make_project(tmp_path, [])
    put(src, "plot_a.py")
    put(src, "plot_b.py")
    assert build(src).returncode == 0
    gallery = src / "auto_examples"
    assert (gallery / "plot_b.rst").is_file() and (gallery / "plot_b.zip").is_file()
    with (src / "conf.py").open("a", encoding="utf-8") as stream:
        stream.write('sphinx_gallery_conf["ignore_pattern"] = r"plot_b"\n')
    again = build(src, "-W")
    assert again.returncode == 0, again.output
    assert not [path.name for path in gallery.rglob("*plot_b*")]
    assert (src / "examples" / "plot_b.py").is_file() and (gallery / "plot_a.rst").is_file()
    html = again.outdir / "auto_examples"
    assert not (html / "plot_b.html").exists() and (html / "plot_a.html").is_file()
