"""A fact about the loaded modules, worked out again only once :data:`sys.modules` changed.

The design, in full: the caching guide's *Design* section.

>>> memo, walks = ModulesMemo(), []
>>> def count(items):
...     walks.append(1)
...     return len(items)
>>> memo.get("key", count) == memo.get("key", count), len(walks)  # walked once
(True, 1)
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Hashable
from operator import itemgetter
from typing import Any, Generic, TypeVar

__all__ = ["ModulesMemo", "address", "python_sources"]

T = TypeVar("T")
#: An object's identity as a number, as :func:`id` gives it but without the audit event
#: ``id()`` raises (every audit hook of the process runs on each call): the hash
#: ``object`` gives, a rotation of its address, unique among live objects.
address: Callable[[object], int] = object.__hash__
_NAME, _MODULE = itemgetter(0), itemgetter(1)


class ModulesMemo(Generic[T]):
    """One answer worked out from the loaded modules, with what it was worked out from."""

    def __init__(self) -> None:
        self._names: list[str] | None = None
        self._addresses: list[int] = []
        #: The modules themselves: an address is never reused while they are kept.
        self._items: list[tuple[str, Any]] = []
        self._key: Hashable = None
        self._value: Any = None

    def get(self, key: Hashable, compute: Callable[[list[tuple[str, Any]]], T]) -> T:
        """``compute(sys.modules' items)``, or its last answer when ``key`` (what else the
        answer depends on) and ``sys.modules`` are the same as then."""
        items = list(sys.modules.items())
        names = list(map(_NAME, items))
        addresses = list(map(address, map(_MODULE, items)))
        if names == self._names and addresses == self._addresses and key == self._key:
            return self._value  # type: ignore[no-any-return]
        value = compute(items)
        self._names, self._addresses, self._items = names, addresses, items
        self._key, self._value = key, value
        return value


def python_sources() -> dict[str, str]:
    """``{file: module name}`` of the loaded modules that are Python source (``.py``),
    each file normalised and absolute (a relative ``__file__`` from the working folder),
    with the first name loading it; worked out again only once ``sys.modules`` changed.
    The Sphinx state asks it for every document read, the example cache for every
    example."""
    return dict(_sources_memo.get(os.getcwd(), _find_python_sources))


def _find_python_sources(loaded: list[tuple[str, Any]]) -> dict[str, str]:
    found: dict[str, str] = {}
    for name, module in loaded:
        # Not getattr(module, ...): a lazy module's __getattr__ could import something.
        path = (getattr(module, "__dict__", None) or {}).get("__file__")
        if isinstance(path, str) and path.endswith(".py"):
            found.setdefault(os.path.normpath(os.path.abspath(path)), name)
    return found


_sources_memo: ModulesMemo[dict[str, str]] = ModulesMemo()
