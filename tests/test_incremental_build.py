"""The Sphinx state across builds: each build from a fresh copy of the project (new
modification times everywhere), with the cache of a build of the unchanged tree; what it
reads and writes, and its output against a clean build of the same tree, file by file.

The example of the gallery imports the package: a change to the package's modules runs it
again (the example cache counts modules whole), so its page is read again too.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers.incremental_build import (
    WRITTEN_WITH_ANY,
    Workspace,
    built_with,
    needs_state,
    replace,
    write,
)

pytestmark = [pytest.mark.slow, needs_state]

EXAMPLE = {"auto_examples/plot_mean"}
EXAMPLE_ID = "examples/plot_mean.py"
#: Its content is the examples' measured times: read again when they differ.
TIMES_PAGE = "auto_examples/sg_execution_times"
ALL_PAGES = {
    "api",
    "api/pkg",
    "api/pkg.base",
    "api/pkg.base.Base",
    "api/pkg.helper",
    "api/pkg.shapes",
    "api/pkg.shapes.Circle",
    "api/pkg.stats",
    "api/pkg.stats.mean",
    "api/pkg.stats.median",
    "api/pkg.wrap",
    "api/pkg.wrap.MyTool",
    "auto_examples/index",
    "auto_examples/plot_mean",
    TIMES_PAGE,
    "guide",
    "index",
    "other",
}


@pytest.fixture(scope="module", params=[1, 2], ids=["serial", "j2"])
def base(request, tmp_path_factory) -> tuple[Path, int]:
    """The cache after a build of the unchanged project (``-j 1`` and ``-j 2``)."""
    jobs = request.param
    root = tmp_path_factory.mktemp(f"base-j{jobs}")
    _, built = built_with(root, jobs=jobs)
    assert built.state["origin"] == "none"
    assert built.read == ALL_PAGES and built.written == ALL_PAGES
    return root / "cache", jobs


def _workspace(base: tuple[Path, int], tmp_path: Path) -> Workspace:
    cache, jobs = base
    ws = Workspace(tmp_path, jobs=jobs)
    shutil.copytree(cache, ws.cache)
    return ws


def _check(ws: Workspace, read: set[str], written: set[str], ran: bool = False) -> None:
    if written:
        written = written | WRITTEN_WITH_ANY
    built = ws.build()
    assert built.returncode == 0, built.output
    assert built.state["origin"] == "cache", built.output
    assert (EXAMPLE_ID in built.ran) == ran, built.ran
    # A page of a run is read again when what sphinx-gallery wrote of the run changed: a
    # quick run's measured time may come out the same.
    timed = (EXAMPLE if ran else set()) | {TIMES_PAGE}
    assert built.read - timed == read - timed, built.state["read"]
    assert built.written - timed == written - timed, built.state
    assert ws.differences() == []


def test_nothing_changed_reads_and_writes_nothing(base, tmp_path):
    ws = _workspace(base, tmp_path)
    built = ws.build()
    assert built.returncode == 0, built.output
    assert built.read == set() and built.written == set(), built.state
    assert "0 documents read, 0 pages written" in built.output
    assert ws.differences() == []


SCENARIOS = {
    # A function's docstring: its autosummary page and its module's summary table.
    "docstring": (
        [replace("src/pkg/stats.py", "Average of the values.", "Arithmetic mean.")],
        {"api/pkg.stats", "api/pkg.stats.mean", *EXAMPLE},
        {"api/pkg.stats", "api/pkg.stats.mean", *EXAMPLE},
    ),
    # A base class's method, shown as an inherited member on another module's page.
    "base class docstring": (
        [replace("src/pkg/base.py", "Say what this is.", "Say what kind of thing it is.")],
        {"api/pkg.base.Base", "api/pkg.shapes.Circle", *EXAMPLE},
        {"api/pkg.base.Base", "api/pkg.shapes.Circle", *EXAMPLE},
    ),
    # Defined in pkg._impl, documented as pkg.helper.
    "re-exported function": (
        [replace("src/pkg/_impl.py", "Help with ``x``.", "Help a lot with ``x``.")],
        {"api/pkg", "api/pkg.helper", *EXAMPLE},
        {"api/pkg", "api/pkg.helper", *EXAMPLE},
    ),
    "new page": (
        [
            write("docs/extra.rst", "Extra\n=====\n\nMore.\n"),
            replace("docs/index.rst", "   other\n", "   other\n   extra\n"),
        ],
        {"extra", "index"},
        ALL_PAGES | {"extra"},
    ),
    "changed title": (
        [replace("docs/other.rst", "Other page\n==========", "Another page\n============")],
        {"other"},
        ALL_PAGES,
    ),
    # How deep another page's toctree shows its sections: every page's navigation.
    "tocdepth field": (
        [replace("docs/guide.rst", ".. _setup-guide:", ":tocdepth: 1\n\n.. _setup-guide:")],
        {"guide"},
        ALL_PAGES,
    ),
    "renamed label": (
        [
            replace("docs/guide.rst", ".. _setup-guide:", ".. _setting-up:"),
            replace("docs/other.rst", ":ref:`setup-guide`", ":ref:`setting-up`"),
        ],
        {"guide", "other"},
        {"guide", "other"},
    ),
    # The page referring to the old label is not read again but written: its link breaks.
    "label renamed, reference left": (
        [replace("docs/guide.rst", ".. _setup-guide:", ".. _setting-up:")],
        {"guide"},
        {"guide", "other"},
    ),
    "included file": (
        [replace("docs/snippet.inc", "comes from", "is taken from")],
        {"guide"},
        {"guide"},
    ),
    "image": (
        [replace("docs/diagram.svg", 'width="10"', 'width="12"')],
        {"guide"},
        {"guide"},
    ),
    # An autosummary template makes the function pages anew: those are read.
    "autosummary template": (
        [
            replace(
                "docs/_templates/autosummary/function.rst",
                ".. autofunction:: {{ objname }}",
                ".. autofunction:: {{ objname }}\n\n   (generated)",
            )
        ],
        {"api/pkg.helper", "api/pkg.stats.mean", "api/pkg.stats.median"},
        {"api/pkg.helper", "api/pkg.stats.mean", "api/pkg.stats.median"},
    ),
    # An HTML template is in every page.
    "page template": (
        [
            write(
                "docs/_templates/layout.html",
                '{% extends "!layout.html" %}\n'
                "{% block footer %}{{ super() }}<p>custom</p>{% endblock %}\n",
            )
        ],
        set(),
        ALL_PAGES,
    ),
    "html conf.py value": (
        [replace("docs/conf.py", 'project = "pkg"', 'project = "pkg"\nhtml_title = "Docs"')],
        set(),
        ALL_PAGES,
    ),
    "reading conf.py value": (
        [replace("docs/conf.py", 'project = "pkg"', 'project = "pkg"\nrst_epilog = "\\n"')],
        ALL_PAGES,
        ALL_PAGES,
    ),
    "static file": (
        [replace("docs/_static/custom.css", "black", "navy")],
        set(),
        ALL_PAGES,
    ),
    # Its page, the gallery's index (the thumbnail's text), and the "examples using" of
    # the function it calls on that function's page.
    "gallery example": (
        [replace("docs/examples/plot_mean.py", "of a few numbers", "of three numbers")],
        {*EXAMPLE, "auto_examples/index", "api/pkg.stats.mean"},
        {*EXAMPLE, "auto_examples/index", "api/pkg.stats.mean"},
    ),
}


#: The scenarios whose change runs the example again: it imports the package (the example
#: cache counts the package's modules whole), or it is the example.
RUN_EXAMPLE = {"docstring", "base class docstring", "re-exported function", "gallery example"}

#: What a scenario's pages show after its change (besides equalling a clean build): the
#: example's new description on its page, in the gallery's thumbnail and in the "examples
#: using pkg.stats.mean" mini-gallery of that function's page.
SHOWN = {
    "gallery example": (
        "The mean of three numbers.",
        ["auto_examples/plot_mean", "auto_examples/index", "api/pkg.stats.mean"],
    ),
}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_one_change(base, tmp_path, name):
    edits, read, written = SCENARIOS[name]
    ws = _workspace(base, tmp_path)
    for edit in edits:
        ws.fresh_copy(edit)
    _check(ws, read, written, ran=name in RUN_EXAMPLE)
    text, pages = SHOWN.get(name, ("", []))
    for page in pages:
        assert text in (ws.outdir / f"{page}.html").read_text("utf-8"), page


def test_distribution_upgrade_of_a_documented_object_outside_the_roots(base, tmp_path):
    ws = _workspace(base, tmp_path)
    module = ws.site / "extmod" / "__init__.py"
    module.write_text(module.read_text().replace("Run the tool.", "Run it now."))
    metadata = ws.site / "extdist-1.0.dist-info" / "METADATA"
    metadata.write_text(metadata.read_text().replace("Version: 1.0", "Version: 1.1"))
    built = ws.build()
    assert built.returncode == 0, built.output
    assert built.state["read"]["api/pkg.wrap.MyTool"] == "extdist 1.0 → 1.1"
    # The pages whose modules import the library: MyTool's, its module's, and those
    # showing the package, which imports that module.
    wrap = {"api/pkg.wrap", "api/pkg.wrap.MyTool", "api", "api/pkg", "api/pkg.helper"}
    assert EXAMPLE_ID in built.ran
    assert built.read - {TIMES_PAGE} - EXAMPLE == wrap
    assert ws.differences() == []


def test_moved_checkout_reads_nothing(base, tmp_path):
    ws = _workspace(base, tmp_path / "somewhere" / "else")
    built = ws.build()
    assert built.returncode == 0, built.output
    assert built.read == set() and built.written == set(), built.state
    assert ws.differences() == []


def test_the_log_says_why(base, tmp_path):
    ws = _workspace(base, tmp_path)
    ws.fresh_copy(replace("src/pkg/stats.py", "Average of the values.", "Arithmetic mean."))
    built = ws.build()
    assert "docsaccel: api/pkg.stats.mean.rst: src/pkg/stats.py: mean changed" in built.output
    ws.fresh_copy(write("docs/extra.rst", "Extra\n=====\n"))
    ws.fresh_copy(replace("docs/index.rst", "   other\n", "   other\n   extra\n"))
    built = ws.build()
    assert "docsaccel: every page: navigation changed (1 page added" in built.output


#: A signature that depends on whether ``optdep`` can be imported.
_OPTIONAL = '''"""Statistics of sequences."""

try:
    import optdep
except ImportError:
    optdep = None


def spread(values, engine=None if optdep is None else optdep.ENGINE):
    """Range of the values."""
    return max(values) - min(values)
'''

#: The same, probing without importing.
_PROBED = '''"""Statistics of sequences."""

import importlib.util

FOUND = importlib.util.find_spec("optdep") is not None


def spread(values, engine="fast" if FOUND else None):
    """Range of the values."""
    return max(values) - min(values)
'''


@pytest.mark.parametrize("source", [_OPTIONAL, _PROBED], ids=["import", "find_spec"])
def test_an_optional_dependency_installed_reads_its_pages_again(tmp_path, source):
    ws = Workspace(tmp_path)
    ws.fresh_copy(replace("src/pkg/stats.py", '"""Statistics of sequences."""\n', source))
    shown = ".. autofunction:: pkg.stats.spread\n   :noindex:\n\nSee :ref:"
    ws.fresh_copy(replace("docs/other.rst", "See :ref:", shown))
    first = ws.build()
    assert first.returncode == 0, first.output
    assert "fast" not in (ws.outdir / "other.html").read_text("utf-8")
    # Installed: a folder on PYTHONPATH (no distribution) now holds the module.
    (ws.site / "optdep").mkdir()
    (ws.site / "optdep" / "__init__.py").write_text("ENGINE = 'fast'\n", "utf-8")
    ws.fresh_copy()
    built = ws.build()
    assert built.returncode == 0, built.output
    assert built.state["origin"] == "cache", built.output
    assert built.state["read"]["other"] == "optdep: now importable"
    assert "docsaccel: other.rst: optdep: now importable" in built.output
    assert "'fast'" in (ws.outdir / "other.html").read_text("utf-8")
    assert ws.differences() == []
