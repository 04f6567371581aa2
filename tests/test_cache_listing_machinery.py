"""A folder listed by the machinery running an example is not the example's listing.

The recorder tells the example's listings from sphinx-gallery's and docsaccel's by the
first caller outside the standard library's listing helpers. Those helpers moved between
Python versions (from 3.13 pathlib is a package: ``Path.iterdir``, ``walk`` and ``glob``
run in ``pathlib/_local.py`` and ``pathlib/_abc.py``), so this runs on every Python of
the test matrix: an internal listing that counted as the example's would make the example
re-run needlessly whenever that folder changes.
"""

from __future__ import annotations

import os
import pathlib
from pathlib import Path

import pytest
import sphinx_gallery

import docsaccel
from docsaccel import sg_compat
from docsaccel.cache.recorder import Recorder, Seen

# Every pathlib way to list a folder; Path.walk is new in Python 3.12.
_PATHLIB_LISTINGS = {
    "Path.iterdir": "list(folder.iterdir())",
    "Path.glob('*')": "list(folder.glob('*'))",
    "Path.glob('**')": "list(folder.glob('**'))",
    "Path.rglob('*')": "list(folder.rglob('*'))",
}
if hasattr(pathlib.Path, "walk"):
    _PATHLIB_LISTINGS["Path.walk"] = "list(folder.walk())"

_MACHINERY = {
    "sphinx-gallery": os.path.dirname(os.path.abspath(sphinx_gallery.__file__)),
    "docsaccel": os.path.dirname(os.path.abspath(docsaccel.__file__)),
}


def _record(root: Path, action) -> Seen:
    recorder = Recorder.get()
    recorder.start([str(root)], [])
    try:
        action()
    finally:
        seen = recorder.stop()
    return seen


def _code_in(folder: str, statement: str):
    """A function whose code is in ``folder`` (as a module there would be), running
    ``statement`` with ``folder`` bound to the listed path."""
    code = compile(f"def listing(folder):\n    {statement}\n", os.path.join(folder, "x.py"), "exec")
    namespace: dict[str, object] = {}
    exec(code, namespace)
    return namespace["listing"]


@pytest.fixture
def data(tmp_path: Path) -> Path:
    folder = tmp_path / "proj" / "data"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.csv").write_text("1\n", "utf-8")
    return folder


@pytest.mark.parametrize("how", sorted(_PATHLIB_LISTINGS))
def test_a_pathlib_listing_by_the_example_is_the_examples(data: Path, how: str) -> None:
    listing = _code_in(str(data.parent), _PATHLIB_LISTINGS[how])
    seen = _record(data.parent, lambda: listing(data))
    assert seen.listings.get(str(data)) == ("a.csv", "sub")


@pytest.mark.parametrize("who", sorted(_MACHINERY))
@pytest.mark.parametrize("how", sorted(_PATHLIB_LISTINGS))
def test_a_pathlib_listing_by_the_machinery_is_not_the_examples(
    data: Path, how: str, who: str
) -> None:
    listing = _code_in(_MACHINERY[who], _PATHLIB_LISTINGS[how])
    seen = _record(data.parent, lambda: listing(data))
    assert seen.listings == {}


def test_docsaccel_looking_for_an_examples_outputs_is_no_listing(data: Path) -> None:
    # sg_compat.output_files lists the images folders with Path.iterdir.
    images = data / "images"
    (images / "thumb").mkdir(parents=True)
    (images / "sphx_glr_plot_a_001.png").write_bytes(b"")
    seen = _record(data.parent, lambda: sg_compat.output_files(data / "plot_a.py"))
    assert seen.listings == {}
    # The same call made by the example is its listing.
    seen = _record(data.parent, lambda: list(images.iterdir()))
    assert seen.listings == {str(images): ("sphx_glr_plot_a_001.png", "thumb")}
