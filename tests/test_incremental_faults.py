"""The Sphinx state under faults and odd uses: a damaged or foreign state, killed builds,
two builds into one cache at once, a fast build then a full one, warnings, removed pages,
local rebuilds, the switch. Every build's output is compared with a clean build's."""

from __future__ import annotations

import contextlib
import json
import shutil
import signal
import time
from pathlib import Path

import pytest
from helpers.incremental_build import (
    WRITTEN_WITH_ANY,
    Workspace,
    from_cache,
    needs_state,
    replace,
    write,
)
from helpers.read_only import read_only_view

from docsaccel.cache.fingerprint import sha256_of

pytestmark = [pytest.mark.slow, needs_state]

DOCSTRING = replace("src/pkg/stats.py", "Average of the values.", "Arithmetic mean.")


@pytest.fixture
def ws(tmp_path) -> Workspace:
    """A workspace whose cache holds the state of a build of the unchanged tree."""
    workspace = Workspace(tmp_path)
    built = workspace.build()
    assert built.returncode == 0, built.output
    workspace.fresh_copy()
    return workspace


def _objects(ws: Workspace) -> list[Path]:
    return sorted(p for p in (ws.cache / "sphinx" / "objects").rglob("*") if p.is_file())


def test_a_damaged_state_is_a_full_build_with_a_warning(ws):
    for path in _objects(ws)[:3]:
        path.write_bytes(b"damaged")
    built = ws.build()
    assert built.returncode == 0, built.output
    assert "is unusable" in built.output and "WARNING" in built.output
    assert built.state["origin"] == "none"
    assert len(built.read) == 18
    assert ws.differences() == []


def _damage_in_place(paths: list[Path]) -> None:
    """Overwrite 4 bytes in the middle of each file, keeping its size and name."""
    for path in paths:
        data = bytearray(path.read_bytes())
        middle = len(data) // 2
        data[middle : middle + 4] = bytes(255 - b for b in data[middle : middle + 4])
        path.write_bytes(bytes(data))


def test_damaged_objects_are_replaced_so_the_state_comes_back(ws):
    """Objects are named by their content: a damaged one must not be named by every
    later state, so the build after the damage saves a good state and the next uses it."""
    damaged = [p for p in _objects(ws) if p.stat().st_size > 8][:3]
    _damage_in_place(damaged)
    first = ws.build()
    assert first.returncode == 0, first.output
    assert "is unusable" in first.output and first.state["origin"] == "none"
    ws.fresh_copy()  # as CI builds: a fresh checkout, the cache its only state
    again = ws.build()
    assert again.returncode == 0, again.output
    assert "is unusable" not in again.output, again.output
    assert again.state["origin"] == "cache" and again.read == set(), again.state
    assert ws.differences() == []
    for path in damaged:
        assert not path.exists() or sha256_of(path) == path.name


def test_stats_and_prune_find_damaged_objects(ws):
    from docsaccel.incremental.folder_commands import prune, stats

    _damage_in_place(_objects(ws)[:2])
    text, code = stats(ws.cache)
    assert code == 0 and "Sphinx states: 0" in text and "1 unusable" in text, text
    text, code = prune(ws.cache, "10G")
    assert code == 0 and "Sphinx states: removed 1 state" in text, text
    left = _objects(ws)
    assert all(sha256_of(path) == path.name for path in left)
    built = ws.build()
    assert built.returncode == 0 and built.state["origin"] == "none", built.output
    assert ws.differences() == []


def test_an_unreadable_state_file_is_a_full_build_with_a_warning(ws):
    (state,) = (ws.cache / "sphinx" / "states").glob("*.json")
    state.write_text("{not json")
    built = ws.build()
    assert built.returncode == 0 and "WARNING" in built.output, built.output
    assert built.state["origin"] == "none"
    assert ws.differences() == []


def test_a_pruned_object_is_a_full_build(ws):
    _objects(ws)[0].unlink()
    built = ws.build()
    assert built.returncode == 0, built.output
    assert built.state["origin"] == "none" and "is unusable" in built.output
    assert ws.differences() == []


#: 0.62 and 0.66: where, here, a build is killed while autosummary generates its pages.
@pytest.mark.parametrize("fraction", [0.3, 0.6, 0.62, 0.66, 0.85, 0.95])
def test_a_killed_build_never_leaves_a_stale_page(ws, fraction):
    """Killed at some point of its run (reading, writing, saving), with a change: the next
    build in the same folders, and one from a fresh copy, equal a clean build."""
    started = time.perf_counter()
    timing = ws.build()
    duration = time.perf_counter() - started
    assert timing.returncode == 0
    ws.fresh_copy(DOCSTRING)
    process = ws.start()
    time.sleep(duration * fraction)
    process.send_signal(signal.SIGKILL)
    process.wait()
    again = ws.build()
    assert again.returncode == 0, again.output
    assert ws.differences() == []
    ws.fresh_copy()
    fresh = ws.build()
    assert fresh.returncode == 0, fresh.output
    assert ws.differences() == []


#: ``conf.py`` kills the build (as an out-of-memory killer would) while autosummary
#: generates its pages, once it lists the members of ``pkg.stats``: the pages above are
#: written, those below are not.
KILLER = replace(
    "docs/conf.py",
    'project = "pkg"',
    'project = "pkg"\n\n\n'
    "def _kill(app, what, name, obj, skip, options):\n"
    '    if os.environ.get("KILL_WHILE_GENERATING") and name == "mean":\n'
    "        os.kill(os.getpid(), 9)\n\n\n"
    "def setup(app):\n"
    '    app.connect("autodoc-skip-member", _kill)\n',
)


def test_a_build_killed_while_generating_leaves_nothing_the_next_trusts(ws):
    """The next build in the same folders finds some of autosummary's pages: it generates
    them all again as a clean build does (autosummary writes a page it finds missing below
    pages that are there with another first line than a clean build)."""
    ws.fresh_copy(KILLER)
    killed = ws.build(env={"KILL_WHILE_GENERATING": "1"})
    assert killed.returncode == -signal.SIGKILL, killed.output
    api = ws.docs / "api"
    assert (api / "pkg.base.rst").is_file() and not (api / "pkg.stats.mean.rst").exists()
    again = ws.build()
    assert again.returncode == 0, again.output
    assert "earlier builds generated in the source folder removed" in again.output
    assert ws.differences() == []


ADDED_CLASS = replace(
    "src/pkg/shapes.py",
    "class Circle(Base):",
    'class Square(Base):\n    """A square."""\n\n\nclass Circle(Base):',
)
REMOVED_CLASS = replace("src/pkg/shapes.py", "class Circle(Base):", "class _Circle(Base):")


def _renamed_example(project: Path) -> None:
    examples = project / "docs" / "examples"
    (examples / "plot_mean.py").rename(examples / "plot_average.py")


@pytest.mark.parametrize(
    ("edit", "gone"),
    [
        (ADDED_CLASS, None),
        (REMOVED_CLASS, "api/pkg.shapes.Circle.rst"),
        (_renamed_example, "auto_examples/plot_mean.rst"),
    ],
    ids=["added-class", "removed-class", "renamed-example"],
)
def test_a_local_rebuild_generates_its_sources_as_a_fresh_checkout(ws, edit, gone):
    """Between two builds in the same folders, a change that adds or removes a generated
    page: no page of a removed class or example is left over (nor its images and
    downloads), and the pages generated anew are a clean build's."""
    assert ws.build().returncode == 0
    ws.edit(edit)
    built = ws.build()
    assert built.returncode == 0, built.output
    assert built.state["origin"] == "local"
    # The first build generated a page per documented name: many files.
    assert "files earlier builds generated in the source folder removed" in built.output
    if edit is REMOVED_CLASS:  # the class's page, alone
        said = "docsaccel: 1 file earlier builds generated in the source folder were not made"
        assert said in built.output, built.output
    if gone is not None:
        assert "were not made again by this one, and stay removed" in built.output
        assert gone in built.output and not (ws.docs / gone).exists()
    assert ws.differences() == []


@pytest.mark.parametrize(
    ("edit", "gone"),
    [
        (REMOVED_CLASS, "api/pkg.shapes.Circle.rst"),
        (_renamed_example, "auto_examples/plot_mean.rst"),
    ],
    ids=["removed-class", "renamed-example"],
)
def test_a_rebuild_after_a_restoring_build_removes_what_that_build_generated(
    ws, tmp_path, edit, gone
):
    """A checkout elsewhere restores the state, then builds again in its folders after a
    change: what the restoring build generated is removed as a clean build would not have
    it (no page of the removed class or example, no "isn't included in any toctree")."""
    other = from_cache(ws.cache, tmp_path / "elsewhere")
    restoring = other.build(None, *STRICT)
    assert restoring.returncode == 0, restoring.output
    assert restoring.state["origin"] == "cache", restoring.state
    other.edit(edit)
    built = other.build(None, *STRICT)
    assert built.returncode == 0, built.output
    assert built.state["origin"] == "local"
    assert gone in built.output and not (other.docs / gone).exists()
    assert other.differences() == []


@pytest.mark.parametrize("first_cache", ["read-only", "another"])
def test_what_a_build_with_another_or_a_read_only_cache_generated_is_removed(tmp_path, first_cache):
    """A build whose cache folder is read-only, or another one than the next build's:
    what it generated is still known to the next build in the same folders, so the page
    of an example renamed since is not left over ("isn't included in any toctree")."""
    ws = Workspace(tmp_path / "ws")
    with contextlib.ExitStack() as stack:
        if first_cache == "read-only":
            stack.enter_context(read_only_view(tmp_path))
            cache = tmp_path / "ro-view"
        else:
            cache = tmp_path / "another-cache"
        first = ws.build(cache)
        assert first.returncode == 0, first.output
        assert (ws.docs / "auto_examples" / "plot_mean.rst").is_file()
    ws.edit(_renamed_example)
    built = ws.build(None, *STRICT)
    assert built.returncode == 0, built.output
    assert not [p for p in (ws.docs / "auto_examples").rglob("*plot_mean*")], "left over"
    # Without a state to start from (a cache that holds none), Sphinx keeps what it wrote
    # earlier of a document since removed (its pages, and the search index loaded from
    # the output folder), as without docsaccel: only those differ.
    kept = [d for d in ws.differences() if "plot_mean" not in d and d != "searchindex.js"]
    assert kept == []


def test_a_file_the_user_added_after_a_build_of_another_context_is_kept(ws, tmp_path):
    """The output folder's last build finished, of another context (a tag, and another
    cache folder): the build restoring this context's state there deletes that build's
    files, never a file the user put there since; the pages are a clean build's."""
    extra = ws.docs / "extra.rst"
    extra.write_text("Extra\n=====\n\nA page of that build only.\n")
    other = ws.build(tmp_path / "another-cache", "-t", "other")
    assert other.returncode == 0, other.output
    assert (ws.outdir / "extra.html").is_file()
    extra.unlink()
    user_file = ws.outdir / "user.txt"
    user_file.write_text("the user's\n")
    built = ws.build()
    assert built.returncode == 0, built.output
    assert built.state["origin"] == "cache", built.output
    assert "files of the output folder no finished build of this state left" in built.output
    assert user_file.read_text() == "the user's\n"
    user_file.unlink()
    assert ws.differences() == []


def test_a_file_the_user_put_in_the_output_folder_is_not_kept_in_the_state(ws, tmp_path):
    """A file the user put in the output folder (a site verification page) stays there
    through every build: local ones, one of another context, one restoring the state into
    that folder. It is no build's: a fresh checkout restoring the state has the files of a
    clean build of the tree, without it."""
    user_file = ws.outdir / "google0123456789abcdef.html"
    user_text = "google-site-verification: google0123456789abcdef.html\n"
    first = ws.build()
    assert first.returncode == 0 and first.state["origin"] == "cache", first.output
    user_file.write_text(user_text)
    for cache, args, origin in [
        (None, (), "local"),
        (None, (), "local"),  # the file is older than the end of the build before
        (tmp_path / "another-cache", ("-t", "other"), "none"),
        (None, (), "cache"),
    ]:
        again = ws.build(cache, *args)
        assert again.returncode == 0 and again.state["origin"] == origin, again.output
        assert user_file.read_text() == user_text, again.output
    ws.fresh_copy()
    restored = ws.build()
    assert restored.returncode == 0 and restored.state["origin"] == "cache", restored.output
    assert ws.differences() == []


def test_a_file_the_user_put_in_the_output_folder_outlives_a_build_without_the_cache(ws):
    """A file the user put in the output folder (a ``CNAME``) stays through a build with
    the cache off and the next one with it on, which restores the state into that
    folder: the build without the cache says which of its files are the user's."""
    user_file = ws.outdir / "CNAME"
    first = ws.build()
    assert first.returncode == 0 and first.state["origin"] == "cache", first.output
    user_file.write_text("example.org\n")
    for env, origin in [(None, "local"), ({"DOCSACCEL_CACHE": "0"}, None), (None, "cache")]:
        again = ws.build(env=env)
        assert again.returncode == 0, again.output
        assert origin is None or again.state["origin"] == origin, again.output
        assert user_file.read_text() == "example.org\n", again.output
    user_file.unlink()
    assert ws.differences() == []


def test_a_file_in_an_output_folder_filled_before_docsaccel_came_is_kept(ws):
    """The output folder holds a build made without the Sphinx state (as a plain Sphinx
    build leaves it, no record) and the user's ``CNAME``: the first build restoring the
    state there keeps the file, which nothing tells from a page of that build, as Sphinx
    itself would; the pages are a clean build's."""
    plain = ws.build(env={"DOCSACCEL_CACHE": "0"})
    assert plain.returncode == 0, plain.output
    assert not (ws.outdir / "docsaccel" / "output-folder.json").exists()
    user_file = ws.outdir / "CNAME"
    user_file.write_text("example.org\n")
    built = ws.build()
    assert built.returncode == 0 and built.state["origin"] == "cache", built.output
    assert user_file.read_text() == "example.org\n", built.output
    again = ws.build()
    assert again.returncode == 0 and again.state["origin"] == "local", again.output
    assert user_file.read_text() == "example.org\n", again.output
    user_file.unlink()
    assert ws.differences() == []


def test_another_tools_folder_in_the_output_folder_is_not_kept_in_the_state(ws):
    """The output folder is the checkout of a published site (its ``.git``), there before
    a build finished: it stays, and a fresh checkout restoring the state has no ``.git``
    in its output folder, as a clean build has none."""
    first = ws.build()
    assert first.returncode == 0, first.output
    head = ws.outdir / ".git" / "HEAD"
    head.parent.mkdir()
    head.write_text("ref: refs/heads/gh-pages\n")
    for _ in range(2):  # the second finds it older than the end of the build before
        again = ws.build()
        assert again.returncode == 0 and again.state["origin"] == "local", again.output
        assert head.read_text() == "ref: refs/heads/gh-pages\n"
    ws.fresh_copy()
    restored = ws.build()
    assert restored.returncode == 0 and restored.state["origin"] == "cache", restored.output
    assert ws.differences() == []


def test_a_restored_build_leaves_no_empty_folder_of_a_renamed_example(ws):
    """The restored output held the renamed example's download in a folder of its own
    (``_downloads/<digest>/plot_mean.py``): deleting the file deletes the folder too."""
    ws.fresh_copy(_renamed_example)
    built = ws.build()
    assert built.returncode == 0, built.output
    assert built.state["origin"] == "cache"
    downloads = ws.outdir / "_downloads"
    assert [p for p in downloads.rglob("*") if p.is_dir() and not any(p.iterdir())] == []
    assert ws.differences() == []  # empty folders count there too


#: The example warns: the warning sphinx-gallery captures into its page names the
#: example's file, in the checkout that ran it.
PRINTS_ITS_PATH = replace(
    "docs/examples/plot_mean.py",
    "print(mean([1.0, 2.0, 3.0]))",
    'print(mean([1.0, 2.0, 3.0]))\nimport warnings\nwarnings.warn("mean of a short list")',
)


def test_a_checkout_elsewhere_shows_its_own_path_in_a_restored_example(tmp_path):
    """An example's output naming the folder it ran in is not restored into a checkout in
    another folder (the example runs again there): its page shows this checkout's path,
    as a clean build of it does, never the first checkout's."""
    first = Workspace(tmp_path / "first")
    first.fresh_copy(PRINTS_ITS_PATH)
    assert first.build().returncode == 0
    page = Path("auto_examples") / "plot_mean.html"
    assert str(first.project) in (first.outdir / page).read_text("utf-8")
    other = from_cache(first.cache, tmp_path / "elsewhere", [PRINTS_ITS_PATH])
    built = other.build()
    assert built.returncode == 0, built.output
    shown = (other.outdir / page).read_text("utf-8")
    assert str(other.project) in shown and str(first.project) not in shown
    assert built.ran == {"examples/plot_mean.py"}, built.report["examples"]
    assert other.differences() == []
    # The entry that run stored serves the next build of this checkout.
    other.fresh_copy()
    again = other.build()
    assert again.returncode == 0 and again.ran == set(), again.output
    assert other.differences() == []


PARALLEL = replace("docs/conf.py", '"show_memory": False,', '"show_memory": False, "parallel": 2,')


def test_a_local_rebuild_with_parallel_examples_leaves_no_page_of_a_renamed_one(ws):
    """sphinx-gallery's workers write the examples' pages: they note what they make too."""
    ws.fresh_copy(PARALLEL)
    # Changed, so that it runs (in a worker) rather than coming back from the cache.
    ws.fresh_copy(replace("docs/examples/plot_mean.py", "2.0, 3.0]", "2.0, 4.0]"))
    first = ws.build()
    assert first.returncode == 0 and first.ran == {"examples/plot_mean.py"}, first.output
    ws.edit(_renamed_example)
    built = ws.build()
    assert built.returncode == 0, built.output
    assert not [p for p in (ws.docs / "auto_examples").rglob("*plot_mean*")], "left over"
    # Without a state to start from (a cache that holds none), Sphinx keeps what it wrote
    # earlier of a document since removed (its pages, and the search index loaded from
    # the output folder), as without docsaccel: only those differ.
    kept = [d for d in ws.differences() if "plot_mean" not in d and d != "searchindex.js"]
    assert kept == []


def test_a_restore_killed_while_copying_leaves_no_partial_file(ws):
    """A restore copies each file under a name of its own, then renames it: a build killed
    between the two leaves that copy, which the next build there removes."""
    assert ws.build().returncode == 0
    partial = ws.outdir / "_sources" / f".other.rst.txt.{'0' * 32}.tmp"
    partial.write_text("half a cop")
    (ws.project / "docs" / "_build" / "doctrees" / "docsaccel-state.json").unlink(missing_ok=True)
    for marker in ws.docs.rglob("docsaccel-state.json"):
        marker.unlink()  # as the killed build left the folders: not a finished build's
    built = ws.build()
    assert built.returncode == 0, built.output
    assert built.state["origin"] == "cache" and not partial.exists()
    assert ws.differences() == []


def test_a_local_rebuild_removes_only_what_a_build_generated(ws):
    """A page kept in the repository, a page generated and then edited by hand, a file
    added where the build generates: all stay."""
    ws.fresh_copy(
        replace(
            "docs/conf.py",
            "autosummary_generate = True",
            "autosummary_generate = True\nautosummary_generate_overwrite = False",
        )
    )
    committed = "pkg.helper\n==========\n\n.. automodule:: pkg.helper\n"
    ws.fresh_copy(write("docs/api/pkg.helper.rst", committed))
    assert ws.build().returncode == 0
    api = ws.docs / "api"
    (api / "notes.txt").write_text("the user's notes\n")
    edited = api / "pkg.stats.mean.rst"
    edited.write_text(edited.read_text() + "\nA line by hand.\n")
    built = ws.build()
    assert built.returncode == 0, built.output
    assert "earlier builds generated in the source folder removed" in built.output
    removed = [line for line in built.output.splitlines() if "stay removed" in line]
    for name in ("notes.txt", "pkg.helper.rst", "pkg.stats.mean.rst"):
        assert not any(name in line for line in removed), removed
    assert (api / "notes.txt").read_text() == "the user's notes\n"
    assert (api / "pkg.helper.rst").read_text() == committed
    assert edited.read_text().endswith("\nA line by hand.\n")


def test_two_builds_into_one_cache_at_once(ws, tmp_path):
    other = Workspace(tmp_path / "other")
    other.fresh_copy(DOCSTRING)
    first, second = ws.start(), other.start(ws.cache)
    assert first.wait(timeout=600) == 0 and second.wait(timeout=600) == 0
    # Whichever state stayed, a build of either tree from it equals a clean build.
    for workspace in (ws, other):
        workspace.fresh_copy()
        built = workspace.build(ws.cache)
        assert built.returncode == 0, built.output
        assert workspace.differences() == []


def test_a_fast_build_then_a_full_one(ws):
    fast = ws.build(env={"DOCSACCEL_FAST": "1"})
    assert fast.returncode == 0, fast.output
    ws.fresh_copy()
    full = ws.build(env={"DOCSACCEL_FAST": "0"})
    assert full.returncode == 0, full.output
    assert ws.differences() == []


BROKEN = write("docs/broken.rst", "Broken\n======\n\nSee :ref:`no-such-label`.\n\n.. nosuch::\n")


#: ``-W`` as CI runs it: before Sphinx 8.1 it stops at the first warning without
#: ``--keep-going`` (the default since).
STRICT = ("-W", "--keep-going")


def test_warnings_come_back_in_every_build(ws):
    ws.fresh_copy(BROKEN)
    ws.fresh_copy(replace("docs/index.rst", "   other\n", "   other\n   broken\n"))
    first = ws.build(None, *STRICT)
    assert first.returncode == 1
    for _ in range(2):
        ws.fresh_copy()
        again = ws.build(None, *STRICT)
        assert again.returncode == 1, again.output
        assert "undefined label: 'no-such-label'" in again.output
        assert 'Unknown directive type "nosuch"' in again.output
        assert again.read == {"broken"} and again.written == {"broken"} | WRITTEN_WITH_ANY


def test_a_removed_page_leaves_no_file(ws):
    ws.fresh_copy(lambda project: (project / "docs" / "other.rst").unlink())
    ws.fresh_copy(replace("docs/index.rst", "   other\n", ""))
    ws.fresh_copy(replace("docs/guide.rst", " then :doc:`other`", ""))
    built = ws.build()
    assert built.returncode == 0, built.output
    assert not (ws.outdir / "other.html").exists()
    assert not (ws.outdir / "_sources" / "other.rst.txt").exists()
    assert ws.differences() == []


def test_a_local_rebuild_with_nothing_changed_reads_nothing(ws):
    first = ws.build()
    assert first.state["origin"] == "cache"
    again = ws.build()  # the same folders: the generated gallery pages are rewritten
    assert again.returncode == 0, again.output
    assert again.state["origin"] == "local"
    assert again.read == set() and again.written == set()
    assert ws.differences() == []


def test_fresh_environment_reads_everything(ws):
    built = ws.build(None, "-E")
    assert built.returncode == 0, built.output
    assert built.state["why_full"] == "a fresh environment was asked for (-E)"
    assert len(built.read) == 18
    assert ws.differences() == []


def test_the_switch_turns_the_state_off(tmp_path):
    workspace = Workspace(tmp_path)
    built = workspace.build(env={"DOCSACCEL_CACHE_SPHINX": "0"})
    assert built.returncode == 0, built.output
    assert "sphinx_state" not in built.report["build"]
    assert not (workspace.cache / "sphinx").exists()
    workspace.fresh_copy(
        replace(
            "docs/conf.py", 'project = "pkg"', 'project = "pkg"\ndocsaccel_cache_sphinx = False'
        )
    )
    built = workspace.build()
    assert "sphinx_state" not in built.report["build"]
    assert not (workspace.cache / "sphinx").exists()


@pytest.mark.parametrize(
    ("conf", "env", "named"),
    [
        ('docsaccel_cache_sphinx = "yes"\n', {}, "docsaccel_cache_sphinx must be True or False"),
        ("", {"DOCSACCEL_CACHE_SPHINX": "maybe"}, "DOCSACCEL_CACHE_SPHINX"),
    ],
)
def test_a_bad_switch_stops_the_build_naming_it(tmp_path, conf, env, named):
    workspace = Workspace(tmp_path)
    workspace.fresh_copy(replace("docs/conf.py", 'project = "pkg"', f'project = "pkg"\n{conf}'))
    built = workspace.build(env=env)
    assert built.returncode == 2, built.output
    assert named in built.output


def test_cache_explain_accepts_a_document(ws):
    from docsaccel.incremental.folder_commands import explain

    assert ws.build().returncode == 0  # the files the build generates are there
    DOCSTRING(ws.project)
    text, code = explain("api/pkg.stats.mean.rst", ws.cache, ws.docs)
    assert code == 0, text
    assert "CHANGED module src/pkg/stats.py (shows mean)" in text
    assert "read again: 1 reason:\n    - src/pkg/stats.py: mean changed" in text
    text, code = explain("guide.rst", ws.cache, ws.docs)
    assert code == 0 and "up to date" in text
    text, code = explain("no/such.rst", ws.cache, ws.docs)
    assert code == 2


def _state_of_another_version(ws: Workspace) -> None:
    """Make the cache's one stored state read as written by another docsaccel version."""
    from docsaccel.incremental.last_build import VERSION

    [path] = (ws.cache / "sphinx" / "states").glob("*.json")
    meta = json.loads(path.read_text("utf-8"))
    meta["build"]["version"] = VERSION + 1
    path.write_text(json.dumps(meta), "utf-8")


def test_cache_explain_counts_each_reason_to_read_a_document_again(ws):
    from docsaccel.incremental.folder_commands import explain
    from docsaccel.incremental.last_build import OTHER_VERSION

    assert ws.build().returncode == 0  # the files the build generates are there
    DOCSTRING(ws.project)
    _state_of_another_version(ws)
    text, code = explain("api/pkg.stats.mean.rst", ws.cache, ws.docs)
    assert code == 0, text
    reasons = f"read again: 2 reasons:\n    - {OTHER_VERSION}\n    - src/pkg/stats.py: mean changed"
    assert reasons in text, text


def test_a_record_of_another_version_is_a_clean_build_and_explain_says_so(ws):
    from docsaccel.incremental.folder_commands import explain
    from docsaccel.incremental.last_build import OTHER_VERSION

    _state_of_another_version(ws)
    text, code = explain("guide.rst", ws.cache, ws.docs)
    assert code == 0, text
    assert f"read again: 1 reason:\n    - {OTHER_VERSION}" in text, text
    built = ws.build()
    assert built.returncode == 0, built.output
    assert built.state["origin"] == "none" and built.state["why_full"] == OTHER_VERSION
    assert "guide" in built.read


def test_prune_counts_the_states(ws):
    from docsaccel.incremental.folder_commands import prune, stats

    text, code = stats(ws.cache)
    assert code == 0 and "Sphinx states: 1" in text
    text, code = prune(ws.cache, "1K")
    assert code == 0 and "Sphinx states: removed 1 state" in text, text
    assert sum(1 for p in (ws.cache / "sphinx" / "objects").rglob("*") if p.is_file()) == 0
    assert not list((ws.cache / "sphinx" / "states").glob("*.json"))
    built = ws.build()
    assert built.returncode == 0 and built.state["origin"] == "none"
    assert ws.differences() == []


def test_the_report_says_why(ws):
    ws.fresh_copy(DOCSTRING)
    built = ws.build()
    state = built.report["build"]["sphinx_state"]
    assert state["origin"] == "cache"
    assert state["read"]["api/pkg.stats.mean"] == "src/pkg/stats.py: mean changed"
    assert json.loads(json.dumps(state)) == state
    shutil.rmtree(ws.outdir)


def _set_record_version(path: Path, where: tuple[str, ...], version: int) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    record = data
    for key in where:
        record = record[key]
    record["version"] = version
    path.write_text(json.dumps(data), encoding="utf-8")


def test_a_stored_record_of_another_version_is_a_clean_build(ws):
    [state] = (ws.cache / "sphinx" / "states").glob("*.json")
    _set_record_version(state, ("build",), 999)
    built = ws.build()
    assert built.returncode == 0, built.output
    assert built.state["origin"] == "none"
    assert "of another version" in built.state["why_full"], built.state
    assert len(built.read) == 18
    assert ws.differences() == []


def test_a_local_record_of_another_version_is_not_trusted(ws):
    first = ws.build()
    assert first.state["origin"] == "cache"
    _set_record_version(ws.outdir / ".doctrees" / "docsaccel-state.json", ("facts",), 999)
    again = ws.build()
    assert again.returncode == 0, again.output
    assert again.state["origin"] == "cache"  # the folders are not trusted, the cache is
    assert ws.differences() == []
