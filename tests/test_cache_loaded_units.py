"""Unit tests of :mod:`docsaccel.cache.loaded`: an answer about the loaded modules is kept
only while ``sys.modules`` maps the same names to the same objects."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from typing import Any

import pytest

from docsaccel.cache.loaded import ModulesMemo

NAME = "docsaccel_test_loaded_module"


@pytest.fixture
def module() -> Iterator[types.ModuleType]:
    made = types.ModuleType(NAME)
    sys.modules[NAME] = made
    yield made
    sys.modules.pop(NAME, None)


def _walks() -> tuple[list[int], Any]:
    calls: list[int] = []

    def ours(items: list[tuple[str, Any]]) -> list[Any]:
        calls.append(1)
        return [m for name, m in items if name == NAME]

    return calls, ours


def test_the_answer_is_kept_while_the_modules_stay(module: types.ModuleType) -> None:
    memo: ModulesMemo[list[Any]] = ModulesMemo()
    calls, ours = _walks()
    assert memo.get("key", ours) == [module]
    assert memo.get("key", ours) == [module]
    assert len(calls) == 1
    assert memo.get("other key", ours) == [module]
    assert len(calls) == 2


def test_a_module_replaced_under_its_name_is_seen(module: types.ModuleType) -> None:
    memo: ModulesMemo[list[Any]] = ModulesMemo()
    _, ours = _walks()
    assert memo.get(None, ours) == [module]
    replacement = types.ModuleType(NAME)
    sys.modules[NAME] = replacement  # as many modules as before
    assert memo.get(None, ours) == [replacement]


def test_a_module_added_or_removed_is_seen(module: types.ModuleType) -> None:
    memo: ModulesMemo[list[Any]] = ModulesMemo()
    _, ours = _walks()
    del sys.modules[NAME]
    assert memo.get(None, ours) == []
    sys.modules[NAME] = module
    assert memo.get(None, ours) == [module]
    del sys.modules[NAME]
    assert memo.get(None, ours) == []


class _EqualToAll(types.ModuleType):
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = types.ModuleType.__hash__


def test_objects_are_compared_by_identity_not_by_their_eq(module: types.ModuleType) -> None:
    memo: ModulesMemo[list[Any]] = ModulesMemo()
    _, ours = _walks()
    sys.modules[NAME] = first = _EqualToAll(NAME)
    assert memo.get(None, ours) == [first]
    sys.modules[NAME] = second = _EqualToAll(NAME)
    assert memo.get(None, ours)[0] is second
