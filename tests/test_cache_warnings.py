"""An example restored from the cache gives the warnings its processing gave: ``-W`` fails
a build that restores it exactly when a clean build fails (real builds, fresh copies
sharing one cache, as CI does; and again in the same folder, where sphinx-gallery's own
md5 check skips the restored example)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers.cache_project import Build, Project, example_source
from helpers.gallery_build import child_env

pytestmark = pytest.mark.slow

THUMB = "plot_t_thumb.py"
KEPT = ["plot_a_alpha.py", THUMB]
STRICT = ("-W", "--keep-going")


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """The tiny project with two examples: one without warnings, one naming a thumbnail
    that is not there (sphinx-gallery warns while it processes the example)."""
    project = Project(tmp_path)
    for path in (project.pristine / "docs" / "examples").glob("plot_*.py"):
        if path.name not in KEPT:
            path.unlink()
    project.write(
        f"docs/examples/{THUMB}",
        example_source(
            "Thumb",
            "# sphinx_gallery_thumbnail_path = '_static/nonexistent.png'\nprint('thumb')\n",
        ),
    )
    return project


def warnings_of(build: Build) -> list[str]:
    """The build's warning lines, its folder masked (each build has its own copy)."""
    root = str(build.docs.parents[1])
    return sorted(
        line.replace(root, "<copy>") for line in build.output.splitlines() if "WARNING" in line
    )


def rebuild_in_place(project: Project, build: Build) -> Build:
    """Build the same copy again, into the same output folder."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-b",
            "html",
            "-q",
            *STRICT,
            str(build.docs),
            str(build.outdir),
        ],
        env=child_env({"FAKE_SITE": str(project.site), "MPLBACKEND": "agg"}),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return Build(done.returncode, done.stdout + done.stderr, build.docs, build.outdir)


def test_a_restored_example_gives_its_warnings_again_and_fails_w(project: Project) -> None:
    clean = project.build(*STRICT)
    assert clean.executed() == set(KEPT), clean.output
    thumb_warnings = [line for line in warnings_of(clean) if "[sphinx_gallery.thumbnail]" in line]
    # The only warning of the tree: the example without one gives none.
    assert warnings_of(clean) == thumb_warnings and len(thumb_warnings) == 1, clean.output
    assert "nonexistent.png' not found" in thumb_warnings[0]
    assert clean.returncode != 0

    restored = project.build(*STRICT)
    assert restored.cached() == set(KEPT), restored.output
    # Word for word, its paths those of this copy, as its own run would print them.
    assert warnings_of(restored) == warnings_of(clean), restored.output
    assert str(restored.docs) in restored.output
    assert restored.returncode == clean.returncode


def test_restored_without_the_sphinx_state_too(project: Project) -> None:
    off = {"DOCSACCEL_CACHE_SPHINX": "0"}
    clean = project.build(*STRICT, env=off)
    restored = project.build(*STRICT, env=off)
    assert restored.cached() == set(KEPT), restored.output
    assert warnings_of(restored) == warnings_of(clean) != []
    assert restored.returncode == clean.returncode != 0


def test_in_the_same_folder_the_md5_skip_warns_as_a_clean_build(project: Project) -> None:
    clean = project.build(*STRICT)
    again = rebuild_in_place(project, clean)
    # The cache restores both in place; sphinx-gallery then skips them by their md5.
    assert again.cached() == set(KEPT), again.output
    assert warnings_of(again) == warnings_of(clean) != [], again.output
    assert again.returncode == clean.returncode != 0


def test_an_example_without_warnings_restored_gives_none(tmp_path: Path) -> None:
    project = Project(tmp_path)
    for path in (project.pristine / "docs" / "examples").glob("plot_*.py"):
        if path.name != "plot_a_alpha.py":
            path.unlink()
    clean = project.build(*STRICT)
    restored = project.build(*STRICT)
    assert restored.cached() == {"plot_a_alpha.py"}, restored.output
    assert warnings_of(clean) == warnings_of(restored) == []
    assert restored.returncode == clean.returncode == 0, restored.output


def test_with_run_stale_examples_the_run_warns_once(project: Project) -> None:
    """sphinx-gallery runs a restored example again when told to: its run warns, once."""
    conf = project.pristine / "docs" / "conf.py"
    conf.write_text(
        conf.read_text("utf-8") + 'sphinx_gallery_conf["run_stale_examples"] = True\n', "utf-8"
    )
    clean = project.build(*STRICT)
    again = project.build(*STRICT)
    assert warnings_of(again) == warnings_of(clean) != [], again.output
    assert again.returncode == clean.returncode != 0
