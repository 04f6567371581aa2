"""``docsaccel cache explain / stats / prune`` on caches made by real builds and by hand."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from helpers.cache_project import Project

from docsaccel.cache.store import CacheStore
from docsaccel.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """The tiny project after a first build, which ran every example and filled the cache."""
    built = Project(tmp_path)
    assert built.build().returncode == 0
    return built


@pytest.fixture
def store(tmp_path: Path) -> CacheStore:
    """An empty cache folder (``tmp_path/cache``), made by hand."""
    cache = CacheStore(tmp_path / "cache")
    cache.entries.mkdir(parents=True)
    return cache


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    """A Sphinx source folder (``tmp_path/docs``) with an empty ``conf.py``: what --docs needs."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "conf.py").write_text("", "utf-8")
    return folder


@pytest.mark.slow
def test_explain_names_the_dependency_that_changed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], project: Project
) -> None:
    fresh = tmp_path / "fresh"
    shutil.copytree(project.pristine, fresh)
    docs = str(fresh / "docs")
    code, out, _ = run(
        capsys,
        "cache",
        "explain",
        "examples/plot_a_alpha.py",
        "--cache",
        str(project.cache),
        "--docs",
        docs,
    )
    assert code == 0
    assert "same    file    mylib/alpha.py" in out
    # Where the build that restores it must put the example (its gallery folder).
    assert "made for: auto_examples/plot_a_alpha.py (gallery folders: auto_examples)" in out
    assert (
        "up to date: a build in this context that puts the example's copy at "
        "auto_examples/plot_a_alpha.py restores it"
    ) in out
    (fresh / "mylib" / "alpha.py").write_text("FACTOR = 9\n", "utf-8")
    code, out, _ = run(
        capsys,
        "cache",
        "explain",
        str(fresh / "docs/examples/plot_a_alpha.py"),
        "--cache",
        str(project.cache),
        "--docs",
        docs,
    )
    assert code == 0
    assert "CHANGED file    mylib/alpha.py" in out
    assert "- mylib/alpha.py changed" in out

    code, out, _ = run(capsys, "cache", "stats", "--cache", str(project.cache))
    assert code == 0
    assert "5 entries" in out
    assert "0 hits, 5 misses (hit rate 0%)" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["stats", "--cache", "{tmp}/none"], "--cache '{tmp}/none': no such cache folder"),
        (
            ["prune", "--cache", "{tmp}/cache", "--max-size", "lots"],
            "--max-size: 'lots' is not a size",
        ),
        # Its own check refuses it, not argparse as an unknown option ("expected one argument").
        (
            ["prune", "--cache", "{tmp}/cache", "--max-size", "-1G"],
            "--max-size: '-1G' is negative; a size is 0 or more",
        ),
        # 12 meant as gigabytes would prune the cache to 12 bytes.
        (["prune", "--cache", "{tmp}/cache", "--max-size", "12"], "--max-size: '12' has no unit"),
        (["stats", "--cache", "{tmp}/docs/conf.py"], "a file, not a cache folder"),
        (
            ["explain", "x/plot_q.py", "--cache", "{tmp}/cache", "--docs", "{tmp}/docs"],
            "'x/plot_q.py': no entry",
        ),
        (
            ["explain", "x/plot_q.py", "--cache", "{tmp}/cache", "--docs", "{tmp}"],
            "no conf.py there",
        ),
    ],
)
@pytest.mark.usefixtures("store", "docs")
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = run(capsys, "cache", *[a.format(tmp=tmp_path) for a in argv])
    assert code == 2
    assert out == ""
    assert message.format(tmp=tmp_path) in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err
    # As every other command says a wrong input or argument.
    assert err.startswith("docsaccel: error: "), err


@pytest.mark.parametrize("action", [["stats"], ["prune", "--max-size", "1G"]])
def test_every_action_finds_the_cache_conf_py_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, action
) -> None:
    """As ``explain`` does: ``--docs`` (default ``docs``) names the conf folder whose
    ``docsaccel_cache`` the build uses; the variable still wins, as in the build."""
    docs = tmp_path / "project" / "docs"
    docs.mkdir(parents=True)
    (docs / "conf.py").write_text('docsaccel_cache = "../my-cache"\n')
    CacheStore(docs.parent / "my-cache").entries.mkdir(parents=True)
    monkeypatch.chdir(docs.parent)

    code, _, err = run(capsys, "cache", *action)
    assert code == 0, err
    code, _, err = run(capsys, "cache", *action, "--docs", str(docs))
    assert code == 0, err
    monkeypatch.setenv("DOCSACCEL_CACHE", "0")
    code, _, err = run(capsys, "cache", *action)
    assert code == 2 and "DOCSACCEL_CACHE='0' turns the cache off" in err, err


@pytest.mark.parametrize("action", [["stats"], ["prune", "--max-size", "1G"], ["explain", "a.py"]])
def test_a_missing_cache_folder_is_named_where_it_came_from(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, action
) -> None:
    """No --cache given: the error names the setting or the variable the folder came
    from, never an option the user did not pass."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "conf.py").write_text('docsaccel_cache = "../no-cache-yet"\n')
    monkeypatch.chdir(tmp_path)

    code, out, err = run(capsys, "cache", *action)
    assert code == 2 and out == "", out
    folder = tmp_path / "no-cache-yet"
    assert err == (
        f"docsaccel: error: docs/conf.py: docsaccel_cache = '{folder}': no such cache folder\n"
    ), err
    monkeypatch.setenv("DOCSACCEL_CACHE", str(tmp_path / "elsewhere"))
    code, out, err = run(capsys, "cache", *action)
    assert (
        err
        == f"docsaccel: error: DOCSACCEL_CACHE '{tmp_path / 'elsewhere'}': no such cache folder\n"
    )


@pytest.mark.parametrize("action", [["stats"], ["prune", "--max-size", "0"], ["explain", "a.py"]])
def test_a_folder_that_is_not_a_cache_is_refused_and_left_untouched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], action: list[str]
) -> None:
    wrong = tmp_path / "docs"  # the docs folder, given for the cache by mistake
    (wrong / "examples").mkdir(parents=True)
    (wrong / "conf.py").write_text("project = 'x'\n")
    before = sorted(p.relative_to(wrong) for p in wrong.rglob("*"))

    code, out, err = run(capsys, "cache", *action, "--cache", str(wrong))

    assert code == 2 and out == "", out
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"--cache '{wrong}': not a docsaccel cache folder: it holds conf.py, examples" in err
    assert sorted(p.relative_to(wrong) for p in wrong.rglob("*")) == before
    # An empty folder is a new cache, and a cache holding only Sphinx states is one.
    (tmp_path / "new").mkdir()
    assert run(capsys, "cache", "stats", "--cache", str(tmp_path / "new"))[0] == 0
    (tmp_path / "states" / "sphinx").mkdir(parents=True)
    assert run(capsys, "cache", "stats", "--cache", str(tmp_path / "states"))[0] == 0


def _entry(store: CacheStore, name: str, size: int, last_hit: float, source: Path) -> None:
    source.write_bytes(b"x" * size)
    meta = {
        "id": name,
        "context": {},
        "deps": {"source": "0", "files": {}, "code": {}, "dists": {}},
        "record": {},
    }
    path = store.store(store.entry_name(name, "k"), meta, {"out/file.png": source})
    os.utime(path / "last-hit", (last_hit, last_hit))
    os.utime(path / "entry.json", (last_hit, last_hit))


def test_prune_removes_least_recently_hit_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], store: CacheStore
) -> None:
    now = time.time()
    for index, name in enumerate(["g/old.py", "g/middle.py", "g/new.py"]):
        _entry(store, name, 100_000, now - 1000 * (3 - index), tmp_path / f"{index}.bin")
    (store.entries / "g__broken.py--k").mkdir()
    (store.entries / "g__file.py--k").write_text("not a folder", "utf-8")
    code, out, _ = run(capsys, "cache", "stats", "--cache", str(store.folder))
    assert code == 0
    # The broken entries are misses to a build: not counted among the entries.
    assert "3 entries" in out
    assert "(and 2 unusable, which prune removes)" in out
    code, out, _ = run(capsys, "cache", "prune", "--cache", str(store.folder), "--max-size", "250K")
    assert code == 0, out
    left = sorted(p.name for p in store.entries.iterdir())
    assert left == ["g__middle.py--k", "g__new.py--k"]
    assert "removed 3 entries" in out
    code, out, _ = run(capsys, "cache", "prune", "--cache", str(store.folder), "--max-size", "0")
    assert code == 0
    assert list(store.entries.iterdir()) == []


@pytest.mark.slow
def test_report_shows_hits_misses_with_reasons_and_seconds_saved(
    capsys: pytest.CaptureFixture[str], project: Project
) -> None:
    project.write("mylib/beta.py", "def name():\n    return 'b'\n")
    second = project.build()
    saved = sum(r["cache"].get("saved_seconds", 0) for r in second.records.values())
    report = str(second.outdir / "docsaccel" / "report.json")
    code, out, _ = run(capsys, "report", report, "--format", "md")
    assert code == 0
    line = next(line for line in out.splitlines() if "Example cache" in line)
    assert f"4 restored \\(saved {saved:.1f}s\\)" in line
    assert r"1 ran: examples/plot\_b\_beta.py \(mylib/beta.py changed\)" in line
    code, out, _ = run(capsys, "report", report, "--format", "json")
    assert code == 0
    summary = json.loads(out)
    assert summary["cache"]["misses"] == {"examples/plot_b_beta.py": "mylib/beta.py changed"}
    assert summary["cache"]["hits"] == 4


def test_explain_reports_a_malformed_entry_without_a_traceback(
    capsys: pytest.CaptureFixture[str], store: CacheStore, docs: Path
) -> None:
    meta = {
        "id": "g/plot_a.py",
        "context": {},
        "deps": {"source": "0", "files": {}, "code": {"m.py": "not a dict"}, "dists": {}},
        "record": {},
    }
    store.store(store.entry_name("g/plot_a.py", "k"), meta, {})
    code, out, err = run(
        capsys, "cache", "explain", "g/plot_a.py", "--cache", str(store.folder),
        "--docs", str(docs),
    )  # fmt: skip
    assert code == 0, err
    assert "unusable: its dependency list is malformed" in out


def test_explain_lists_an_entry_it_cannot_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A corrupt entry.json: a build treats it as a miss; explain says so rather than
    # "no entry" while listing the example among those with entries.
    store = CacheStore(tmp_path / "cache")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "conf.py").write_text("", "utf-8")
    meta = {"id": "g/plot_a.py", "context": {}, "deps": {}, "record": {}}
    entry = store.store(store.entry_name("g/plot_a.py", "k"), meta, {})
    (entry / "entry.json").write_text('{"deps": 5}', "utf-8")
    code, out, err = run(
        capsys, "cache", "explain", "g/plot_a.py", "--cache", str(store.folder),
        "--docs", str(tmp_path / "docs"),
    )  # fmt: skip
    assert code == 0, err
    assert "g/plot_a.py: 1 entry in" in out
    assert f"entry {entry.name}" in out
    assert "unusable:" in out


OUTSIDE = ["../examples/drawing/plot_spectral_grid.py", "../examples/drawing/plot_lines.py"]
OUTSIDE += ["../examples/basics/plot_a.py", "../examples/drawing/plot_a.py"]


@pytest.fixture
def outside(tmp_path: Path, store: CacheStore, docs: Path) -> CacheStore:
    """Entries of a gallery outside the conf folder (``examples_dirs = "../examples"``)."""
    for index, name in enumerate(OUTSIDE):
        source = tmp_path / name.removeprefix("../")
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_text("print(1)\n", "utf-8")
        _entry(store, name, 10, time.time(), tmp_path / f"{index}.bin")
    return store


@pytest.mark.parametrize(
    ("cwd", "typed"),
    [
        ("docs", "../examples/drawing/plot_spectral_grid.py"),  # the id
        (".", "examples/drawing/plot_spectral_grid.py"),  # from the current folder
        ("examples", "drawing/plot_spectral_grid.py"),  # from its examples folder
        ("docs", "drawing/plot_spectral_grid.py"),  # its path inside the gallery
        (".", "{tmp}/examples/drawing/plot_spectral_grid.py"),  # absolute
    ],
)
def test_explain_takes_the_path_a_user_types(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    outside: CacheStore,
    docs: Path,
    cwd: str,
    typed: str,
) -> None:
    monkeypatch.chdir(tmp_path / cwd)
    code, out, err = run(
        capsys, "cache", "explain", typed.format(tmp=tmp_path), "--cache", str(outside.folder),
        "--docs", str(docs),
    )  # fmt: skip
    assert code == 0, err
    assert out.startswith("../examples/drawing/plot_spectral_grid.py: 1 entry in")


def test_explain_without_a_match_names_the_closest_ids(
    capsys: pytest.CaptureFixture[str], outside: CacheStore, docs: Path
) -> None:
    def explain_error(typed: str) -> str:
        argv = ["cache", "explain", typed, "--cache", str(outside.folder), "--docs", str(docs)]
        code, out, err = run(capsys, *argv)
        assert code == 2 and out == ""
        return err

    err = explain_error("drawing/plot_spectral_gird.py")
    assert "closest: ../examples/drawing/plot_spectral_grid.py" in err
    assert "plot_lines" not in err and "basics" not in err
    err = explain_error("plot_a.py")
    assert "the end of several examples' ids" in err
    assert "../examples/basics/plot_a.py, ../examples/drawing/plot_a.py" in err
    assert "none is close among 4" in explain_error("zzz/qqq.py")


@pytest.mark.parametrize("max_size", ["0", "1G"])
def test_prune_of_a_read_only_cache_says_so_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], max_size: str
) -> None:
    from helpers.read_only import read_only_view

    with read_only_view(tmp_path) as source:
        store = CacheStore(source)
        store.entries.mkdir(parents=True)
        _entry(store, "g/a.py", 1000, time.time() - 1000, tmp_path / "a.bin")
        view = tmp_path / "ro-view"
        before = sorted(p.relative_to(source) for p in source.rglob("*"))

        code, out, err = run(capsys, "cache", "prune", "--cache", str(view), "--max-size", max_size)

        assert code == 2, (out, err)
        assert err.count("\n") == 1 and "Traceback" not in err, err
        assert str(view) in err and "read-only" in err.lower(), err
        assert sorted(p.relative_to(source) for p in source.rglob("*")) == before


@pytest.mark.parametrize(
    ("made", "what"),
    [("folder", "holds no conf.py"), ("file", "a file, not a folder"), (None, "no such folder")],
)
@pytest.mark.parametrize("action", [["stats"], ["prune", "--max-size", "1G"], ["explain", "a.py"]])
def test_a_docs_folder_without_conf_py_is_named_as_such(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    action,
    made,
    what,
) -> None:
    """No --cache, no variable, and ``--docs`` names no Sphinx conf folder: the error says
    what that folder lacks, never names a ``conf.py`` that is not there."""
    monkeypatch.delenv("DOCSACCEL_CACHE", raising=False)
    monkeypatch.chdir(tmp_path)
    if made == "folder":
        (tmp_path / "gallery").mkdir()
    elif made == "file":
        (tmp_path / "gallery").write_text("")

    code, out, err = run(capsys, "cache", *action, "--docs", "gallery")
    assert code == 2 and out == "", out
    assert err == (
        "docsaccel: error: no cache folder: give --cache, or set DOCSACCEL_CACHE; "
        f"--docs 'gallery': {what}; give the Sphinx conf folder (holding conf.py)\n"
    ), err
