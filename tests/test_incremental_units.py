"""The Sphinx-free parts of the Sphinx state: module pieces, page records and their
checks, the stored state, path relocation, object definitions, the context."""

from __future__ import annotations

import functools
import json
import os
import sys
import textwrap
from pathlib import Path, PurePosixPath

import pytest

from docsaccel.cache.fingerprint import sha256_of
from docsaccel.incremental.objects import definitions, is_dynamic
from docsaccel.incremental.pages import Checker, Place, Tables, empty_record
from docsaccel.incremental.pysource import compare, module_pieces
from docsaccel.incremental.relocate import relocate
from docsaccel.incremental.sphinxext.conf_facts import sphinx_libraries
from docsaccel.incremental.sphinxext.restore import build_folders
from docsaccel.incremental.sphinxext.untrusted_output import FinishedBuild
from docsaccel.incremental.sphinxext.writing import page_links, setting_text
from docsaccel.incremental.state_context import describe_difference, state_context
from docsaccel.incremental.state_store import StateError, StateStore

#: A last build that ended after every file was written: each of them is a build's.
_ALL_MADE = FinishedBuild(2**62, frozenset())

MODULE = '''\
"""A module."""

#: How many.
COUNT = 1



def mean(values):
    """Average."""
    return sum(values) / len(values)


class Base:
    """A base."""

    size = 2  #: its size

    def describe(self):
        """Say what it is."""
        return "base"
'''


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


@pytest.fixture
def module(tmp_path: Path) -> Path:
    path = tmp_path / "mod.py"
    path.write_text(MODULE)
    return path


def test_a_docstring_edit_is_a_docstring_and_text_change_of_that_definition(module):
    before = module_pieces(module)
    _edit(module, "Average.", "Mean of the values.")
    delta = compare(before, module_pieces(module))
    assert delta.code == () and delta.docs == {"mean"} and delta.texts == {"mean"}


def test_a_comment_changes_only_the_text_of_the_definition_holding_it(module):
    before = module_pieces(module)
    _edit(module, "#: its size", "#: how big it is")
    delta = compare(before, module_pieces(module))
    assert delta.code == () and delta.docs == frozenset() and delta.texts == {"Base"}


def test_code_changes_name_the_function_or_the_module_body(module):
    before = module_pieces(module)
    _edit(module, "return sum(values) / len(values)", "return sum(values) / max(len(values), 1)")
    middle = module_pieces(module)
    assert compare(before, middle).code == ("mean",)
    _edit(module, "COUNT = 1", "COUNT = 2")
    assert compare(middle, module_pieces(module)).code == ("<module>",)


def test_an_unparsable_module_is_an_unknown_change(module):
    before = module_pieces(module)
    module.write_text("def broken(:\n")
    assert module_pieces(module) is None
    assert compare(before, None).code_changed


def test_a_key_outside_the_root_is_relative_to_it(tmp_path):
    # A package beside the docs folder: found beside whichever checkout the key is read in.
    place = Place(str(tmp_path / "a" / "docs"))
    key = place.key(tmp_path / "a" / "src" / "pkg" / "stats.py")
    assert key == "../src/pkg/stats.py"
    moved = Place(str(tmp_path / "b" / "docs"))
    assert moved.path(key) == str(tmp_path / "b" / "src" / "pkg" / "stats.py")
    assert place.key(tmp_path / "a" / "docs" / "api.rst") == "api.rst"
    assert place.path("api.rst") == str(tmp_path / "a" / "docs" / "api.rst")
    # Far from the root (an installed theme, a virtual environment elsewhere): absolute.
    assert place.key("/elsewhere/theme/layout.html") == "/elsewhere/theme/layout.html"


def test_a_setting_names_the_folders_around_the_root_as_a_moved_checkout_does():
    one = {"examples_dirs": ["/w/one/docs/ex", "/w/one/examples"], "x": "/w/one/docsx"}
    two = {"examples_dirs": ["/w/two/docs/ex", "/w/two/examples"], "x": "/w/two/docsx"}
    assert setting_text(one, "/w/one/docs") == setting_text(two, "/w/two/docs")
    assert "<root>/../examples" in setting_text(one, "/w/one/docs")
    # A folder whose name only starts like the root's is another folder.
    assert "<root>x" not in setting_text(one, "/w/one/docs")
    # Right under the file system's root is no checkout's: left as it is.
    assert setting_text("/w/data", "/w/one/docs") == "/w/data"
    assert setting_text("/w/one/data", "/w/one/docs") == "<root>/../data"


def test_a_moved_checkout_reads_again_a_page_using_a_file_far_from_the_root(tmp_path):
    # A package three folders above the root is keyed absolute: in a moved checkout that
    # path may be the old checkout's file, not the one this build imports.
    far = tmp_path / "lib" / "core.py"
    far.parent.mkdir()
    far.write_text("x = 1\n")
    root = tmp_path / "a" / "b" / "c" / "docs"
    root.mkdir(parents=True)
    (root / "page.rst").write_text("Page\n====\n")
    place = Place(str(root))
    assert os.path.isabs(place.key(far))
    record = _record(place, root / "page.rst", files=[place.key(far)])
    tables = Checker(Tables(), str(root)).current_tables([record])
    assert Checker(tables, str(root)).reasons(record) == []
    moved = Checker(tables, str(root), moved=True).reasons(record)
    assert moved == [f"the checkout moved, and {far} is far from its root"]
    near = _record(place, root / "page.rst")
    assert Checker(tables, str(root), moved=True).reasons(near) == []


def _record(place: Place, source: Path, **fields) -> dict:
    record = empty_record(place.key(source))
    record.update(fields)
    return record


def test_checker_reads_again_only_what_shows_a_changed_docstring(tmp_path, module):
    place = Place(str(tmp_path))
    source = tmp_path / "page.rst"
    source.write_text("Page\n====\n")
    shows_mean = _record(place, source, modules={"mod.py": {"shown": ["mean"], "whole": False}})
    shows_base = _record(place, source, modules={"mod.py": {"shown": ["Base"], "whole": False}})
    tables = Checker(Tables(), str(tmp_path)).current_tables([shows_mean, shows_base])
    assert Checker(tables, str(tmp_path)).reasons(shows_mean) == []
    _edit(module, "Average.", "Mean of the values.")
    checker = Checker(tables, str(tmp_path))
    assert checker.reasons(shows_mean) == ["mod.py: mean changed"]
    assert checker.reasons(shows_base) == []
    dynamic = {**shows_base, "dynamic": True}
    assert checker.reasons(dynamic) == ["mod.py: docstring of mean changed"]


def test_checker_code_change_reads_again_every_page_using_the_module(tmp_path, module):
    place = Place(str(tmp_path))
    source = tmp_path / "page.rst"
    source.write_text("x\n")
    uses = _record(place, source, modules={"mod.py": {"shown": [], "whole": False}})
    tables = Checker(Tables(), str(tmp_path)).current_tables([uses])
    _edit(module, "return sum(values) / len(values)", "return 0")
    assert Checker(tables, str(tmp_path)).reasons(uses) == ["mod.py: mean changed"]


def test_checker_files_sources_created_files_and_records(tmp_path):
    place = Place(str(tmp_path))
    source, data, made = tmp_path / "page.rst", tmp_path / "data.txt", tmp_path / "made.txt"
    for path in (source, data, made):
        path.write_text("one")
    record = _record(place, source, files=["data.txt"], created={"made.txt": sha256_of(made)})
    tables = Checker(Tables(), str(tmp_path)).current_tables([record])
    made.unlink()  # written by a read: missing, a read writes it again
    assert Checker(tables, str(tmp_path)).reasons(record) == []
    data.write_text("two")
    source.write_text("two")
    assert Checker(tables, str(tmp_path)).reasons(record) == ["source changed", "data.txt changed"]
    made.write_text("other")
    assert "made.txt changed" in Checker(tables, str(tmp_path)).reasons(record)
    assert (
        Checker(tables, str(tmp_path))
        .reasons({"source": 3})[0]
        .startswith("its record is malformed")
    )
    assert Checker(tables, str(tmp_path)).reasons({**record, "reread": "it warned"})[0] == (
        "it warned"
    )


def test_checker_distribution_versions(tmp_path):
    place = Place(str(tmp_path))
    source = tmp_path / "page.rst"
    source.write_text("x")
    record = _record(place, source, dists=["pytest"])
    tables = Checker(Tables(), str(tmp_path)).current_tables([record])
    assert Checker(tables, str(tmp_path)).reasons(record) == []
    tables.dists["pytest"] = "0.0.1"
    (reason,) = Checker(tables, str(tmp_path)).reasons(record)
    assert reason.startswith("pytest 0.0.1 → ")


def _files(tmp_path: Path, name: str, texts: dict[str, str]) -> dict[str, Path]:
    folder = tmp_path / name
    found = {}
    for relative, text in texts.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        found[relative] = path
    return found


def _meta(root: str = "/repo") -> dict:
    return {"context": {"project": "docs"}, "root": root, "build": {"pages": {}}}


def test_state_store_round_trip(tmp_path):
    store = StateStore(tmp_path / "cache")
    doctrees = _files(tmp_path, "doctrees", {"environment.pickle": "env", "index.doctree": "d"})
    output = _files(tmp_path, "out", {"index.html": "<p>", "_static/a.css": "css"})
    store.save("k1", _meta(), {"doctrees": doctrees, "output": output})
    state = store.load("k1")
    restored = store.restore(state, {"doctrees": tmp_path / "d2", "output": tmp_path / "o2"})
    assert (tmp_path / "o2" / "_static" / "a.css").read_text() == "css"
    assert (tmp_path / "d2" / "environment.pickle").read_text() == "env"
    # Restored files look old to anything comparing modification times.
    assert os.stat(tmp_path / "o2" / "index.html").st_mtime == 0
    # Unchanged files are stored by the digest the restore checked.
    again = {"doctrees": {"environment.pickle": tmp_path / "d2" / "environment.pickle"}}
    store.save("k1", _meta(), again, known=restored)
    assert set(store.load("k1").files("doctrees")) == {"environment.pickle"}


def test_a_damaged_file_fails_the_whole_restore(tmp_path):
    store = StateStore(tmp_path / "cache")
    output = _files(tmp_path, "out", {"a.html": "a", "b.html": "b"})
    store.save("k", _meta(), {"doctrees": {}, "output": output})
    state = store.load("k")
    damaged = store._object(state.files("output")["b.html"])
    damaged.write_text("not b")
    with pytest.raises(StateError, match="does not match"):
        store.restore(state, {"doctrees": tmp_path / "d", "output": tmp_path / "o"})
    assert not (tmp_path / "o" / "a.html").exists()


@pytest.mark.parametrize(
    "content",
    ["not json", json.dumps({"schema": "other"}), json.dumps({"schema": "docsaccel.sphinx-state"})],
)
def test_unusable_state_files(tmp_path, content):
    store = StateStore(tmp_path / "cache")
    store.states.mkdir(parents=True)
    (store.states / "k.json").write_text(content)
    with pytest.raises(StateError):
        store.load("k")
    with pytest.raises(StateError, match="no such state"):
        store.load("other")


def test_a_state_naming_an_unsafe_path_is_refused(tmp_path):
    store = StateStore(tmp_path / "cache")
    output = _files(tmp_path, "out", {"a.html": "a"})
    store.save("k", _meta(), {"doctrees": {}, "output": output})
    path = store.states / "k.json"
    meta = json.loads(path.read_text())
    meta["output"]["../../escape.html"] = meta["output"].pop("a.html")
    path.write_text(json.dumps(meta))
    with pytest.raises(StateError, match="safe paths"):
        store.load("k")


def test_prune_keeps_the_newest_states_and_removes_what_no_state_names(tmp_path):
    store = StateStore(tmp_path / "cache")
    for key, text in (("old", "a" * 1000), ("new", "b" * 1000)):
        output = _files(tmp_path, key, {"page.html": text})
        store.save(key, _meta(), {"doctrees": {}, "output": output})
    os.utime(store.states / "old.json", (1, 1))
    removed, _, left = store.prune(1500)
    assert removed == 1 and left == 1000
    assert [p.stem for p, _ in store.all_states()] == ["new"]
    assert sum(1 for p in (store.folder / "objects").rglob("*") if p.is_file()) == 1


def test_prune_spares_young_files_while_a_build_saves(tmp_path):
    store = StateStore(tmp_path / "cache")
    output = _files(tmp_path, "out", {"page.html": "x" * 100})
    store.save("k", _meta(), {"doctrees": {}, "output": output})
    (store.states / "k.json").unlink()  # its objects are now named by no state
    with store._saving():  # a build saving
        store.prune(10**6)
    assert sum(1 for p in (store.folder / "objects").rglob("*") if p.is_file()) == 1
    store.prune(10**6)
    assert sum(1 for p in (store.folder / "objects").rglob("*") if p.is_file()) == 0


def test_relocate_moves_paths_under_the_old_root_only():
    value = {
        "src": PurePosixPath("/old/repo/docs"),
        "deps": {"/old/repo/docs/a.rst": {"/old/repo/src/m.py", "/usr/lib/x.py"}},
        "pair": ("/old/repository", "/old/repo"),
    }
    moved = relocate(value, "/old/repo", "/new/place")
    assert moved["src"] == PurePosixPath("/new/place/docs")
    assert moved["deps"] == {"/new/place/docs/a.rst": {"/new/place/src/m.py", "/usr/lib/x.py"}}
    assert moved["pair"] == ("/old/repository", "/new/place")


class _Owner:
    """Owner."""

    def method(self):
        """Documented in the owner."""


class _Child(_Owner):
    def method(self):
        return 1


def _decorator(function):
    @functools.wraps(function)
    def wrapper(*args):
        return function(*args)

    return wrapper


@_decorator
def _wrapped():
    """Wrapped."""


def _copied():
    pass


_copied.__doc__ = "Made at run time."


def test_definitions_follow_inheritance_and_wrapping():
    name = f"{__name__}._Child.method"
    found = {d.qualname for d in definitions(_Child.method, name)}
    assert {"_Child.method", "_Owner.method", "_Owner", "_Child"} <= found
    assert not is_dynamic(_Child.method, definitions(_Child.method, name))
    wrapped = {d.qualname for d in definitions(_wrapped, f"{__name__}._wrapped")}
    assert {"_decorator.<locals>.wrapper", "_wrapped"} <= wrapped
    assert not is_dynamic(_wrapped, definitions(_wrapped, f"{__name__}._wrapped"))
    assert is_dynamic(_copied, definitions(_copied, f"{__name__}._copied"))
    module = sys.modules[__name__]
    assert [d.qualname for d in definitions(module, __name__)] == ["<module>"]


def test_context_difference_names_what_changed():
    old = state_context(
        project="docs",
        builder="html",
        sphinx="9.0.3",
        docutils="0.21",
        extensions={"furo": "1", "x": "1"},
        theme="furo",
        tags=[],
    )
    new = {**old, "sphinx": "9.0.4", "extensions": {"furo": "2", "y": "1"}}
    text = describe_difference(old, new)
    assert text == (
        "Sphinx changed: 9.0.3 → 9.0.4; extension furo changed: 1 → 2; "
        "extension x removed; extension y added"
    )
    # Pygments colours every code block: an upgrade is no extension's, and changes pages.
    libraries = sphinx_libraries()
    assert {"pygments", "jinja2", "docutils"} <= set(libraries)
    upgraded = {**old, "libraries": {**libraries, "pygments": "0.0"}}
    with_them = {**old, "libraries": libraries}
    assert describe_difference(with_them, upgraded) == (
        f"library pygments changed: {libraries['pygments']} → 0.0"
    )


def test_pieces_are_stable_across_processes(tmp_path, module):
    import subprocess

    code = textwrap.dedent(
        f"""
        import json
        from docsaccel.incremental.pysource import module_pieces
        print(json.dumps(module_pieces({str(module)!r})))
        """
    )
    runs = [
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        for _ in range(2)
    ]
    assert runs[0].stdout == runs[1].stdout
    assert json.loads(runs[0].stdout) == module_pieces(module)


def _search_index(terms: dict) -> str:
    index = {"docnames": ["api", "auto_examples/plot_mean"], "terms": terms}
    return f"Search.setIndex({json.dumps(index)})"


def test_the_oracle_masks_the_digits_of_measured_times_in_the_search_index(tmp_path):
    """A clean build of the same tree has other times, so other words in the index."""
    from docsaccel.incremental.oracle import differences, output_files

    outputs = []
    for seconds, word in [("0.011", "011"), ("0.019", "019")]:
        out = tmp_path / word
        (out / "auto_examples").mkdir(parents=True)
        (out / "api.html").write_text("<p>3 values</p>")
        time = f"<p>Total running time: (0 minutes {seconds} seconds)</p>"
        (out / "auto_examples" / "plot_mean.html").write_text(time)
        terms = {word: 1, "3": [0, 1], "mean": 1}
        (out / "searchindex.js").write_text(_search_index(terms))
        outputs.append(output_files(out))
    assert differences(*outputs) == []
    # A number of a page without a measured time still counts.
    (tmp_path / "019" / "searchindex.js").write_text(_search_index({"019": 1, "mean": 1}))
    assert differences(outputs[0], output_files(tmp_path / "019")) == ["searchindex.js"]


def test_page_links_are_the_output_files_a_page_shows_or_offers(tmp_path):
    out = tmp_path / "html"
    files = ["_images/a.png", "_images/a_2x.png", "_images/b c.png", "_static/x.css"]
    for name in [*files, "_downloads/d/data.zip", "other.html", "api/page.html"]:
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text("x")
    (out / "api" / "page.html").write_text(
        '<img src="../_images/a.png" srcset="../_images/a.png, ../_images/a_2x.png 2x">'
        "<img src='../_images/b%20c.png?v=1'>"
        '<a href="../_downloads/d/data.zip#top">zip</a> <a href="../other.html">page</a>'
        '<link href="../_static/x.css"> <a href="https://example.org/_images/a.png">ext</a>'
        '<img src="data:image/png;base64,AAAA"> <a href="../../outside.png">out</a>'
        '<img src="../_images/missing.png"> <a href="#here">anchor</a>'
    )
    found = page_links(out / "api" / "page.html", out, {"other.html", "api/page.html"})
    images = ["_images/a.png", "_images/a_2x.png", "_images/b c.png"]
    assert found == ["_downloads/d/data.zip", *images]
    assert page_links(out / "gone.html", out, set()) == []


@pytest.mark.parametrize(
    ("sphinx_release", "gallery_release", "named"),
    [
        ((9, 0, 4, "final", 0), "0.22.1", []),
        ((8, 1, 3, "final", 0), "0.22.1", ["Sphinx 8.1.3"]),
        ((9, 0, 4, "final", 0), "0.18.0", ["sphinx-gallery 0.18"]),
        ((8, 1, 3, "final", 0), "0.18.0", ["Sphinx 8.1.3", "sphinx-gallery 0.18"]),
    ],
)
def test_the_state_off_names_every_release_it_was_not_checked_with(
    monkeypatch, sphinx_release, gallery_release, named
) -> None:
    import sphinx
    import sphinx_gallery

    from docsaccel.incremental.sphinxext import restore

    monkeypatch.setattr(sphinx, "version_info", sphinx_release)
    monkeypatch.setattr(sphinx, "__version__", ".".join(map(str, sphinx_release[:3])))
    monkeypatch.setattr(sphinx_gallery, "__version__", gallery_release)
    reasons = restore._unchecked_releases()
    assert [reason.rpartition("this is ")[2] for reason in reasons] == named


def test_an_extension_node_replaced_when_the_page_is_written_is_filled_late():
    from docutils import nodes as dn
    from sphinx import addnodes
    from sphinx.ext.todo import todolist
    from sphinx.ext.viewcode import viewcode_anchor

    from docsaccel.incremental.sphinxext.exports import filled_late, placeholders

    read = dn.section()
    read += [todolist(), todolist(), viewcode_anchor(), addnodes.pending_xref(), dn.paragraph()]
    counts = placeholders(read)
    # Docutils', Sphinx's core and viewcode's anchor (a link whatever other pages hold) out.
    assert counts == {"sphinx.ext.todo.todolist": [2, 0]}
    written = dn.section()
    written += [todolist(), dn.paragraph()]  # one of the two replaced
    assert filled_late(counts, written) == ["sphinx.ext.todo.todolist"]
    assert filled_late(counts, read) == []
    assert filled_late({}, written) == []
    # Kept, and filled in place.
    filled = dn.section()
    filled += [todolist(), todolist()]
    filled[0] += dn.paragraph(text="a todo of another page")
    assert filled_late(counts, filled) == ["sphinx.ext.todo.todolist"]


@pytest.mark.parametrize("page", ["sg_execution_times.html", "sg_execution_times/index.html"])
def test_the_oracle_masks_the_execution_times_page_as_html_and_dirhtml_name_it(tmp_path, page):
    from docsaccel.incremental.oracle import differences, output_files

    outputs = []
    for rows in ["<td>plot_a.py</td><td>00:01.2</td>", "<td>plot_b.py</td><td>00:00.9</td>"]:
        out = tmp_path / str(len(outputs)) / "auto_examples"
        (out / page).parent.mkdir(parents=True)
        (out / page).write_text(f"<table>{rows}</table>")
        outputs.append(output_files(out.parent))
    assert differences(*outputs) == []


@pytest.mark.parametrize(
    ("srcdir", "outdir", "doctreedir", "expected"),
    [
        # make html: _build holds both; plot_directive writes beside the doctrees.
        ("/p/docs", "/p/docs/_build/html", "/p/docs/_build/doctrees", ["/p/docs/_build"]),
        # sphinx-build's default: the doctrees in the HTML folder.
        ("/p/docs", "/p/docs/_build", "/p/docs/_build/.doctrees", ["/p/docs/_build"]),
        # Folders apart: what holds both holds the sources; the doctrees' parent does not.
        ("/p/docs", "/p/html", "/tmp/d/doctrees", ["/tmp/d"]),
        # The doctrees beside the sources: their parent holds the sources.
        ("/p/docs", "/p/docs/html", "/p/doctrees", []),
    ],
)
def test_the_build_folders_are_never_the_sources_or_above_them(
    srcdir, outdir, doctreedir, expected
):
    assert build_folders(Path(srcdir), Path(outdir), Path(doctreedir)) == expected


def test_tables_leave_out_the_files_edited_after_the_build_used_them(tmp_path):
    """A module counts from the build's start, any other file from the reads' start."""
    for name in ("mod.py", "page.rst", "early.rst"):
        (tmp_path / name).write_text("x\n", "utf-8")
    os.utime(tmp_path / "early.rst", ns=(1_000, 1_000))
    os.utime(tmp_path / "mod.py", ns=(2_000, 2_000))
    os.utime(tmp_path / "page.rst", ns=(2_000, 2_000))
    tables = Tables(
        files={"mod.py": "a", "page.rst": "b", "early.rst": "c"}, modules={"mod.py": {"code": "x"}}
    )
    edited = tables.forget_edited(
        Place(str(tmp_path)), modules_since_ns=1_500, files_since_ns=3_000
    )
    assert edited == ["mod.py"]
    assert tables.files == {"mod.py": None, "page.rst": "b", "early.rst": "c"}
    assert tables.modules == {"mod.py": None}
    tables.forget_edited(Place(str(tmp_path)), modules_since_ns=1_500, files_since_ns=1_500)
    assert tables.files["page.rst"] is None and tables.files["early.rst"] == "c"


def test_an_output_folder_holding_the_sources_is_never_emptied(tmp_path):
    """A build whose output folder holds its sources (``sphinx-build docs .``) or the
    cache keeps every file there: such a folder is no build's alone."""
    from docsaccel.incremental.sphinxext.untrusted_output import keep_only_restored

    sources = tmp_path / "docs"
    sources.mkdir()
    (sources / "index.rst").write_text("Title\n=====\n")
    (tmp_path / "page.html").write_text("")
    assert keep_only_restored(tmp_path, [], [], [str(sources)], _ALL_MADE) == 0
    assert (sources / "index.rst").is_file() and (tmp_path / "page.html").is_file()
    cache = str(tmp_path.parent / "cache")
    assert keep_only_restored(tmp_path, [], [sources], [cache], _ALL_MADE) == 1
    assert (sources / "index.rst").is_file() and not (tmp_path / "page.html").exists()


def test_what_sphinx_never_writes_in_an_output_folder_is_kept(tmp_path):
    """A folder a build does not trust is emptied of pages only: a site's ``.git`` (a
    published branch checked out there), a ``.nojekyll`` and links stay, with what they
    hold; Sphinx's own ``.buildinfo`` goes with the pages."""
    from docsaccel.incremental.sphinxext.untrusted_output import keep_only_restored

    out = tmp_path / "html"
    (out / ".git" / "objects").mkdir(parents=True)
    (out / ".git" / "HEAD").write_text("ref: refs/heads/gh-pages\n")
    (out / ".nojekyll").write_text("")
    (out / ".buildinfo").write_text("")
    (out / "old").mkdir()
    (out / "old" / "gone.html").write_text("")
    target = tmp_path / "elsewhere.txt"
    target.write_text("kept")
    (out / "link.txt").symlink_to(target)

    assert keep_only_restored(out, [], [], [], _ALL_MADE) == 2
    left = sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))
    assert left == [".git", ".git/HEAD", ".git/objects", ".nojekyll", "link.txt"], left
    assert target.read_text() == "kept"


def test_where_no_build_finished_only_what_builds_wrote_since_the_first_start_goes(tmp_path):
    """A folder no build with the Sphinx state finished in holds a plain Sphinx build's
    pages or the user's files (a ``CNAME``), which nothing tells apart: all stay, as
    Sphinx leaves them. Once a build started there and did not finish, what is newer than
    its start is its own and goes."""
    from docsaccel.incremental.sphinxext.untrusted_output import (
        FinishedBuild,
        keep_only_restored,
    )

    out = tmp_path / "html"
    out.mkdir()
    since_ns = 2_000_000_000 * 10**9
    for name, at_ns in [("CNAME", since_ns - 10**9), ("page.html", since_ns - 10**9)]:
        (out / name).write_text("")
        os.utime(out / name, ns=(at_ns, at_ns))
    assert keep_only_restored(out, [], [], [], FinishedBuild.none()) == 0
    (out / "killed.html").write_text("")
    os.utime(out / "killed.html", ns=(since_ns + 10**9, since_ns + 10**9))
    assert keep_only_restored(out, [], [], [], FinishedBuild.none(since_ns)) == 1
    assert sorted(p.name for p in out.iterdir()) == ["CNAME", "page.html"]


def test_after_a_finished_build_only_what_a_build_wrote_is_deleted(tmp_path):
    """The folder's last build finished (of another context): a file it recorded, or one
    older than its end, goes; a file added since that no build recorded is the user's."""
    from docsaccel.incremental.last_build import LastBuild
    from docsaccel.incremental.sphinxext.untrusted_output import (
        FinishedBuild,
        keep_only_restored,
    )

    out = tmp_path / "html"
    (out / "_sources").mkdir(parents=True)
    ended_ns = 2_000_000_000 * 10**9
    for name, at_ns in [
        ("old.html", ended_ns - 10**9),
        ("edited.html", ended_ns + 10**9),
        ("_sources/edited.rst.txt", ended_ns + 10**9),
        ("user.txt", ended_ns + 10**9),
        ("restored.html", 0),
    ]:
        (out / name).write_text("")
        os.utime(out / name, ns=(at_ns, at_ns))
    record = LastBuild(outputs={"edited": ["edited.html", "_sources/edited.rst.txt"]})
    finished = FinishedBuild.of(ended_ns, record)

    assert keep_only_restored(out, [str(out / "restored.html")], [], [], finished) == 3
    left = sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))
    assert left == ["restored.html", "user.txt"], left
    # A record this docsaccel cannot read: the marker's time alone tells.
    os.utime(out / "restored.html", ns=(0, 0))
    assert keep_only_restored(out, [], [], [], FinishedBuild.of(ended_ns, None)) == 1
    assert [p.name for p in out.iterdir()] == ["user.txt"]


def test_a_file_the_last_finished_build_found_the_users_is_neither_deleted_nor_saved(
    tmp_path,
):
    """Older than the end of the folder's last finished build, yet listed by it as no
    build's: the user's file stays where it is and is not among what the state saves."""
    from docsaccel.incremental.sphinxext.untrusted_output import (
        FinishedBuild,
        keep_only_restored,
        written_by_builds,
    )

    out = tmp_path / "html"
    out.mkdir()
    ended_ns = 2_000_000_000 * 10**9
    for name in ("page.html", "CNAME"):
        (out / name).write_text("")
        os.utime(out / name, ns=(ended_ns - 10**9, ended_ns - 10**9))
    finished = FinishedBuild(ended_ns, frozenset(), frozenset({"CNAME"}))
    files = {name: out / name for name in ("page.html", "CNAME")}

    assert list(written_by_builds(out, files, ended_ns + 10**9, frozenset(), [], finished)) == [
        "page.html"
    ]
    assert keep_only_restored(out, [], [], [], finished) == 1
    assert [p.name for p in out.iterdir()] == ["CNAME"]


def test_after_a_build_that_did_not_finish_only_what_a_build_wrote_goes(tmp_path):
    """A build started after the folder's last finished build and did not finish: what
    is newer than its start is its own and goes; a file added between the two is the
    user's and stays."""
    from docsaccel.incremental.sphinxext.untrusted_output import (
        FinishedBuild,
        keep_only_restored,
    )

    out = tmp_path / "html"
    out.mkdir()
    ended_ns = 2_000_000_000 * 10**9
    since_ns = ended_ns + 10 * 10**9
    for name, at_ns in [
        ("old.html", ended_ns - 10**9),
        ("CNAME", ended_ns + 10**9),
        ("killed.html", since_ns + 10**9),
    ]:
        (out / name).write_text("")
        os.utime(out / name, ns=(at_ns, at_ns))
    finished = FinishedBuild(ended_ns, frozenset(), frozenset(), since_ns)

    assert keep_only_restored(out, [], [], [], finished) == 2
    assert [p.name for p in out.iterdir()] == ["CNAME"]


def test_images_of_one_name_are_numbered_in_the_clean_build_order():
    from docsaccel.incremental.sphinxext.image_names import clean_names, misnumbered

    def shown_in(docname):
        return {"api": ["b/thumb.png", "a/thumb.png"]}.get(docname, [])

    # ``a``'s thumbnail, first shown by ``ga/index``, kept its number after ``api`` (sorted
    # first, showing ``b``'s then ``a``'s) was read: a clean build gives ``b``'s the name.
    images = {
        "a/thumb.png": ({"ga/index", "api"}, "thumb.png"),
        "b/thumb.png": ({"gb/index", "api"}, "thumb1.png"),
        "c/other.png": ({"gc/index"}, "other.png"),
    }
    clean = {"b/thumb.png": "thumb.png", "a/thumb.png": "thumb1.png", "c/other.png": "other.png"}
    assert clean_names(images, shown_in) == clean
    assert misnumbered(images, shown_in) == {"a/thumb.png", "b/thumb.png"}
    # As a clean build numbers them: nothing to read again.
    renumbered = {image: (docs, clean[image]) for image, (docs, _) in images.items()}
    assert misnumbered(renumbered, shown_in) == set()
    # The other of two removed: its number is no clean build's.
    kept = {"b/thumb.png": ({"gb/index"}, "thumb1.png"), "c/other.png": ({"gc/index"}, "other.png")}
    assert misnumbered(kept, shown_in) == {"b/thumb.png"}
    # A file named as another's number is at stake with it.
    literal = {
        "a/thumb.png": ({"gb/index"}, "thumb.png"),
        "b/thumb.png": ({"gc/index"}, "thumb1.png"),
        "z/thumb1.png": ({"ga/index"}, "thumb11.png"),
    }
    assert clean_names(literal, shown_in) == {
        "z/thumb1.png": "thumb1.png",
        "a/thumb.png": "thumb.png",
        "b/thumb.png": "thumb2.png",
    }
    assert misnumbered(literal, shown_in) == set(literal)
