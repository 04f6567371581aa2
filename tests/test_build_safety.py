"""A build that never lies: locks, SIGTERM, stale reports, the report page, escaping, and
outputs that match the build publishing them. Real Sphinx builds in temporary folders."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.gallery_build import build, child_env, make_project, run_cli, sphinx_command
from helpers.processes import (
    alive,
    assert_no_child_survives,
    hold,
    release,
    wait_until_running,
)

from docsaccel import layout, sg_compat
from docsaccel.gallery.lock import LockedError, OutdirLock
from docsaccel.records import read_records
from docsaccel.report.commands import EXIT_UNREADABLE, run_check

pytestmark = pytest.mark.slow


def start_build(src: Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    outdir = src / "_build" / "html"
    return subprocess.Popen(
        sphinx_command(src, outdir),
        env=child_env(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_a_second_build_into_the_same_folder_is_refused(tmp_path) -> None:
    src = make_project(tmp_path, ["plot_wait.py"])
    hold(src)
    first = start_build(src)
    try:
        wait_until_running(src, "plot_wait.py", first)

        second = build(src)
        release(src)

        assert second.returncode != 0
        assert f"another build is writing into {src / '_build' / 'html'}" in second.output
        assert f"(process {first.pid}," in second.output
    finally:
        release(src)
        output = first.communicate(timeout=300)[0]
    # The first build was left alone: its example finished, its report is whole.
    assert first.returncode == 0, output
    report = json.loads((src / "_build" / "html" / "docsaccel" / "report.json").read_text())
    assert report["build"]["complete"] is True
    assert [r["status"] for r in report["examples"]] == ["ok"]


def test_a_build_refused_by_the_lock_leaves_the_last_report_readable(tmp_path) -> None:
    """Refused because another build holds the folder, a build never was the folder's:
    it leaves no note that it started, so the report there still passes."""
    src = make_project(tmp_path, ["plot_quick.py"])
    first = build(src)
    assert first.returncode == 0, first.output
    held = OutdirLock(first.outdir)
    held.acquire()
    try:
        refused = build(src)
    finally:
        held.release()

    assert refused.returncode != 0 and "another build is writing into" in refused.output
    assert not (first.report_path.parent / layout.BUILD_STARTED_FILE).exists()
    out, code = run_check([str(first.report_path)])
    assert code == 0, out


def test_a_second_build_of_the_same_source_tree_is_refused(tmp_path) -> None:
    # Two builds of one source tree share its gallery folders (pages, .md5, run notes),
    # whatever their output folders: a full build beside a fast one would publish, and
    # report as its own, the fast run's outputs.
    conf = 'sphinx_gallery_conf["within_subsection_order"] = "FileNameSortKey"\n'
    src = make_project(tmp_path, ["plot_knobs.py", "plot_wait.py"], conf=conf)
    hold(src)
    fast = start_build(src, {"DOCSACCEL_FAST": "1"})
    full_outdir = src / "_build" / "full"
    try:
        wait_until_running(src, "plot_wait.py", fast)

        full = build(src, outdir=full_outdir, env={"DOCSACCEL_FAST": "0"})

        assert full.returncode == 2, full.output
        gallery = src / "auto_examples"
        assert f"generating the gallery folder {gallery} (process {fast.pid}," in full.output
        report = full.report
        assert report["build"]["complete"] is False
        assert "gallery folder" in report["build"]["stopped_before_examples"]
        assert report["examples"] == []
    finally:
        release(src)
        output = fast.communicate(timeout=300)[0]
    assert fast.returncode == 0, output
    fast_report = json.loads((src / "_build" / "html" / "docsaccel" / "report.json").read_text())
    assert fast_report["build"]["complete"] is True
    # Once the first has finished, the full build runs, on the full path's values.
    full = build(src, outdir=full_outdir, env={"DOCSACCEL_FAST": "0"})
    assert full.returncode == 0, full.output
    assert "rollouts: 4" in full.page("plot_knobs.py")
    assert full.record("plot_knobs.py")["fast"] is False


def test_an_example_that_removes_the_lock_lets_no_second_build_in(tmp_path) -> None:
    names = ["plot_h_lock.py", "plot_h_lock_probe.py"]
    conf = 'sphinx_gallery_conf["within_subsection_order"] = "FileNameSortKey"\n'
    src = make_project(tmp_path, names, conf=conf)

    built = build(src)

    assert built.returncode == 0, built.output
    assert "lock removed" in built.page("plot_h_lock.py")
    assert "second build: REFUSED" in built.page("plot_h_lock_probe.py")
    assert built.report["build"]["complete"] is True


def test_a_lock_another_build_took_meanwhile_is_said(tmp_path) -> None:
    held = OutdirLock(tmp_path)
    held.acquire()
    held.path.unlink()
    other = OutdirLock(tmp_path)
    other.acquire()  # the file was gone: the second build got a lock of its own
    message = held.keep()
    assert message is not None and "another build is writing into" in message
    other.release()
    assert held.keep() is None  # the path is free: locked again
    with pytest.raises(LockedError):
        OutdirLock(tmp_path).acquire()
    held.release()


def test_the_lock_names_its_holder_and_is_released(tmp_path) -> None:
    held = OutdirLock(tmp_path)
    held.acquire()
    with pytest.raises(LockedError, match=r"another build is writing into .* \(process \d+, lock"):
        OutdirLock(tmp_path).acquire()
    held.release()
    again = OutdirLock(tmp_path)
    again.acquire()
    assert again.held
    again.release()


#: An example registering an exit handler (that returns): the build's process keeps the
#: output folder's lock until it ends, as what such a handler does may fail the build.
EXIT_HANDLER = '''"""
Exit handler
============
"""
import atexit

atexit.register(print, "an exit handler that returns")
'''

#: Two builds into one folder in one interpreter (as sphinx-gallery's own tests make
#: Sphinx's application twice), then a child forked from that process outliving it.
TWO_BUILDS_THEN_A_FORK = """
import os, sys, time
from pathlib import Path
from sphinx.cmd.build import build_main
from docsaccel import layout

src, out = sys.argv[1], sys.argv[2]
for _ in range(2):
    assert build_main(["-b", "html", "-q", src, out]) == 0
    assert layout.lock_holder(out) == str(os.getpid())
child = os.fork()
if child == 0:
    # Not the parent's output: its reader waits for every writer to close it.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    deadline = time.monotonic() + 120
    while not Path(src, "go.flag").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    os._exit(0)
Path(src, "child.pid").write_text(str(child))
"""


def test_a_second_build_in_one_process_takes_over_the_lock_its_first_kept(tmp_path) -> None:
    """The output folder's lock a finished build keeps until its process ends is handed
    to the next build in that process, not refused; a child forked from that process
    does not keep it once the process has ended."""
    src = make_project(tmp_path, ["plot_quick.py"])
    (src / "examples" / "plot_exit_handler.py").write_text(EXIT_HANDLER, encoding="utf-8")
    outdir = src / "_build" / "html"
    command = [sys.executable, "-c", TWO_BUILDS_THEN_A_FORK, str(src), str(outdir)]
    # A grace long enough that only the process's own end ends it: not a timing.
    env = child_env({"DOCSACCEL_INTERRUPT_GRACE": "300"})
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        child = int((src / "child.pid").read_text())
        assert alive(child)
        assert layout.lock_holder(outdir) is None
    finally:
        (src / "go.flag").touch()
    assert run_cli("check", str(outdir)).returncode == 0


def test_sigterm_writes_the_report_and_ends_with_the_signal(tmp_path) -> None:
    src = make_project(tmp_path, ["plot_wait.py", "plot_quick.py"])
    hold(src)
    process = start_build(src)
    wait_until_running(src, "plot_wait.py", process)

    process.send_signal(signal.SIGTERM)
    output = process.communicate(timeout=120)[0]

    assert process.returncode == -signal.SIGTERM, output
    report = json.loads((src / "_build" / "html" / "docsaccel" / "report.json").read_text())
    assert report["build"]["complete"] is False
    waiting = next(r for r in report["examples"] if r["name"] == "plot_wait.py")
    assert waiting["status"] == "failed"
    assert "terminated (SIGTERM)" in waiting["error"]
    assert "examples/plot_wait.py" in output
    assert_no_child_survives(src, expected=1)


PARALLEL = 'sphinx_gallery_conf["parallel"] = 2\n'


@pytest.mark.parametrize(
    ("signum", "conf"),
    [(signal.SIGTERM, ""), (signal.SIGTERM, PARALLEL), (signal.SIGINT, "")],
    ids=["sigterm", "sigterm-parallel", "sigint"],
)
def test_a_stopped_build_says_so_in_one_error_line_and_its_report_is_refused(
    tmp_path, signum, conf
) -> None:
    """One fault, one ERROR line: what ended the build and where its partial report is;
    the report is written, and ``docsaccel check`` refuses it (a build that did not
    finish)."""
    src = make_project(tmp_path, ["plot_wait.py", "plot_quick.py"], conf=conf)
    hold(src)
    outdir = src / "_build" / "html"
    process = subprocess.Popen(
        sphinx_command(src, outdir),
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_until_running(src, "plot_wait.py", process)

    try:
        process.send_signal(signum)
        process.wait(timeout=120)
    finally:  # a child left running would hold the output pipes open
        for pid in (src / "examples" / "child_pids.txt").read_text().split():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGKILL)
    _, stderr = process.communicate(timeout=120)

    assert process.returncode != 0, stderr
    errors = [line for line in stderr.splitlines() if line.startswith("ERROR")]
    assert len(errors) == 1, stderr
    report_path = layout.report_path(outdir)
    assert str(report_path) in errors[0] and "complete: false" in errors[0], stderr
    if signum == signal.SIGTERM:
        assert "terminated (SIGTERM)" in errors[0], stderr
    assert json.loads(report_path.read_text("utf-8"))["build"]["complete"] is False
    out, code = run_check([str(report_path)])
    assert code == EXIT_UNREADABLE, out
    assert "the build did not finish" in out, out


def test_ctrl_c_ends_with_sphinx_builds_status_whatever_an_example_left(tmp_path) -> None:
    # An example left an exception in sys.last_value (where the interpreter puts one it
    # printed); Ctrl-C later is still Sphinx's "interrupted" (2), not a crash (1).
    conf = 'sphinx_gallery_conf["within_subsection_order"] = "FileNameSortKey"\n'
    src = make_project(tmp_path, ["plot_h_last_value.py", "plot_wait.py"], conf=conf)
    hold(src)
    process = start_build(src)
    wait_until_running(src, "plot_wait.py", process)

    process.send_signal(signal.SIGINT)
    output = process.communicate(timeout=120)[0]

    assert process.returncode == 2, output
    report = json.loads((src / "_build" / "html" / "docsaccel" / "report.json").read_text())
    assert report["build"]["complete"] is False


KILLER = """
import os
import signal


def _kill(app, pagename, templatename, context, doctree):
    os.kill(os.getpid(), signal.{signal})


def _kill_reading(app, docname, source):
    os.kill(os.getpid(), signal.{signal})


def _exit(app, exception):
    os._exit(0)


def setup(app):
    app.connect("{event}", {handler}, priority=500)
"""


def _with_extension(tmp_path: Path, names: list[str], source: str) -> Path:
    conf = "import os, sys\nsys.path.insert(0, os.path.dirname(__file__))\n"
    conf += "extensions.append('hostile_extension')\n"
    src = make_project(tmp_path, names, conf=conf)
    (src / "hostile_extension.py").write_text(source, "utf-8")
    return src


def _refused_unfinished(src: Path) -> subprocess.CompletedProcess:
    """``docsaccel check`` on the build's report, which must say it did not finish."""
    report = src / "_build" / "html" / "docsaccel" / "report.json"
    assert json.loads(report.read_text())["build"]["complete"] is False
    gate = run_cli("check", str(report))
    assert gate.returncode == 2, gate.stdout + gate.stderr
    return gate


def test_a_build_killed_while_it_writes_its_pages_leaves_an_incomplete_report(tmp_path) -> None:
    # SIGKILL (the kernel's out-of-memory killer, say) leaves no chance to write anything:
    # the report the examples' end left must not pass a gate.
    killer = KILLER.format(signal="SIGKILL", event="html-page-context", handler="_kill")
    src = _with_extension(tmp_path, ["plot_quick.py"], killer)
    built = build(src)
    assert built.returncode == -signal.SIGKILL, built.output

    gate = _refused_unfinished(src)
    assert "it ended while its pages were written" in gate.stderr


@pytest.mark.parametrize("sig", ["SIGKILL", "SIGTERM"])
def test_a_build_stopped_while_it_reads_its_documents_says_so(tmp_path, sig) -> None:
    # The examples ran; Sphinx read the documents, and wrote no page yet.
    killer = KILLER.format(signal=sig, event="source-read", handler="_kill_reading")
    src = _with_extension(tmp_path, ["plot_quick.py"], killer)
    built = build(src)
    assert built.returncode != 0, built.output

    gate = _refused_unfinished(src)
    assert "its examples ran; it ended while Sphinx read the documents" in gate.stderr
    assert "pages were written" not in gate.stderr


#: Holds the build as it reads its documents (its examples ran) until the test says go.
PAUSER = """
import os
import time
from pathlib import Path


def _pause(app, docname, source):
    here = Path(app.srcdir)
    (here / "reading.flag").touch()
    deadline = time.monotonic() + 120
    while not (here / "go.flag").exists() and time.monotonic() < deadline:
        time.sleep(0.05)


def setup(app):
    app.connect("source-read", _pause)
"""


def test_check_while_the_build_runs_says_it_runs_and_to_check_after(tmp_path) -> None:
    """The report a running build keeps in its output folder is not that of a build that
    ended "while Sphinx read the documents": the gate says a build runs now, and which."""
    src = _with_extension(tmp_path, ["plot_quick.py"], PAUSER)
    process = subprocess.Popen(
        sphinx_command(src, src / "_build" / "html"),
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    report = layout.report_path(src / "_build" / "html")
    try:
        deadline = time.monotonic() + 120
        while not (src / "reading.flag").exists() and process.poll() is None:
            assert time.monotonic() < deadline, "the build never read a document"
            time.sleep(0.1)
        text, code = run_check([str(report)])
    finally:
        (src / "go.flag").touch()
        output = process.communicate(timeout=300)[0]
    assert code == EXIT_UNREADABLE and text.count("\n") == 1, text
    assert f"a build is running now (process {process.pid})" in text, text
    assert "check after it ends" in text and "Sphinx read the documents" not in text, text
    assert process.returncode == 0, output
    text, code = run_check([str(report)])
    assert code == 0, text


def test_status_0_before_the_builds_verdict_fails_it(tmp_path) -> None:
    # An extension's build-finished handler ends the process with 0 before sphinx-gallery
    # says an example failed (and before the plugin's own verdict): not a pass.
    ender = KILLER.format(signal="SIGKILL", event="build-finished", handler="_exit")
    src = _with_extension(tmp_path, ["plot_crash.py", "plot_quick.py"], ender)
    built = build(src)
    assert built.returncode == 2, built.output
    assert "before sphinx-build decided its status" in built.output


CRASHER = """
class Crash(BaseException):
    \"\"\"Not an Exception: sphinx-build does not catch it, the interpreter prints it.\"\"\"


def _crash(app, docname, source):
    raise Crash("while reading " + docname)


def setup(app):
    app.connect("source-read", _crash)
"""


def test_a_crash_sphinx_does_not_catch_ends_as_without_the_plugin(tmp_path) -> None:
    # The interpreter ends with 1 for an exception nothing caught: so does the build with
    # the plugin, its report written and incomplete; without the plugin, the same 1.
    statuses = {}
    for plugin in (True, False):
        conf = "import os, sys\nsys.path.insert(0, os.path.dirname(__file__))\n"
        conf += "extensions.append('crasher')\n"
        if not plugin:
            conf += "extensions.remove('docsaccel.gallery')\n"
        src = make_project(tmp_path / str(plugin), ["plot_quick.py"], conf=conf)
        (src / "crasher.py").write_text(CRASHER, "utf-8")
        built = build(src)
        assert "Crash: while reading" in built.output, built.output
        statuses[plugin] = built.returncode
        if plugin:
            assert built.report["build"]["complete"] is False
            assert "complete: false" in built.output
    assert statuses == {True: 1, False: 1}


def test_a_build_that_fails_before_its_examples_leaves_its_own_report(tmp_path) -> None:
    src = make_project(tmp_path, ["plot_quick.py"], budgets='default = "1m"\n')
    first = build(src)
    assert first.returncode == 0, first.output
    assert first.report_path.is_file()

    (src / "budgets.toml").write_text('default = "1 minute"\n')
    broken = build(src)

    assert broken.returncode != 0
    assert "budgets.toml" in broken.output
    report = broken.report  # its own: no example, not complete, saying why
    assert report["examples"] == [] and report["build"]["complete"] is False
    assert "budgets.toml" in report["build"]["stopped_before_examples"]


@pytest.mark.parametrize("docname", ["index", "../outside"])
def test_the_report_page_never_replaces_a_file_of_the_project(tmp_path, docname) -> None:
    src = make_project(tmp_path, ["plot_quick.py"], conf=f'docsaccel_report_page = "{docname}"\n')
    index = (src / "index.rst").read_text()

    built = build(src)

    assert built.returncode != 0
    assert "docsaccel_report_page" in built.output and f"'{docname}'" in built.output
    assert (src / "index.rst").read_text() == index
    assert not (tmp_path / "outside.rst").exists()
    assert not (src / "auto_examples" / "plot_quick.rst").exists(), "an example ran"


#: An example that leaves a file at ``{marker}`` when it runs.
MARKING_EXAMPLE = '''"""
Marker
======
"""

from pathlib import Path

Path({marker!r}).write_text("ran", encoding="utf-8")
'''


@pytest.mark.parametrize(
    "docname",
    ["auto_examples/index", "auto_examples/budget", "./auto_examples/sub/x", "sg_execution_times"],
)
def test_a_report_page_sphinx_gallery_writes_is_refused_before_any_example(
    tmp_path, docname
) -> None:
    """A fresh checkout has no gallery pages yet: the page is refused from the gallery
    configuration, not once the examples wrote them."""
    src = make_project(tmp_path, [], conf=f'docsaccel_report_page = "{docname}"\n')
    marker = tmp_path / "ran"
    example = MARKING_EXAMPLE.format(marker=str(marker))
    (src / "examples" / "plot_marker.py").write_text(example, encoding="utf-8")

    built = build(src)

    assert built.returncode == 2, built.output
    lines = [line for line in built.output.splitlines() if line.strip()]
    assert len(lines) == 1, built.output
    assert f"docsaccel_report_page = '{docname}'" in lines[0], built.output
    assert "sphinx-gallery" in lines[0] and "budget_report" in lines[0], built.output
    assert not marker.exists(), "an example ran"
    assert "docsaccel_report_page" in built.report["build"]["stopped_before_examples"]


@pytest.mark.parametrize("docname", ["examples/budget", "./examples/sub/x"])
def test_a_report_page_in_an_examples_folder_is_refused_before_any_example(
    tmp_path, docname
) -> None:
    """The page was written among the user's tracked examples, beside their gallery
    header: it is refused from the gallery configuration, naming the folder's key."""
    src = make_project(tmp_path, [], conf=f'docsaccel_report_page = "{docname}"\n')
    marker = tmp_path / "ran"
    example = MARKING_EXAMPLE.format(marker=str(marker))
    (src / "examples" / "plot_marker.py").write_text(example, encoding="utf-8")

    built = build(src)

    assert built.returncode == 2, built.output
    lines = [line for line in built.output.splitlines() if line.strip()]
    assert len(lines) == 1, built.output
    assert f"docsaccel_report_page = '{docname}' is in examples, an examples folder" in lines[0]
    assert "(examples_dirs)" in lines[0] and "budget_report" in lines[0], built.output
    assert not marker.exists(), "an example ran"
    assert sorted(p.name for p in (src / "examples").iterdir()) == [
        "README.rst",
        "plot_marker.py",
    ]
    assert "docsaccel_report_page" in built.report["build"]["stopped_before_examples"]


def test_hostile_video_names_stay_text(tmp_path) -> None:
    src = make_project(tmp_path, ["plot_h_video_name.py"])

    built = build(src)

    assert built.returncode == 0, built.output
    page = built.page("plot_h_video_name.py")
    assert "<img src=x" not in page and "<b>x" not in page
    assert page.count("<video") == 2
    assert "&lt;img src=x onerror=alert(1)&gt;" in page


def test_outputs_match_the_build_that_publishes_them(tmp_path) -> None:
    src = make_project(tmp_path, ["plot_knobs.py", "plot_quick.py"])
    out = src / "_build"
    note = "Built with the CI fast path"

    fast = build(src, "-W", env={"DOCSACCEL_FAST": "1"}, outdir=out / "a")
    assert fast.returncode == 0, fast.output
    assert note in fast.page("plot_knobs.py") and "rollouts: 1" in fast.page("plot_knobs.py")
    target = src / "auto_examples" / "plot_knobs.py"
    assert sg_compat.run_marker_file(target) in sg_compat.output_files(target)

    # A full build into another folder: the outputs in the source tree came from the fast
    # run, so the example that picked knobs runs again; the other one is reused.
    full = build(src, "-W", outdir=out / "b")
    assert full.returncode == 0, full.output
    assert full.record("plot_knobs.py")["status"] == "ok"
    assert "rollouts: 4" in full.page("plot_knobs.py") and note not in full.page("plot_knobs.py")
    assert full.record("plot_quick.py")["status"] == "cached"

    # The reverse: a fast build into a fresh folder runs it again and shows the note...
    fast_again = build(src, "-W", env={"DOCSACCEL_FAST": "1"}, outdir=out / "c")
    assert fast_again.returncode == 0, fast_again.output
    assert fast_again.record("plot_knobs.py")["status"] == "ok"
    assert "rollouts = 1 (full build: 4)" in fast_again.page("plot_knobs.py")

    # ...and one more fast build, into yet another folder, reuses the fast outputs and
    # still shows the note: it comes from beside the outputs, not from the folder.
    reused = build(src, "-W", env={"DOCSACCEL_FAST": "1"}, outdir=out / "d")
    assert reused.returncode == 0, reused.output
    cached = reused.record("plot_knobs.py")
    assert cached["status"] == "cached" and cached["fast"] is True
    assert cached["knobs"]["rollouts"]["value"] == 1
    assert "rollouts = 1 (full build: 4)" in reused.page("plot_knobs.py")
    assert read_records(out / "d" / "docsaccel" / "records")


def _notes_of(*folders: Path) -> list[Path]:
    """The machine's notes (in the temporary folder) about ``folders``."""
    notes = [layout.gallery_lock_path(folder) for folder in folders]
    notes += [layout.building_note_path(folder) for folder in folders]
    return [note for note in notes if note.exists()]


def test_a_build_leaves_no_note_in_the_temporary_folder_that_serves_nothing(tmp_path) -> None:
    """The gallery's lock goes with the build, finished or refused; the note that a build
    is under way goes when it ends, and the one a refused build leaves (its folders'
    files are not of a finished build) goes with the folders, as does the one naming the
    output folder the source folder was last built into."""
    src = make_project(tmp_path / "a", ["plot_quick.py"])
    outdir = src / "_build" / "html"
    gallery = src / "auto_examples"
    assert build(src).returncode == 0
    assert _notes_of(gallery, src, outdir) == []
    # Kept: it leads a reader of sphinx-gallery's files to their build's report.
    assert layout.built_outdir(gallery / "index.rst") == (src.resolve(), outdir.resolve())

    refused = build(src, env={"DOCSACCEL_CACHE": str(src)})
    assert refused.returncode == 2, refused.output
    assert _notes_of(gallery) == []
    assert layout.building_since(gallery / "index.rst") is not None
    assert _notes_of(src, outdir) != []

    shutil.rmtree(tmp_path / "a")
    assert build(make_project(tmp_path / "b", ["plot_quick.py"])).returncode == 0
    assert _notes_of(src, outdir) == []
    assert layout.built_outdir(gallery / "index.rst") is None
