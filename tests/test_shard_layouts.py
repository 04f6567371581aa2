"""Sharding a project laid out unlike docsaccel's own: ``conf.py`` in ``source/`` (Sphinx's
separate source and build folders, so nothing is excluded), a gallery outside the conf
folder, a nested sub-gallery, two examples of one name, an example printing its folder and
expected failures (one raising, one exiting).

``docsaccel shard-local`` must leave the very site and source tree a serial ``sphinx-build
-M html`` leaves of the same tree (every file of the site and of the source tree compared,
measured times masked), with ``-W``, so a serial build after it runs as after a serial one.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.gallery_build import child_env
from helpers.processes import alive, start_shard_command, wait_for_mark
from helpers.slow import require_slow

from docsaccel import layout, sg_compat
from docsaccel.contract import CACHED, FAILED, ended_by
from docsaccel.gallery.processes import children
from docsaccel.incremental.oracle import differences, output_files
from docsaccel.report.inputs import load_input
from docsaccel.schema import load_report

pytestmark = pytest.mark.slow

CONF = """\
project = "layouts"
extensions = ["sphinx_gallery.gen_gallery", "docsaccel.gallery"]
exclude_patterns = []
# Two examples named plot_print.py, on purpose: sphinx-gallery warns of their name.
suppress_warnings = ["sphinx_gallery.duplicate_filename"]
sphinx_gallery_conf = {
    "examples_dirs": ["examples", "../tutorials_src"],
    "gallery_dirs": ["auto_examples", "tutorials"],
    "filename_pattern": r"/plot_",
    "expected_failing_examples": ["examples/plot_fail.py", "examples/plot_exit.py"],
    "download_all_examples": False,
    "show_memory": False,
}
"""
INDEX = """\
Layouts
=======

.. toctree::

   auto_examples/index
   tutorials/index
"""


def example(title: str, body: str) -> str:
    return f'"""\n{title}\n{"=" * len(title)}\n\nAn example.\n"""\n\n{body}\n'


FILES = {
    "source/conf.py": CONF,
    "source/index.rst": INDEX,
    "source/examples/README.txt": "Examples\n========\n",
    "source/examples/plot_print.py": example("Print here", 'print("printed in examples")'),
    # Each runs a while before it raises, so the time a build lists for it is not 0.
    "source/examples/plot_fail.py": example(
        "Fails", 'import time\n\ntime.sleep(0.05)\nraise ValueError("as expected")'
    ),
    "source/examples/plot_exit.py": example(
        "Exits", "import sys\nimport time\n\ntime.sleep(0.05)\nsys.exit(3)"
    ),
    "source/examples/sub/README.txt": "Nested\n------\n",
    "source/examples/sub/plot_nested.py": example("Nested", 'print("nested ran")'),
    "tutorials_src/README.txt": "Tutorials\n=========\n",
    "tutorials_src/plot_print.py": example("Print there", 'print("printed in tutorials")'),
    "tutorials_src/plot_other.py": example("Other", 'print("other ran")'),
    # sphinx-gallery runs an example in its own folder: the path it prints is a project's.
    "tutorials_src/plot_where.py": example("Where", "import os\n\nprint(os.getcwd())"),
}
EXECUTABLE = {
    "examples/plot_print.py",
    "examples/plot_fail.py",
    "examples/sub/plot_nested.py",
    "../tutorials_src/plot_print.py",
    "../tutorials_src/plot_other.py",
    "../tutorials_src/plot_where.py",
}
EXPECTED_FAILURES = {"examples/plot_fail.py", "examples/plot_exit.py"}


def make_layout(root: Path, expected_failure: bool) -> Path:
    files = dict(FILES)
    if not expected_failure:
        for example_id in EXPECTED_FAILURES:
            del files[f"source/{example_id}"]
        expected = '"expected_failing_examples": ['
        files["source/conf.py"] = CONF.replace(
            CONF[CONF.index(expected) : CONF.index("]", CONF.index(expected)) + 1],
            '"expected_failing_examples": []',
        )
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    return root


def run(root: Path, *command: str) -> subprocess.CompletedProcess:
    require_slow()
    return subprocess.run(
        [sys.executable, *command],
        cwd=root,
        env=child_env({"DOCSACCEL_FAST": "1"}),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


#: The build folders of the tree: the serial build's (``-M html source build``) and the
#: shard commands' (the site in ``source/_build/html``, their work beside it).
BUILD_FOLDERS = ("build/", "source/_build/")


def built_files(root: Path, site: Path) -> dict[str, bytes]:
    """What a build of the tree at ``root`` leaves, as the comparison with a serial build
    sees it (:func:`docsaccel.incremental.oracle.output_files`, measured times masked):
    the site's files under ``site/``, Sphinx's working files kept there (``.doctrees``)
    included, and every file of the source tree (the gallery folders sphinx-gallery
    writes into: which examples it marked as unchanged, which it runs again)."""
    files = {f"site/{name}": data for name, data in output_files(site).items()}
    for working in site.glob(".doctrees"):
        files[f"site/{working.name}/"] = b"<Sphinx's working files>"
    for name, data in output_files(root).items():
        if not name.startswith(BUILD_FOLDERS):
            files[name] = data
    for name, statuses_read in times_read(root).items():
        files[f"{name} (statuses read)"] = repr(statuses_read).encode()
    return files


def times_read(root: Path) -> dict[str, list[tuple[str, str]]]:
    """What ``docsaccel report`` reads of each ``sg_execution_times.rst`` of the source
    tree alone (its times masked, its rows kept): each example's status, by file; in the
    order of their ids, as the rows' follows their times."""
    pages = root.glob(f"**/{sg_compat.execution_times_page('').name}")
    return {
        page.relative_to(root).as_posix(): sorted(
            (timing.id, timing.status) for timing in load_input(page).timings
        )
        for page in sorted(pages)
        if not page.relative_to(root).as_posix().startswith(BUILD_FOLDERS)
    }


def serial_build(root: Path, builder: str = "html") -> subprocess.CompletedProcess:
    return run(root, "-m", "sphinx", "-M", builder, "source", "build", "-W")


def serial_files(root: Path, builder: str = "html") -> dict[str, bytes]:
    """:func:`built_files` of a plain serial ``sphinx-build -M <builder> -W`` of the tree;
    the tree removed, so the sharded build runs in the very folder (pages show its paths)."""
    done = serial_build(root, builder)
    assert done.returncode == 0, done.stdout + done.stderr
    files = built_files(root, root / "build" / builder)
    shutil.rmtree(root)
    return files


def sharded_site(root: Path, *args: str) -> Path:
    """The site of ``docsaccel shard-local --docs source --shards 2 -W ARGS``, with its
    default folders: the site, the shards' work and their artifacts under
    ``source/_build``."""
    done = run(
        root, "-m", "docsaccel.cli", "shard-local", "--docs", "source", "--shards", "2", "-W", *args
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return root / "source" / "_build" / "html"


def statuses(site: Path) -> dict[str, str]:
    report = load_report(site / "docsaccel" / "report.json")
    assert len({r["pid"] for r in report["examples"]}) == 2, "each example ran in a shard"
    return {record["id"]: record["status"] for record in report["examples"]}


def test_shard_local_builds_the_serial_site(tmp_path) -> None:
    serial = serial_files(make_layout(tmp_path / "tree", False))

    root = make_layout(tmp_path / "tree", expected_failure=False)
    site = sharded_site(root)

    # The printed folder is the project's, never the shard's copy of it.
    assert differences(built_files(root, site), serial) == []
    assert statuses(site) == dict.fromkeys(EXECUTABLE - EXPECTED_FAILURES, "ok")


def test_shard_local_with_dirhtml_builds_the_serial_dirhtml_site(tmp_path) -> None:
    serial = serial_files(make_layout(tmp_path / "tree", False), "dirhtml")

    root = make_layout(tmp_path / "tree", expected_failure=False)
    site = sharded_site(root, "--builder", "dirhtml")

    # Every page where a serial dirhtml build publishes it: plot_print/index.html.
    assert differences(built_files(root, site), serial) == []
    assert (site / "auto_examples" / "plot_print" / "index.html").is_file()
    assert statuses(site) == dict.fromkeys(EXECUTABLE - EXPECTED_FAILURES, "ok")


def test_expected_failures_are_sharded_and_merged(tmp_path) -> None:
    serial = serial_files(make_layout(tmp_path / "tree", True))

    root = make_layout(tmp_path / "tree", expected_failure=True)
    site = sharded_site(root)

    # Its traceback names the example's file in the project, never the shard's copy; no
    # expected failure is left marked unchanged in its gallery folder.
    assert differences(built_files(root, site), serial) == []
    assert statuses(site) == {
        **dict.fromkeys(EXECUTABLE, "ok"),
        **dict.fromkeys(EXPECTED_FAILURES, "failed"),
    }
    page = (site / "auto_examples" / "plot_fail.html").read_text("utf-8")
    assert "ValueError" in page and "as expected" in page and "shard-work" not in page

    # A serial build after it runs the expected failures again, as after a serial build.
    done = serial_build(root)
    assert done.returncode == 0, done.stdout + done.stderr
    report = root / "build" / "html" / "docsaccel" / "report.json"
    ran = {r["id"]: r["status"] for r in load_report(report)["examples"]}
    assert {example_id: ran[example_id] for example_id in EXPECTED_FAILURES} == dict.fromkeys(
        EXPECTED_FAILURES, "failed"
    )
    check = run(root, "-m", "docsaccel.cli", "check", str(report))
    assert check.returncode == 0, check.stdout + check.stderr


def shard_local(root: Path) -> subprocess.CompletedProcess:
    return run(root, "-m", "docsaccel.cli", "shard-local", "--docs", "source", "--shards", "2")


def test_a_failed_shard_local_leaves_no_report_to_pass(tmp_path) -> None:
    root = make_layout(tmp_path / "tree", expected_failure=False)
    assert shard_local(root).returncode == 0
    report = root / "source" / "_build" / "html" / "docsaccel" / "report.json"
    assert report.is_file()

    broken = root / "tutorials_src" / "plot_other.py"
    broken.write_text(example("Other", 'raise RuntimeError("broken")'), encoding="utf-8")
    done = shard_local(root)

    assert done.returncode == 2, done.stdout + done.stderr
    check = run(root, "-m", "docsaccel.cli", "check", str(report))
    assert check.returncode != 0, check.stdout + check.stderr


# The newcomer's project: in a git repository, with the example cache the caching guide
# sets up (a path relative to the conf folder, pointing at the repository root).
CACHE_LINE = 'docsaccel_cache = "../.docsaccel-cache"\n'


def cached_layout(root: Path) -> Path:
    make_layout(root, expected_failure=False)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    with (root / "source" / "conf.py").open("a", encoding="utf-8") as stream:
        stream.write(CACHE_LINE)
    return root


def serial(root: Path) -> Path:
    done = run(root, "-m", "sphinx", "-b", "html", "-W", "source", "build/html")
    assert done.returncode == 0, done.stdout + done.stderr
    return root / "build" / "html"


def restored(site: Path) -> set[str]:
    """The examples the build restored from the example cache."""
    report = load_report(site / "docsaccel" / "report.json")
    return {r["id"] for r in report["examples"] if (r.get("cache") or {}).get("hit") is True}


def test_shard_local_and_serial_builds_share_the_project_cache(tmp_path) -> None:
    root = cached_layout(tmp_path / "tree")
    # The page of the example printing its folder shows where it ran, a shard's copy or
    # the project: the cache runs it again in the other.
    cached = EXECUTABLE - EXPECTED_FAILURES - {"../tutorials_src/plot_where.py"}

    assert shard_local(root).returncode == 0
    assert restored(serial(root)) == cached, "the shards' entries serve a serial build"
    done = shard_local(root)
    assert done.returncode == 0, done.stdout + done.stderr
    assert restored(root / "source" / "_build" / "html") == cached, "and the other way round"
    copy = root / "source" / "_build" / "shard-work" / "0" / "project"
    assert not (copy / ".docsaccel-cache").exists()
    # The default folders, the site's included, are no new files for git.
    status = ["git", "status", "--porcelain", "--untracked-files=all", "source/_build"]
    listed = subprocess.run(status, cwd=root, capture_output=True, text=True, check=True)
    assert listed.stdout == ""


def test_an_example_renamed_after_shard_local_is_unpublished(tmp_path) -> None:
    """The merge's outputs in the gallery folders are the next build's to remove, as the
    pages a build generates are: a serial build does not publish a renamed example's."""
    root = cached_layout(tmp_path / "tree")
    done = shard_local(root)
    assert done.returncode == 0, done.stdout + done.stderr
    gallery = root / "source" / "tutorials"
    assert (gallery / "plot_other.rst").is_file()

    (root / "tutorials_src" / "plot_other.py").rename(root / "tutorials_src" / "plot_renamed.py")
    site = serial(root)  # -W: a page left in no toctree fails it

    assert sorted(p.name for p in gallery.glob("plot_other*")) == []
    assert not (site / "tutorials" / "plot_other.html").exists()
    assert (site / "tutorials" / "plot_renamed.html").is_file()


def _shard_running_an_example(
    root: Path, tmp_path: Path, command: str, *args: str, output: int = subprocess.PIPE
) -> tuple[subprocess.Popen[str], int]:
    """``command`` started on ``root`` with an example that sleeps, once a shard's build
    runs it: the process and the example's pid."""
    started = tmp_path / "started.txt"
    body = (
        "import os, pathlib, time\n"
        f"pathlib.Path({str(started)!r}).write_text(str(os.getpid()))\n"
        "time.sleep(600)"
    )
    (root / "tutorials_src" / "plot_other.py").write_text(example("Other", body), "utf-8")
    process = start_shard_command(root, command, *args, output=output)
    try:
        return process, int(wait_for_mark(started, process))
    except AssertionError:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        raise


@pytest.mark.parametrize(
    ("signum", "said", "code"),
    [
        (signal.SIGINT, "it was interrupted by Ctrl-C (SIGINT)", 130),
        (signal.SIGTERM, "it was terminated (SIGTERM)", 143),
    ],
)
def test_a_stop_of_shard_local_stops_the_shards_in_one_line(
    tmp_path, signum: int, said: str, code: int
) -> None:
    """Ctrl-C or ``SIGTERM`` reaches ``shard-local`` alone (a signal to its process): it
    stops the shards' builds, removes their partial artifacts and says so in one line
    naming the signal as a serial build names it, with the exit code a shell gives a
    serial build the signal ended (128 + its number)."""
    require_slow()
    root = make_layout(tmp_path / "tree", expected_failure=False)
    process, example_pid = _shard_running_an_example(
        root, tmp_path, "shard-local", "--docs", "source", "--shards", "2"
    )
    try:
        process.send_signal(signum)
        out, err = process.communicate(timeout=300)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # the old behaviour: left running

    assert process.returncode == code, out + err
    assert err.strip().splitlines() == [f"docsaccel shard-local: {said}; its builds were stopped"]
    with pytest.raises(ProcessLookupError):
        os.kill(example_pid, 0)  # the shard running the example is gone
    assert not (root / "source" / "_build" / "shard-artifacts").exists()
    # The shards' builds got the signal the command got: their logs name it, never the other.
    logs = [log.read_text("utf-8") for log in (root / "source" / "_build").glob("shard-work/*.log")]
    other = ({signal.SIGINT, signal.SIGTERM} - {signum}).pop()
    assert any(ended_by(signum) in log for log in logs), logs
    assert not any(ended_by(other) in log for log in logs), logs


#: A ``conf.py`` addition holding the merge's build (the one build ``shard-local`` starts
#: with the merged records) at a Sphinx event, once, after it wrote its pid to ``{mark}``.
_HOLD_MERGE = """
import os, pathlib, time
def _hold(app, *args):
    mark = pathlib.Path({mark!r})
    if os.environ.get("DOCSACCEL_SHARD_RECORDS") and not mark.exists():
        mark.write_text(str(os.getpid()))
        time.sleep(600)
def setup(app):
    app.connect({event!r}, _hold)
"""


@pytest.mark.parametrize("event", ["source-read", "html-page-context"], ids=["read", "write"])
def test_sigterm_to_shard_local_while_its_merge_builds_is_named_by_every_gate(
    tmp_path, event: str
) -> None:
    """``SIGTERM`` reaches the merge's build as ``SIGTERM``, while it reads the documents
    or writes the pages: the report it leaves, and ``check``, ``compare`` and ``history``
    after it, name the signal the command got, never Ctrl-C."""
    require_slow()
    root = make_layout(tmp_path / "tree", expected_failure=False)
    mark = tmp_path / "merge.txt"
    with (root / "source" / "conf.py").open("a", encoding="utf-8") as stream:
        stream.write(_HOLD_MERGE.format(mark=str(mark), event=event))
    process = start_shard_command(root, "shard-local", "--docs", "source", "--shards", "2")
    try:
        wait_for_mark(mark, process)  # the merge's build holds
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=300)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)

    assert process.returncode == 143, err
    said = ended_by(signal.SIGTERM)
    assert err.strip().splitlines()[-1] == f"docsaccel shard-local: {said}; its builds were stopped"
    site = root / "source" / "_build" / "html"
    for command in (
        ("check", str(site)),
        ("compare", str(site), str(site)),
        ("history", "append", str(site), "--to", str(tmp_path / "history.jsonl")),
    ):
        done = run(root, "-m", "docsaccel.cli", *command)
        out = done.stdout + done.stderr
        assert done.returncode != 0 and f"the build did not finish ({said}; " in out, out
        assert "SIGINT" not in out, out


def test_a_terminated_shard_build_names_sigterm_in_its_sphinx_log(tmp_path) -> None:
    """``SIGTERM`` to ``shard-build`` (a cancelled CI job) reaches its Sphinx build as
    ``SIGTERM``: the build's log names the signal the command got, as its own line does,
    never Ctrl-C."""
    require_slow()
    root = make_layout(tmp_path / "tree", expected_failure=False)
    args = ("--docs", "source", "--shards", "1", "--index", "0")
    process, _ = _shard_running_an_example(root, tmp_path, "shard-build", *args)
    try:
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=300)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)

    assert process.returncode == 143, out + err
    said = f"docsaccel shard-build: {ended_by(signal.SIGTERM)}; its builds were stopped"
    assert err.strip().splitlines()[-1] == said
    sphinx_log = out + "\n".join(err.strip().splitlines()[:-1])
    assert ended_by(signal.SIGTERM) in sphinx_log, sphinx_log
    assert "SIGINT" not in sphinx_log, sphinx_log


def test_a_killed_shard_local_takes_its_shard_builds_with_it(tmp_path) -> None:
    """``SIGKILL`` (the out-of-memory killer, a runner's hard stop) leaves ``shard-local``
    no code to run: its shards' builds, in sessions of their own, end with it anyway."""
    require_slow()
    root = make_layout(tmp_path / "tree", expected_failure=False)
    args = ("--docs", "source", "--shards", "2")
    process, example_pid = _shard_running_an_example(
        root, tmp_path, "shard-local", *args, output=subprocess.DEVNULL
    )
    builds = [*children(process.pid), example_pid]
    try:
        process.kill()
        process.wait(timeout=60)
        deadline = time.monotonic() + 60  # a guard for a busy machine, not a timing
        while any(alive(pid) for pid in builds) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = [pid for pid in builds if alive(pid)]
    finally:
        for pid in builds:  # the old behaviour: left running, each in its own group
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
    assert left == [], "a shard build outlived the killed shard-local"


def test_shard_local_runs_no_more_shards_than_examples(tmp_path) -> None:
    root = make_layout(tmp_path / "tree", expected_failure=False)
    command = ["-m", "docsaccel.cli", "shard-local", "--docs", "source", "--shards", "9"]

    done = run(root, *command)

    assert done.returncode == 0, done.stdout + done.stderr
    executable = len(EXECUTABLE - EXPECTED_FAILURES)
    said = f"docsaccel shard-local: 9 shards for {executable} examples: running {executable}"
    assert said in done.stderr.splitlines(), done.stderr
    work = root / "source" / "_build" / "shard-work"
    # Beside the shards' workspaces: the folder of the run's lock.
    shards = [p.name for p in work.iterdir() if p.is_dir() and p.name != layout.FOLDER_NAME]
    assert sorted(shards) == [str(i) for i in range(executable)]


PLAN_CONF = """\
project = "plan"
extensions = ["sphinx_gallery.gen_gallery", "docsaccel.gallery"]
exclude_patterns = ["_build"]
docsaccel_budgets = "budgets.toml"
sphinx_gallery_conf = {
    "examples_dirs": ["examples"],
    "gallery_dirs": ["auto_examples"],
    "filename_pattern": r"/plot_",
    "expected_failing_examples": ["examples/plot_fail.py"],
    "download_all_examples": False,
    "show_memory": False,
}
"""
# The expected failure runs a while before it raises, less than the slowest example and
# far less than its budget.
PLAN_FILES = {
    "docs/conf.py": PLAN_CONF,
    "docs/budgets.toml": 'default = "10m"\n',
    "docs/index.rst": "Plan\n====\n\n.. toctree::\n\n   auto_examples/index\n",
    "docs/examples/README.txt": "Examples\n========\n",
    "docs/examples/plot_fail.py": example(
        "Fails", 'import time\n\ntime.sleep(0.3)\nraise ValueError("as expected")'
    ),
    "docs/examples/plot_slow.py": example("Slow", "import time\n\ntime.sleep(0.6)"),
    "docs/examples/plot_x.py": example("X", 'print("x")'),
    "docs/examples/plot_y.py": example("Y", 'print("y")'),
}


def test_shards_are_planned_from_an_expected_failures_measured_time(tmp_path) -> None:
    """An expected failure's time in the history (it ran, then raised as expected) is what
    running it costs: the plan balances it as measured, not at its budget."""
    root = tmp_path / "tree"
    for relative, text in PLAN_FILES.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    done = run(root, "-m", "sphinx", "-b", "html", "docs", "build/html")
    assert done.returncode == 0, done.stdout + done.stderr
    report = root / "build" / "html" / "docsaccel" / "report.json"
    append = ["history", "append", "--to", "history.jsonl", str(report)]
    done = run(root, "-m", "docsaccel.cli", *append)
    assert done.returncode == 0, done.stdout + done.stderr

    local = ["shard-local", "--docs", "docs", "--shards", "2", "history.jsonl"]
    done = run(root, "-m", "docsaccel.cli", *local)

    assert done.returncode == 0, done.stdout + done.stderr
    merged = load_report(root / "docs" / "_build" / "html" / "docsaccel" / "report.json")
    shards: dict[int, set[str]] = {}
    for record in merged["examples"]:
        shards.setdefault(record["pid"], set()).add(record["name"])
    assert sorted(map(sorted, shards.values())) == [
        ["plot_fail.py", "plot_x.py", "plot_y.py"],
        ["plot_slow.py"],
    ]


def leave_marks(root: Path) -> tuple[Path, Path]:
    """What an earlier ``shard-local`` left in a gallery folder: the ``.md5`` of an expected
    failure, as sphinx-gallery writes one; and beside another, a file of the user's."""
    gallery = root / "source" / "auto_examples"
    gallery.mkdir(parents=True, exist_ok=True)
    mark = gallery / "plot_fail.py.md5"
    mark.write_text(sg_compat.get_md5sum(str(root / "source" / "examples" / "plot_fail.py"), "t"))
    users = gallery / "plot_exit.py.md5"
    users.write_text("my notes\n", encoding="utf-8")
    return mark, users


def test_a_leftover_md5_of_an_expected_failure_is_removed(tmp_path) -> None:
    """sphinx-gallery writes no ``.md5`` for an example that raised: one left beside an
    expected failure makes the next build skip it and fail it as "expected to fail" that
    did not. A plain build and ``shard-local`` remove it, saying so in one line, and leave
    a file of other content alone."""
    root = make_layout(tmp_path / "tree", expected_failure=True)
    said = "removed auto_examples/plot_fail.py.md5: left beside examples of"

    mark, users = leave_marks(root)
    done = serial_build(root)

    assert done.returncode == 0, done.stdout + done.stderr
    assert [line for line in done.stdout.splitlines() if said in line] != [], done.stdout
    assert not mark.exists() and users.read_text(encoding="utf-8") == "my notes\n"
    report = load_report(root / "build" / "html" / "docsaccel" / "report.json")
    ran = {r["id"]: r["status"] for r in report["examples"]}
    assert ran["examples/plot_fail.py"] == "failed"

    # The shard of plot_exit.py marks its page as any expected failure's: no user file there.
    mark, users = leave_marks(root)
    users.unlink()
    done = shard_local(root)

    assert done.returncode == 0, done.stdout + done.stderr
    assert f"docsaccel shard-local: {said}" in done.stderr, done.stderr
    assert not mark.exists()


# A sphinx-gallery release the Sphinx state is not checked with (the version is bumped in
# conf.py, before docsaccel reads it): the merge build then keeps its record of what it
# generates beside the site, apart from the merge's, in the cache folder.
STATE_OFF_LINES = "import sphinx_gallery\n\nsphinx_gallery.__version__ = '0.21.0'\n"
#: An expected failure in the gallery outside the conf folder.
OUTSIDE_FAILURE = "../tutorials_src/plot_boom.py"


def state_off_layout(root: Path) -> Path:
    """The layout with its expected failures (one outside the conf folder), the example
    cache of the caching guide and the Sphinx state off."""
    make_layout(root, expected_failure=True)
    (root / "tutorials_src" / "plot_boom.py").write_text(
        example("Boom", 'raise ValueError("boom, as expected")'), encoding="utf-8"
    )
    with (root / "source" / "conf.py").open("a", encoding="utf-8") as stream:
        stream.write(CACHE_LINE + STATE_OFF_LINES)
        stream.write(
            f'sphinx_gallery_conf["expected_failing_examples"].append({OUTSIDE_FAILURE!r})\n'
        )
    return root


def without_cache(files: dict[str, bytes]) -> dict[str, bytes]:
    """:func:`built_files` but the example cache's folder, which the builds share."""
    return {name: data for name, data in files.items() if not name.startswith(".docsaccel-cache/")}


def test_merge_builds_without_the_sphinx_state_keep_the_shards_outputs(tmp_path) -> None:
    """The merge copies the shards' outputs into the gallery folders once it removed what
    earlier builds generated there: its build, with the Sphinx state off, must not take
    them for an earlier build's and remove them too (the expected failures' marks, the
    pages of the examples the shards restored from the cache). Every ``shard-local``
    leaves the serial site, the second (every example restored) as the first."""
    serial = without_cache(serial_files(state_off_layout(tmp_path / "tree")))

    root = state_off_layout(tmp_path / "tree")
    for _ in range(2):
        site = sharded_site(root)
        assert differences(without_cache(built_files(root, site)), serial) == []
    # The second restored every example that passed: the shards ran in the same copies.
    assert restored(site) == EXECUTABLE - EXPECTED_FAILURES
    report = load_report(site / "docsaccel" / "report.json")
    assert {record["id"]: record["status"] for record in report["examples"]} == {
        **dict.fromkeys(EXECUTABLE - EXPECTED_FAILURES, CACHED),
        **dict.fromkeys([*EXPECTED_FAILURES, OUTSIDE_FAILURE], FAILED),
    }
