"""A page whose text shows the path of the checkout that read it (a module constant made
from ``__file__``, a default argument naming a folder), restored into a checkout
elsewhere, shows this checkout's path, as a clean build here does.

Sphinx's state keeps paths in its environment and doctrees, which the restore moves to the
new checkout; a path *inside* a text (``'/old/repo/src/pkg'``, quoted in a signature or
a value) cannot be moved without knowing what the source said, so the document is read
again.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers.incremental_build import built_with, from_cache, needs_state, replace, write

pytestmark = [pytest.mark.slow, needs_state]

WHERE = '''"""Where the package is."""

import os

#: The package's folder.
HERE = os.path.dirname(os.path.abspath(__file__))


def where(base=HERE):
    """The folder the package reads its data from."""
    return base
'''

EDITS = [
    write("src/pkg/where.py", WHERE),
    replace(
        "docs/guide.rst",
        "More text.",
        "More text.\n\n.. autodata:: pkg.where.HERE\n\n.. autofunction:: pkg.where.where\n",
    ),
]


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> tuple[Path, Path]:
    """The cache after a build in one folder, and that folder's project."""
    ws, _ = built_with(tmp_path_factory.mktemp("paths-base"), EDITS)
    return ws.cache, ws.project


def test_a_page_showing_the_checkout_path_shows_the_new_one(base, tmp_path) -> None:
    cache, old_project = base
    ws = from_cache(cache, tmp_path / "elsewhere", EDITS)
    built = ws.build()
    assert built.returncode == 0, built.output
    assert built.state["origin"] == "cache", built.output
    assert "guide" in built.read, built.state
    page = (ws.outdir / "guide.html").read_text("utf-8")
    assert str(ws.project / "src" / "pkg") in page
    assert str(old_project) not in page
    index = (ws.outdir / "searchindex.js").read_text("utf-8")
    assert str(old_project) not in index


def test_a_checkout_whose_path_begins_with_the_old_one_s_reads_only_what_shows_it(
    base, tmp_path
) -> None:
    """``/ci/project_x`` after ``/ci/project``: the new path holds the old one's text, but
    only the page showing the checkout's path (``guide``) is read again."""
    cache, old_project = base
    ws = from_cache(cache, tmp_path / "sibling", EDITS)
    ws.project = Path(f"{old_project}_x")
    ws.fresh_copy()
    try:
        built = ws.build()
        assert built.returncode == 0, built.output
        assert built.state["origin"] == "cache", built.output
        assert built.read == {"guide"}, built.state
        assert ws.differences() == []
    finally:
        shutil.rmtree(ws.project, ignore_errors=True)
