"""The parts of one build's Sphinx state: whether a file is as the state left it (a state
kept in these folders, or restored from the cache), and the copy parallel readers get."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

from docsaccel.cache.deps import Project
from docsaccel.incremental.pages import Place
from docsaccel.incremental.sphinxext.state_build import IncrementalBuild, Restored
from docsaccel.incremental.state_store import StateStore


def _restored(tmp_path: Path, origin: str) -> Restored:
    return Restored(store=StateStore(tmp_path / "cache"), place=Place(str(tmp_path)), origin=origin)


def test_a_kept_file_is_as_it_was_until_this_build_writes_it(tmp_path):
    restored = _restored(tmp_path, "local")
    kept, rewritten = tmp_path / "kept.html", tmp_path / "rewritten.html"
    for path in (kept, rewritten):
        path.write_text("page")
    # The last build wrote them before this one began; this build rewrites one.
    os.utime(kept, ns=(restored.started_ns - 1, restored.started_ns - 1))
    os.utime(rewritten, ns=(restored.started_ns, restored.started_ns))
    assert restored.left_as_it_was(kept)
    assert not restored.left_as_it_was(rewritten)
    assert not restored.left_as_it_was(tmp_path / "missing.html")


def test_a_restored_file_is_as_it_was_until_anything_writes_it(tmp_path):
    restored = _restored(tmp_path, "cache")
    pages = {name: tmp_path / "made" / name for name in ("a.html", "b.html")}
    for path in pages.values():
        path.parent.mkdir(exist_ok=True)
        path.write_text("page")
    meta = {"context": {}, "root": str(tmp_path), "build": {}}
    restored.store.save("k", meta, {"doctrees": {}, "output": pages})
    out = tmp_path / "out"
    folders = {"doctrees": tmp_path / "doctrees", "output": out}
    restored.files = restored.store.restore(restored.store.load("k"), folders)
    (out / "b.html").write_text("written again")
    (out / "c.html").write_text("new")
    assert restored.left_as_it_was(out / "a.html")
    assert not restored.left_as_it_was(out / "b.html")
    # Older than this build, yet no restore wrote it: not the state's.
    os.utime(out / "c.html", ns=(0, 0))
    assert not restored.left_as_it_was(out / "c.html")


def test_a_parallel_readers_copy_keeps_every_part(tmp_path):
    build = IncrementalBuild(
        project=Project(root=str(tmp_path), roots=(str(tmp_path),)),
        context={"builder": "html"},
        key="k",
        builder="html",
        pages=True,
        restored=_restored(tmp_path, "cache"),
    )
    build.restored.moved_pages.add("intro")
    build.reading.reasons["intro"] = ["new document"]
    build.writing.written.add("index")
    copy = pickle.loads(pickle.dumps(build))
    assert (copy.reading, copy.writing) == (build.reading, build.writing)
    assert copy.restored.moved_pages == {"intro"} and copy.restored.origin == "cache"
    assert copy.restored.store.folder == build.restored.store.folder
    # What a reader records goes into its copy, never into the main process's parts.
    copy.reading.warned.add("intro")
    assert build.reading.warned == set()


def test_each_build_has_parts_of_its_own(tmp_path):
    first, second = (
        IncrementalBuild(
            project=Project(root=str(tmp_path), roots=(str(tmp_path),)),
            context={},
            key=key,
            builder="html",
            pages=True,
            restored=_restored(tmp_path, ""),
        )
        for key in ("a", "b")
    )
    first.reading.reasons["intro"] = ["new document"]
    first.writing.written.add("intro")
    assert second.reading.reasons == {} and second.writing.written == set()
