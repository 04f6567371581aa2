"""A build makes the cache folder itself, never its parents: a parent gone since the
setting's check is refused in one line naming the folder, and nothing is made."""

from __future__ import annotations

from pathlib import Path

import pytest

from docsaccel.cache.store import CacheFolderError, CacheStore, is_cache_folder, tag_cache_folder


def test_a_cache_folder_whose_parent_is_gone_is_refused_and_nothing_is_made(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "gone" / "deeper" / "cache"
    with pytest.raises(CacheFolderError) as raised:
        tag_cache_folder(folder)
    message = str(raised.value)
    assert "\n" not in message and str(folder) in message, message
    assert str(folder.parent) in message, message
    assert list(tmp_path.iterdir()) == []


def test_the_cache_summary_never_makes_the_cache_folders_parents(tmp_path: Path) -> None:
    store = CacheStore(tmp_path / "gone" / "cache")
    with pytest.raises(FileNotFoundError):
        store.write_last_build({"examples": {}})
    assert list(tmp_path.iterdir()) == []


def test_a_missing_cache_folder_under_a_parent_is_made_and_tagged(tmp_path: Path) -> None:
    tag_cache_folder(tmp_path / "cache")
    assert is_cache_folder(tmp_path / "cache")
