"""What state an example leaves in the project's modules for the examples after it.

sphinx-gallery runs the examples of a gallery one after the other in one process, each
with fresh globals: the only way one example's work reaches a later one is through what
outlives it in modules, a global assigned, a class attribute set, a ``functools.cache``
or memo dict filled, a generator advanced. So a recorder takes a :func:`snapshot` of the
project modules' globals before an example and after it; :func:`changed` says which
globals differ: what the example left. A later example whose code names one of them
depends on that example (:mod:`docsaccel.cache.deps`).

A snapshot looks three levels into each global: containers by their items, objects by
their ``__dict__``/``__slots__``, functions by their defaults, closure cells and
attributes, ``functools.cache`` wrappers by their misses and size, generators by where
they stand, arrays by their bytes; deeper, an object by its identity and a container by
its size too. A global it cannot read (an object of C code with no attributes, one whose attribute
access runs code) is never equal to itself: when in doubt, it changed; inside another
object such a value goes by identity.
Immutable values (numbers, strings, ``None``, code, modules, classes and functions of
other libraries) compare by value or identity, a reference kept so an identity is never
reused.

Example::

    before = snapshot(project_modules())
    ...  # the example runs
    changed(before, snapshot(project_modules()))   # {('/repo/mylib/memo.py', 'load')}
"""

from __future__ import annotations

import functools
import re
import threading
import types
from collections import deque
from collections.abc import Iterable
from typing import Any

from docsaccel.cache.instrument import checked_code
from docsaccel.cache.loaded import address

__all__ = ["Snapshot", "assigned", "changed", "snapshot", "watch_assignments"]

Snapshot = dict[tuple[str, str], Any]

_DEPTH = 3
_ITEMS = 2000  # a container larger than this compares by the identity of its items
_ARRAY_BYTES = 1 << 20
_VALUES = (type(None), bool, int, float, complex, str, bytes)
_IDENTITIES = (
    types.ModuleType,
    types.CodeType,
    types.BuiltinFunctionType,
    types.MethodWrapperType,
    types.WrapperDescriptorType,
    types.MethodDescriptorType,
    types.GetSetDescriptorType,
    types.MemberDescriptorType,
    type(Ellipsis),
    type(NotImplemented),
    range,
    re.Pattern,
    type(threading.Lock()),
    type(threading.RLock()),
)
# The same as sets of exact types, for the frequent case (a subclass is still found
# by isinstance).
_VALUE_TYPES = frozenset(_VALUES)
_IDENTITY_TYPES = frozenset(_IDENTITIES)
#: Module globals that are the import system's or the warnings machinery's, not state.
_SKIPPED = frozenset(
    {
        "__builtins__",
        "__loader__",
        "__spec__",
        "__cached__",
        "__file__",
        "__name__",
        "__package__",
        "__path__",
        "__warningregistry__",
    }
)


#: The names of the modules being read: their classes are read into.
_owned: set[str] = set()
#: ``{address: token}`` while one snapshot is taken: each object read once.
_memo: dict[int, Any] = {}
#: The objects whose identity a snapshot being taken holds.
_keep: list[Any] = []
#: Where a snapshot keeps them.
_KEPT = ("", "")


#: ``{address: (function, code, defaults, kwdefaults)}`` of the functions snapshots read. Each
#: of those reads raises an audit event (every audit hook of the process runs), and
#: each changes only by an assignment, which raises one too: the recorder's hook calls
#: :func:`assigned`, which drops the entry. Used once :func:`watch_assignments` says so.
_parts: dict[int, tuple[Any, Any, Any, Any]] = {}
_PARTS_KEPT = 200_000
_watched = False
_ASSIGNED = frozenset({"__code__", "__defaults__", "__kwdefaults__"})


def watch_assignments() -> None:
    """Say that every ``object.__setattr__`` audit event reaches :func:`assigned` from
    now on, so the parts of functions read before can be used again."""
    global _watched
    _watched = True


def assigned(args: tuple[Any, ...]) -> None:
    """An ``object.__setattr__`` audit event's arguments: a function's code, defaults
    or keyword defaults assigned are read again. The instrumenter's own swaps of a
    function's code for the same code without its check change nothing."""
    target, name = args[0], args[1]
    if type(target) is not types.FunctionType or name not in _ASSIGNED:
        return
    known = _parts.get(address(target))
    if known is None or known[0] is not target:
        return
    if name == "__code__" and checked_code(args[2]) is checked_code(known[1]):
        return
    del _parts[address(target)]


def _function_parts(value: types.FunctionType) -> tuple[Any, Any, Any, Any]:
    """``(function, code, defaults, kwdefaults)``, read once while nothing assigns them."""
    known = _parts.get(address(value)) if _watched else None
    if known is not None and known[0] is value:
        return known
    parts = (value, value.__code__, value.__defaults__, value.__kwdefaults__)
    if _watched:
        if len(_parts) >= _PARTS_KEPT:
            _parts.clear()
        _parts[address(value)] = parts  # keeps the function: its address is never reused
    return parts


def _same(value: Any) -> Any:
    """A token equal only to that of the same object: its identity, with a reference
    kept (in the snapshot) so that identity is not reused while the snapshot lives."""
    _keep.append(value)
    if isinstance(value, types.ModuleType):
        return ("module", address(value))
    return address(value)


class _Unknown:
    """What a snapshot cannot read: never equal, so it counts as changed."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return False

    __hash__ = object.__hash__


def _items(values: Iterable[Any], depth: int) -> tuple[Any, ...]:
    return tuple(_token(v, depth) for v in values)


def _token(value: Any, depth: int) -> Any:
    kind = type(value)
    if kind in _VALUE_TYPES:
        return (kind, value)
    if kind is types.FunctionType:  # the most frequent global: tested before the others
        _, code, defaults, kwdefaults = _function_parts(value)
        if not (value.__closure__ or defaults or kwdefaults or value.__dict__):
            _keep.append(value)  # most functions: nothing more to read
            return (address(value), address(checked_code(code)))
    elif kind in _IDENTITY_TYPES or isinstance(value, _IDENTITIES):
        return _same(value)
    key = address(value)  # read once, at the depth it is first met
    known = _memo.get(key)
    if known is None:
        _keep.append(value)
        known = _memo[key] = _read(value, kind, depth)
    return known


def _read(value: Any, kind: type, depth: int) -> Any:
    if isinstance(value, type):
        # Another library's class is its state, not the project's (and large to read).
        if depth <= 0 or type.__dict__["__module__"].__get__(value) not in _owned:
            return _same(value)
        return (_same(value), _mapping(vars(value), depth - 1))
    if depth <= 0:
        # Deeper than a snapshot reads: by identity, and a container by its size too.
        size = len(value) if isinstance(value, (list, dict, set, deque, bytearray)) else -1
        return (_same(value), size)
    if kind is types.FunctionType:
        _, code, defaults, kwdefaults = _function_parts(value)
        cells = tuple(_cell(c, depth - 1) for c in value.__closure__ or ())
        return (
            _same(value),
            _same(checked_code(code)),
            _token(defaults, depth - 1),
            _token(kwdefaults, depth - 1),
            cells,
            _mapping(value.__dict__, depth - 1),
        )
    if isinstance(value, functools._lru_cache_wrapper):
        info = value.cache_info()
        wrapped = _token(getattr(value, "__wrapped__", None), depth - 1)
        return (_same(value), info.misses, info.currsize, wrapped)
    if isinstance(value, (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)):
        frame = getattr(value, "gi_frame", None) or getattr(value, "cr_frame", None)
        return (_same(value), -1 if frame is None else frame.f_lasti)
    if isinstance(value, (list, tuple, deque)):
        if len(value) > _ITEMS:
            return (_same(value), len(value), tuple(map(address, value)))
        return (_same(value), _items(value, depth - 1))
    if isinstance(value, (set, frozenset)):
        return (_same(value), frozenset(map(_same, value)))
    if isinstance(value, dict):
        return (_same(value), _mapping(value, depth - 1))
    if isinstance(value, (staticmethod, classmethod)):
        return (_same(value), _token(value.__func__, depth - 1))
    if isinstance(value, property):
        return (_same(value), _items((value.fget, value.fset, value.fdel), depth - 1))
    if isinstance(value, types.MethodType):
        return (_same(value.__func__), _same(value.__self__))
    if hasattr(kind, "__array_interface__") and hasattr(value, "tobytes"):
        return _array(value)
    if kind.__getattribute__ is not object.__getattribute__ or hasattr(kind, "__getattr__"):
        # Reading it could run its code (a lazy module's proxy).
        return _Unknown() if depth == _DEPTH else _same(value)
    found: list[Any] = [_same(value)]
    attributes = getattr(value, "__dict__", None)
    if isinstance(attributes, dict):
        found.append(_mapping(attributes, depth - 1))
    slots = [s for k in kind.__mro__ for s in getattr(k, "__slots__", ()) if isinstance(s, str)]
    if slots:
        found.append(_items((getattr(value, s, None) for s in slots), depth - 1))
    if len(found) == 1:
        # C state no attribute shows: a global such as a random generator may have
        # changed; inside another object (an ABC's registry data) it goes by identity.
        return _Unknown() if depth == _DEPTH else found[0]
    return tuple(found)


def _cell(cell: types.CellType, depth: int) -> Any:
    try:
        return _token(cell.cell_contents, depth)
    except ValueError:
        return None  # an empty cell


def _array(value: Any) -> Any:
    try:
        if value.nbytes > _ARRAY_BYTES:
            return _Unknown()
        return (_same(value), value.shape, str(value.dtype), value.tobytes())
    except Exception:  # an array-like whose attributes fail: it cannot be read
        return _Unknown()


def _mapping(mapping: dict[Any, Any], depth: int) -> Any:
    if len(mapping) > _ITEMS:
        return (len(mapping), tuple(map(address, mapping)), tuple(map(address, mapping.values())))
    try:
        return tuple((_token(k, 0), _token(v, depth)) for k, v in list(mapping.items()))
    except RuntimeError:  # changed while read (another thread)
        return _Unknown()


def snapshot(
    modules: Iterable[tuple[str, types.ModuleType]], owned: Iterable[str] | None = None
) -> Snapshot:
    """``{(module file, global name): token}`` of the given ``(file, module)`` pairs.

    ``owned``: the names of the project's modules, whose classes are read into (default:
    those given). Two snapshots compare only if they read the same classes so: one of
    a module just imported is taken with every project module's name."""
    found: Snapshot = {}
    modules = list(modules)
    _owned.clear()
    _owned.update(module.__name__ for _, module in modules)
    _owned.update(owned or ())
    try:
        for path, module in modules:
            namespace = getattr(module, "__dict__", None)
            if not isinstance(namespace, dict):
                continue
            for name, value in list(namespace.items()):
                if isinstance(name, str) and name not in _SKIPPED:
                    found[(path, name)] = _token(value, _DEPTH)
    finally:
        _memo.clear()
        found[_KEPT] = list(_keep)
        _keep.clear()
    return found


def _module(token: Any) -> bool:
    """Whether a token is a module's: a submodule imported meanwhile becomes an attribute
    of its package, which its own body accounts for."""
    return isinstance(token, tuple) and len(token) == 2 and token[0] == "module"


def changed(before: Snapshot, after: Snapshot) -> set[tuple[str, str]]:
    """The globals that differ between two snapshots, among the modules both hold (a
    module first seen in ``after`` was imported meanwhile: its body is counted apart)."""
    files = {path for path, _ in before if path}
    found = {
        key
        for key, token in after.items()
        if key[0] in files
        and before.get(key) != token
        and not (key not in before and _module(token))
    }
    after_files = {path for path, _ in after}
    found |= {key for key in before if key not in after and key[0] in after_files}
    found.discard(_KEPT)
    return found
