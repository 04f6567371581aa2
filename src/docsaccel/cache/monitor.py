"""Which functions of the project's own code ran, seen through ``sys.monitoring`` (3.12+).

The design, in full: the caching guide's *Design* section.
"""

from __future__ import annotations

import ast
import importlib.machinery
import inspect
import os
import sys
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from docsaccel.cache.instrument import Instrumenter, jit_left
from docsaccel.cache.pieces import piece_of

if TYPE_CHECKING:
    from docsaccel.cache.instrument import _Loader

__all__ = ["Monitor"]

_NAME = "docsaccel"
# Ids other tools take by convention (0 debugger, 1 coverage, 2 profiler, 5 optimizer).
_PREFERRED_IDS = (4, 3, 5, 2)
_FUNCTION = inspect.CO_NEWLOCALS


def _tool_id() -> int:
    monitoring = sys.monitoring  # type: ignore[attr-defined]
    for tool in _PREFERRED_IDS:
        if monitoring.get_tool(tool) == _NAME:
            return tool
    for tool in _PREFERRED_IDS:
        if monitoring.get_tool(tool) is None:
            monitoring.use_tool_id(tool, _NAME)
            return tool
    raise RuntimeError("sys.monitoring has no free tool id for docsaccel")


class Monitor(Instrumenter):
    """The recorder of :mod:`docsaccel.cache.monitor`."""

    def __init__(self, wants: Callable[[str], bool]) -> None:
        super().__init__(wants)
        monitoring = sys.monitoring  # type: ignore[attr-defined]
        self._tool = _tool_id()
        self._event = monitoring.events.PY_START
        self._disable = monitoring.DISABLE
        self._set = monitoring.set_local_events
        #: ``{code object: (file, qualified name)}`` of the watched functions.
        self._keys: dict[types.CodeType, tuple[str, str]] = {}
        self._seen: list[types.CodeType] = []
        monitoring.register_callback(self._tool, self._event, self._started)

    def _started(self, code: types.CodeType, offset: int) -> Any:
        key = self._keys.get(code)
        if key is not None and Instrumenter._instance is self:
            self._seen.append(code)
            self.note(key)
        return self._disable

    def rearm(self) -> None:
        seen, self._seen = self._seen, []
        for code in seen:
            self._set(self._tool, code, 0)
            self._set(self._tool, code, self._event)

    def loaded_code(self, loader: _Loader, fullname: str) -> types.CodeType:
        path = os.path.normpath(loader.get_filename(fullname))
        code = importlib.machinery.SourceFileLoader.get_code(loader, fullname)
        try:
            left = jit_left(ast.parse(loader.get_data(path), filename=path))
        except (OSError, SyntaxError, ValueError):
            return code  # not watched: the file counts whole
        self._watch(path, _functions_in(code), left)
        return code

    def _watch(self, path: str, codes: list[types.CodeType], left: frozenset[str]) -> None:
        for code in codes:
            if code.co_qualname in left or any(
                code.co_qualname.startswith(f"{j}.<locals>.") for j in left
            ):
                continue
            # A lambda or generator expression counts as the piece it is written in.
            self._keys[code] = (path, piece_of(code.co_qualname))
            self._set(self._tool, code, self._event)
        self.instrumented[path] = left

    def _swap_file(self, path: str, live: list[types.FunctionType]) -> None:
        """Watch the live functions of a module loaded before, if the file still holds
        the code they run."""
        try:
            with open(path, "rb") as stream:
                source = stream.read()
            tree = ast.parse(source, filename=path)
            plain = {
                (c.co_qualname, c.co_firstlineno): c
                for c in _functions_in(compile(tree, path, "exec", dont_inherit=True))
            }
        except (OSError, SyntaxError, ValueError):
            return
        codes = []
        for function in live:
            code = function.__code__
            if plain.get((code.co_qualname, code.co_firstlineno)) != code:
                return  # the file changed since it was loaded, or code made elsewhere
            codes += [code, *_functions_in(code)]
        self._watch(path, list(dict.fromkeys(codes)), jit_left(tree))


def _functions_in(code: types.CodeType) -> list[types.CodeType]:
    """The function code objects inside ``code`` (not class bodies), outer ones first."""
    found: list[types.CodeType] = []
    stack = [code]
    while stack:
        current = stack.pop()
        for const in current.co_consts:
            if isinstance(const, types.CodeType):
                if const.co_flags & _FUNCTION:
                    found.append(const)
                stack.append(const)
    return found
