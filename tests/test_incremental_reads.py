"""The Sphinx state and what the project's modules read before the documents are read.

autosummary imports the package while it generates the API pages (``builder-inited``),
before any document is read; a module whose docstring is a data file's text read at
import time shows that file on its pages. An edit of the data file alone reads those
pages again, and the output equals a clean build's, file by file.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers.incremental_build import (
    Workspace,
    built_with,
    from_cache,
    needs_state,
    replace,
    write,
)

pytestmark = [pytest.mark.slow, needs_state]

DATADOC = """import os

with open(os.path.join(os.path.dirname(__file__), "doc.txt"), encoding="utf-8") as stream:
    __doc__ = stream.read()
"""


def in_package(name: str, source: str) -> list:
    """The edits adding the module ``pkg.<name>`` (``source``) to the package's API."""
    return [
        write(f"src/pkg/{name}.py", source),
        replace("src/pkg/__init__.py", "import base, shapes,", f"import base, {name}, shapes,"),
        replace("src/pkg/__init__.py", '"base", "helper",', f'"base", "{name}", "helper",'),
    ]


EDITS = [
    *in_package("datadoc", DATADOC),
    write("src/pkg/doc.txt", "Data docstring, version one.\n"),
    # autosummary after sphinx-gallery, and an example that does not import the package:
    # the package is first imported after the examples ran, before any document is read.
    replace("docs/conf.py", '    "sphinx.ext.autosummary",\n', ""),
    replace(
        "docs/conf.py",
        '"docsaccel.gallery",\n',
        '"docsaccel.gallery",\n    "sphinx.ext.autosummary",\n',
    ),
    replace("docs/examples/plot_mean.py", "from pkg.stats import mean\n", "mean = len\n"),
]


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("datadoc")
    _, built = built_with(root, EDITS)
    assert "api/pkg.datadoc" in built.read, built.state
    return root / "cache"


def test_a_data_file_a_module_read_when_autosummary_imported_it_is_read_again(base, tmp_path):
    ws = Workspace(tmp_path)
    for edit in EDITS:
        ws.fresh_copy(edit)
    shutil.copytree(base, ws.cache)
    built = ws.build()
    assert built.returncode == 0, built.output
    assert "api/pkg.datadoc" not in built.read, built.state
    ws.fresh_copy(write("src/pkg/doc.txt", "Data docstring, version two.\n"))
    built = ws.build()
    assert built.returncode == 0, built.output
    assert built.state["origin"] == "cache", built.output
    assert "api/pkg.datadoc" in built.read, built.state
    assert "version two" in (ws.outdir / "api" / "pkg.datadoc.html").read_text("utf-8")
    assert ws.differences() == []


CATALOG = """msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\\n"

msgid "{msgid}"
msgstr "{msgstr}"
"""


def test_a_message_catalog_added_for_a_page_that_had_none_reads_it_again(tmp_path):
    ws = Workspace(tmp_path)
    ws.fresh_copy(
        replace(
            "docs/conf.py",
            'project = "pkg"',
            'project = "pkg"\nlanguage = "fr"\nlocale_dirs = ["locale"]',
        )
    )
    ws.fresh_copy(
        write(
            "docs/locale/fr/LC_MESSAGES/guide.po",
            CATALOG.format(msgid="Guide", msgstr="Le guide"),
        )
    )
    first = ws.build()
    assert first.returncode == 0, first.output
    ws.fresh_copy(
        write(
            "docs/locale/fr/LC_MESSAGES/other.po",
            CATALOG.format(msgid="Other page", msgstr="Autre page"),
        )
    )
    built = ws.build()
    assert built.returncode == 0, built.output
    assert built.state["origin"] == "cache", built.output
    assert "other" in built.read, built.state
    assert "Autre page" in (ws.outdir / "other.html").read_text("utf-8")
    assert ws.differences() == []


def test_a_page_showing_a_path_of_a_checkout_that_moved_is_read_again(tmp_path):
    # The state is relocated into the moved checkout, its paths rewritten: a path the
    # page's source spells out must stay as written, and only reading the page tells.
    first = Workspace(tmp_path / "one")
    text = f"Paths\n=====\n\nThe tree was in ``{first.project}/src``.\n"
    edits = [
        write("docs/paths.rst", text),
        replace("docs/index.rst", "   other\n", "   other\n   paths\n"),
    ]
    for edit in edits:
        first.fresh_copy(edit)
    built = first.build()
    assert built.returncode == 0, built.output
    moved = Workspace(tmp_path / "two")
    for edit in edits:
        moved.fresh_copy(edit)
    shutil.copytree(first.cache, moved.cache)
    # A new page: every page is written again, from the relocated doctrees.
    moved.fresh_copy(write("docs/extra.rst", "Extra\n=====\n\nMore.\n"))
    moved.fresh_copy(replace("docs/index.rst", "   paths\n", "   paths\n   extra\n"))
    built = moved.build()
    assert built.returncode == 0, built.output
    assert built.state["origin"] == "cache", built.output
    assert "paths" in built.read, built.state
    assert str(first.project) in (moved.outdir / "paths.html").read_text("utf-8")
    assert moved.differences() == []


CONF_IMPORTS = [
    *EDITS[:4],
    # conf.py imports the package before any extension loads (for its version, say), and
    # the example shows the docstring the module read then.
    replace(
        "docs/conf.py",
        'sys.path.insert(0, os.path.abspath("../src"))\n',
        'sys.path.insert(0, os.path.abspath("../src"))\nimport pkg  # noqa: E402\n',
    ),
    replace(
        "docs/examples/plot_mean.py",
        "print(mean([1.0, 2.0, 3.0]))",
        "import pkg.datadoc\n\nprint(mean([1.0, 2.0, 3.0]), pkg.datadoc.__doc__)",
    ),
]


def test_a_data_file_a_module_read_when_conf_py_imported_it_is_a_dependency(tmp_path):
    # The module body ran before docsaccel loaded: a child imports it again to see what it
    # read, so the page showing its docstring and the example printing it both see the edit.
    ws = Workspace(tmp_path)
    edit = write("src/pkg/doc.txt", "Data docstring, version two.\n")
    _served_then_changed(ws, CONF_IMPORTS, "api/pkg.datadoc", edit)
    assert "version two" in (ws.outdir / "auto_examples" / "plot_mean.html").read_text("utf-8")
    assert ws.differences() == []


def _fresh_builds(ws: Workspace, edits: list, times: int = 2):
    """``times`` builds, each from a fresh copy with ``edits``, each asserted to succeed."""
    for edit in edits:
        ws.fresh_copy(edit)
    for _ in range(times):
        ws.fresh_copy()
        built = ws.build()
        assert built.returncode == 0, built.output
        yield built


def _served_then_changed(ws: Workspace, edits: list, page: str, edit) -> None:
    """Builds from fresh copies with ``edits``, the last served from the cache (``page``
    not read, the example not run), then one with ``edit`` too: ``page`` is read and
    ``examples/plot_mean.py`` runs again."""
    built = list(_fresh_builds(ws, edits))[-1]
    assert built.state["origin"] == "cache", built.output
    assert page not in built.read and not built.ran, built.state
    built = _build_with(ws, edit)
    assert page in built.read, built.state
    assert "examples/plot_mean.py" in built.ran, built.output


def _build_with(ws: Workspace, edit):
    """One build from a fresh copy with ``edit`` too, asserted to succeed."""
    ws.fresh_copy(edit)
    built = ws.build()
    assert built.returncode == 0, built.output
    return built


def _imported_by_conf_py(name: str, source: str) -> list:
    """The edits adding ``pkg.<name>`` (``source``), which conf.py imports."""
    return [
        write(f"src/pkg/{name}.py", source),
        replace(
            "docs/conf.py",
            'sys.path.insert(0, os.path.abspath("../src"))\n',
            f'sys.path.insert(0, os.path.abspath("../src"))\nimport pkg.{name}  # noqa: E402\n',
        ),
    ]


def test_a_module_conf_py_imported_that_cannot_be_imported_again_is_run_and_read_always(
    tmp_path,
):
    # What the package's modules read when conf.py imported them is unknown: when in doubt,
    # the pages and the example using them are read and run in every build; the rest is
    # served as usual.
    ws = Workspace(tmp_path)
    once = "import sys\n\nif sys.argv[0] == '-c':\n    raise RuntimeError('imported twice')\n"
    for built in _fresh_builds(ws, _imported_by_conf_py("once", once)):
        assert built.output.count("RuntimeError: imported twice") == 1, built.output
        assert "examples/plot_mean.py" in built.ran, built.output
    assert built.state["origin"] == "cache", built.output
    assert {"api/pkg.stats", "api/pkg.stats.mean"} <= built.read, built.state["read"]
    assert "guide" not in built.read and "other" not in built.read, built.state["read"]
    # The page says why: the reads of a module it shows are unknown.
    reasons = str(built.state["read"]["api/pkg.stats"])
    assert "read when conf.py imported it is unknown" in reasons, reasons
    assert "an import failed" not in reasons, reasons
    assert ws.differences() == []


def test_conf_py_imports_run_again_write_nothing_under_the_roots(tmp_path):
    # A module body appending to a file the docs include: the child that runs conf.py
    # again may not write it a second time (its reads are then unknown).
    ws = Workspace(tmp_path)
    logging = (
        "import os\n\n"
        "with open(os.path.join(os.path.dirname(__file__), '..', '..', 'docs', 'log.txt'),"
        " 'a', encoding='utf-8') as _log:\n"
        "    _log.write('loaded\\n')\n"
    )
    edits = [
        *_imported_by_conf_py("logs", logging),
        replace(
            "docs/other.rst",
            "See :ref:`setup-guide`",
            ".. literalinclude:: log.txt\n\nSee :ref:`setup-guide`",
        ),
    ]
    for built in _fresh_builds(ws, edits):
        assert (ws.docs / "log.txt").read_text("utf-8") == "loaded\n"
        assert "would be written a second time" in built.output, built.output
    assert ws.differences() == []


def test_a_conf_py_that_writes_pages_leaves_its_imports_to_be_imported_by_name(tmp_path):
    # conf.py generates a file under the roots, so it cannot run again in the child: the
    # modules it imported are imported by name, their reads known, the example cached.
    ws = Workspace(tmp_path)
    generates = replace(
        "docs/conf.py",
        "import pkg  # noqa: E402\n",
        "import pkg  # noqa: E402\n\n"
        "with open('generated.txt', 'w', encoding='utf-8') as _out:\n"
        "    _out.write('made by conf.py\\n')\n",
    )
    for built in _fresh_builds(ws, [*CONF_IMPORTS, generates]):
        assert "conf.py could not run again" in built.output, built.output
    assert not built.ran and "api/pkg.datadoc" not in built.read, built.state
    ws.fresh_copy(write("src/pkg/doc.txt", "Data docstring, version two.\n"))
    built = ws.build()
    assert built.returncode == 0, built.output
    assert "api/pkg.datadoc" in built.read, built.state
    assert "examples/plot_mean.py" in built.ran, built.output
    assert ws.differences() == []


GLOSSARY = """import glob
import os

_terms = glob.glob(os.path.join(os.path.dirname(__file__), "terms", "*.txt"))
__doc__ = "Terms: " + ", ".join(sorted(os.path.basename(p) for p in _terms)) + "."
"""


@pytest.mark.parametrize("importer", ["conf.py", "autosummary"])
def test_a_file_added_to_a_folder_a_module_listed_when_imported_is_seen(tmp_path, importer):
    # The module body lists a folder when it is imported (before any document is read,
    # by conf.py or by autosummary's generation): the page showing its docstring and the
    # example printing it see a file added there, as a clean build does.
    ws = Workspace(tmp_path)
    edits = [
        *in_package("glossary", GLOSSARY),
        write("src/pkg/terms/alpha.txt", "Alpha.\n"),
        replace(
            "docs/examples/plot_mean.py",
            "print(mean([1.0, 2.0, 3.0]))",
            "import pkg.glossary\n\nprint(mean([1.0, 2.0, 3.0]), pkg.glossary.__doc__)",
        ),
    ]
    if importer == "conf.py":
        edits += CONF_IMPORTS[4:5]
    _served_then_changed(ws, edits, "api/pkg.glossary", write("src/pkg/terms/beta.txt", "B.\n"))
    page = (ws.outdir / "auto_examples" / "plot_mean.html").read_text("utf-8")
    assert "alpha.txt, beta.txt" in page
    assert ws.differences() == []


#: A package beside ``docs/`` with the metadata ``pip install -e .`` of a setuptools
#: project leaves beside it (``mypkg.egg-info``), imported by ``conf.py``, shown on a page.
EGG_INFO = [
    write("mypkg/__init__.py", '"""A package."""\n\n\ndef f():\n    """One."""\n    return 1\n'),
    write("mypkg.egg-info/PKG-INFO", "Metadata-Version: 2.1\nName: mypkg\nVersion: 0.1\n"),
    write("mypkg.egg-info/top_level.txt", "mypkg\n"),
    write("mypkg.egg-info/SOURCES.txt", "mypkg/__init__.py\n"),
    replace(
        "docs/conf.py",
        'sys.path.insert(0, os.path.abspath("../src"))\n',
        'sys.path.insert(0, os.path.abspath("../src"))\n'
        'sys.path.insert(0, os.path.abspath(".."))\n'
        "import mypkg  # noqa: E402\n",
    ),
    write("docs/flat.rst", "Flat\n====\n\n.. autofunction:: mypkg.f\n"),
    replace("docs/index.rst", "   guide\n", "   guide\n   flat\n"),
]


def test_a_package_beside_its_egg_info_is_restored(tmp_path):
    # Telling whether a module is the project's reads installed metadata, here under the
    # roots: the recorder must not see those reads (each would ask again, until a
    # RecursionError failed the child that imports conf.py's modules again, and the page
    # showing the package was read in every build).
    ws = Workspace(tmp_path)
    built = list(_fresh_builds(ws, EGG_INFO))[-1]
    assert "RecursionError" not in built.output, built.output
    assert built.state["origin"] == "cache", built.output
    assert built.read == set(), built.state["read"]


TABLE = '''"""A read-only table."""

from collections.abc import Mapping


class Table(Mapping):
    """Rows by key."""

    def __init__(self, rows=None):
        self._rows = dict(rows or {})

    def __getitem__(self, key):
        return self._rows[key]

    def __iter__(self):
        return iter(self._rows)

    def __len__(self):
        return len(self._rows)


def other():
    """Something else."""
'''
TABLE_PAGE = (
    "Table\n=====\n\n.. autoclass:: pkg.table.Table\n   :members:\n   :inherited-members:\n"
)


def test_a_page_showing_methods_a_library_class_defines_is_no_dynamic_docstring(tmp_path):
    """``Table`` inherits ``keys``, ``items``... from ``collections.abc.Mapping``: the
    page shows the standard library's docstrings (not in the project's source), which
    change with Python, not with an edit of another docstring of the module."""
    edits = [
        write("src/pkg/table.py", TABLE),
        write("docs/table.rst", TABLE_PAGE),
        replace("docs/index.rst", "   other\n", "   other\n   table\n"),
    ]
    ws, _ = built_with(tmp_path / "first", edits)
    assert "keys" in (ws.outdir / "table.html").read_text("utf-8")
    ws = from_cache(ws.cache, tmp_path / "second", edits)
    ws.fresh_copy(replace("src/pkg/table.py", "Something else.", "Something else again."))
    built = ws.build()
    assert built.returncode == 0, built.output
    assert built.state["origin"] == "cache", built.output
    assert "table" not in built.read, built.state["read"]
    assert ws.differences() == []
