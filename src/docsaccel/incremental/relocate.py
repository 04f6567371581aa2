"""Move the paths a pickled Sphinx state holds from the folder it was made in to this one.

Sphinx's environment and doctrees keep absolute paths: the source folder, each noted
dependency, every node's ``source``. A state made in ``/old/repo`` and restored into
``/new/repo`` gets each such path rewritten in place, so Sphinx finds its source folder
unchanged and messages name this checkout's files. Only text and path values that are the
old root or lie under it change; containers are rebuilt or updated in place, objects are
walked through their ``__dict__`` (modules, classes and functions are left alone).
"""

from __future__ import annotations

import os
import sys
import types
from pathlib import PurePath
from typing import Any

__all__ = ["relocate", "relocated"]

_LEAVES = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type, types.CodeType)


def relocate(value: Any, old: str, new: str) -> Any:
    """``value`` with every path under ``old`` moved under ``new`` (mutable values are
    changed in place and returned)."""
    return relocated(value, old, new)[0]


def relocated(value: Any, old: str, new: str) -> tuple[Any, int]:
    """:func:`relocate`, and how many texts of a document (docutils ``Text`` nodes) it
    changed: a page showing a path of the checkout may show it because its source says so
    (then it must not change) or because it was made from where the checkout is (then it
    must): only reading it again tells."""
    if old == new:
        return value, 0
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20000))
    try:
        walker = _Walker(os.path.join(old, ""), old, new)
        return walker.walk(value), walker.texts
    finally:
        sys.setrecursionlimit(limit)


class _Walker:
    def __init__(self, prefix: str, old: str, new: str) -> None:
        self.prefix, self.old, self.new = prefix, old, new
        self.done: dict[int, Any] = {}
        self.texts = 0

    def text(self, text: str) -> str:
        if text == self.old:
            return self.new
        if text.startswith(self.prefix):
            return os.path.join(self.new, text[len(self.prefix) :])
        return text

    def walk(self, value: Any) -> Any:
        if isinstance(value, str):
            moved = self.text(value)
            if moved == value or type(value) is str:
                return moved
            self.texts += type(value).__module__.startswith("docutils")
            copy = type(value)(moved)  # a docutils Text node: keep its parent
            copy.__dict__.update(getattr(value, "__dict__", {}))
            return copy
        if isinstance(value, PurePath):
            moved = self.text(str(value))
            return value if moved == str(value) else type(value)(moved)
        if value is None or isinstance(value, (int, float, bytes, complex, *_LEAVES)):
            return value
        known = self.done.get(id(value))
        if known is not None:
            return known[0]
        if isinstance(value, tuple):
            self.done[id(value)] = (value,)
            items = [self.walk(item) for item in value]
            if all(a is b for a, b in zip(items, value, strict=True)):
                return value
            rebuilt = type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
            self.done[id(value)] = (rebuilt,)
            return rebuilt
        self.done[id(value)] = (value,)
        if isinstance(value, list):
            value[:] = [self.walk(item) for item in value]
        elif isinstance(value, dict):
            items = [(self.walk(k), self.walk(v)) for k, v in value.items()]
            value.clear()
            value.update(items)
            self._attributes(value)
        elif isinstance(value, (set, frozenset)):
            items = {self.walk(item) for item in value}
            if isinstance(value, set):
                value.clear()
                value.update(items)
            else:
                value = frozenset(items)
                self.done[id(value)] = (value,)
        else:
            self._attributes(value)
        return value

    def _attributes(self, value: Any) -> None:
        state = getattr(value, "__dict__", None)
        if isinstance(state, dict):
            for name, item in list(state.items()):
                moved = self.walk(item)
                if moved is not item:
                    try:
                        state[name] = moved
                    except TypeError:  # a mapping proxy
                        return
