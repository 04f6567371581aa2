"""A build makes the cache folder itself, never its parents: a parent gone since the
setting's check is refused in one line naming the folder, and nothing is made."""

from __future__ import annotations

import shutil
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


def _entry_files(tmp_path: Path) -> dict[str, Path]:
    page = tmp_path / "docs" / "out" / "plot_a.rst"
    page.parent.mkdir(parents=True)
    page.write_text("page", "utf-8")
    return {"out/plot_a.rst": page}


def test_a_cache_folder_removed_between_two_stores_is_made_again_tagged(tmp_path: Path) -> None:
    files = _entry_files(tmp_path)
    store = CacheStore(tmp_path / "cache")
    store.store("g__plot_a.py--k", {"id": "g/plot_a.py"}, files)
    shutil.rmtree(tmp_path / "cache")
    store.store("g__plot_a.py--k", {"id": "g/plot_a.py"}, files)
    assert is_cache_folder(tmp_path / "cache")
    assert (store.entries / "g__plot_a.py--k").is_dir()


def test_a_cache_folder_removed_with_its_parent_is_refused_not_remade(tmp_path: Path) -> None:
    files = _entry_files(tmp_path)
    store = CacheStore(tmp_path / "parent" / "cache")
    (tmp_path / "parent").mkdir()
    store.store("g__plot_a.py--k", {"id": "g/plot_a.py"}, files)
    shutil.rmtree(tmp_path / "parent")
    with pytest.raises(CacheFolderError) as raised:
        store.store("g__plot_a.py--k", {"id": "g/plot_a.py"}, files)
    message = str(raised.value)
    assert "\n" not in message and str(tmp_path / "parent" / "cache") in message, message
    assert not (tmp_path / "parent").exists()


def test_the_sphinx_state_never_remakes_a_removed_cache_folder_untagged(tmp_path: Path) -> None:
    from docsaccel.incremental.state_store import StateStore

    files = _entry_files(tmp_path)
    store = StateStore(tmp_path / "cache")
    store.save("k", {}, {"doctrees": {}, "output": files})
    shutil.rmtree(tmp_path / "cache")
    store.save("k", {}, {"doctrees": {}, "output": files})
    assert is_cache_folder(tmp_path / "cache")
    assert (store.states / "k.json").is_file()
