"""When in doubt, read again: what docsaccel cannot see into makes a build read more, never
less. Each test builds a project with the odd part twice, from fresh copies (the second
with the first's cache), and compares the second's output with a clean build's."""

from __future__ import annotations

import shutil

import pytest
from helpers.incremental_build import (
    Workspace,
    extension,
    local_extension,
    needs_state,
    replace,
    write,
)

pytestmark = [pytest.mark.slow, needs_state]

#: Every document of the test project (tests/test_incremental_build.py lists them).
DOCUMENTS = 18

LOCAL_EXTENSION = '''\
"""A project's own extension."""


def _note(app, doctree):
    if app.env.docname in NOTED:
        app.env.note_reread()


NOTED = {"other"}


def setup(app):
    app.connect("doctree-read", _note)
    return {"version": "1", "parallel_read_safe": %s}
'''


def _with_extension(parallel_safe: str):
    def edit(project):
        for change in local_extension("localext", LOCAL_EXTENSION % parallel_safe):
            change(project)

    return edit


def _twice(ws: Workspace):
    first = ws.build()
    assert first.returncode == 0, first.output
    ws.fresh_copy()
    second = ws.build()
    assert second.returncode == 0, second.output
    assert second.state["origin"] == "cache", second.output
    return second


@pytest.mark.parametrize("jobs", [1, 2], ids=["serial", "j2"])
def test_an_extension_unsafe_for_parallel_reading_reads_every_document(tmp_path, jobs):
    ws = Workspace(tmp_path, jobs=jobs)
    ws.fresh_copy(_with_extension("False"))
    built = _twice(ws)
    assert len(built.read) == DOCUMENTS, built.state
    assert "extension localext does not declare it can read documents apart" in built.output
    assert ws.differences() == []


def test_a_document_in_reread_always_is_read_in_every_build(tmp_path):
    ws = Workspace(tmp_path)
    ws.fresh_copy(_with_extension("True"))
    built = _twice(ws)
    assert built.read == {"other"}, built.state
    assert "read again in every build" in built.state["read"]["other"]
    assert ws.differences() == []


CONF_SETUP = """

WORD = "Other"


def _replace(app, docname, source):
    source[0] = source[0].replace("See ", f"{WORD}: see ")


def setup(app):
    app.connect("source-read", _replace)
"""


def test_a_handler_of_conf_py_reads_every_document_when_conf_py_changes(tmp_path):
    """``conf.py``'s ``setup()`` connects a handler no extension declares: a change of the
    value it uses is in no configuration value Sphinx compares."""
    ws = Workspace(tmp_path)
    ws.fresh_copy(lambda project: (project / "docs" / "conf.py").open("a").write(CONF_SETUP))
    first = ws.build()
    assert first.returncode == 0, first.output
    ws.fresh_copy()
    same = ws.build()
    assert same.returncode == 0 and same.state["origin"] == "cache", same.output
    assert same.read == set(), same.state
    ws.fresh_copy(replace("docs/conf.py", 'WORD = "Other"', 'WORD = "Elsewhere"'))
    changed = ws.build()
    assert changed.returncode == 0, changed.output
    assert len(changed.read) == DOCUMENTS, changed.state
    assert "extension conf.py changed" in changed.output
    assert "Elsewhere: see" in (ws.outdir / "other.html").read_text("utf-8")
    assert ws.differences() == []


CONF_PATCH = """

import pkg.stats

pkg.stats.mean.__doc__ = "Patched: one."
"""

CONF_DATA = """

import json

with open(os.path.join(os.path.dirname(__file__), "extra.json"), encoding="utf-8") as f:
    EXTRA = json.load(f)


def _note(app, what, name, obj, options, lines):
    if name == "pkg.stats.mean":
        lines.append(EXTRA["note"])


def setup(app):
    app.connect("autodoc-process-docstring", _note)
"""


def _append(text: str):
    return lambda project: (project / "docs" / "conf.py").open("a").write(text)


def _built_after(ws: Workspace, setup, edit):
    """A build with the cache of ``setup``'s tree, then the build after ``edit``."""
    for change in setup:
        ws.fresh_copy(change)
    first = ws.build()
    assert first.returncode == 0, first.output
    ws.fresh_copy(edit)
    changed = ws.build()
    assert changed.returncode == 0, changed.output
    return changed


@pytest.mark.parametrize(
    ("setup", "edit", "shown"),
    [
        # No setup(): conf.py patches a docstring its source does not hold.
        (
            [_append(CONF_PATCH)],
            replace("docs/conf.py", "Patched: one.", "Patched: two."),
            "Patched: two.",
        ),
        # The data a handler of conf.py uses comes from a file conf.py reads.
        (
            [_append(CONF_DATA), write("docs/extra.json", '{"note": "Note one."}')],
            write("docs/extra.json", '{"note": "Note two."}'),
            "Note two.",
        ),
        # Editing a setting Sphinx compares is no change of the code of conf.py: the
        # state is kept (the pages are written again).
        (
            [],
            replace("docs/conf.py", 'project = "pkg"', 'project = "pkg"\nhtml_title = "T"'),
            "",
        ),
    ],
    ids=["patched docstring", "data conf.py reads", "html setting"],
)
def test_what_conf_py_does_beyond_its_settings_reads_every_document(tmp_path, setup, edit, shown):
    ws = Workspace(tmp_path)
    changed = _built_after(ws, setup, edit)
    if shown:
        assert changed.state["origin"] == "none", changed.output
        assert "extension conf.py changed" in changed.output
        page = (ws.outdir / "api" / "pkg.stats.mean.html").read_text("utf-8")
        assert shown in page
    else:
        assert changed.state["origin"] == "cache", changed.output
        assert changed.read == set(), changed.state
    assert ws.differences() == []


_LINKCODE_HELPER = [
    write(
        "docs/helpers.py",
        'def linkcode_resolve(domain, info):\n    return "https://one.example/" + info["module"]\n',
    ),
    replace(
        "docs/conf.py",
        'sys.path.insert(0, os.path.abspath("../src"))',
        'sys.path.insert(0, os.path.abspath("../src"))\nsys.path.insert(0, os.path.abspath("."))',
    ),
    extension("sphinx.ext.linkcode"),
    replace("docs/conf.py", '"sg_execution_times.rst"]', '"sg_execution_times.rst", "helpers.py"]'),
    replace(
        "docs/conf.py",
        "autosummary_generate = True",
        "from helpers import linkcode_resolve\nautosummary_generate = True",
    ),
]
_SKIP_HANDLER = [
    write(
        "src/pkg/_docs.py",
        'def skip(app, what, name, obj, would_skip, options):\n    return name == "area" or None\n',
    ),
    replace(
        "docs/conf.py",
        "autosummary_generate = True",
        "import pkg._docs\n\n\ndef setup(app):\n"
        '    app.connect("autodoc-skip-member", pkg._docs.skip)\n\n\nautosummary_generate = True',
    ),
]


@pytest.mark.parametrize(
    ("setup", "edit", "shown"),
    [
        (_LINKCODE_HELPER, replace("docs/helpers.py", "one.example", "two.example"), "two.example"),
        (_SKIP_HANDLER, replace("src/pkg/_docs.py", '"area"', '"nothing"'), "Circle.area"),
        ([], write("docs/docutils.conf", "[general]\nsectnum_xform: 0\n"), ""),
    ],
    ids=["helper beside conf.py", "handler from the package", "docutils.conf added"],
)
def test_code_conf_py_uses_beyond_its_own_file_is_part_of_the_context(tmp_path, setup, edit, shown):
    ws = Workspace(tmp_path)
    changed = _built_after(ws, setup, edit)
    assert changed.state["origin"] == "none", changed.output
    assert "extension conf.py changed" in changed.state["why_full"], changed.state
    if shown:
        pages = "".join(p.read_text("utf-8") for p in (ws.outdir / "api").glob("*.html"))
        assert shown in pages
    assert ws.differences() == []


def test_a_command_line_setting_no_rule_compares_is_part_of_the_context(tmp_path):
    # -n (nitpicky) makes a broken reference a warning: with -W a clean build fails; a
    # build restoring the state of a build without -n must not pass.
    ws = Workspace(tmp_path)
    ws.fresh_copy(replace("docs/other.rst", "See :ref:", "See :class:`pkg.Missing`.\n\nSee :ref:"))
    first = ws.build()
    assert first.returncode == 0, first.output
    ws.fresh_copy()
    strict = ws.build(None, "-n", "-W", "--keep-going")
    assert strict.returncode == 1, strict.output
    assert "pkg.Missing" in strict.output
    assert strict.state["origin"] == "none", strict.output
    assert "command line" in strict.state["why_full"], strict.state
    ws.fresh_copy()
    again = ws.build(None, "-n", "-W", "--keep-going")
    assert again.returncode == 1, again.output
    assert again.state["origin"] == "cache", again.output


def test_a_variable_docsaccel_cache_env_names_is_part_of_the_context(tmp_path):
    # The examples' outputs depend on it (the cache's context has it): so may the pages.
    ws = Workspace(tmp_path)
    ws.fresh_copy(
        replace(
            "docs/conf.py", "extensions = [", 'docsaccel_cache_env = ["PKG_MODE"]\nextensions = ['
        )
    )
    first = ws.build(env={"PKG_MODE": "alpha"})
    assert first.returncode == 0, first.output
    ws.fresh_copy()
    same = ws.build(env={"PKG_MODE": "alpha"})
    assert same.state["origin"] == "cache", same.output
    ws.fresh_copy()
    other = ws.build(env={"PKG_MODE": "beta"})
    assert other.returncode == 0, other.output
    assert other.state["origin"] == "none", other.output
    assert "environment (docsaccel_cache_env) changed" in other.state["why_full"], other.state
    assert len(other.read) == DOCUMENTS, other.state["read"]


def test_a_cache_folder_inside_the_source_folder_is_no_document(tmp_path):
    # The example pages it keeps are never read as the project's documents.
    ws = Workspace(tmp_path)
    for _ in range(2):  # the second restores from it
        shutil.rmtree(ws.outdir, ignore_errors=True)
        shutil.rmtree(ws.docs / "_build" / "doctrees", ignore_errors=True)
        built = ws.build(ws.docs / ".docsaccel-cache")
        assert built.returncode == 0, built.output
        assert "duplicate label" not in built.output, built.output
        assert "included in any toctree" not in built.output, built.output
        assert not (ws.outdir / ".docsaccel-cache").exists()
    assert built.state["origin"] == "cache", built.output
    assert ws.differences() == []


REGISTRY_EXTENSION = '''\
"""A project's own extension with a registry it loads when imported."""

import json
import os

with open(os.path.join(os.path.dirname(__file__), "registry.json"), encoding="utf-8") as _f:
    REGISTRY = json.load(_f)


def _substitute(app, docname, source):
    source[0] = source[0].replace("REGISTERED-NAMES", ", ".join(REGISTRY))


def setup(app):
    app.connect("source-read", _substitute)
    return {"version": "1", "parallel_read_safe": True}
'''


def test_a_file_a_local_extension_read_when_imported_is_part_of_the_context(tmp_path):
    ws = Workspace(tmp_path)
    for edit in [
        *local_extension("regext", REGISTRY_EXTENSION),
        write("docs/_ext/registry.json", '["a", "b"]\n'),
        replace(
            "docs/other.rst",
            "See :ref:`setup-guide`",
            "Registry: REGISTERED-NAMES.\n\nSee :ref:`setup-guide`",
        ),
    ]:
        ws.fresh_copy(edit)
    _twice(ws)
    ws.fresh_copy(write("docs/_ext/registry.json", '["a", "b", "c"]\n'))
    built = ws.build()
    assert built.returncode == 0, built.output
    assert "other" in built.read, built.state
    assert "Registry: a, b, c." in (ws.outdir / "other.html").read_text("utf-8")
    assert ws.differences() == []


def _gone(relative: str):
    def edit(project):
        (project / relative).unlink()

    return edit


def test_a_static_or_extra_file_removed_from_the_sources_leaves_the_site(tmp_path):
    # Sphinx copies them in every build; a restored one it no longer copies is deleted.
    ws = Workspace(tmp_path)
    for edit in [
        write("docs/_static/extra.css", "p { color: red; }\n"),
        write("docs/_extra/robots.txt", "User-agent: *\n"),
        replace(
            "docs/conf.py",
            'html_static_path = ["_static"]',
            'html_static_path = ["_static"]\nhtml_extra_path = ["_extra"]',
        ),
    ]:
        ws.fresh_copy(edit)
    _twice(ws)
    assert (ws.outdir / "robots.txt").is_file() and (ws.outdir / "_static" / "extra.css").is_file()
    ws.fresh_copy(_gone("docs/_static/extra.css"))
    ws.fresh_copy(_gone("docs/_extra/robots.txt"))
    built = ws.build()
    assert built.returncode == 0, built.output
    assert built.state["origin"] == "cache", built.output
    assert not (ws.outdir / "robots.txt").exists()
    assert not (ws.outdir / "_static" / "extra.css").exists()
    assert (ws.outdir / "_static" / "custom.css").is_file()
    assert ws.differences() == []


def _setting(line: str):
    return replace("docs/conf.py", 'html_theme = "alabaster"', f'html_theme = "alabaster"\n{line}')


@pytest.mark.parametrize(
    ("setup", "edit", "gone"),
    [
        ([], _setting("html_copy_source = False"), "_sources/guide.rst.txt"),
        ([], _setting('html_file_suffix = ".htm"'), "py-modindex.html"),
        ([], _setting("html_domain_indices = False"), "py-modindex.html"),
        (
            [
                write("docs/_templates/extra.html", "{% extends 'page.html' %}\n"),
                _setting('html_additional_pages = {"extra": "extra.html"}'),
            ],
            replace("docs/conf.py", 'html_additional_pages = {"extra": "extra.html"}', ""),
            "extra.html",
        ),
    ],
    ids=["sources off", "file suffix", "domain indices off", "additional page removed"],
)
def test_a_file_the_builder_no_longer_writes_leaves_the_site(tmp_path, setup, edit, gone):
    ws = Workspace(tmp_path)
    for change in setup:
        ws.fresh_copy(change)
    first = ws.build()
    assert first.returncode == 0, first.output
    assert (ws.outdir / gone).is_file()
    ws.fresh_copy(edit)
    built = ws.build()
    assert built.returncode == 0, built.output
    assert built.state["origin"] == "cache", built.output
    assert not (ws.outdir / gone).exists()
    assert ws.differences() == []
