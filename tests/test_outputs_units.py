"""An example's outputs: what its page names, what its run wrote (no build)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from docsaccel import sg_compat
from docsaccel.outputs import (
    OutputWatch,
    collect,
    file_clock,
    folder_status,
    missing_references,
    page_references,
)


def _page(tmp_path: Path, text: str) -> tuple[Path, Path]:
    docs = tmp_path / "docs"
    folder = docs / "auto_examples"
    (folder / "images").mkdir(parents=True)
    (folder / "plot_a.py").write_text("", "utf-8")
    page = sg_compat.page_file(folder / "plot_a.py")
    page.write_text(text, "utf-8")
    return docs, page


def test_the_page_names_images_variants_and_downloads(tmp_path: Path) -> None:
    docs, page = _page(
        tmp_path,
        ".. image-sg:: /auto_examples/images/a.png\n"
        "   :alt: a\n"
        "   :srcset: /auto_examples/images/a.png, /auto_examples/images/a_2x.png 2.00x\n\n"
        ".. docsaccel-video:: /auto_examples/images/a b.mp4\n"
        "   :poster: /auto_examples/images/a.png\n\n"
        ".. raw:: html\n   :file: ../_static/x.html\n\n"
        "   <img src='/auto_examples/images/not-a-reference.png'>\n\n"
        ":download:`Download Python source code: plot_a.py <plot_a.py>`\n"
        ":download:`https://example.org/x.zip`\n",
    )
    (docs / "auto_examples" / "images" / "a.png").write_bytes(b"png")
    names = [p.relative_to(docs).as_posix() for p in page_references(page, docs)]
    assert names == [
        "auto_examples/images/a.png",
        "auto_examples/images/a_2x.png",
        "auto_examples/images/a b.mp4",
        "_static/x.html",
        "auto_examples/plot_a.py",
    ]
    assert missing_references(page, docs) == [
        "auto_examples/images/a_2x.png",
        "auto_examples/images/a b.mp4",
        "_static/x.html",
    ]


def test_what_the_page_shows_as_text_names_nothing(tmp_path: Path) -> None:
    # An example printing reST (its output is a literal block), code, a literal paragraph.
    docs, page = _page(
        tmp_path,
        ".. rst-class:: sphx-glr-script-out\n\n"
        " .. code-block:: none\n\n"
        "    .. image:: /printed.png\n"
        "    :download:`x <printed.zip>`\n"
        "       :srcset: /printed-too.png\n\n"
        "A literal block::\n\n"
        "    .. image:: /literal.png\n\n"
        ".. image:: /../outside.png\n",
    )
    assert page_references(page, docs) == []
    assert missing_references(page, docs) == []


def test_an_unreadable_page_names_nothing(tmp_path: Path) -> None:
    assert page_references(tmp_path / "missing.rst", tmp_path) == []
    page = tmp_path / "binary.rst"
    page.write_bytes(b"\xff\xfe\x00")
    assert page_references(page, tmp_path) == []


def test_collect_joins_what_was_written_changed_and_named(tmp_path: Path) -> None:
    docs, _ = _page(tmp_path, ".. image:: /auto_examples/images/named.png\n")
    folder = docs / "auto_examples"
    images = folder / "images"
    (images / "thumb").mkdir()
    (images / "named.png").write_bytes(b"1")
    (images / "sphx_glr_plot_a_001.png").write_bytes(b"old")  # rewritten below
    (images / "sphx_glr_plot_a_100_001.png").write_bytes(b"other")  # plot_a_100's
    (images / "thumb" / "sphx_glr_plot_a_thumb.png").write_bytes(b"t")  # kept as it was
    before = folder_status(sg_compat.image_folders(folder / "plot_a.py"))
    watch = OutputWatch.get()
    watch.start([folder])
    (folder / "plot_a.ipynb.new").write_text("{}", "utf-8")
    os.replace(folder / "plot_a.ipynb.new", folder / "plot_a.ipynb")
    (folder / "plot_a.zip").write_bytes(b"zip")
    (tmp_path / "elsewhere.txt").write_text("not watched", "utf-8")
    written = watch.stop()
    (images / "sphx_glr_plot_a_001.png").write_bytes(b"new, by a child process")
    (images / "sphx_glr_plot_a_100_001.png").write_bytes(b"changed too, not ours")
    found = collect(folder / "plot_a.py", docs, written, before, ["plot_a", "plot_a_100"])
    assert found == [
        "auto_examples/images/named.png",
        "auto_examples/images/sphx_glr_plot_a_001.png",
        "auto_examples/images/thumb/sphx_glr_plot_a_thumb.png",
        "auto_examples/plot_a.ipynb",
        "auto_examples/plot_a.py",
        "auto_examples/plot_a.py.docsaccel.json",
        "auto_examples/plot_a.rst",
        "auto_examples/plot_a.zip",
    ]
    assert not OutputWatch.get().active


@pytest.mark.parametrize("left_by_an_earlier_build", [False, True])
def test_the_recommendations_are_sphinx_gallerys_not_the_runs(
    tmp_path: Path, left_by_an_earlier_build: bool
) -> None:
    # sphinx-gallery writes them for every example once the gallery ran, every build.
    docs, page = _page(tmp_path, ".. include:: plot_a.recommendations\n")
    recommendations = docs / "auto_examples" / "plot_a.recommendations"
    if left_by_an_earlier_build:
        recommendations.write_text("\n.. rubric:: Related examples\n", "utf-8")
    assert page_references(page, docs) == [recommendations]
    assert missing_references(page, docs) == []
    found = collect(docs / "auto_examples" / "plot_a.py", docs, set(), {}, ["plot_a"])
    assert found == [
        "auto_examples/plot_a.py",
        "auto_examples/plot_a.py.docsaccel.json",
        "auto_examples/plot_a.rst",
    ]


def test_final_names_of_what_sphinx_gallery_writes() -> None:
    assert sg_compat.final_name("/d/plot_a.rst.new") == "/d/plot_a.rst"
    assert sg_compat.final_name("/d/sphx_glr_a_thumb.new.png") == "/d/sphx_glr_a_thumb.png"
    assert sg_compat.final_name("/d/plot_a.png") == "/d/plot_a.png"
    assert sg_compat.image_owner("sphx_glr_plot_x_100_001.png", ["plot_x", "plot_x_100"]) == (
        "plot_x_100"
    )
    assert sg_compat.image_owner("sphx_glr_plot_x_001_2_00x.png", ["plot_x"]) == "plot_x"
    assert sg_compat.image_owner("sphx_glr_other_001.png", ["plot_x"]) is None


def test_written_links_count_as_the_files_they_name_inside_the_source_dir(tmp_path) -> None:
    docs, _ = _page(tmp_path, "Title\n=====\n")
    folder = docs / "auto_examples"
    (folder / "data.csv").write_text("1", "utf-8")
    (tmp_path / "outside.csv").write_text("2", "utf-8")
    links = {
        "inside.csv": folder / "data.csv",
        "outside.csv": tmp_path / "outside.csv",
        "broken.csv": folder / "gone.csv",
        "folder": folder / "images",
    }
    for name, target in links.items():
        (folder / name).symlink_to(target)
    written = [str(folder / name) for name in links]
    files = collect(folder / "plot_a.py", docs, written, {}, ["plot_a"])
    assert files == [
        "auto_examples/data.csv",
        "auto_examples/plot_a.py",
        "auto_examples/plot_a.py.docsaccel.json",
        "auto_examples/plot_a.rst",
    ]


def test_a_source_file_the_page_shows_is_an_output_only_when_the_run_wrote_it(
    tmp_path: Path,
) -> None:
    page_text = ".. image:: /_static/logo.gif\n\n.. image:: /_static/made.gif\n"
    docs, _ = _page(tmp_path, page_text)
    folder = docs / "auto_examples"
    (docs / "_static").mkdir()
    (docs / "_static" / "logo.gif").write_bytes(b"the user's")
    since = file_clock(folder)
    time.sleep(0.05)  # past the file system clock's tick: the run writes later
    (docs / "_static" / "made.gif").write_bytes(b"written by the run")
    (folder / "link.gif").symlink_to(docs / "_static" / "logo.gif")
    written = [str(folder / "link.gif")]
    found = collect(folder / "plot_a.py", docs, written, {}, ["plot_a"], [folder], since)
    assert found == [
        "_static/made.gif",
        "auto_examples/plot_a.py",
        "auto_examples/plot_a.py.docsaccel.json",
        "auto_examples/plot_a.rst",
    ]
    # Without the time the run started, nothing outside the galleries is an output.
    assert "_static/made.gif" not in collect(folder / "plot_a.py", docs, [], {}, ["plot_a"])
