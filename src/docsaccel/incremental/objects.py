"""Where a documented object's docstring, signature and members are written.

The design, in full: the caching guide's *Design* section.
"""

from __future__ import annotations

import inspect
import os
import sys
import types
from typing import Any, NamedTuple

from docsaccel.incremental.pysource import MODULE_BODY, docstring_of

__all__ = ["Definition", "definitions", "is_dynamic", "module_of"]


class Definition(NamedTuple):
    """A definition in source: its file (absolute), qualified name (``<module>``: the
    module body) and the name of the module it was loaded as (``""``: not known), which
    says whether a distribution provides it."""

    file: str
    qualname: str
    module: str = ""


def _file_of_module(name: str | None) -> str | None:
    module = sys.modules.get(name or "")
    path = getattr(module, "__file__", None)
    return os.path.abspath(path) if isinstance(path, str) and path else None


def module_of(obj: Any) -> str | None:
    """The name of the module that defines ``obj``, as its ``__module__`` says."""
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    name = getattr(obj, "__module__", None)
    return name if isinstance(name, str) else None


def _function_layers(obj: Any) -> list[Any]:
    """``obj`` and every function it wraps (``__wrapped__``), as plain functions."""
    layers, seen = [], set()
    while obj is not None and id(obj) not in seen:
        seen.add(id(obj))
        if isinstance(obj, (classmethod, staticmethod)):
            obj = obj.__func__
            continue
        layers.append(obj)
        obj = getattr(obj, "__wrapped__", None) if _is_plain(obj) else None
    return layers


def _is_plain(obj: Any) -> bool:
    try:
        return isinstance(obj, (types.FunctionType, types.MethodType)) or hasattr(
            obj, "__wrapped__"
        )
    except Exception:  # a hostile __getattr__ (a mock, a proxy): nothing to follow
        return False


def _of_function(obj: Any) -> list[Definition]:
    found = []
    for layer in _function_layers(obj):
        function = getattr(layer, "__func__", layer)
        code = getattr(function, "__code__", None)
        if isinstance(code, types.CodeType):
            qualname = getattr(code, "co_qualname", getattr(function, "__qualname__", ""))
            # Its globals are its module's (``__module__`` is copied by ``functools.wraps``).
            module = getattr(function, "__globals__", {}).get("__name__")
            module = module if isinstance(module, str) else ""
            found.append(Definition(os.path.abspath(code.co_filename), qualname, module))
    return found


def _of_class(cls: type) -> list[Definition]:
    found = []
    for klass in getattr(cls, "__mro__", (cls,)):
        if klass is object:
            continue
        module = getattr(klass, "__module__", None)
        path = _file_of_module(module)
        qualname = getattr(klass, "__qualname__", None)
        if path is None or not isinstance(qualname, str):
            continue
        found.append(Definition(path, qualname, str(module)))
        for special in ("__init__", "__new__"):
            member = vars(klass).get(special)
            if member is not None:
                found += _of_function(member)
    return found


def _container(name: str) -> Any:
    """The object holding ``name``'s last part: the longest importable module prefix, then
    attributes. ``None`` when it cannot be found without importing anything."""
    parts = name.replace("::", ".").split(".")
    for cut in range(len(parts) - 1, 0, -1):
        module = sys.modules.get(".".join(parts[:cut]))
        if module is None:
            continue
        holder: Any = module
        try:
            for part in parts[cut:-1]:
                holder = getattr(holder, part)
        except Exception:
            return None
        return holder
    return None


def definitions(obj: Any, name: str) -> list[Definition]:
    """The definitions that shape what a page shows of ``obj``, documented as ``name``."""
    try:
        return _definitions(obj, name)
    except Exception:  # never worth the build: the caller then counts modules whole
        return []


def _definitions(obj: Any, name: str) -> list[Definition]:
    found: list[Definition] = []
    if isinstance(obj, types.ModuleType):
        path = _file_of_module(obj.__name__)
        return [Definition(path, MODULE_BODY, obj.__name__)] if path else []
    if isinstance(obj, type):
        found += _of_class(obj)
    elif isinstance(obj, property):
        for accessor in (obj.fget, obj.fset, obj.fdel):
            if accessor is not None:
                found += _of_function(accessor)
    else:
        found += _of_function(obj)
        kind = type(obj)
        if not found and callable(obj) and kind.__module__ not in ("builtins", "functools"):
            found += _of_class(kind)  # a callable instance: its class shapes it
    holder = _container(name)
    member = name.replace("::", ".").rsplit(".", 1)[-1]
    if isinstance(holder, type):
        # The same name in the owner's MRO: an inherited docstring, attribute comments in a
        # class body.
        for klass in holder.__mro__:
            if klass is object or member not in vars(klass):
                continue
            module = getattr(klass, "__module__", None)
            path = _file_of_module(module)
            if path is not None:
                found.append(Definition(path, klass.__qualname__, str(module)))
            found += _of_function(vars(klass)[member])
    elif isinstance(holder, types.ModuleType) and not found:
        path = _file_of_module(holder.__name__)
        if path is not None:
            found.append(Definition(path, MODULE_BODY, holder.__name__))
    return list(dict.fromkeys(found))


def _runtime_doc(obj: Any) -> str | None:
    try:
        doc = obj.__doc__ if not isinstance(obj, property) else obj.fget.__doc__
    except Exception:
        return None
    return inspect.cleandoc(doc) if isinstance(doc, str) else None


def is_dynamic(obj: Any, found: list[Definition]) -> bool:
    """Whether the docstring a page shows of ``obj`` is in none of ``found``'s sources (see
    the caching guide's design). Data (an instance documented as an attribute) shows no
    docstring of its own."""
    if not isinstance(obj, (type, types.ModuleType, property)) and not callable(obj):
        return False
    shown = _runtime_doc(obj)
    if shown is None or not shown.strip():
        return False
    return all(docstring_of(d.file, d.qualname) != shown for d in found)
