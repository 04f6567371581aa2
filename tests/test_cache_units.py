"""Unit tests of the example cache's parts that need no Sphinx build."""

from __future__ import annotations

import ast
import importlib
import importlib.metadata as metadata
import json
import os
import sys
import types
from pathlib import Path

import pytest

from docsaccel.cache import deps as deps_module
from docsaccel.cache import fingerprint
from docsaccel.cache.context import build_context, context_key, describe_difference
from docsaccel.cache.deps import Project, changes, collect, distribution_versions, find_root
from docsaccel.cache.instrument import Instrumenter
from docsaccel.cache.pieces import (
    CLASS_BASES,
    DOCSTRINGS,
    MODULE_BODY,
    definitions,
    functions,
    piece_of,
)
from docsaccel.cache.recorder import Recorder, Seen
from docsaccel.cache.store import CacheStore, EntryError, MissingEntry
from docsaccel.settings import SettingError, config_values, read_settings

MODULE = '''"""Doc."""
import os
from . import sibling
from .. import up
FACTOR = 2  # a comment


def scale(x):
    return FACTOR * x


class Box:
    size = 3

    def area(self):
        return [v for v in (self.size,)]
'''


NESTED = """
class Outer:
    class Inner:
        def method(self):
            def helper():
                class Local:
                    def deep(self):
                        pass
                return Local
            return helper

    if True:
        async def guarded(self):
            pass

try:
    def in_try():
        lambda: [x for x in ()]
except ImportError:
    pass
"""


def test_definitions_name_each_class_and_function_as_python_does() -> None:
    namespace: dict = {}
    exec(compile(NESTED, "<nested>", "exec"), namespace)
    helper = namespace["Outer"].Inner().method()
    local = helper()
    live = [
        namespace["Outer"],
        namespace["Outer"].Inner,
        namespace["Outer"].Inner.method,
        helper,
        local,
        local.deep,
        namespace["Outer"].guarded,
        namespace["in_try"],
    ]
    found = [name for name, _ in definitions(ast.parse(NESTED))]
    assert found == [
        "Outer",
        "Outer.Inner",
        "Outer.Inner.method",
        "Outer.Inner.method.<locals>.helper",
        "Outer.Inner.method.<locals>.helper.<locals>.Local",
        "Outer.Inner.method.<locals>.helper.<locals>.Local.deep",
        "Outer.guarded",
        "in_try",
    ]
    assert [obj.__qualname__ for obj in live] == found
    assert [name for name, _ in functions(ast.parse(NESTED))] == [
        name for name in found if not name.split(".")[-1][0].isupper()
    ]


def test_code_digests_ignore_comments_and_split_functions(tmp_path: Path) -> None:
    path = tmp_path / "mod.py"
    path.write_text(MODULE, "utf-8")
    before = fingerprint.code_digests(path)
    assert before is not None
    assert set(before) == {
        "scale",
        "Box.area",
        "Box",
        "FACTOR",
        MODULE_BODY,
        DOCSTRINGS,
        CLASS_BASES,
    }
    path.write_text(MODULE.replace("# a comment", "# another comment"), "utf-8")
    assert fingerprint.code_digests(path) == before
    path.write_text(MODULE.replace("FACTOR * x", "x * FACTOR"), "utf-8")
    after = fingerprint.code_digests(path)
    assert after["scale"] != before["scale"]
    assert after[MODULE_BODY] == before[MODULE_BODY]
    assert after["Box.area"] == before["Box.area"]
    # A class attribute is its class's; a module constant is a piece of its own.
    path.write_text(MODULE.replace("size = 3", "size = 4"), "utf-8")
    class_edit = fingerprint.code_digests(path)
    assert class_edit["Box"] != before["Box"]
    assert class_edit[MODULE_BODY] == before[MODULE_BODY]
    path.write_text(MODULE.replace("FACTOR = 2", "FACTOR = 3"), "utf-8")
    constant_edit = fingerprint.code_digests(path)
    assert constant_edit["FACTOR"] != before["FACTOR"]
    assert constant_edit[MODULE_BODY] == before[MODULE_BODY]
    path.write_text("def broken(:\n", "utf-8")
    assert fingerprint.code_digests(path) is None


@pytest.mark.parametrize(
    ("qualname", "piece"),
    [
        ("scale", "scale"),
        ("Box.area", "Box.area"),
        ("Box.area.<locals>.<listcomp>", "Box.area"),
        ("f.<locals>.inner", "f.<locals>.inner"),
        ("f.<locals>.<lambda>", "f"),
        ("<listcomp>", "<module>"),
        ("<module>", "<module>"),
    ],
)
def test_piece_of(qualname: str, piece: str) -> None:
    assert piece_of(qualname) == piece


def test_imported_names_resolve_relative_imports(tmp_path: Path) -> None:
    path = tmp_path / "mod.py"
    path.write_text(MODULE, "utf-8")
    assert fingerprint.imported_names(path, "pkg.sub") == (
        "os",
        "pkg",
        "pkg.sub",
        "pkg.sub.sibling",
        "pkg.up",
    )


def test_an_import_run_again_is_noted_in_every_recording(tmp_path: Path) -> None:
    # Import statements are noted once per recording: the next recording notes them
    # again, and the list a C caller gives as fromlist (pickle) is noted like a tuple.
    import pickle

    recorder = Recorder.get()
    for _ in range(2):
        recorder.start([str(tmp_path)])
        try:
            for _ in range(3):
                pickle.loads(pickle.dumps(json.dumps))
                __import__("email.mime", {}, {}, ["text"], 0)
        finally:
            seen = recorder.stop()
        assert {"json", "email.mime", "email.mime.text"} <= seen.modules


def test_a_probe_that_finds_nothing_is_an_absent_module(tmp_path: Path) -> None:
    # find_spec through the module and through a name bound from it after the recorder
    # was installed; a missing parent package raises and is noted too; what it finds is
    # no absence, and outside a recording nothing is noted.
    import importlib.util

    recorder = Recorder.get()
    from importlib.util import find_spec

    assert importlib.util.find_spec("no_such_probe_outside") is None
    recorder.start([str(tmp_path)])
    try:
        assert importlib.util.find_spec("no_such_probe_a") is None
        assert find_spec("no_such_probe_b") is None
        assert find_spec("json.no_such_probe_c") is None
        assert find_spec("json") is not None
        with pytest.raises(ModuleNotFoundError):
            find_spec("no_such_probe_d.sub")
    finally:
        seen = recorder.stop()
    assert seen.absent == {
        "no_such_probe_a",
        "no_such_probe_b",
        "json.no_such_probe_c",
        "no_such_probe_d",
    }


def test_file_digest_follows_content(tmp_path: Path) -> None:
    path = tmp_path / "data.csv"
    path.write_text("a\n", "utf-8")
    first = fingerprint.file_digest(path)
    path.write_text("b\n", "utf-8")
    assert fingerprint.file_digest(path) != first


def test_recorder_sees_reads_imports_and_code_under_the_roots(tmp_path: Path) -> None:
    package = tmp_path / "proj" / "recpkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", "utf-8")
    (package / "mod.py").write_text("def f():\n    return 1\n", "utf-8")
    data = tmp_path / "proj" / "data.txt"
    data.write_text("x", "utf-8")
    outside = tmp_path / "outside.txt"
    outside.write_text("y", "utf-8")
    written = tmp_path / "proj" / "out.txt"
    import sys

    sys.path.insert(0, str(tmp_path / "proj"))
    try:
        recorder = Recorder.get()
        watched = Project(str(tmp_path / "proj"), (str(tmp_path / "proj"),))
        recorder.start([str(tmp_path / "proj")], code=watched.wants)
        try:
            import recpkg.mod

            recpkg.mod.f()
            data.read_text("utf-8")
            outside.read_text("utf-8")
            written.write_text("z", "utf-8")
            written.read_text("utf-8")  # read back: still the example's output, not an input
            by_child = tmp_path / "proj" / "video.mp4"
            os.system(f"echo v > {by_child}")  # written by another process, then read
            by_child.read_text("utf-8")
        finally:
            seen = recorder.stop()
        assert str(data) in seen.files and str(outside) not in seen.files
        assert str(written) not in seen.files
        assert str(by_child) not in seen.files
        # After it started a child process, what that one wrote is the example's output.
        assert seen.written == {str(written), str(by_child)}
        assert "recpkg.mod" in seen.modules
        assert (str(package / "mod.py"), "f") in seen.code
        # Not recording: nothing is kept but what the process carries across recordings
        # (what project modules' code read and listed, earlier tests' included).
        data.read_text("utf-8")
        stopped = recorder.stop()
        assert stopped == Seen(
            carried_reads=stopped.carried_reads, carried_listings=stopped.carried_listings
        )
        # A second run imports the module from sys.modules: the import statement still counts.
        recorder.start([str(tmp_path / "proj")])
        try:
            import recpkg.mod
        finally:
            again = recorder.stop()
        assert "recpkg.mod" in again.modules
        project = Project(str(tmp_path / "proj"), (str(tmp_path / "proj"),))
        example = tmp_path / "proj" / "plot_x.py"
        example.write_text("import recpkg.mod\n", "utf-8")
        deps = collect(again, project, str(example), "module").to_json()
        assert set(deps["files"]) == {"recpkg/__init__.py", "recpkg/mod.py"}
        assert changes(deps, project, str(example)) == []
        (package / "mod.py").write_text("def f():\n    return 2\n", "utf-8")
        assert [c.reason for c in changes(deps, project, str(example))] == ["recpkg/mod.py changed"]
    finally:
        sys.path.remove(str(tmp_path / "proj"))
        for name in ("recpkg", "recpkg.mod"):
            sys.modules.pop(name, None)
        Instrumenter.uninstall()


def test_find_root_prefers_git_then_project_files(tmp_path: Path) -> None:
    docs = tmp_path / "repo" / "sub" / "docs"
    docs.mkdir(parents=True)
    assert find_root(docs) == str(docs)
    (tmp_path / "repo" / "sub" / "pyproject.toml").write_text("", "utf-8")
    assert find_root(docs) == str(tmp_path / "repo" / "sub")
    (tmp_path / "repo" / ".git").mkdir()
    assert find_root(docs) == str(tmp_path / "repo")


def test_project_ignores_environments_and_excluded_folders(tmp_path: Path) -> None:
    root = str(tmp_path)
    project = Project(root, (root,), excluded=(str(tmp_path / "docs" / "_build"),))
    assert project.wants(str(tmp_path / "src" / "m.py"))
    assert not project.wants(str(tmp_path / ".venv" / "lib" / "m.py"))
    assert not project.wants(str(tmp_path / "docs" / "_build" / "x.png"))
    assert not project.wants(str(tmp_path.parent / "elsewhere.py"))


def test_context_separates_fast_and_names_the_difference() -> None:
    conf = {"image_scrapers": ("matplotlib",), "reset_modules": (print,)}
    full = build_context(False, conf, ["MY_SEED"])
    fast = build_context(True, conf, ["MY_SEED"])
    assert context_key(full) != context_key(fast)
    assert context_key(full) == context_key(build_context(False, dict(conf), ["MY_SEED"]))
    assert describe_difference(full, fast) == "fast path switch changed: off → on"
    os.environ["MY_SEED"] = "1"
    try:
        seeded = build_context(False, conf, ["MY_SEED"])
    finally:
        del os.environ["MY_SEED"]
    assert describe_difference(full, seeded) == "environment variable MY_SEED changed"


def _entry_meta() -> dict:
    return {
        "id": "g/plot_a.py",
        "context": {"fast": False},
        "deps": {"source": "0", "files": {}, "code": {}, "dists": {}},
        "record": {"wall_seconds": 1.0},
    }


def test_store_restore_and_corruption(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "out").mkdir(parents=True)
    (docs / "out" / "plot_a.rst").write_text("page", "utf-8")
    (docs / "out" / "plot_a.py.md5").write_text("abc", "utf-8")
    store = CacheStore(tmp_path / "cache")
    files = {p.relative_to(docs).as_posix(): p for p in (docs / "out").iterdir()}
    store.store("g__plot_a.py--k", _entry_meta(), files)
    assert not list((tmp_path / "cache" / "tmp").iterdir())
    target = tmp_path / "fresh"
    entry = store.load("g__plot_a.py--k")
    store.restore(entry, target)
    assert (target / "out" / "plot_a.rst").read_text("utf-8") == "page"
    # A file whose bytes changed in the cache: refused, and no md5 left behind.
    (entry.path / "files" / "out" / "plot_a.rst").write_text("tampered", "utf-8")
    other = tmp_path / "other"
    with pytest.raises(EntryError, match="does not match its digest"):
        store.restore(entry, other)
    assert not (other / "out" / "plot_a.py.md5").exists()
    with pytest.raises(MissingEntry):
        store.load("nothing--k")
    # Something else where an entry folder belongs is a broken entry, not a missing one:
    # the build warns about it; storing the example again replaces it.
    (store.entries / "g__plot_b.py--k").write_text("not a folder", "utf-8")
    with pytest.raises(EntryError, match="not an entry folder"):
        store.load("g__plot_b.py--k")
    store.store("g__plot_b.py--k", _entry_meta(), files)
    assert store.load("g__plot_b.py--k").path.is_dir()
    meta = json.loads((entry.path / "entry.json").read_text("utf-8"))
    meta["files"] = {"../../escape": "0"}
    (entry.path / "entry.json").write_text(json.dumps(meta), "utf-8")
    with pytest.raises(EntryError, match="not a safe relative path"):
        store.load("g__plot_a.py--k")


def test_a_killed_store_leaves_no_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.rst").write_text("page", "utf-8")
    store = CacheStore(tmp_path / "cache")

    def killed(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "rename", killed)
    with pytest.raises(KeyboardInterrupt):
        store.store("g__a.py--k", _entry_meta(), {"a.rst": docs / "a.rst"})
    monkeypatch.undo()
    with pytest.raises(MissingEntry):
        store.load("g__a.py--k")
    assert not list((tmp_path / "cache" / "tmp").iterdir())


def _config(**values: object) -> types.SimpleNamespace:
    defaults = {key: default for key, default, _ in config_values()}
    return types.SimpleNamespace(**{**defaults, **values})


def test_cache_settings_precedence_and_errors(tmp_path: Path) -> None:
    settings = read_settings(_config(docsaccel_cache="cache"), tmp_path, env={})
    assert settings.cache == (tmp_path / "cache").resolve()
    from_env = read_settings(
        _config(docsaccel_cache="cache"), tmp_path, env={"DOCSACCEL_CACHE": "/x"}
    )
    assert from_env.cache == Path("/x")
    assert (
        read_settings(_config(docsaccel_cache="c"), tmp_path, env={"DOCSACCEL_CACHE": "0"}).cache
        is None
    )
    assert read_settings(_config(), tmp_path, env={}).cache is None
    with pytest.raises(
        SettingError, match="docsaccel_cache_granularity must be 'module' or 'function', got 'line'"
    ):
        read_settings(_config(docsaccel_cache_granularity="line"), tmp_path, env={})
    with pytest.raises(SettingError, match="docsaccel_cache_roots: 'nope' is not a folder"):
        read_settings(_config(docsaccel_cache_roots=["nope"]), tmp_path, env={})
    with pytest.raises(SettingError, match="docsaccel_cache_roots must be a list"):
        read_settings(_config(docsaccel_cache_roots="src"), tmp_path, env={})
    with pytest.raises(SettingError, match="docsaccel_cache_env must be a list"):
        read_settings(_config(docsaccel_cache_env=["A=1"]), tmp_path, env={})
    with pytest.raises(SettingError, match="docsaccel_cache must be the path"):
        read_settings(_config(docsaccel_cache=3), tmp_path, env={})


def _fake_dist(
    site: Path,
    name: str,
    version: str,
    modules: tuple[str, ...] = (),
    requires: tuple[str, ...] = (),
    files: tuple[str, ...] = (),
) -> None:
    """An installed distribution as ``importlib.metadata`` reads it: a ``.dist-info``
    (named as a wheel names it: ``-`` in the name becomes ``_``)."""
    stem = name.replace("-", "_")
    for old in site.glob(f"{stem}-*.dist-info"):
        for path in old.iterdir():
            path.unlink()
        old.rmdir()
    info = site / f"{stem}-{version}.dist-info"
    info.mkdir(parents=True)
    lines = [f"Name: {name}", f"Version: {version}", *(f"Requires-Dist: {r}" for r in requires)]
    (info / "METADATA").write_text("Metadata-Version: 2.1\n" + "\n".join(lines) + "\n", "utf-8")
    if modules:
        (info / "top_level.txt").write_text("\n".join(modules) + "\n", "utf-8")
    record = [*files, f"{info.name}/METADATA"]
    (info / "RECORD").write_text("".join(f"{path},,\n" for path in record), "utf-8")
    importlib.invalidate_caches()


@pytest.fixture
def fake_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder of fake distributions first on ``sys.path``, with the module-level
    metadata caches of :mod:`docsaccel.cache.deps` emptied (and restored after)."""
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    for name, empty in (
        ("_top_level", None),
        ("_provides", {}),
        ("_versions", {}),
        ("_native", {}),
    ):
        monkeypatch.setattr(deps_module, name, empty)
    # dzapp (module dzappmod, imported by the example) requires:
    _fake_dist(
        site,
        "dzapp",
        "1.0",
        ("dzappmod",),
        (
            "dzused>=1",  # loaded: it may have run
            "dzunused",  # installed, never imported: it cannot have run
            "dzdata",  # no module at all: data a loaded module may read
            "dzbin",  # a shared library a loaded module may load without an import
            "dzext",  # only an extension module, not loaded: it cannot have run
            "dzopt; extra == 'x'",  # an extra: not a requirement
        ),
        ("dzappmod.py",),
    )
    _fake_dist(site, "dzused", "1.0", ("dzusedmod",))
    _fake_dist(site, "dzunused", "1.0", ("dzunusedmod",), ("dzdeep",))
    _fake_dist(site, "dzdeep", "1.0", ("dzdeepmod",))  # loaded, but only dzunused requires it
    _fake_dist(site, "dzdata", "1.0")
    _fake_dist(site, "dzbin", "1.0", ("dzbin_libs",), files=("dzbin_libs/libthing.so.3",))
    _fake_dist(
        site,
        "dzext",
        "1.0",
        ("dzextmod",),
        files=("dzextmod/__init__.py", "dzextmod/_speed.cpython-311-x86_64-linux-gnu.so"),
    )
    # A second distribution of the same top-level package (as mujoco-core is of mujoco).
    _fake_dist(site, "dzapp-core", "1.0", ("dzappmod",))
    _fake_dist(site, "dzopt", "1.0", ("dzoptmod",))
    for name in ("dzappmod", "dzusedmod", "dzdeepmod", "dzoptmod"):
        module = types.ModuleType(name)
        module.__file__ = str(site / f"{name}.py")
        monkeypatch.setitem(sys.modules, name, module)
    return site


def test_dists_keep_only_requirements_that_may_have_run(fake_site: Path) -> None:
    assert distribution_versions(["dzappmod"]) == {
        "dzapp": "1.0",
        "dzapp-core": "1.0",
        "dzbin": "1.0",
        "dzdata": "1.0",
        "dzused": "1.0",
    }
    # Imported by the example itself: it counts, loaded or not now, with what it requires.
    assert distribution_versions(["dzunusedmod"]) == {"dzunused": "1.0", "dzdeep": "1.0"}


def test_a_bump_of_a_requirement_that_never_ran_changes_nothing(
    fake_site: Path, tmp_path: Path
) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    example = root / "plot_x.py"
    example.write_text("import dzappmod\n", "utf-8")
    project = Project(str(root), (str(root),))
    deps = collect(Seen(modules={"dzappmod"}), project, str(example), "module").to_json()
    assert set(deps["dists"]) == {"dzapp", "dzapp-core", "dzbin", "dzdata", "dzused"}
    _fake_dist(fake_site, "dzunused", "2.0", ("dzunusedmod",), ("dzdeep",))
    _fake_dist(fake_site, "dzext", "2.0", ("dzextmod",))
    assert changes(deps, project, str(example)) == []
    _fake_dist(fake_site, "dzused", "1.1", ("dzusedmod",))
    _fake_dist(fake_site, "dzdata", "1.1")
    assert [c.reason for c in changes(deps, project, str(example))] == [
        "dzdata 1.0 → 1.1",
        "dzused 1.0 → 1.1",
    ]


def test_the_build_tools_count_but_not_what_they_require() -> None:
    import jinja2  # noqa: F401  (loaded, as in a Sphinx build)

    tools = {
        "sphinx": metadata.version("sphinx"),
        "sphinx-gallery": metadata.version("sphinx-gallery"),
    }
    # sphinx-gallery's scrapers run after every block; a project module may import sphinx.
    assert distribution_versions(["sphinx_gallery", "sphinx"]) == tools
    # What an example imports itself counts, even if Sphinx requires it too.
    found = distribution_versions(["sphinx", "jinja2"])
    assert found == {
        "sphinx": tools["sphinx"],
        "jinja2": metadata.version("jinja2"),
        "markupsafe": metadata.version("markupsafe"),
    }


def test_one_unreadable_record_does_not_hide_the_others(fake_site: Path) -> None:
    info = fake_site / "dzbroken-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: dzbroken\nVersion: 1.0\n")
    (info / "RECORD").write_text("a,b,c,d,e\n", "utf-8")  # five columns: unparsable
    importlib.invalidate_caches()
    found = distribution_versions(["dzappmod", "dzbroken"])
    assert found["dzbroken"] == "1.0" and found["dzused"] == "1.0"


SAME_NAMES = """import functools


@functools.singledispatch
def describe(x):
    return "thing"


@describe.register
def _(x: int):
    return f"int {x}"


@describe.register
def _(x: str):
    return f"str {x}"


class Box:
    @property
    def size(self):
        return 1

    @size.setter
    def size(self, value):
        pass
"""


@pytest.mark.parametrize(
    ("edit", "piece"),
    [('f"int {x}"', "_"), ("return 1", "Box.size"), ("pass", "Box.size")],
)
def test_definitions_sharing_a_name_are_one_piece(tmp_path: Path, edit: str, piece: str) -> None:
    # The code of each definition records the same name when it runs: an edit to any of
    # them (the first singledispatch ``_``, a property's getter) changes that piece.
    path = tmp_path / "mod.py"
    path.write_text(SAME_NAMES, "utf-8")
    before = fingerprint.code_digests(path)
    path.write_text(SAME_NAMES.replace(edit, f"{edit}; print()"), "utf-8")
    after = fingerprint.code_digests(path)
    assert after[piece] != before[piece]


def test_odd_metadata_gives_the_version_the_email_parser_reads(fake_site: Path) -> None:
    def write(folder: str, files: dict[str, str]) -> None:
        for name, text in files.items():
            path = fake_site / folder / name if name else fake_site / folder
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(text.encode("utf-8"))

    meta = "Metadata-Version: 2.1\n"
    # A form feed (or U+2028) ends no header line: not a "Version: 9.9" header.
    write(
        "dzff-1.0.dist-info",
        {
            "METADATA": meta + "Summary: x\fVersion: 9.9\nName: dzff\nVersion: 1.0\n\n",
            "RECORD": "dzffmod.py,,\n",
        },
    )
    # Folded headers, and CRLF line ends.
    write(
        "dzfold-2.0.dist-info",
        {
            "METADATA": meta + "Name:\r\n dzfold\r\nVersion:\r\n\t2.0\r\n\r\n",
            "RECORD": "dzfoldmod.py,,\n",
        },
    )
    # An .egg-info file, as distutils installed it: no file list, so the module is guessed.
    write(
        "dzeggfile-3.0-py3.11.egg-info",
        {"": "Metadata-Version: 1.1\nName: dzeggfile\nVersion: 3.0\n"},
    )
    # PKG-INFO only; a mixed-case dotted name.
    write(
        "dzpkg-4.0-py3.11.egg-info",
        {
            "PKG-INFO": "Metadata-Version: 1.1\nName: dzpkg\nVersion: 4.0\n",
            "top_level.txt": "dzpkgmod\n",
        },
    )
    write(
        "dz.Mixed-5.0.dist-info",
        {
            "METADATA": meta + "Name: Dz.Mixed\nVersion: 5.0\n\n",
            "RECORD": "dzmixedmod/__init__.py,,\n",
        },
    )
    # No metadata at all: skipped, without hiding the others.
    write("dzempty-6.0.dist-info", {"METADATA": "", "RECORD": "dzemptymod.py,,\n"})
    importlib.invalidate_caches()
    names = ["dzffmod", "dzfoldmod", "dzeggfile", "dzpkgmod", "dzmixedmod", "dzemptymod"]
    found = distribution_versions(names)
    assert found == {
        "dzff": "1.0",
        "dzfold": "2.0",
        "dzeggfile": "3.0",
        "dzpkg": "4.0",
        "dz-mixed": "5.0",
    }
    for name, version in found.items():
        assert deps_module.current_version(name) == version
        assert metadata.version(name).strip() == version


def test_an_entry_showing_the_folder_it_ran_in_is_not_restored_elsewhere(tmp_path: Path) -> None:
    """In its own folder it serves; in another one only when no file shows the old path."""
    from docsaccel.cache.cache_build import _shows_where_it_ran

    store = CacheStore(tmp_path / "cache")
    page = tmp_path / "plot_a.rst"
    page.write_text("UserWarning: /old/checkout/docs/examples/plot_a.py:3: careful\n")
    plain = tmp_path / "plot_b.rst"
    plain.write_text("/old/checkout-two is another folder\n")
    deps = {"source": "x", "files": {}, "code": {}, "dists": {}}
    for name, source in (("a", page), ("b", plain)):
        meta = {"id": name, "context": {}, "deps": deps, "record": {}, "made_in": "/old/checkout"}
        store.store(name, meta, {f"auto_examples/{source.name}": source})
    showing, other = store.load("a"), store.load("b")
    assert _shows_where_it_ran(store, showing, "/old/checkout") is None
    assert _shows_where_it_ran(store, showing, "/new/checkout") == (
        "its auto_examples/plot_a.rst shows the folder it ran in: /old/checkout"
    )
    assert _shows_where_it_ran(store, other, "/new/checkout") is None
    unknown = store.load("a")
    del unknown.meta["made_in"]
    assert _shows_where_it_ran(store, unknown, "/new/checkout") == "the folder it ran in is unknown"


def test_stats_say_they_are_of_the_last_build_that_wrote_the_cache_and_when(
    tmp_path: Path, monkeypatch
) -> None:
    """A build using the cache read-only writes no summary: the hits shown are an older
    build's, and the line says whose and when rather than "last build"."""
    from datetime import UTC, datetime

    from docsaccel.cache.manage import stats

    store = CacheStore(tmp_path / "cache")
    monkeypatch.setattr("time.time", lambda: 86400.0)
    store.write_last_build({"hits": 7, "misses": 0, "finished": True})
    out, status = stats(tmp_path / "cache")
    when = datetime.fromtimestamp(86400.0, UTC).isoformat(timespec="seconds")
    assert status == 0
    assert f"last build that wrote the cache (at {when}): 7 hits, 0 misses" in out, out
