"""The pieces of child-process recording, without a build: what a child record holds,
how records merge, which programs are followed, and which records are refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from docsaccel.cache.children import (
    CHILD_ENV,
    RECORD_FORMAT,
    Children,
    Control,
    Launches,
    decode_seen,
    encode_seen,
    merge_seen,
)
from docsaccel.cache.deps import Project
from docsaccel.cache.recorder import Recorder, Seen


def test_a_child_record_holds_every_field_of_what_was_seen() -> None:
    seen = Seen(
        files={"/p/data/a.csv"},
        modules={"mylib.work"},
        code={("/p/mylib/work.py", "triple")},
        instrumented={"/p/mylib/work.py": frozenset({"fast"})},
        written={"/p/out.txt"},
        listings={"/p/data": ("a.csv", "b.csv")},
        read_first={"/p/out.txt": "00ff"},
        carried_reads={"/p/mylib/work.py": frozenset({"/p/data/a.csv"})},
        import_code={"/p/mylib/work.py": frozenset({("/p/mylib/work.py", "setup")})},
        carried_state={("/p/mylib/work.py", "TABLE"): frozenset({"plot_a.py"})},
        left_state={("/p/mylib/work.py", "COUNT")},
        carried_fills={
            ("/p/mylib/work.py", "Shape", "_sides"): {
                "plot_a.py": frozenset({("/p/mylib/work.py", "Shape.sides")})
            }
        },
        module_files={"mylib.work": "/p/mylib/work.py"},
    )
    data = json.loads(json.dumps(encode_seen(seen)))
    assert decode_seen(data) == seen


@pytest.mark.parametrize(
    "bad",
    [3, {"files": [1, 2]}, {"files": {"set": 3}}, {"files": {"what": []}},
     {"files": {"set": [], "tuple": []}}, {"listings": {"set": []}},
     {"instrumented": {"dict": [["only one"]]}}],
)  # fmt: skip
def test_a_malformed_record_of_what_was_seen_is_refused(bad: object) -> None:
    with pytest.raises(ValueError):
        decode_seen(bad)


def test_merging_joins_what_children_saw_and_drops_outputs_from_inputs() -> None:
    mine = Seen(files={"/p/a.txt"}, code={("/p/m.py", "f")}, listings={"/p/d": ("x",)})
    theirs = Seen(
        files={"/p/b.txt", "/p/out.txt"},
        code={("/p/m.py", "g")},
        written={"/p/out.txt"},
        listings={"/p/d": ("x", "y"), "/p/e": ()},
        instrumented={"/p/m.py": frozenset({"h"})},
    )
    merge_seen(mine, theirs)
    assert mine.files == {"/p/a.txt", "/p/b.txt"}
    assert mine.code == {("/p/m.py", "f"), ("/p/m.py", "g")}
    # A folder's names as this process first listed them; one only a child listed too.
    assert mine.listings == {"/p/d": ("x",), "/p/e": ()}
    assert mine.instrumented == {"/p/m.py": frozenset({"h"})}


def test_which_programs_are_followed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CHILD_ENV, "/tmp/control.json")
    launches = Launches()
    env: dict[str, str] = {"PATH": "/bin"}
    launches.note("subprocess.Popen", (sys.executable, [sys.executable, "-c", "1"], None, env))
    assert env[CHILD_ENV] == "/tmp/control.json"  # given without it: added
    launches.note("subprocess.Popen", (None, ["python3.11", "script.py"], None, None))
    launches.note("subprocess.Popen", (None, [sys.executable, "-S", "-c", "1"], None, None))
    launches.note("subprocess.Popen", (None, [sys.executable, "-c", "-S"], None, None))
    launches.note("subprocess.Popen", (None, ["ffmpeg", "-i", "a.mp4"], None, None))
    launches.note("subprocess.Popen", (b"/bin/sh", "echo hi", None, None))
    launches.note("os.system", (b"echo 1 > data/x",))
    script = tmp_path / "tool"
    script.write_text("#!/usr/bin/env python3\nprint(1)\n", "utf-8")
    script.chmod(0o755)
    launches.note("os.posix_spawn", (str(script), [str(script)], dict(os.environ)))
    assert launches.python == 4
    assert launches.not_followed == ["ffmpeg -i a.mp4", "echo hi", "shell: echo 1 > data/x"]
    assert launches.unfollowable == [
        f"{sys.executable} -S -c 1 (-S: no site folder, no startup hook)"
    ]


def _record(folder: Path, name: str, **changes: object) -> Path:
    record = {
        **RECORD_FORMAT.header(), "example": "g/plot_a.py", "pid": 11, "ppid": os.getpid(),
        "kind": "subprocess", "state": "exited", "command": "python -c 1", "forked": False,
        "launches": Launches().to_json(), "seen": encode_seen(Seen(files={"/p/a.txt"})),
        "module_files": {"mylib": "/p/mylib/__init__.py"},
    }  # fmt: skip
    record.update(changes)
    path = folder / name
    path.write_text(json.dumps(record), "utf-8")
    return path


def _children(
    tmp_path: Path, example: str = "g/plot_a.py", granularity: str = "module"
) -> Children:
    """A recording process's side, between examples once ``example`` started and ended;
    its children's records go under ``tmp_path / "children"``."""
    children = Children()
    children.begin(example, str(tmp_path), Project(str(tmp_path), (str(tmp_path),)), granularity)
    children.end()
    return children


def test_collect_refuses_bad_records_and_children_it_cannot_trust(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CHILD_ENV, "")  # begin() points it at its control: put back after
    children = _children(tmp_path)
    folder = tmp_path / "children" / "g__plot_a.py"
    _record(folder, "11.json")
    _record(folder, "12.json", pid=12, kind="multiprocessing", state="running")
    (folder / ".13.json.x1.tmp").write_text("{half a rec", "utf-8")  # killed mid-write
    followed = children.collect("g/plot_a.py", str(tmp_path))
    assert followed.problems == [] and followed.count == 2
    assert followed.seen.files == {"/p/a.txt"}
    assert followed.seen.module_files == {"mylib": "/p/mylib/__init__.py"}

    _record(folder, "14.json", pid=14, state="running")  # a subprocess that never exited
    (folder / "15.json").write_text("{truncated", "utf-8")
    _record(folder, "16.json", pid=16, seen={"files": {"set": 3}})
    _record(folder, "17.json", pid=17, schema="something.else")
    _record(folder, "18.json", pid=18, module_files={"x": 3})
    problems = children.collect("g/plot_a.py", str(tmp_path)).problems
    assert len(problems) == 5, problems
    assert "child process 14 (python -c 1) had not exited" in problems[0]
    assert all("unreadable" in p for p in problems[1:])


def test_a_child_s_state_counts_as_its_parent_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CHILD_ENV, "")
    children = _children(tmp_path, "g/plot_b.py", "function")
    folder = tmp_path / "children" / "g__plot_b.py"
    seen = Seen(
        carried_state={
            ("/p/m.py", "TABLE"): frozenset({"g/plot_a.py", "g/plot_b.py"}),
            ("/p/m.py", "COUNT"): frozenset({"g/plot_b.py"}),  # its own earlier record's
        },
        left_state={("/p/m.py", "COUNT")},
        carried_fills={("/p/m.py", "memo", "memo"): {"g/plot_a.py": frozenset()}},
    )
    _record(folder, "11.json", example="g/plot_b.py", seen=encode_seen(seen))
    followed = children.collect("g/plot_b.py", str(tmp_path))
    assert followed.problems == []
    # Only what an earlier example left; what the child changed stays in the child.
    assert followed.seen.carried_state == {("/p/m.py", "TABLE"): frozenset({"g/plot_a.py"})}
    assert followed.seen.left_state == set()
    # The caches earlier examples filled are the parent's own record: not from a child.
    assert followed.seen.carried_fills == {}


def test_a_python_child_that_left_no_record_makes_the_entry_unstorable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CHILD_ENV, "")
    children = Children()
    children.begin("g/plot_a.py", str(tmp_path), Project(str(tmp_path), (str(tmp_path),)), "module")
    children.launches.note("subprocess.Popen", (None, [sys.executable, "-c", "1"], None, None))
    children.end()
    problems = children.collect("g/plot_a.py", str(tmp_path)).problems
    assert problems == [
        f"1 Python child process of process {os.getpid()} left no record: what they "
        "ran is not known"
    ]


def test_python_children_that_left_no_record_are_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CHILD_ENV, "")
    children = Children()
    children.begin("g/plot_a.py", str(tmp_path), Project(str(tmp_path), (str(tmp_path),)), "module")
    for _ in range(2):
        children.launches.note("subprocess.Popen", (None, [sys.executable, "-c", "1"], None, None))
    children.end()
    problems = children.collect("g/plot_a.py", str(tmp_path)).problems
    assert problems == [
        f"2 Python child processes of process {os.getpid()} left no record: what they "
        "ran is not known"
    ]


def test_a_control_that_is_not_one_is_refused() -> None:
    good = Control("g/a.py", 3, "/r", "/p", ("/p",), (), "module").to_json()
    assert Control.from_json(good).epoch == 3
    for broken in ({**good, "epoch": "3"}, {**good, "roots": [1]}, {**good, "example": 4}, [1]):
        with pytest.raises(ValueError):
            Control.from_json(broken)
    without = dict(good)
    del without["records"]
    with pytest.raises(ValueError):
        Control.from_json(without)


def test_without_the_startup_hook_an_example_using_multiprocessing_is_unstorable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CHILD_ENV, "")
    children = _children(tmp_path)
    children.no_startup = "cannot write /site/docsaccel-cache-children.pth: Read-only file system"
    assert children.collect("g/plot_a.py", str(tmp_path), ["numpy", "os"]).problems == []
    (problem,) = children.collect("g/plot_a.py", str(tmp_path), ["multiprocessing.pool"]).problems
    assert problem.startswith("it uses multiprocessing, whose workers started afresh")
    assert "Read-only file system" in problem


CHILD_RECORDS = """
import sys
from docsaccel.cache.children import Control, start_recording
from docsaccel.cache.recorder import Recorder

assert "docsaccel.cache.deps" not in sys.modules  # as in a child started afresh
root = sys.argv[1]
control = Control("g/a.py", 1, root, root, (root,), (), "function")
start_recording(control, control.granularity, control.example)
sys.path.insert(0, root)
import json.decoder  # noqa: F401  (imports that are not the project's go through too)
import mylib_child

mylib_child.triple(2)
print(sorted(name for _, name in Recorder.get().stop().code))
"""


def test_a_child_started_afresh_records_functions(tmp_path: Path) -> None:
    # Its project is made before the recording starts: made while the instrumenter's
    # finder asks about a module, its own imports would go through that finder again.
    (tmp_path / "mylib_child.py").write_text("def triple(x):\n    return 3 * x\n", "utf-8")
    done = subprocess.run(
        [sys.executable, "-c", CHILD_RECORDS, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0] == "['triple']", done.stdout


def test_what_a_recording_noted_moves_its_mark(tmp_path: Path) -> None:
    # A worker writes its record again only when the mark moved (module granularity).
    data = tmp_path / "data.txt"
    data.write_text("1\n", "utf-8")
    recorder = Recorder.get()
    recorder.start([str(tmp_path)])
    try:
        before = recorder.progress()
        assert recorder.progress() == before
        data.read_text("utf-8")
        after_read = recorder.progress()
        assert after_read != before
        (tmp_path / "out.txt").write_text("2\n", "utf-8")
        assert recorder.progress() != after_read
    finally:
        seen = recorder.stop()
    assert seen.files == {str(data)}


POOL_RECORDS = """
import multiprocessing, os, sys, tempfile
root, granularity = sys.argv[1], sys.argv[2]
sys.path.insert(0, root)
from docsaccel.cache.children import Children, start_recording
from docsaccel.cache.deps import Project
from docsaccel.cache.recorder import Recorder

project, deps = Project(root, (root,)), os.path.join(root, "deps")
Children.get().begin("g/a.py", deps, project, granularity)
start_recording(project, granularity, "g/a.py")
import mylib_pool

with multiprocessing.get_context("fork").Pool(1) as pool:
    pool.map(mylib_pool.triple, [1, 2])
    if len(sys.argv) > 3:  # a file only the worker reads
        pool.map(mylib_pool.read, [os.path.join(root, "data.txt")])
Recorder.get().stop()
Children.get().end()
followed = Children.get().collect("g/a.py", deps)
records = os.listdir(os.path.join(deps, "children", "g__a.py"))
print(followed.count, sorted(name for _, name in followed.seen.code), followed.problems)
print(len(records), sorted(os.path.basename(f) for f in followed.seen.files))
"""
_POOL_LIB = (
    "def triple(x):\n    return 3 * x\n\n\n"
    "def read(path):\n    with open(path) as f:\n        return f.read()\n"
)


def _pool_records(tmp_path: Path, granularity: str, *more: str) -> list[str]:
    (tmp_path / "mylib_pool.py").write_text(_POOL_LIB, "utf-8")
    (tmp_path / "data.txt").write_text("1\n", "utf-8")
    done = subprocess.run(
        [sys.executable, "-c", POOL_RECORDS, str(tmp_path), granularity, *more],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().split("\n")


@pytest.mark.parametrize("granularity", ["module", "function"])
def test_a_pool_worker_records_what_it_ran(tmp_path: Path, granularity: str) -> None:
    followed, written = _pool_records(tmp_path, granularity)
    code = "['triple']" if granularity == "function" else "[]"
    assert followed == f"1 {code} []"
    # At module granularity the worker ran what its parent had imported: nothing to add,
    # no record to write; counted as followed all the same.
    assert written == ("0 []" if granularity == "module" else "1 []")


@pytest.mark.parametrize("granularity", ["module", "function"])
def test_a_forked_worker_writes_what_its_parent_did_not_see(
    tmp_path: Path, granularity: str
) -> None:
    followed, written = _pool_records(tmp_path, granularity, "read")
    assert followed.startswith("1 ") and followed.endswith(" []"), followed
    # One record, with the file (at module granularity with what the parent had seen
    # before the fork too: the worker goes on with its parent's recording).
    assert written.startswith("1 [") and "'data.txt'" in written, written


_ONE_LAUNCH = """
import subprocess, sys
from docsaccel.cache.children import Launches

launches = Launches()
sys.addaudithook(lambda event, args: launches.note(event, args)
                 if event in ("subprocess.Popen", "os.posix_spawn") else None)
# close_fds=False: subprocess starts it with posix_spawn on every Python of the matrix
# (from 3.13 it does so with close_fds too): two audit events for one child.
subprocess.run([sys.executable, "-c", "pass"], close_fds=False, check=True)
print(launches.python)
"""


def test_a_popen_child_started_with_posix_spawn_is_one_launch() -> None:
    # As in a recording process: the variable its Python children record by.
    env = {**os.environ, CHILD_ENV: os.devnull}
    done = subprocess.run(
        [sys.executable, "-c", _ONE_LAUNCH], capture_output=True, text=True, check=True, env=env
    )
    assert done.stdout.strip() == "1", done.stdout + done.stderr
