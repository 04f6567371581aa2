"""A cache folder the build may not write (restored read-only, a read-only mount, as a
fork's pull request gets): the build runs as without the cache and says so once, never
Sphinx's crash report."""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.cache_project import ALL, Project, times_masked

pytestmark = pytest.mark.slow


def _digests(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Path]:
    """A read-only view of an empty folder (a bind mount: as root, permissions alone would
    not stop a write)."""
    source, view = tmp_path / "ro-source", tmp_path / "ro-view"
    source.mkdir()
    view.mkdir()
    mount = subprocess.run(["mount", "--bind", str(source), str(view)], capture_output=True)
    if mount.returncode != 0:
        pytest.skip(f"a read-only bind mount needs mount privileges: {mount.stderr!r}")
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(view)], check=True)
        yield source
    finally:
        subprocess.run(["umount", str(view)], check=False)


def test_a_read_only_cache_folder_builds_as_without_the_cache(
    tmp_path: Path, read_only: Path
) -> None:
    project = Project(tmp_path)
    first = project.build()
    assert first.returncode == 0, first.output
    # The filled cache, seen through the read-only view.
    subprocess.run(["cp", "-a", f"{project.cache}/.", str(read_only)], check=True)
    view = tmp_path / "ro-view"
    before = _digests(view)
    assert before, "the cache was not filled"

    second = project.build(env={"DOCSACCEL_CACHE": str(view)})
    assert second.returncode == 0, second.output
    assert "Traceback" not in second.output and "Extension error" not in second.output
    warnings = [line for line in second.output.splitlines() if "read-only" in line]
    assert len(warnings) == 1, second.output
    assert str(view) in warnings[0] and "neither restores nor saves" in warnings[0]
    assert second.executed() == set(ALL)
    assert times_masked(second.gallery_files()) == times_masked(first.gallery_files())
    assert _digests(view) == before
