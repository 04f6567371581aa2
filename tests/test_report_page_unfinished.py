"""A build that ends without finishing never leaves a report page saying all is fine.

With the example cache on, Sphinx's state (the output folder with it) is restored at the
start of a build: the report page of the last build that finished is in the output
folder before any example runs. Without the cache, a build into the same folder finds
it there too. A build stopped part-way (an example ending the process, the hard stop of
fail mode, ``abort_on_example_error``, a setting refused before the examples ran) must
leave that page saying the build did not finish, as ``report.json`` does: CI uploads
the folder whatever the build's status. Real Sphinx builds in temporary folders.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from helpers.gallery_build import FIXTURES, build, child_env, make_project, sphinx_command
from helpers.processes import hold, kill_children, terminated_while_running, wait_until_running

from docsaccel import layout
from docsaccel.contract import NOT_MEASURED

pytestmark = pytest.mark.slow

CONF = (
    'docsaccel_report_page = "budget_report"\n'
    'sphinx_gallery_conf["abort_on_example_error"] = True\n'
)
BUDGETS = 'default = "3s"\n'
FINE = "All examples within budget"
UNFINISHED = "the build did not finish"
FAIL_MODE = {"DOCSACCEL_ON_OVERRUN": "fail", "DOCSACCEL_INTERRUPT_GRACE": "1"}


OS_EXIT = ("plot_h_osexit.py", {})  # the example ends the build's process
HARD_STOP = ("plot_h_swallow.py", FAIL_MODE)  # fail mode's hard stop ends it
ABORT = ("plot_crash.py", {})  # abort_on_example_error
REFUSED = (None, {"DOCSACCEL_MEMORY_LIMIT": "50M"})  # once the examples are planned
REFUSED_AT_START = (None, {"DOCSACCEL_ON_OVERRUN": "bogus"})  # before Sphinx's state


def _published(tmp_path: Path, cache: bool, fresh: bool) -> tuple[Path, dict, Path]:
    """A project whose last build finished, publishing "All examples within budget":
    its source folder, the environment of its builds, its report page's HTML. ``fresh``:
    then a fresh checkout, as CI's (its Sphinx state is in the example cache)."""
    src = make_project(tmp_path, ["plot_quick.py"], conf=CONF, budgets=BUDGETS)
    cache_env = {"DOCSACCEL_CACHE": str(tmp_path / "cache")} if cache else {}
    good = build(src, env=cache_env)
    page = good.outdir / "budget_report.html"
    assert good.returncode == 0, good.output
    assert FINE in page.read_text("utf-8")
    if fresh:
        shutil.rmtree(src / "_build")
        (src / "budget_report.rst").unlink()  # generated: in no repository
    return src, cache_env, page


@pytest.mark.parametrize(
    ("cache", "fresh", "stop"),
    [
        # CI: a fresh checkout, the output folder restored with Sphinx's state.
        (True, True, OS_EXIT),
        (True, True, HARD_STOP),
        (True, True, ABORT),
        (True, True, REFUSED),
        # The same folders again, with Sphinx's state kept in them.
        (True, False, OS_EXIT),
        (True, False, REFUSED_AT_START),
        # No cache: the page the last build left.
        (False, False, OS_EXIT),
        (False, False, REFUSED_AT_START),
    ],
    ids=[
        "restored-os-exit",
        "restored-hard-stop",
        "restored-abort",
        "restored-refused",
        "state-os-exit",
        "state-refused-at-start",
        "same-folder-os-exit",
        "same-folder-refused-at-start",
    ],
)
def test_a_stopped_build_leaves_no_page_saying_all_is_fine(tmp_path, cache, fresh, stop) -> None:
    example, env = stop
    src, cache_env, page = _published(tmp_path, cache, fresh)
    if example is not None:
        shutil.copy(FIXTURES / "examples" / example, src / "examples" / example)

    try:
        stopped = build(src, env={**cache_env, **env})
    finally:
        kill_children(src)

    assert stopped.returncode != 0, stopped.output
    assert stopped.report["build"]["complete"] is False
    # The last good build's page is there (restored, or left): it says this build's end.
    shown = page.read_text("utf-8")
    assert FINE not in shown, "the site's report page says the stopped build was fine"
    assert UNFINISHED in shown
    source = src / "budget_report.rst"
    if source.is_file():  # the next build sees the page changed, and writes it again
        assert FINE not in source.read_text("utf-8")

    if example is None:  # the next build that finishes shows its own verdict again
        again = build(src, env=cache_env)
        assert again.returncode == 0, again.output
        shown = page.read_text("utf-8")
        assert UNFINISHED not in shown, "the next build that finished shows the stopped one"
        # Its verdict: within budget, or (its example restored or reused) not measured.
        assert "within budget" in shown or NOT_MEASURED in shown, shown


def test_a_terminated_build_leaves_no_page_saying_all_is_fine(tmp_path) -> None:
    """``SIGTERM`` (a CI job cancelled) while an example runs, in a fresh checkout."""
    src, cache_env, page = _published(tmp_path, cache=True, fresh=True)
    shutil.copy(FIXTURES / "examples" / "plot_wait.py", src / "examples" / "plot_wait.py")
    ended = terminated_while_running(
        sphinx_command(src, src / "_build" / "html"), child_env(cache_env), src, "plot_wait.py"
    )
    output = ended.stdout

    assert ended.returncode != 0, output
    shown = page.read_text("utf-8")
    assert FINE not in shown and UNFINISHED in shown, output


def test_a_terminated_dirhtml_build_leaves_no_page_saying_all_is_fine(tmp_path) -> None:
    """``SIGTERM`` while an example runs, after a finished ``dirhtml`` build into the same
    folder: its page is ``budget_report/index.html``, where the builder wrote it."""
    src = make_project(tmp_path, ["plot_quick.py"], conf=CONF, budgets=BUDGETS)
    outdir = src / "_build" / "html"  # where the helpers look for the running example
    good = build(src, "-b", "dirhtml", outdir=outdir)
    assert good.returncode == 0, good.output
    page = outdir / "budget_report" / "index.html"
    assert FINE in page.read_text("utf-8")
    shutil.copy(FIXTURES / "examples" / "plot_wait.py", src / "examples" / "plot_wait.py")
    command = sphinx_command(src, outdir, "-b", "dirhtml")
    ended = terminated_while_running(command, child_env(), src, "plot_wait.py")

    assert ended.returncode != 0, ended.stdout
    shown = page.read_text("utf-8")
    assert FINE not in shown and UNFINISHED in shown, ended.stdout


#: Makes the build pause while it writes its pages, at the page the environment variable
#: names (Sphinx writes them in the order of their names), telling the test by a file:
#: then it is killed.
PAUSE_WHILE_WRITING = """
import os as _os
import pathlib as _pathlib
import time as _time


def _pause_while_writing(app, pagename, *args):
    if pagename == _os.environ.get("PAUSE_WHILE_WRITING"):
        _pathlib.Path(app.srcdir, "writing").write_text("now", encoding="utf-8")
        _time.sleep(120)


def setup(app):
    app.connect("html-page-context", _pause_while_writing)
"""


@pytest.mark.parametrize(
    ("cache", "fresh"), [(False, False), (True, True)], ids=["same-folder", "restored"]
)
def test_a_build_killed_while_writing_leaves_no_page_saying_all_is_fine(
    tmp_path, cache, fresh
) -> None:
    """SIGKILL (out of memory, a runner gone) runs no handler of the build: before, the
    site's report page was the last build's, saying "All examples within budget", and
    then none at all (removed so that Sphinx writes it again): a broken link."""
    src, cache_env, page = _published(tmp_path, cache, fresh)
    with (src / "conf.py").open("a", encoding="utf-8") as stream:
        stream.write(PAUSE_WHILE_WRITING)
    (src / "examples" / "plot_quick.py").write_text(
        '"""\nQuick\n=====\n\nEdited.\n"""\n\nprint("quick again")\n', encoding="utf-8"
    )
    # The gallery's index is written before the report page.
    output = _killed_while_writing(src, {**cache_env, "PAUSE_WHILE_WRITING": "auto_examples/index"})

    # Written again by this build, the page's HTML says it has not finished until Sphinx
    # replaces it: a site that had a report page always has one, never the last build's
    # verdict. A fresh checkout whose state was not restored (conf.py changed) has no
    # page of any kind yet.
    shown = page.read_text("utf-8") if page.exists() else ""
    assert shown or (fresh and not list(page.parent.glob("*.html"))), output
    assert FINE not in shown, output
    assert not shown or ("has not finished" in shown and UNFINISHED in shown), output


def _killed_while_writing(src: Path, env: dict[str, str]) -> str:
    """Build ``src`` (its conf.py holding :data:`PAUSE_WHILE_WRITING`) until it pauses
    while writing its pages, then kill it with SIGKILL; its output."""
    process = subprocess.Popen(
        sphinx_command(src, src / "_build" / "html"),
        env=child_env(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        end = time.monotonic() + 240
        while not (src / "writing").exists() and process.poll() is None:
            assert time.monotonic() < end, "the build never reached its pages"
            time.sleep(0.1)
        assert process.poll() is None, process.communicate()[0]
    finally:
        process.send_signal(signal.SIGKILL)
        output = process.communicate(timeout=120)[0]
    return output


def test_a_build_killed_after_writing_its_report_page_leaves_it_unfinished(tmp_path) -> None:
    """SIGKILL once Sphinx wrote the report page (at ``index``, written after
    ``budget_report``): the page, HTML and generated source, says the build has not
    finished, as ``report.json`` does (before, "All examples within budget", the verdict
    of a build that then never finished)."""
    src = make_project(
        tmp_path, ["plot_quick.py"], conf=CONF + PAUSE_WHILE_WRITING, budgets=BUDGETS
    )
    output = _killed_while_writing(src, {"PAUSE_WHILE_WRITING": "index"})

    report = json.loads(layout.report_path(src / "_build" / "html").read_text("utf-8"))
    assert report["build"]["complete"] is False, output
    for shown in (
        (src / "_build" / "html" / "budget_report.html").read_text("utf-8"),
        (src / "budget_report.rst").read_text("utf-8"),
    ):
        assert FINE not in shown, output
        assert "has not finished" in shown and UNFINISHED in shown, output


def test_a_build_killed_while_its_examples_run_leaves_no_page_saying_all_is_fine(tmp_path):
    """SIGKILL while an example runs: the page says this build started and has not
    finished (before, the last build's "All examples within budget")."""
    src, cache_env, page = _published(tmp_path, cache=False, fresh=False)
    shutil.copy(FIXTURES / "examples" / "plot_wait.py", src / "examples" / "plot_wait.py")
    hold(src)
    process = subprocess.Popen(
        sphinx_command(src, src / "_build" / "html"),
        env=child_env(cache_env),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        wait_until_running(src, "plot_wait.py", process)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=120)
        kill_children(src)  # they hold the build's output open
        output = process.communicate(timeout=120)[0]

    shown = page.read_text("utf-8")
    assert FINE not in shown, output
    assert "has not finished" in shown and UNFINISHED in shown, output
