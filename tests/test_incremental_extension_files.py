"""Files an extension copies into the output while it writes a page (as sphinx-gallery
copies its srcset images), with the Sphinx state: when the page is removed, or no longer
asks for them, a restored output must not keep them, since a clean build has none.

Each build is from a fresh copy of the project (new modification times everywhere), with
the cache of a build of the tree where the page shows its badge; the output is compared
with a clean build of the same tree, file by file.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.incremental_build import (
    WRITTEN_WITH_ANY,
    built_with,
    from_cache,
    local_extension,
    needs_state,
    replace,
    write,
)

pytestmark = [pytest.mark.slow, needs_state]

#: Copies the conf folder's diagram into ``_images`` for each page with a ``badge``
#: directive, while the page is written, and shows it there.
BADGE_EXTENSION = """\
import shutil
from pathlib import Path

from docutils import nodes
from sphinx.util.docutils import SphinxDirective


class badge(nodes.General, nodes.Element):
    pass


class Badge(SphinxDirective):
    def run(self):
        return [badge(docname=self.env.docname)]


def visit_badge(self, node):
    name = "badge-" + node["docname"].replace("/", "-") + ".svg"
    target = Path(self.builder.outdir) / "_images" / name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(Path(self.builder.srcdir) / "diagram.svg", target)
    self.body.append(f'<img src="{self.builder.imgpath}/{name}" alt="badge" />')
    raise nodes.SkipNode


def setup(app):
    app.add_node(badge, html=(visit_badge, None))
    app.add_directive("badge", Badge)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
"""
BADGE = "_images/badge-badged.svg"
BADGED_PAGE = "Badged\n======\n\n.. badge::\n\nA page with a badge.\n"

WITH_BADGE = [
    *local_extension("badge", BADGE_EXTENSION),
    write("docs/badged.rst", BADGED_PAGE),
    replace("docs/index.rst", "   other\n", "   other\n   badged\n"),
]


def _remove(relative: str):
    def edit(project: Path) -> None:
        (project / relative).unlink()

    return edit


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """The cache after a build of the project with the badged page."""
    root = tmp_path_factory.mktemp("badge-base")
    ws, built = built_with(root, WITH_BADGE)
    assert "badged" in built.written
    assert (ws.outdir / BADGE).is_file()
    return root / "cache"


#: ``{name: (edits, documents read, whether the badge stays)}``.
SCENARIOS = {
    "page removed": (
        [replace("docs/index.rst", "   badged\n", ""), _remove("docs/badged.rst")],
        {"index"},
        False,
    ),
    "badge no longer shown": (
        [replace("docs/badged.rst", ".. badge::\n\n", "")],
        {"badged"},
        False,
    ),
    # The badged page is the restored one, not written again: its badge must stay.
    "another page changed": (
        [replace("docs/other.rst", "See :ref:", "Now see :ref:")],
        {"other"},
        True,
    ),
}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_the_badge_is_in_the_output_as_in_a_clean_build(base, tmp_path, name):
    edits, read, kept = SCENARIOS[name]
    ws = from_cache(base, tmp_path, [*WITH_BADGE, *edits])
    built = ws.build()
    assert built.returncode == 0, built.output
    assert built.state["origin"] == "cache", built.output
    assert built.read == read, built.state
    if name != "page removed":  # that one changes the navigation: every page is written
        assert built.written == read | WRITTEN_WITH_ANY, built.state
    assert (ws.outdir / BADGE).is_file() == kept
    assert ws.differences() == []
