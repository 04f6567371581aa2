"""A cache folder the build may not write (restored read-only, a read-only mount, as a
fork's pull request gets): the build uses it read-only (its lookups decide, hits are
restored, misses run, nothing is stored) and says so once, never Sphinx's crash report.
And the cache turned off after builds that used it: the examples they made or restored
run again, never kept unverified."""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.cache_project import ALL, Project, times_masked
from helpers.read_only import read_only_view

from docsaccel.cache.manage import READ_ONLY_UNRECORDED, stats

pytestmark = pytest.mark.slow


def _digests(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Path]:
    """A read-only view of an empty folder (:func:`helpers.read_only.read_only_view`)."""
    with read_only_view(tmp_path) as source:
        yield source


def _read_only_view(project: Project, read_only: Path) -> Path:
    """The project's filled cache, seen through the read-only view."""
    subprocess.run(["cp", "-a", f"{project.cache}/.", str(read_only)], check=True)
    return read_only.parent / "ro-view"


def _warned_once(output: str, view: Path) -> None:
    warnings = [line for line in output.splitlines() if "read-only" in line]
    assert len(warnings) == 1, output
    assert str(view) in warnings[0] and "saves nothing" in warnings[0]


def test_a_read_only_cache_folder_is_restored_from_and_never_written(
    tmp_path: Path, read_only: Path
) -> None:
    project = Project(tmp_path)
    first = project.build()
    assert first.returncode == 0, first.output
    view = _read_only_view(project, read_only)
    before = _digests(view)
    assert before, "the cache was not filled"

    second = project.build(env={"DOCSACCEL_CACHE": str(view)})
    assert second.returncode == 0, second.output
    assert "Traceback" not in second.output and "Extension error" not in second.output
    assert second.executed() == set()
    assert second.cached() == set(ALL)
    _warned_once(second.output, view)
    assert times_masked(second.gallery_files()) == times_masked(first.gallery_files())
    assert _digests(view) == before
    # Nothing of the read-only build is in the folder: stats say whose figures they show.
    said, code = stats(view)
    assert code == 0, said
    assert "last build that wrote the cache" in said, said
    assert f"\n{READ_ONLY_UNRECORDED}\n" in said, said


def test_a_read_only_cache_runs_the_examples_whose_inputs_changed(
    tmp_path: Path, read_only: Path
) -> None:
    # In one checkout, built again: sphinx-gallery's .md5 of each example still matches.
    project = Project(tmp_path)
    first = project.build()
    assert first.returncode == 0, first.output
    view = _read_only_view(project, read_only)
    before = _digests(view)
    project.write("mylib/alpha.py", "FACTOR = 3\n\n\ndef scale(x):\n    return FACTOR * x\n")

    second = project.build_again(env={"DOCSACCEL_CACHE": str(view)})

    assert second.returncode == 0, second.output
    page = (second.outdir / "auto_examples" / "plot_a_alpha.html").read_text("utf-8")
    assert "alpha 63" in page and "alpha 42" not in page
    assert second.executed() == {"plot_a_alpha.py"}
    assert second.cached() == set(ALL) - {"plot_a_alpha.py"}
    _warned_once(second.output, view)
    assert _digests(view) == before


def test_the_cache_turned_off_runs_what_builds_with_it_made(tmp_path: Path) -> None:
    project = Project(tmp_path)
    first = project.build()
    assert first.returncode == 0, first.output
    project.write("mylib/alpha.py", "FACTOR = 3\n\n\ndef scale(x):\n    return FACTOR * x\n")

    off = project.build_again(env={"DOCSACCEL_CACHE": "0"})

    assert off.returncode == 0, off.output
    # Only the cache's lookup could say they are up to date: without it, they run.
    assert off.executed() == set(ALL)
    page = (off.outdir / "auto_examples" / "plot_a_alpha.html").read_text("utf-8")
    assert "alpha 63" in page
    # What a build without the cache ran is sphinx-gallery's own to skip, as without
    # docsaccel.
    again = project.build_again(env={"DOCSACCEL_CACHE": "0"})
    assert again.returncode == 0, again.output
    assert again.executed() == set()
