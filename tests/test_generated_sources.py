"""What a build generates in its source folder, and what of it the next build removes
(:mod:`docsaccel.incremental.generated`), without Sphinx: real files, real processes."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from docsaccel.incremental import generated as generated_module
from docsaccel.incremental.generated import RECORD, GeneratedFiles


@pytest.fixture(autouse=True)
def _no_watch_left():
    yield
    generated_module._watching = None  # a failing test must not leave its watch on


def _tree(tmp_path: Path) -> tuple[Path, Path, Path]:
    src = tmp_path / "docs"
    (src / "api").mkdir(parents=True)
    (src / "index.rst").write_text("kept\n")
    (src / "api" / "committed.rst").write_text("the user's\n")
    return src, tmp_path / "cache" / "generated", src / "_build"


def _watch(src: Path, records: Path, out: Path) -> GeneratedFiles:
    files = GeneratedFiles(records, src, leave_out=[out])
    assert files.remove_earlier() == []
    files.watch()
    return files


def _generate(src: Path) -> None:
    """What generators do: write, create with os.open, copy, rename into place, make
    folders; rewrite a file that was there; write into the build folder and caches."""
    (src / "api" / "pkg.rst").write_text("generated\n")
    handle = os.open(src / "api" / "low.rst", os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(handle, b"x")
    os.close(handle)
    (src / "gallery" / "images").mkdir(parents=True)
    shutil.copyfile(src / "index.rst", src / "gallery" / "copy.rst")
    (src / "gallery" / "tmp-part").write_text("atomic\n")
    os.replace(src / "gallery" / "tmp-part", src / "gallery" / "index.rst")
    (src / "gallery" / "images" / "a.png").write_bytes(b"png")
    (src / "api" / "committed.rst").write_text("rewritten by a generator\n")
    (src / "_build").mkdir()
    (src / "_build" / "page.html").write_text("output\n")
    (src / "__pycache__").mkdir()
    (src / "__pycache__" / "m.pyc").write_bytes(b"")


GENERATED = [
    "api/low.rst",
    "api/pkg.rst",
    "gallery/copy.rst",
    "gallery/images/a.png",
    "gallery/index.rst",
]


def test_what_a_build_created_is_recorded_and_removed_before_the_next(tmp_path):
    src, records, out = _tree(tmp_path)
    files = _watch(src, records, out)
    _generate(src)
    assert files.finish() == GENERATED
    record = json.loads(files.record.read_text())
    assert RECORD.check(record, files.record) == 1 and not files.log.exists()
    # Not watched any more: what happens after the build is not the build's.
    (src / "api" / "after.rst").write_text("the user's, after the build\n")
    again = GeneratedFiles(records, src, leave_out=[out])
    assert again.remove_earlier() == GENERATED
    assert sorted(p.relative_to(src).as_posix() for p in src.rglob("*") if p.is_file()) == [
        "__pycache__/m.pyc",
        "_build/page.html",
        "api/after.rst",
        "api/committed.rst",
        "index.rst",
    ]
    assert not (src / "gallery").exists()  # the folders it made, left empty
    assert (src / "api" / "committed.rst").read_text() == "rewritten by a generator\n"


def test_an_unreadable_record_removes_nothing_and_says_which_file(tmp_path):
    src, records, out = _tree(tmp_path)
    files = _watch(src, records, out)
    _generate(src)
    files.finish()
    files.record.write_text("{broken")
    again = GeneratedFiles(records, src, leave_out=[out])
    assert again.remove_earlier() == []
    assert again.unreadable is not None and str(files.record) in again.unreadable
    assert (src / "api" / "pkg.rst").is_file()  # not trusted, so not removed
    assert GeneratedFiles(records, src, leave_out=[out]).unreadable is None  # until read


def test_a_file_removed_and_made_again_by_a_build_stays_the_users(tmp_path):
    """A generator that deletes a file it finds and writes it anew: the file was there
    before the build, so it is not the build's to remove."""
    src, records, out = _tree(tmp_path)
    files = _watch(src, records, out)
    (src / "api" / "committed.rst").unlink()
    (src / "api" / "committed.rst").write_text("written anew\n")
    assert files.finish() == []
    assert GeneratedFiles(records, src, leave_out=[out]).remove_earlier() == []
    assert (src / "api" / "committed.rst").is_file()


def test_a_generated_file_changed_since_is_kept_and_becomes_the_users(tmp_path):
    src, records, out = _tree(tmp_path)
    files = _watch(src, records, out)
    _generate(src)
    files.finish()
    (src / "api" / "pkg.rst").write_text("edited by hand\n")
    (src / "gallery" / "images" / "mine.png").write_bytes(b"the user's")
    again = GeneratedFiles(records, src, leave_out=[out])
    removed = again.remove_earlier()
    assert "api/pkg.rst" not in removed and (src / "api" / "pkg.rst").is_file()
    assert (src / "gallery" / "images" / "mine.png").is_file()  # its folder stays too
    again.watch()
    (src / "api" / "pkg.rst").write_text("rewritten by the generator\n")  # there before
    assert again.finish() == []
    assert GeneratedFiles(records, src, leave_out=[out]).remove_earlier() == []
    assert (src / "api" / "pkg.rst").is_file()


#: A build in another process: the source folder and the records folder are its arguments.
WATCHING = """
import os, signal, sys
from pathlib import Path
from docsaccel.incremental.generated import GeneratedFiles
src, records = Path(sys.argv[1]), Path(sys.argv[2])
files = GeneratedFiles(records, src, leave_out=[src / "_build"])
files.remove_earlier()
files.watch()
"""
KILLED = (
    WATCHING
    + """
(src / "api" / "one.rst").write_text("generated\\n")
os.mkdir(src / "made")
(src / "made" / "two.rst").write_text("generated\\n")
if os.fork() == 0:  # a forked process appends to the same log
    (src / "api" / "forked.rst").write_text("generated\\n")
    os._exit(0)
os.wait()
handle = open(src / "api" / "half.rst", "w")
handle.write("cut sh")
handle.flush()
os.kill(os.getpid(), signal.SIGKILL)
"""
)


def test_a_killed_build_leaves_a_log_of_what_it_made(tmp_path):
    src, records, _out = _tree(tmp_path)
    done = subprocess.run([sys.executable, "-c", KILLED, str(src), str(records)], check=False)
    assert done.returncode == -signal.SIGKILL
    log = next(records.glob("*.log"))
    assert not list(records.glob("*.json"))
    # After the kill: the user adds a file where the build generated; an old one of the
    # killed build's list is touched much later (someone worked on it).
    (src / "made" / "users.rst").write_text("the user's\n")
    later = log.stat().st_mtime_ns + 60_000_000_000
    os.utime(src / "api" / "one.rst", ns=(later, later))
    removed = GeneratedFiles(records, src, leave_out=[src / "_build"]).remove_earlier()
    assert removed == ["api/forked.rst", "api/half.rst", "made/two.rst"]
    assert (src / "api" / "one.rst").is_file() and (src / "made" / "users.rst").is_file()


def test_names_that_leave_the_folder_are_never_removed(tmp_path):
    """The record is read from the cache folder, which a build does not trust blindly: a
    name outside the source folder, in the build folder or absolute removes nothing."""
    src, records, out = _tree(tmp_path)
    outside = tmp_path / "outside.txt"
    outside.write_text("precious\n")
    out.mkdir()
    (out / "page.html").write_text("output\n")
    files = GeneratedFiles(records, src, leave_out=[out])
    records.mkdir(parents=True)
    stat = {p: [p.stat().st_size, p.stat().st_mtime_ns] for p in (outside, out / "page.html")}
    names = {
        "../outside.txt": stat[outside],
        str(outside): stat[outside],
        "api/../../outside.txt": stat[outside],
        "_build/page.html": stat[out / "page.html"],
    }
    (tmp_path / "empty").mkdir()
    (src / "api" / "empty").mkdir()
    folders = ["..", "../empty", str(tmp_path / "empty"), "api/../../empty", "_build"]
    files.record.write_text(
        json.dumps({**RECORD.header(), "root": str(src), "files": names, "folders": folders})
    )
    assert files.remove_earlier() == []
    assert outside.is_file() and (out / "page.html").is_file() and src.is_dir()
    assert (tmp_path / "empty").is_dir() and out.is_dir()


@pytest.mark.parametrize(
    "text",
    ["{not json", '{"schema": "docsaccel.generated-sources", "version": 99}', '{"files": 3}', "[]"],
)
def test_an_unreadable_record_removes_nothing(tmp_path, text):
    src, records, out = _tree(tmp_path)
    files = _watch(src, records, out)
    _generate(src)
    files.finish()
    files.record.write_text(text)
    assert GeneratedFiles(records, src, leave_out=[out]).remove_earlier() == []
    assert (src / "api" / "pkg.rst").is_file()


def test_a_log_of_another_kind_removes_nothing(tmp_path):
    src, records, out = _tree(tmp_path)
    files = GeneratedFiles(records, src, leave_out=[out])
    records.mkdir(parents=True)
    (src / "api" / "pkg.rst").write_text("x\n")
    files.log.write_text(textwrap.dedent("something else\t0\nf\tapi/pkg.rst\n"))
    assert files.remove_earlier() == [] and (src / "api" / "pkg.rst").is_file()


def test_each_source_folder_has_its_own_record(tmp_path):
    src, records, out = _tree(tmp_path)
    other = tmp_path / "other-docs"
    shutil.copytree(src, other)
    files = _watch(src, records, out)
    (src / "api" / "pkg.rst").write_text("generated\n")
    (other / "api" / "pkg.rst").write_text("the other checkout's\n")
    files.finish()
    assert GeneratedFiles(records, other, leave_out=[other / "_build"]).remove_earlier() == []
    assert (other / "api" / "pkg.rst").is_file()


def test_a_build_with_another_cache_reads_the_record_kept_beside_the_output(tmp_path):
    """The record is kept beside the output too: a later build in the same folders with
    another cache folder removes what the earlier one generated, but a file changed
    since, which is the user's."""
    src, records, out = _tree(tmp_path)
    beside = tmp_path / "html" / "docsaccel" / "generated"
    files = GeneratedFiles(records, src, leave_out=[out], copies=[beside])
    assert files.remove_earlier() == []
    files.watch()
    _generate(src)
    files.finish()
    assert (beside / files.record.name).read_text() == files.record.read_text()
    (src / "api" / "pkg.rst").write_text("changed by the user\n")
    other = GeneratedFiles(tmp_path / "other-cache", src, leave_out=[out], copies=[beside])
    assert other.remove_earlier() == [p for p in GENERATED if p != "api/pkg.rst"]
    assert (src / "api" / "pkg.rst").read_text() == "changed by the user\n"


def test_a_build_with_a_read_only_cache_reads_its_record_and_writes_beside_the_output(
    tmp_path,
):
    """A build whose cache folder is read-only removes what the cache's record names,
    keeps its own record beside the output (never in the cache), and the next build in
    the same folders, whatever its cache, removes what it generated."""
    src, records, out = _tree(tmp_path)
    _watch(src, records, out)
    (src / "api" / "pkg.rst").write_text("generated\n")
    generated_module._watching.finish()
    in_cache = sorted(p.name for p in records.iterdir())
    beside = tmp_path / "html" / "docsaccel" / "generated"
    read_only = GeneratedFiles(beside, src, leave_out=[out], seen=[records])
    assert read_only.remove_earlier() == ["api/pkg.rst"]
    read_only.watch()
    (src / "api" / "new.rst").write_text("generated\n")
    assert read_only.finish() == ["api/new.rst"]
    assert sorted(p.name for p in records.iterdir()) == in_cache
    later = GeneratedFiles(tmp_path / "fresh-cache", src, leave_out=[out], copies=[beside])
    assert later.remove_earlier() == ["api/new.rst"]


RUNNING = (
    WATCHING
    + """
(src / "api" / "one.rst").write_text("generated\\n")
print("generated", flush=True)
sys.stdin.readline()  # the build reads what it generated
print(",".join(files.finish()), flush=True)
"""
)


def test_a_build_that_starts_while_another_runs_removes_nothing_of_it(tmp_path):
    """Two builds of one source folder into two output folders: the second removes
    nothing the first is about to read, and the last to finish records what both made."""
    src, records, out = _tree(tmp_path)
    first = subprocess.Popen(
        [sys.executable, "-c", RUNNING, str(src), str(records)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert first.stdout.readline() == "generated\n"
    second = GeneratedFiles(records, src, leave_out=[out])
    assert second.remove_earlier() == [] and (src / "api" / "one.rst").is_file()
    second.watch()
    (src / "api" / "two.rst").write_text("generated\n")
    made, _ = first.communicate("go\n", timeout=60)
    assert first.returncode == 0 and made == "api/one.rst,api/two.rst\n"
    assert second.finish() == ["api/one.rst", "api/two.rst"]
    again = GeneratedFiles(records, src, leave_out=[out])
    assert again.remove_earlier() == ["api/one.rst", "api/two.rst"]


def test_a_file_the_build_moves_keeps_what_was_there_before(tmp_path):
    """A build step that moves a file of the user's aside: the file at the new name is
    the user's content, not generated, and stays."""
    src, records, out = _tree(tmp_path)
    files = _watch(src, records, out)
    os.rename(src / "api" / "committed.rst", src / "api" / "committed.rst.bak")
    (src / "api" / "part").write_text("generated\n")
    os.replace(src / "api" / "part", src / "api" / "pkg.rst")
    assert files.finish() == ["api/pkg.rst"]
    assert GeneratedFiles(records, src, leave_out=[out]).remove_earlier() == ["api/pkg.rst"]
    assert (src / "api" / "committed.rst.bak").read_text() == "the user's\n"


def test_a_watch_unpickled_by_a_later_build_does_not_take_its_events(tmp_path):
    """sphinx-gallery's settings carry the watch, and Sphinx pickles them with the
    environment: a later build (here, of another checkout) that loads it keeps recording
    what it generates itself, so the build after it in its folders can remove it."""
    import pickle

    old_src, records, old_out = _tree(tmp_path / "old")
    old = _watch(old_src, records, old_out)
    kept_in_environment = pickle.dumps(old)
    old.finish()
    src, _, out = _tree(tmp_path / "new")
    files = _watch(src, records, out)
    pickle.loads(kept_in_environment).join()  # as Sphinx loads the environment
    (src / "api" / "pkg.rst").write_text("generated\n")
    files.finish()
    recorded = json.loads(files.record.read_text())
    assert list(recorded["files"]) == ["api/pkg.rst"]
    assert GeneratedFiles(records, src, leave_out=[out]).remove_earlier() == ["api/pkg.rst"]
