"""A read-only view of a folder, for builds given a cache folder they may not write."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def read_only_view(tmp_path: Path) -> Iterator[Path]:
    """A read-only view (``tmp_path/ro-view``) of an empty folder (``tmp_path/ro-source``,
    yielded: what is copied there is seen through the view). A bind mount: as root,
    permissions alone would not stop a write; skips the test without mount privileges."""
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
