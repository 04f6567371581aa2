"""What an example's run wrote before its build's process ended mid-run (its own
``os._exit``, the hard stop, in the build's process or in a ``parallel`` worker,
``SIGTERM``, or the build killed outright) does not outlive it: once the example is
deleted from the source gallery, the next build (no example cache) publishes what a
clean build of the new tree does, without a traceback. Real Sphinx builds in temporary
folders."""

from __future__ import annotations

import shutil
import signal
import subprocess
import zipfile
from pathlib import Path

import pytest
from helpers.gallery_build import build, child_env, make_project, sphinx_command
from helpers.processes import (
    hold,
    kill_children,
    release,
    terminated_while_running,
    wait_until_running,
)

from docsaccel.incremental.oracle import output_files

pytestmark = pytest.mark.slow

ORDERED = 'sphinx_gallery_conf["within_subsection_order"] = "FileNameSortKey"\n'
#: sphinx-gallery's default: the gallery's index offers zips of every example it finds in
#: the gallery folder, the notebooks too.
ZIPS = 'sphinx_gallery_conf["download_all_examples"] = True\n'
HARD_STOP_ENV = {"DOCSACCEL_ON_OVERRUN": "fail", "DOCSACCEL_INTERRUPT_GRACE": "1"}


def _site(outdir: Path) -> tuple[list[str], dict[str, list[str]]]:
    """The files of a built site, and the names each zip it offers holds."""
    files = sorted(output_files(outdir))
    zips = {
        name: sorted(zipfile.ZipFile(outdir / name).namelist())
        for name in files
        if name.endswith(".zip")
    }
    return files, zips


@pytest.mark.parametrize(
    ("name", "parallel", "env"),
    [
        ("plot_h_osexit.py", 1, {}),
        ("plot_h_osexit.py", 2, {}),
        ("plot_h_swallow.py", 1, HARD_STOP_ENV),
    ],
    ids=["os-exit", "os-exit-parallel", "hard-stop"],
)
def test_a_build_after_deleting_an_example_that_ended_the_process_is_a_clean_one(
    tmp_path: Path, name: str, parallel: int, env: dict[str, str]
) -> None:
    conf = ORDERED + ZIPS + f'sphinx_gallery_conf["parallel"] = {parallel}\n'
    src = make_project(
        tmp_path, [name, "plot_figure.py", "plot_quick.py"], conf=conf, budgets='default = "3s"\n'
    )
    first = build(src, env=env)
    assert first.returncode != 0, first.output
    assert first.report["build"]["complete"] is False, first.output

    _assert_a_clean_build_after_deleting(tmp_path, src, name)


def _killed_while_running(src: Path, name: str) -> None:
    """Build ``src``, killed outright (``SIGKILL``) once ``name`` runs."""
    hold(src)
    process = subprocess.Popen(
        sphinx_command(src, src / "_build" / "html"),
        env=child_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until_running(src, name, process)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=120)
    finally:
        kill_children(src)
        release(src)


@pytest.mark.parametrize("stop", ["SIGTERM", "SIGKILL"])
def test_a_build_after_deleting_an_example_its_build_was_stopped_in_is_a_clean_one(
    tmp_path: Path, stop: str
) -> None:
    name = "plot_wait.py"
    src = make_project(tmp_path, [name, "plot_quick.py"], conf=ORDERED + ZIPS)
    if stop == "SIGTERM":
        ended = terminated_while_running(
            sphinx_command(src, src / "_build" / "html"), child_env(), src, name
        )
        assert ended.returncode != 0, ended.stdout
    else:
        _killed_while_running(src, name)
    (src / "examples" / "child_pids.txt").unlink()
    _assert_a_clean_build_after_deleting(tmp_path, src, name)


def _assert_a_clean_build_after_deleting(tmp_path: Path, src: Path, name: str) -> None:
    """Delete the example ``name`` from ``src``'s gallery, build it again: the same site
    as a clean build of that tree, nothing of the example in it."""
    (src / "examples" / name).unlink()
    again = build(src)
    assert again.returncode == 0, again.output
    assert "Traceback" not in again.output and "Error" not in again.output, again.output

    clean_src = tmp_path / "clean"
    shutil.copytree(src, clean_src, ignore=shutil.ignore_patterns("_build", "auto_examples"))
    clean = build(clean_src)
    assert clean.returncode == 0, clean.output
    assert _site(again.outdir) == _site(clean.outdir)
    stem = Path(name).stem
    assert not [f for f in output_files(again.outdir) if stem in f]
