"""What a build that did not finish (an example raising, a signal while one runs) wrote
in the output folder is never published by a later build with the cache on: each
successful build equals a clean build of the same tree, file by file (measured times
masked). Real Sphinx builds of a small gallery in temporary folders."""

from __future__ import annotations

import shutil
import signal
import subprocess
from pathlib import Path

import pytest
from helpers.clean_site import clean_differences, put
from helpers.gallery_build import FIXTURES, build, child_env, make_project, sphinx_command
from helpers.incremental_build import needs_state
from helpers.processes import hold, kill_children, release, wait_until_running

pytestmark = [pytest.mark.slow, needs_state]

#: plot_wait.py runs last (file name order): the examples before it have finished when
#: a signal reaches the build.
ORDERED = 'sphinx_gallery_conf["within_subsection_order"] = "FileNameSortKey"\n'


def cached_build(src: Path, cache: Path):
    return build(src, env={"DOCSACCEL_CACHE": str(cache)})


def stopped_while_waiting(src: Path, cache: Path, signum: int) -> int:
    """A build with ``plot_wait.py`` added, sent ``signum`` while that example runs, then
    the example deleted again; how the build ended."""
    shutil.copy(FIXTURES / "examples" / "plot_wait.py", src / "examples" / "plot_wait.py")
    hold(src)
    process = subprocess.Popen(
        sphinx_command(src, src / "_build" / "html"),
        env=child_env({"DOCSACCEL_CACHE": str(cache)}),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        wait_until_running(src, "plot_wait.py", process)
        process.send_signal(signum)
        process.wait(timeout=120)
    finally:
        kill_children(src)
        release(src)
    process.communicate(timeout=120)
    (src / "examples" / "plot_wait.py").unlink()
    return process.returncode


def test_a_page_a_failed_build_wrote_is_gone_once_its_example_is_deleted(tmp_path):
    """A finished build kept a state; a failed build (an example raising) wrote the page
    of an example added since; that example deleted, the next build restores the state,
    which knows nothing of that page: it is not published."""
    cache = tmp_path / "cache"
    src = make_project(tmp_path, [], conf=ORDERED)
    put(src, "plot_a.py")
    assert cached_build(src, cache).returncode == 0
    again = _failed_then_restored(src, cache)
    assert not (again.outdir / "auto_examples" / "plot_b.html").exists()
    assert clean_differences(src, tmp_path) == []


def _failed_then_restored(src, cache):
    """A build that fails (``plot_c.py`` raises) after writing the page of ``plot_b.py``,
    added since; then, ``plot_b.py`` deleted and ``plot_c.py`` mended, the next build,
    which restores the state."""
    put(src, "plot_b.py")
    put(src, "plot_c.py", raises=True)
    failed = cached_build(src, cache)
    assert failed.returncode != 0, failed.output
    assert (failed.outdir / "auto_examples" / "plot_b.html").is_file()
    (src / "examples" / "plot_b.py").unlink()
    put(src, "plot_c.py")
    again = cached_build(src, cache)
    assert again.returncode == 0, again.output
    assert again.report["build"]["sphinx_state"]["origin"] == "cache"
    return again


def test_a_file_the_user_put_in_the_output_folder_outlives_a_failed_build(tmp_path):
    """The user's file (a ``CNAME``), added after a finished build, stays through a
    failed build and the next one, which restores the state: what the failed build wrote
    goes (the page of an example deleted since), what the user added before it stays."""
    cache = tmp_path / "cache"
    src = make_project(tmp_path, [], conf=ORDERED)
    put(src, "plot_a.py")
    first = cached_build(src, cache)
    assert first.returncode == 0, first.output
    user_file = first.outdir / "CNAME"
    user_file.write_text("example.org\n")
    again = _failed_then_restored(src, cache)
    assert user_file.read_text() == "example.org\n", again.output
    user_file.unlink()
    assert clean_differences(src, tmp_path) == []


def test_a_page_the_first_build_wrote_and_failed_is_gone_once_its_example_is_deleted(tmp_path):
    """No build finished yet, so no state: the next build reads everything, and the
    failed build's page of an example deleted since (and its search entries) is not
    published."""
    cache = tmp_path / "cache"
    src = make_project(tmp_path, [])
    put(src, "plot_a.py")
    put(src, "plot_b.py", raises=True)
    failed = cached_build(src, cache)
    assert failed.returncode != 0, failed.output
    (src / "examples" / "plot_a.py").unlink()
    put(src, "plot_b.py")
    again = cached_build(src, cache)
    assert again.returncode == 0, again.output
    assert again.report["build"]["sphinx_state"]["origin"] == "none"
    assert clean_differences(src, tmp_path) == []


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL])
def test_an_example_deleted_before_a_stopped_build_stays_unpublished(tmp_path, signum):
    """Deleted after a failed build published its page: a stopped build between does not
    bring it back in the next finished one."""
    cache = tmp_path / "cache"
    src = make_project(tmp_path, [], conf=ORDERED)
    put(src, "plot_a.py")
    assert cached_build(src, cache).returncode == 0
    put(src, "plot_b.py")
    put(src, "plot_c.py", raises=True)
    assert cached_build(src, cache).returncode != 0
    (src / "examples" / "plot_b.py").unlink()
    put(src, "plot_c.py")
    assert stopped_while_waiting(src, cache, signum) != 0
    again = cached_build(src, cache)
    assert again.returncode == 0, again.output
    assert clean_differences(src, tmp_path) == []
