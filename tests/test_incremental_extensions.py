"""Sphinx's extensions that gather from every document: a build reading only some
documents publishes what a clean build of the same tree does.

- ``sphinx.ext.todo``: a ``todolist`` is filled from every document's todos when its page
  is written, so its page is written when another document was read again.
- ``sphinx.ext.viewcode``: which modules get a ``_modules`` page depends on the document
  read last (serial) or on every document (``-j 2``), not only on those read again.
- ``sphinx.ext.inheritance_diagram`` imports the classes it draws through an
  ``import_module`` it bound when Sphinx was imported: a local extension does the same.

Each scenario restores the state of one base build into a fresh copy with a change, and
compares the output with a clean build's file by file.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers.incremental_build import (
    WRITTEN_WITH_ANY,
    Workspace,
    built_with,
    extension,
    from_cache,
    local_extension,
    needs_state,
    replace,
    write,
)

pytestmark = [pytest.mark.slow, needs_state]

_TODOS = [
    extension("sphinx.ext.viewcode"),
    extension("sphinx.ext.todo"),
    replace("docs/conf.py", 'project = "pkg"', 'project = "pkg"\ntodo_include_todos = True'),
    replace("docs/guide.rst", "More text.", "More text.\n\n.. todo:: Write the setup part.\n"),
    replace("docs/other.rst", "See :ref:", ".. todolist::\n\nSee :ref:"),
]
#: A module the documented class inherits a member from, with no object of its own shown:
#: viewcode gives it a page only as the last document read (or any, with ``-j 2``) leaves it.
#: Adding a module reads again the documents ending on that class's page.
NEW_MODULE = '"""Extra things."""\n\n\ndef spread(values):\n    """Range of the values."""\n'


def _new_module(project: Path) -> None:
    (project / "src/pkg/extra.py").write_text(NEW_MODULE + "    return max(values) - min(values)\n")
    replace("src/pkg/__init__.py", "from pkg import base, ", "from pkg import base, extra, ")(
        project
    )
    replace("src/pkg/__init__.py", '"base", ', '"base", "extra", ')(project)


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """The cache after a build of the project with todos, a todolist and viewcode."""
    root = tmp_path_factory.mktemp("extensions-base")
    ws, _ = built_with(root, _TODOS)
    assert "Write the setup part." in (ws.outdir / "other.html").read_text("utf-8")
    return root / "cache"


#: ``{name: (edits, documents read (None: not checked), pages written besides them)}``.
SCENARIOS = {
    "todo edited": (
        [replace("docs/guide.rst", "Write the setup part.", "Write the setup part soon.")],
        {"guide"},
        {"other"},
    ),
    "todo added on another page": (
        [replace("docs/api.rst", "=============\n", "=============\n\n.. todo:: Name them.\n")],
        {"api"},
        {"other"},
    ),
    "module added": ([_new_module], None, None),
    # The copy is in another folder than the base build's: the todolist names each todo's
    # file by its path, so its page is written again, and only it.
    "nothing changed": ([], set(), {"other"}),
}


@pytest.mark.parametrize(
    ("name", "jobs"),
    [(name, 1) for name in SCENARIOS] + [("todo edited", 2), ("module added", 2)],
)
def test_a_build_reading_some_documents_equals_a_clean_build(base, tmp_path, name, jobs):
    edits, read, also_written = SCENARIOS[name]
    ws = from_cache(base, tmp_path, [*_TODOS, *edits], jobs=jobs)
    built = ws.build()
    assert built.returncode == 0, built.output
    assert built.state["origin"] == "cache", built.output
    if read is not None:
        assert built.read == read, built.state
        written = read | also_written
        assert built.written - WRITTEN_WITH_ANY == written - WRITTEN_WITH_ANY, built.state
    if read:
        assert "an extension fills its todolist from other documents" in built.output
    elif read is not None:
        assert built.state["written_why"] == {
            "other": "its page shows a path of the checkout, which moved"
        }
    assert _differences(ws, jobs) == []


#: The target of a ``[docs]`` link of a ``_modules`` page.
_BACK_LINK = re.compile(rb'(<a class="viewcode-back" href=")[^"]*(")')


def _differences(ws: Workspace, jobs: int) -> list[str]:
    """:meth:`Workspace.differences`; with ``-j N``, the ``[docs]`` links' targets of
    ``_modules`` pages masked: a clean parallel build merges viewcode's entries in the
    order its processes finish, so which page a link goes to and the module name of its
    anchor vary from one clean build to the next (the caching guide's "What is not
    seen"). Which module pages there are, and all the rest of them, must still agree."""
    if jobs == 1:
        return ws.differences()
    return ws.differences(
        lambda name, content: (
            _BACK_LINK.sub(rb"\1\2", content) if name.startswith("_modules/") else content
        )
    )


BASES_EXTENSION = '''\
"""Shows a class's bases, importing its module as inheritance_diagram does."""

from importlib import import_module

from docutils import nodes
from sphinx.util.docutils import SphinxDirective


class Bases(SphinxDirective):
    required_arguments = 1

    def run(self):
        module, _, name = self.arguments[0].rpartition(".")
        cls = getattr(import_module(module), name)
        return [nodes.paragraph(text=" < ".join(c.__name__ for c in cls.__mro__))]


def setup(app):
    app.add_directive("bases", Bases)
    return {"version": "1", "parallel_read_safe": True}
'''
_BASES = [
    *local_extension("basesext", BASES_EXTENSION),
    replace("docs/other.rst", "See :ref:", ".. bases:: pkg.shapes.Circle\n\nSee :ref:"),
]


def test_a_module_imported_through_a_bound_import_module_is_a_dependency(tmp_path):
    ws = Workspace(tmp_path)
    for edit in _BASES:
        ws.fresh_copy(edit)
    first = ws.build()
    assert first.returncode == 0, first.output
    assert "Circle &lt; Base &lt; object" in (ws.outdir / "other.html").read_text("utf-8")
    ws.fresh_copy(
        replace(
            "src/pkg/shapes.py",
            "class Circle(Base):",
            'class Round:\n    """Round."""\n\n\nclass Circle(Base, Round):',
        )
    )
    built = ws.build()
    assert built.returncode == 0, built.output
    assert built.state["origin"] == "cache", built.output
    assert "other" in built.read, built.state
    assert "Circle &lt; Base &lt; Round &lt; object" in (ws.outdir / "other.html").read_text(
        "utf-8"
    )
    assert ws.differences() == []


_ZZZ = [
    extension("sphinx.ext.viewcode"),
    write(
        "docs/zzz.rst",
        "Zzz\n===\n\n.. py:currentmodule:: pkg.shapes\n\n.. py:class:: Circle\n   :no-index:\n\n"
        "   Circle again.\n",
    ),
    replace("docs/index.rst", "   other\n", "   other\n   zzz\n"),
]


@pytest.mark.parametrize(
    "edit",
    [
        replace("src/pkg/shapes.py", '"""A round shape.', '"""A round shape, edited.'),
        lambda project: (
            (project / "docs/zzz.rst").unlink(),
            replace("docs/index.rst", "   zzz\n", "")(project),
        ),
    ],
    ids=["module edited", "last page showing it removed"],
)
def test_viewcode_links_an_object_to_the_last_page_showing_it(tmp_path, edit):
    # Circle is shown on its autosummary page and on zzz, read last: a clean build links
    # its source to zzz, whichever of the two a build reads again.
    ws = Workspace(tmp_path)
    for change in _ZZZ:
        ws.fresh_copy(change)
    first = ws.build()
    assert first.returncode == 0, first.output
    assert "zzz.html#pkg.shapes.Circle" in (ws.outdir / "_modules/pkg/shapes.html").read_text()
    ws.fresh_copy(edit)
    built = ws.build()
    assert built.returncode == 0, built.output
    assert built.state["origin"] == "cache", built.output
    assert (ws.outdir / "_modules/pkg/shapes.html").is_file()
    assert ws.differences() == []


FACTS_EXTENSION = '''\
"""A list of every document's facts, filled into its node when the page is written."""

from docutils import nodes
from sphinx.util.docutils import SphinxDirective


class factlist(nodes.General, nodes.Element):
    pass


class Fact(SphinxDirective):
    has_content = True

    def run(self):
        facts = self.env.__dict__.setdefault("all_facts", {})
        facts.setdefault(self.env.docname, []).append(" ".join(self.content))
        return [nodes.paragraph(text="fact: " + " ".join(self.content))]


class FactList(SphinxDirective):
    def run(self):
        return [factlist()]


def purge(app, env, docname):
    env.__dict__.get("all_facts", {}).pop(docname, None)


def merge(app, env, docnames, other):
    env.__dict__.setdefault("all_facts", {}).update(other.__dict__.get("all_facts", {}))


def resolved(app, doctree, docname):
    facts = app.env.__dict__.get("all_facts", {})
    for node in doctree.findall(factlist):
        texts = [text for name in sorted(facts) for text in facts[name]]
        items = [nodes.list_item("", nodes.paragraph(text=text)) for text in texts]
        node += nodes.bullet_list("", *items)


def setup(app):
    opening, closing = (lambda s, n: s.body.append("<div>")), (lambda s, n: s.body.append("</div>"))
    app.add_node(factlist, html=(opening, closing))
    app.add_directive("fact", Fact)
    app.add_directive("factlist", FactList)
    app.connect("env-purge-doc", purge)
    app.connect("env-merge-info", merge)
    app.connect("doctree-resolved", resolved)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
'''


def test_a_node_an_extension_fills_in_place_from_every_document_is_written(tmp_path):
    ws = Workspace(tmp_path)
    for edit in [
        *local_extension("factext", FACTS_EXTENSION),
        replace("docs/api.rst", "=============\n", "=============\n\n.. factlist::\n"),
        replace("docs/other.rst", "See :ref:", ".. fact:: Other is short.\n\nSee :ref:"),
    ]:
        ws.fresh_copy(edit)
    first = ws.build()
    assert first.returncode == 0, first.output
    ws.fresh_copy(replace("docs/other.rst", "Other is short.", "Other is very short."))
    built = ws.build()
    assert built.returncode == 0, built.output
    assert built.read == {"other"}, built.state
    assert "api" in built.written, built.state
    assert "Other is very short." in (ws.outdir / "api.html").read_text("utf-8")
    assert ws.differences() == []
