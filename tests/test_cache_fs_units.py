"""Unit tests of what the example cache records of the file system besides reads: the files
an example writes (kept for later examples) and the folders it lists (dependencies)."""

from __future__ import annotations

import contextlib
import glob
import importlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from docsaccel.cache import deps as deps_module
from docsaccel.cache import fingerprint
from docsaccel.cache.deps import Project, changes, collect, listing_changes, written_files
from docsaccel.cache.recorder import Recorder, RootChanges, Seen
from docsaccel.cache.store import CacheStore, EntryError, remove_created


def _record(roots: list[Path], action, excluded: tuple[Path, ...] = ()) -> Seen:
    recorder = Recorder.get()
    recorder.start([str(r) for r in roots], [str(e) for e in excluded])
    try:
        action()
    finally:
        seen = recorder.stop()
    return seen


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "data" / "sub").mkdir(parents=True)
    (root / "data" / "a.csv").write_text("1\n", "utf-8")
    (root / "data" / "b.csv").write_text("2\n", "utf-8")
    (root / "data" / "sub" / "c.csv").write_text("3\n", "utf-8")
    (root / "build").mkdir()
    return root


def test_every_listing_call_is_seen_with_the_names_before_the_example_changes_them(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tree / "data"
    monkeypatch.chdir(tree)
    calls = {
        "glob.glob": lambda: glob.glob("data/*.csv"),
        "os.listdir": lambda: os.listdir("data"),
        "os.listdir bytes": lambda: os.listdir(b"data"),
        "os.scandir": lambda: list(os.scandir(data)),
        "Path.iterdir": lambda: list(pathlib.Path("data").iterdir()),
        "Path.glob": lambda: list(pathlib.Path("data").glob("*.csv")),
        "os.walk": lambda: list(os.walk(data)),
    }
    for label, call in calls.items():
        seen = _record([tree], call)
        assert seen.listings.get(str(data)) == ("a.csv", "b.csv", "sub"), label
    walked = _record([tree], lambda: list(os.walk(data)))
    assert walked.listings[str(data / "sub")] == ("c.csv",)
    # os.listdir() lists the current folder: the root itself.
    assert str(tree) in _record([tree], lambda: os.listdir()).listings

    def list_then_add() -> None:
        os.listdir("data")
        (data / "new.csv").write_text("4\n", "utf-8")  # written: its own output
        os.listdir("data")

    seen = _record([tree], list_then_add)
    assert seen.listings[str(data)] == ("a.csv", "b.csv", "sub")
    assert seen.written == {str(data / "new.csv")}


def test_listings_outside_the_roots_excluded_by_descriptor_or_failing_are_not_kept(
    tree: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    seen = _record([tree / "data"], lambda: os.listdir(outside))
    assert seen.listings == {}
    seen = _record([tree], lambda: os.listdir(tree / "build"), excluded=(tree / "build",))
    assert seen.listings == {}

    def by_descriptor() -> None:
        fd = os.open(tree / "data", os.O_RDONLY)
        try:
            os.listdir(fd)
        finally:
            os.close(fd)

    assert _record([tree], by_descriptor).listings == {}

    def missing() -> None:
        with pytest.raises(FileNotFoundError):
            os.listdir(tree / "nope")

    assert _record([tree], missing).listings == {}
    # Not recording: nothing is kept.
    os.listdir(tree / "data")
    assert Recorder.get().stop() == Seen()


def test_the_import_system_listing_package_folders_is_no_listing(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tree / "lspkg"
    package.mkdir()
    (package / "__init__.py").write_text("", "utf-8")
    (package / "mod.py").write_text("X = 1\n", "utf-8")
    monkeypatch.syspath_prepend(str(tree))
    importlib.invalidate_caches()
    try:
        seen = _record([tree], lambda: importlib.import_module("lspkg.mod"))
    finally:
        for name in ("lspkg", "lspkg.mod"):
            sys.modules.pop(name, None)
    assert "lspkg.mod" in seen.modules
    assert seen.listings == {}


def test_written_files_kept_only_if_still_there_and_really_under_the_roots(
    tree: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("", "utf-8")
    (tree / "data" / "link.txt").symlink_to(outside)

    def write() -> None:
        (tree / "data" / "kept.txt").write_text("k", "utf-8")
        (tree / "data" / "gone.txt").write_text("g", "utf-8")
        (tree / "data" / "gone.txt").unlink()
        (tree / "data" / "link.txt").write_text("through the link", "utf-8")
        (tree / "build" / "x.txt").write_text("x", "utf-8")

    seen = _record([tree], write, excluded=(tree / "build",))
    assert seen.written == {str(tree / "data" / "kept.txt")}
    assert str(tree / "data" / "kept.txt") not in seen.files
    project = Project(str(tree), (str(tree),))
    assert written_files(seen, project) == {"data/kept.txt": str(tree / "data" / "kept.txt")}


def test_listing_deps_and_what_changes_in_them(tree: Path) -> None:
    data = tree / "data"
    (data / "__pycache__").mkdir()
    (tree / ".git").mkdir()
    project = Project(str(tree), (str(tree),), excluded=(str(tree / "build"),))
    example = tree / "plot_x.py"
    example.write_text("", "utf-8")
    seen = Seen(
        listings={
            str(data): ("__pycache__", "a.csv", "b.csv", "mine.txt", "sub"),
            str(tree): (".git", "build", "data", "plot_x.py"),
        },
        written={str(data / "mine.txt")},
    )
    deps = collect(seen, project, str(example), "module").to_json()
    assert deps["listings"]["data"]["names"] == ["a.csv", "b.csv", "sub"]
    assert deps["listings"]["data"]["own"] == ["mine.txt"]
    # The folder it wrote into is its own too: putting the file back makes the folder.
    assert deps["listings"]["."]["names"] == ["plot_x.py"]
    assert deps["listings"]["."]["own"] == ["data"]
    assert deps["listings"]["."]["ignored"] == [".git", "build"]
    (data / "mine.txt").write_text("restored with the entry", "utf-8")
    assert changes(deps, project, str(example)) == []
    # Checked elsewhere (``cache explain``) without the build's excluded folders: the same.
    bare = Project(str(tree), (str(tree),))
    assert changes(deps, bare, str(example)) == []

    (data / "c.csv").write_text("", "utf-8")
    assert [c.reason for c in changes(deps, project, str(example))] == [
        "data/ listing changed (1 added)"
    ]
    (data / "a.csv").unlink()
    (tree / "new.md").write_text("", "utf-8")
    assert [c.reason for c in changes(deps, project, str(example))] == [
        "./ listing changed (1 added)",
        "data/ listing changed (1 added, 1 removed)",
    ]
    (data / "b.csv").unlink()
    (data / "c.csv").unlink()
    (data / "mine.txt").unlink()
    (data / "sub" / "c.csv").unlink()
    (data / "sub").rmdir()
    (data / "__pycache__").rmdir()
    data.rmdir()
    assert [c.reason for c in changes(deps, project, str(example))] == [
        "./ listing changed (1 added)",
        "data/ removed",
    ]


def test_a_huge_listing_keeps_its_count_and_digest_not_its_names(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(deps_module, "LISTING_NAMES_KEPT", 3)
    seen = Seen(listings={str(tree / "data"): ("a.csv", "b.csv", "sub", "z.csv")})
    (tree / "data" / "z.csv").write_text("", "utf-8")
    project = Project(str(tree), (str(tree),))
    listing = deps_module.listing_deps(seen, project)["data"]
    assert listing.names is None and listing.count == 4
    assert "names" not in listing.to_json()
    assert listing_changes({"data": listing}, project) == []
    (tree / "data" / "y.csv").write_text("", "utf-8")
    assert [c.reason for c in listing_changes({"data": listing}, project)] == [
        "data/ listing changed (4 → 5 names)"
    ]


def _meta() -> dict:
    return {
        "id": "g/plot_a.py",
        "context": {"fast": False},
        "deps": {"source": "0", "files": {}, "code": {}, "dists": {}, "listings": {}},
        "record": {"wall_seconds": 1.0},
    }


def test_written_files_stored_apart_and_restored_with_digest_checks(tmp_path: Path) -> None:
    made = tmp_path / "made"
    (made / "data").mkdir(parents=True)
    (made / "data" / "derived.txt").write_text("derived", "utf-8")
    (made / "page.rst").write_text("page", "utf-8")
    store = CacheStore(tmp_path / "cache")
    # Same relative path in both parts: they never collide.
    store.store(
        "g__plot_a.py--k",
        _meta(),
        {"data/derived.txt": made / "page.rst"},
        {"data/derived.txt": made / "data" / "derived.txt"},
    )
    entry = store.load("g__plot_a.py--k")
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    assert store.restore_written(entry, fresh) == [fresh / "data" / "derived.txt"]
    assert (fresh / "data" / "derived.txt").read_text("utf-8") == "derived"
    store.restore(entry, fresh / "docs")
    assert (fresh / "docs" / "data" / "derived.txt").read_text("utf-8") == "page"

    (entry.path / "written" / "data" / "derived.txt").write_text("tampered", "utf-8")
    (fresh / "data" / "derived.txt").unlink()
    with pytest.raises(EntryError, match=r"cannot put back data/derived\.txt: .*digest"):
        store.restore_written(entry, fresh)
    assert not (fresh / "data" / "derived.txt").exists()
    assert not [p for p in (fresh / "data").iterdir()]  # no partial file left

    # A folder in the checkout that links out of the root: refused, nothing written there.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "data").symlink_to(elsewhere)
    (entry.path / "written" / "data" / "derived.txt").write_text("derived", "utf-8")
    with pytest.raises(EntryError, match="leads out of"):
        store.restore_written(entry, linked)
    assert list(elsewhere.iterdir()) == []


def test_a_file_appended_to_is_an_input_by_what_it_held_before(tree: Path) -> None:
    # What an appended file holds after depends on what it held: restored over a file
    # someone edited since, the copy of the last run would undo their edit.
    appended = tree / "data" / "a.csv"
    low_level = tree / "data" / "b.csv"
    before = {p: fingerprint.file_digest(p) for p in (appended, low_level)}

    def append() -> None:
        with appended.open("a", encoding="utf-8") as stream:
            stream.write("more\n")
        descriptor = os.open(low_level, os.O_WRONLY | os.O_APPEND)
        os.write(descriptor, b"more\n")
        os.close(descriptor)
        (tree / "data" / "new.txt").open("a", encoding="utf-8").close()  # created: output

    seen = _record([tree], append)
    assert seen.read_first == {str(appended): before[appended], str(low_level): before[low_level]}
    assert seen.written >= {str(appended), str(low_level), str(tree / "data" / "new.txt")}


def test_a_file_removed_that_the_example_did_not_write_is_noted(tree: Path) -> None:
    def remove() -> None:
        (tree / "data" / "a.csv").unlink()
        os.replace(tree / "data" / "b.csv", tree / "data" / "moved.csv")
        shutil.rmtree(tree / "data" / "sub")
        own = tree / "data" / "own.txt"
        own.write_text("x", "utf-8")
        own.unlink()  # its own: no removal of the user's
        with contextlib.suppress(FileNotFoundError):
            os.remove(tree / "data" / "never-there.txt")

    seen = _record([tree], remove)
    data = tree / "data"
    assert seen.removed == {str(data / "a.csv"), str(data / "b.csv"), str(data / "sub")}


def test_root_changes_are_what_was_made_or_modified_and_what_went_that_it_did_not_write() -> None:
    before = {"/p/kept": (1, 1, 1, 1), "/p/edited": (2, 1, 1, 1), "/p/gone": (3, 1, 1, 1)}
    before |= {"/p/own-gone": (4, 1, 1, 1)}
    now = {"/p/kept": (1, 1, 1, 1), "/p/edited": (2, 2, 2, 2), "/p/new": (5, 1, 1, 1)}
    changes = RootChanges.between(before, now, written={"/p/own-gone"})
    assert changes == RootChanges(
        changed=frozenset({"/p/edited", "/p/new"}), removed=frozenset({"/p/gone"})
    )


def test_what_a_child_removed_and_wrote_is_the_same_to_peek_and_stop(tree: Path) -> None:
    data = tree / "data"
    recorder = Recorder.get()
    recorder.start([str(tree)])
    try:
        subprocess.run(["rm", str(data / "a.csv")], check=True)
        subprocess.run(["sh", "-c", f"echo 1 > {data / 'made.txt'}"], check=True)
        peeked = recorder.peek()
    finally:
        stopped = recorder.stop()
    for seen in (peeked, stopped):
        assert seen.removed == {str(data / "a.csv")}
        assert str(data / "made.txt") in seen.written


@pytest.mark.parametrize("relative", ["../escape.txt", "/etc/passwd", "a/../../b", ""])
def test_a_written_path_escaping_the_root_is_a_corrupt_entry(tmp_path: Path, relative: str) -> None:
    store = CacheStore(tmp_path / "cache")
    store.store("g__plot_a.py--k", _meta(), {})
    meta_path = store.entries / "g__plot_a.py--k" / "entry.json"
    meta = json.loads(meta_path.read_text("utf-8"))
    meta["written"] = {relative: "0"}
    meta_path.write_text(json.dumps(meta), "utf-8")
    with pytest.raises(EntryError, match=r"written: .* is not a safe relative path"):
        store.load("g__plot_a.py--k")
    meta["written"] = {}
    meta["deps"]["listings"] = {relative or "/": {"count": 0, "digest": "", "ignored": []}}
    meta_path.write_text(json.dumps(meta), "utf-8")
    with pytest.raises(EntryError, match=r"deps\.listings"):
        store.load("g__plot_a.py--k")


def test_a_file_read_then_written_is_an_input_by_what_it_held_before(tree: Path) -> None:
    shared = tree / "data" / "a.csv"
    updated = tree / "data" / "b.csv"
    before = {p: fingerprint.file_digest(p) for p in (shared, updated)}

    def update() -> None:
        text = shared.read_text("utf-8")
        shared.write_text(text + "more\n", "utf-8")
        with updated.open("r+", encoding="utf-8") as stream:
            stream.write("9")
        (tree / "data" / "fresh.txt").write_text("x", "utf-8")
        (tree / "data" / "fresh.txt").read_text("utf-8")  # its own output, read back

    seen = _record([tree], update)
    assert seen.read_first == {str(shared): before[shared], str(updated): before[updated]}
    assert seen.files == set()
    project = Project(str(tree), (str(tree),))
    example = tree / "plot_x.py"
    example.write_text("", "utf-8")
    deps = collect(seen, project, str(example), "module").to_json()
    assert deps["files"] == {"data/a.csv": before[shared], "data/b.csv": before[updated]}
    # As the entry's run left it, not as it found it: the example would run again.
    assert [c.reason for c in changes(deps, project, str(example))] == [
        "data/a.csv changed",
        "data/b.csv changed",
    ]


def test_an_entry_using_or_writing_a_file_a_rerun_example_writes_is_not_trusted(
    tmp_path: Path,
) -> None:
    from docsaccel.cache.cache_build import _rewritten_input
    from docsaccel.cache.store import Entry

    project = Project(str(tmp_path), (str(tmp_path),))
    deps = {"source": "0", "files": {}, "code": {}, "dists": {}, "listings": {}}
    rewritten = {str(tmp_path / "data" / "derived.txt"): "g/plot_w.py"}

    def entry(files=(), written=(), listings=()) -> Entry:
        meta = {
            "deps": {
                **deps,
                "files": dict.fromkeys(files, "0"),
                "listings": dict.fromkeys(listings),
            },
            "written": dict.fromkeys(written, "0"),
        }
        return Entry(tmp_path / "e", meta)

    def why(**parts: list[str]) -> dict[str, str]:
        return _rewritten_input(entry(**parts), project, rewritten)

    writer = "g/plot_w.py"
    assert why(files=["data/derived.txt"]) == {
        writer: "data/derived.txt is written by g/plot_w.py, which runs again"
    }
    assert why(written=["data/derived.txt"]) == {
        writer: "data/derived.txt is also written by g/plot_w.py, which runs again"
    }
    assert why(listings=["data"]) == {
        writer: "data/ holds a file g/plot_w.py writes, which runs again"
    }
    assert why(listings=["."]) == {writer: "./ holds a file g/plot_w.py writes, which runs again"}
    assert why(files=["data/other.txt"], listings=["src"]) == {}
    assert _rewritten_input(entry(files=["data/derived.txt"]), project, {}) == {}


def test_a_quick_child_process_write_is_seen_whatever_the_file_clock(tree: Path) -> None:
    # Linux stamps files with a coarse clock, up to a tick behind time.time_ns(): a shell
    # writing right after the example started leaves a file that looks older than it.
    target = tree / "data" / "child.txt"
    for attempt in range(40):
        # The file was there before the example; a file's status read before the write is
        # what makes the kernel stamp it finely or coarsely: both happen here.
        target.write_text("before", "utf-8")
        target.stat()
        seen = _record([tree], lambda n=attempt: os.system(f"echo {n} > {target}"))
        assert str(target) in seen.written, attempt
        assert {str(tree / "data" / "a.csv"), str(tree / "data" / "b.csv")}.isdisjoint(seen.written)


def test_undoing_restores_deletes_only_the_files_they_made_as_they_left_them(
    tmp_path: Path,
) -> None:
    made = tmp_path / "made"
    made.mkdir()
    for name in ("new.rst", "there.rst", "edited.rst"):
        (made / name).write_text(f"cached {name}", "utf-8")
    store = CacheStore(tmp_path / "cache")
    files = {f"g/{name}": made / name for name in ("new.rst", "there.rst", "edited.rst")}
    store.store("g__plot_a.py--k", _meta(), files, {"data/new.txt": made / "new.rst"})
    entry = store.load("g__plot_a.py--k")
    docs, root = tmp_path / "docs", tmp_path / "root"
    root.mkdir()
    (docs / "g").mkdir(parents=True)
    (docs / "g" / "there.rst").write_text("the user's", "utf-8")
    created: dict = {}
    store.restore_written(entry, root, created)
    store.restore(entry, docs, created)
    assert set(created) == {
        root / "data" / "new.txt",
        docs / "g" / "new.rst",
        docs / "g" / "edited.rst",
    }
    (docs / "g" / "edited.rst").write_text("edited since, by someone else", "utf-8")
    assert sorted(remove_created(created)) == [docs / "g" / "new.rst", root / "data" / "new.txt"]
    assert (docs / "g" / "there.rst").read_text("utf-8") == "cached there.rst"
    assert (docs / "g" / "edited.rst").read_text("utf-8") == "edited since, by someone else"
