"""With ``sphinx.ext.viewcode``, an edit of a module reads the pages showing what changed.

A page showing an object links its ``[source]`` by the object's name, so it does not
depend on the rest of its module's file; viewcode's ``_modules`` page does, and is made
again from the file. Each scenario restores the state of one base build (``stats`` with
three functions, each on its own page) into a fresh copy with an edit of ``stats.py``,
and compares the output, ``_modules`` pages included, with a clean build's file by file.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from helpers.incremental_build import (
    WRITTEN_WITH_ANY,
    Workspace,
    built_with,
    extension,
    from_cache,
    needs_state,
    replace,
    write,
)

pytestmark = [pytest.mark.slow, needs_state]

STATS = "src/pkg/stats.py"
SPREAD = '''

def spread(values):
    """Range of the values."""
    return max(values) - min(values)
'''
#: viewcode, a third function of ``stats`` on its own page, and a page describing it by
#: hand (no autodoc): it gets a ``[source]`` link while ``stats`` defines ``spread``.
_VIEWCODE = [
    extension("sphinx.ext.viewcode"),
    lambda project: (project / STATS).write_text((project / STATS).read_text() + SPREAD),
    write(
        "docs/zzz.rst",
        "Zzz\n===\n\n.. py:currentmodule:: pkg.stats\n\n.. py:function:: spread(values)\n"
        "   :no-index:\n\n   The range, by hand.\n",
    ),
    replace("docs/index.rst", "   other\n", "   other\n   zzz\n"),
]
#: Pages read again whatever the edit of ``stats.py``: the example runs again, and its
#: page shows the measured times.
TIMED = {"auto_examples/plot_mean", "auto_examples/sg_execution_times"}


def _without_spread(project: Path) -> None:
    path = project / STATS
    path.write_text(path.read_text().replace(SPREAD, "\n"))


#: ``{name: (edit of the base project, documents read besides TIMED (None: not checked))}``.
SCENARIOS = {
    "docstring": (
        replace(STATS, "Average of the values.", "Arithmetic mean of the values."),
        {"api/pkg.stats", "api/pkg.stats.mean"},
    ),
    # A definition's text counts for the pages showing it (autodoc reads ``#:`` comments).
    "comment": (
        replace(STATS, "    ordered = sorted(values)\n", "    ordered = sorted(values)  # up\n"),
        {"api/pkg.stats", "api/pkg.stats.median"},
    ),
    # Lines in ``median`` move ``spread`` down (a definition's first line counts for the
    # pages showing it, as above) and its block on the ``_modules`` page; ``mean`` stays.
    "lines inserted above an object": (
        replace(STATS, "    ordered = sorted(", "    # Sort first.\n\n    ordered = sorted("),
        {"api/pkg.stats", "api/pkg.stats.median", "api/pkg.stats.spread"},
    ),
    # No page shows it but those of the module itself: viewcode looks at the module again
    # only for the ``_modules`` page, made from the file.
    "comment at the end": (
        lambda project: (project / STATS).write_text((project / STATS).read_text() + "# End.\n"),
        {"api/pkg", "api/pkg.stats"},
    ),
    "object added": (
        replace(STATS, "def median(", 'def mode(values):\n    """Most common."""\n\n\ndef median('),
        None,
    ),
    # The page describing it by hand loses its ``[source]`` link too.
    "object removed": (_without_spread, None),
}


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """The cache after a build of the project with viewcode."""
    root = tmp_path_factory.mktemp("viewcode-base")
    ws, _ = built_with(root, _VIEWCODE)
    assert "pkg.stats.spread" in (ws.outdir / "_modules/pkg/stats.html").read_text("utf-8")
    assert "viewcode-link" in (ws.outdir / "zzz.html").read_text("utf-8")
    return root / "cache"


#: The target of a ``[docs]`` link of a ``_modules`` page.
_BACK_LINK = re.compile(rb'(<a class="viewcode-back" href=")[^"]*(")')


def _differences(ws: Workspace, jobs: int) -> list[str]:
    """:meth:`Workspace.differences`; with ``-j N``, the ``[docs]`` links' targets of
    ``_modules`` pages masked: a clean parallel build merges viewcode's entries in the
    order its processes finish (the caching guide's "What is not seen")."""
    if jobs == 1:
        return ws.differences()
    return ws.differences(
        lambda name, content: (
            _BACK_LINK.sub(rb"\1\2", content) if name.startswith("_modules/") else content
        )
    )


@pytest.mark.parametrize(
    ("name", "jobs"),
    [(name, 1) for name in SCENARIOS]
    + [
        ("docstring", 2),
        ("lines inserted above an object", 2),
        ("comment at the end", 2),
        ("object added", 2),
    ],
)
def test_an_edit_of_a_module_reads_the_pages_showing_what_changed(base, tmp_path, name, jobs):
    edit, read = SCENARIOS[name]
    ws = from_cache(base, tmp_path, [*_VIEWCODE, edit], jobs=jobs)
    built = ws.build()
    assert built.returncode == 0, built.output
    assert built.state["origin"] == "cache", built.output
    if read is not None:
        assert built.read - TIMED == read, built.state["read"]
        assert built.written - TIMED - WRITTEN_WITH_ANY == read, built.state
    if name == "docstring":
        assert "api/pkg.stats.mean.rst: src/pkg/stats.py: mean changed" in built.output
    assert _differences(ws, jobs) == []


def _comment_keeping_the_time(project: Path) -> None:
    """A comment at the end of ``stats.py``, the file keeping an old modification time (a
    copy that keeps times: ``cp -p``, an archive)."""
    path = project / STATS
    before = path.stat()
    path.write_text(path.read_text() + "# End.\n")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_a_module_page_is_written_again_when_its_module_is_older(tmp_path):
    # viewcode writes a module's page again only when the module's file is newer than it:
    # here the page of the last build is newer than the edited module.
    ws = _rebuilt_in_place(tmp_path, _comment_keeping_the_time)
    assert "# End." in (ws.outdir / "_modules/pkg/stats.html").read_text("utf-8")
    assert ws.differences() == []


@pytest.mark.parametrize(
    "edit",
    [
        # The sidebar of every page, the module pages' too, shows the guide's title.
        replace("docs/guide.rst", "Setting up\n==========", "Getting set up\n=============="),
        # The guide now shows ``mean`` too: the module page's [docs] link may follow it.
        replace("docs/guide.rst", "More text.", "More text.\n\n.. autofunction:: pkg.stats.mean\n"),
    ],
    ids=["navigation", "links"],
)
def test_a_rebuild_in_the_same_folders_writes_the_module_pages_that_changed(tmp_path, edit):
    # The module's file is older than its page: viewcode alone would keep the page.
    ws = _rebuilt_in_place(tmp_path, edit)
    assert ws.differences() == []


def _rebuilt_in_place(tmp_path: Path, edit) -> Workspace:
    """The project with viewcode built, then ``edit`` made in place and built again in
    the same folders (the state of the last build there)."""
    ws = Workspace(tmp_path)
    for change in _VIEWCODE:
        ws.fresh_copy(change)
    first = ws.build()
    assert first.returncode == 0, first.output
    ws.edit(edit)
    built = ws.build()
    assert built.returncode == 0, built.output
    assert built.state["origin"] == "local", built.output
    return ws
