"""What state an example leaves in the project's modules for the examples after it.

The design, in full: the caching guide's *Design* section.

Example: an example sets a module's global, which a later example may read.

>>> import types
>>> stats = types.ModuleType("mylib.stats")
>>> stats._OFFSET, stats.FACTOR = 0, 2
>>> before = snapshot([("/repo/mylib/stats.py", stats)])
>>> stats._OFFSET = 5  # the example runs
>>> changed(before, snapshot([("/repo/mylib/stats.py", stats)]))
{('/repo/mylib/stats.py', '_OFFSET')}
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

__all__ = [
    "Fills",
    "LeftState",
    "Snapshot",
    "assigned",
    "changed",
    "compare",
    "snapshot",
    "watch_assignments",
]

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
#: The modules of the plain holders of values (``SimpleNamespace``, ``OrderedDict``,
#: ``defaultdict``): what the project keeps in them is its state, read into as in a dict.
_NEUTRAL = frozenset({"builtins", "types", "collections"})
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


class _Entries(tuple):
    """A mapping's items: entries added to it fill it (a memo dict), they change nothing."""

    __slots__ = ()


class _Own(tuple):
    """The attributes of a class, function or callable object of the project: entries
    added, and any set under a private name (``_sig``, ``_count``, ``__wrapped__``), are
    the lazy caches it fills for itself."""

    __slots__ = ()


class _Called(tuple):
    """A project function: its identity, its code (a decorator compiling lazily swaps it),
    then what it holds (defaults, closure cells, attributes)."""

    __slots__ = ()


class _Class(tuple):
    """A project class: its identity and its attributes (:class:`_Own`)."""

    __slots__ = ()


class _Callable(tuple):
    """A callable object of the project (a decorator's wrapper): its identity, its
    attributes (:class:`_Own`) and its slots."""

    __slots__ = ()


class _Shallow(tuple):
    """An object deeper than a snapshot reads: its identity and size. Read once per
    snapshot, an object is met first at another depth in another one: then only its
    identity compares."""

    __slots__ = ()


class _ShallowCode(_Shallow):
    """A project class or function deeper than a snapshot reads: made at run time and
    bound as a global (code a decorator compiles), it is no state either."""

    __slots__ = ()


class _Cache(tuple):
    """A ``functools.cache`` wrapper: its identity, misses, size and the function it wraps."""

    __slots__ = ()


def _items(values: Iterable[Any], depth: int) -> tuple[Any, ...]:
    # A value's token made here, not in a call of _token: most items are values, and a
    # snapshot reads hundreds of thousands of them.
    plain, token = _VALUE_TYPES, _token
    return tuple([(type(v), v) if type(v) in plain else token(v, depth) for v in values])


def _token(value: Any, depth: int) -> Any:
    kind = type(value)
    if kind in _VALUE_TYPES:
        return (kind, value)
    if kind is types.FunctionType:  # the most frequent global: tested before the others
        if value.__module__ not in _owned:
            # Another library's (or code compiled at run time): by identity, its caches
            # are not the project's state.
            return _Called((_same(value),))
        _, code, defaults, kwdefaults = _function_parts(value)
        if not (value.__closure__ or defaults or kwdefaults or value.__dict__):
            _keep.append(value)  # most functions: nothing more to read
            return _Called((address(value), address(checked_code(code))))
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
        if type.__dict__["__module__"].__get__(value) not in _owned:
            return _same(value)
        if depth <= 0:
            # Met deep first in one snapshot and as a global in another (the order the
            # modules are read in moves as an example imports more): identity compares.
            return _ShallowCode((_same(value), -1))
        return _Class((_same(value), _mapping(vars(value), depth - 1, _Own)))
    if depth <= 0 and kind is types.FunctionType:
        return _ShallowCode((_same(value), -1))
    if depth <= 0:
        # Deeper than a snapshot reads: by identity, and a container by its size too.
        size = len(value) if isinstance(value, (list, dict, set, deque, bytearray)) else -1
        return _Shallow((_same(value), size))
    if kind is types.FunctionType:
        _, code, defaults, kwdefaults = _function_parts(value)
        cells = tuple(_cell(c, depth - 1) for c in value.__closure__ or ())
        return _Called(
            (
                _same(value),
                _same(checked_code(code)),
                _token(defaults, depth - 1),
                _token(kwdefaults, depth - 1),
                cells,
                _mapping(value.__dict__, depth - 1, _Own),
            )
        )
    if isinstance(value, functools._lru_cache_wrapper):
        info = value.cache_info()
        wrapped = _token(getattr(value, "__wrapped__", None), depth - 1)
        return _Cache((_same(value), info.misses, info.currsize, wrapped))
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
    slots = [s for k in kind.__mro__ for s in getattr(k, "__slots__", ()) if isinstance(s, str)]
    owner = type.__dict__["__module__"].__get__(kind)
    if owner not in _owned and owner not in _NEUTRAL:
        return _foreign(value, kind, slots, depth)
    if kind.__getattribute__ is not object.__getattribute__ or hasattr(kind, "__getattr__"):
        # Reading it could run its code (a lazy module's proxy).
        return _Unknown() if depth == _DEPTH else _same(value)
    found: list[Any] = [_same(value)]
    attributes = getattr(value, "__dict__", None)
    if isinstance(attributes, dict):
        # A callable object (a decorator's wrapper) caches for itself as a function does.
        found.append(_mapping(attributes, depth - 1, _Own if callable(value) else _Entries))
    if slots:
        found.append(_items((getattr(value, s, None) for s in slots), depth - 1))
    if callable(value) and len(found) > 1:
        return _Callable(found)
    if len(found) == 1:
        # C state no attribute shows: a global such as a random generator may have
        # changed; inside another object (an ABC's registry data) it goes by identity.
        return _Unknown() if depth == _DEPTH else found[0]
    return tuple(found)


def _foreign(value: Any, kind: type, slots: list[str], depth: int) -> Any:
    """An object of another library's class (a ``logging.Logger``, a ``typing`` alias):
    its public attributes, each by value or identity (a container by its size too); its
    private ones, and whatever it reaches (logging's manager, typing's caches), are that
    library's own state, shared by every user of it, not the project's. Read as
    ``object`` reads them: its own ``__getattr__`` (typing's) runs no code of it."""
    try:
        attributes = object.__getattribute__(value, "__dict__")
    except AttributeError:
        attributes = None
    names = [n for n in attributes if isinstance(n, str)] if isinstance(attributes, dict) else []
    if not (names or slots):
        # C state no attribute shows (a random generator): as a global, it may have
        # changed; inside another object it goes by identity.
        return _Unknown() if depth == _DEPTH else _same(value)
    found: list[Any] = [_same(value), _same(kind)]
    for name in sorted(n for n in {*names, *slots} if not n.startswith("_")):
        try:
            held = attributes[name] if name in names else object.__getattribute__(value, name)
        except AttributeError:  # an empty slot
            held = None
        found.append((name, _token(held, 0)))
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


def _mapping(mapping: dict[Any, Any], depth: int, tag: type[tuple] = _Entries) -> Any:
    """A mapping's items, as ``tag`` (:class:`_Entries` or :class:`_Own`); a large one by
    the identity of its keys and values."""
    try:
        if len(mapping) > _ITEMS:
            return tag((address(k), address(v)) for k, v in list(mapping.items()))
        # As _items: the token of a name (the usual key) and of a value made here.
        plain, token = _VALUE_TYPES, _token
        return tag(
            [
                (
                    (str, k) if type(k) is str else token(k, 0),
                    (type(v), v) if type(v) in plain else token(v, depth),
                )
                for k, v in list(mapping.items())
            ]
        )
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


def _private(key: Any) -> bool:
    """Whether a mapping's key token is a private name (``_sig``, ``__wrapped__``)."""
    return type(key) is tuple and len(key) == 2 and key[0] is str and key[1].startswith("_")


def _filled(before: Any, after: Any) -> bool:
    """Whether a global's token ``after`` differs from ``before`` only as caches filled
    lazily make it differ: a ``functools.cache`` that grew, a mapping that gained entries
    (a memo dict, a class-level dict), a project function, class or callable object that
    set a private attribute of its own or had its code compiled, each deep down. A value
    changed, an item replaced or removed, a list grown, a global rebound is state."""
    if before == after:
        return True
    kind = type(before)
    if isinstance(before, _Shallow) != isinstance(after, _Shallow):
        # The same object read to another depth: deeper than compared.
        return type(before) in _READ and type(after) in _READ and before[0] == after[0]
    if kind is not type(after):
        return False
    if kind is _Cache:
        return before[0] == after[0]
    if kind is _Called:
        before, after = _whole(before), _whole(after)
        parts = zip(before[2:], after[2:], strict=True)
        return before[0] == after[0] and all(_filled(b, a) for b, a in parts)
    if kind is _Entries or kind is _Own:
        try:
            old, new = dict(before), dict(after)
        except TypeError:  # a key token that does not hash: unknown, so changed
            return False
        own = kind is _Own
        return all(
            key in new and (_filled(value, new[key]) or (own and _private(key)))
            for key, value in old.items()
        )
    if kind in (tuple, _Class, _Callable) and len(before) == len(after):
        return all(_filled(b, a) for b, a in zip(before, after, strict=True))
    return False


#: What a function holds when its token leaves it out (:func:`_token`): no defaults, no
#: keyword defaults, no closure cells, no attributes.
_HOLDS_NOTHING = ((type(None), None), (type(None), None), (), _Own(()))


def _whole(token: _Called) -> _Called:
    """A function's token with what it holds, also when :func:`_token` left that out (it
    held nothing): a function setting its first attribute (``f._memo = {}``) compares
    with itself before."""
    return _Called((*token, *_HOLDS_NOTHING)) if len(token) == 2 else token


#: The tokens that start with the identity of the object read.
_READ = frozenset({tuple, _Shallow, _ShallowCode, _Called, _Class, _Callable, _Cache})


def _made_lazily(token: Any) -> bool:
    """Whether a global first seen in a module is a function, class or cache made at run
    time (code a decorator compiles and binds): not state an example leaves."""
    return type(token) in (_Called, _Class, _Callable, _Cache, _ShallowCode)


def _key_name(key: Any, name: str) -> str:
    """The attribute name a mapping's key token stands for, else ``name`` (its holder's)."""
    return key[1] if type(key) is tuple and len(key) == 2 and key[0] is str else name


#: The tokens of a function and of a callable object: what they fill in themselves (their
#: compiled code, signature, wrapped function, memo) is their own, read by calling them.
_SELF_KEPT = (_Called, _Callable)


def _fill_names(before: Any, after: Any, name: str) -> set[str]:
    """The names holding the caches filled lazily between ``before`` and ``after`` (which
    differ as :func:`_filled` allows): for each, the innermost attribute or global name
    that holds it (``_sides`` for ``Shape._sides`` gaining an entry, ``table`` for a
    ``functools.cache``). Code reading a filled cache names it so; ``name`` is the
    holder's. Not what a function or callable object filled in itself (its compiled code,
    ``__wrapped__``, ``_sig``, a memo in its closure): that is its own, which every call
    of it reads (decorator machinery fills it in every function a package names), not a
    cache the project's other code reads."""
    if before == after:
        return set()
    kind = type(before)
    if kind in _SELF_KEPT and kind is type(after):
        return set()
    if isinstance(before, _Shallow) != isinstance(after, _Shallow):
        # The same object read to another depth (a class met deep in one snapshot, as a
        # global in the other): nothing is seen filled, as nothing is seen changed.
        return set()
    if kind is not type(after) or kind is _Cache or isinstance(before, _Shallow):
        return {name}
    if kind is _Entries or kind is _Own:
        return _entry_fill_names(before, after, name, own=kind is _Own)
    if kind not in (tuple, _Class) or len(before) != len(after):
        return {name}  # another value (a private attribute rebound): what holds it
    found: set[str] = set()
    for b, a in zip(before, after, strict=True):
        found |= _fill_names(b, a, name)
    return found


def _entry_fill_names(before: Any, after: Any, name: str, own: bool) -> set[str]:
    """:func:`_fill_names` of a mapping's items, or of the attributes of a class or object
    of the project (``own``): an attribute set is read by its name, an entry added by its
    mapping's."""
    old, new = dict(before), dict(after)
    found = {_key_name(key, name) if own else name for key in new.keys() - old.keys()}
    for key, value in old.items():
        if key not in new:  # read to another depth in one snapshot: its holder names it
            found.add(_key_name(key, name) if own else name)
        elif new[key] != value:
            found |= _fill_names(value, new[key], _key_name(key, name) if own else name)
    return found


Fills = dict[tuple[str, str], frozenset[str]]


def _differ(before: Any, after: Any, known: dict[tuple[int, int], bool]) -> bool:
    """``before != after``, worked out once per pair of tokens (``known``: by their
    addresses, both kept by their snapshots): an object bound to many names (a function
    a package re-exports, a library's every module importing it) has one token in each
    snapshot, read once, and a large one (a function and all it holds)."""
    pair = (address(before), address(after))
    found = known.get(pair)
    if found is None:
        found = known[pair] = before != after
    return found


def compare(before: Snapshot, after: Snapshot) -> tuple[set[tuple[str, str]], Fills]:
    """``(changed, filled)``: the globals that differ between two snapshots, among the
    modules both hold (a module first seen in ``after`` was imported meanwhile: its body
    is counted apart), but for caches filled lazily (:func:`_filled`); and those that
    differ only as such caches do, each with the names holding what was filled
    (:func:`_fill_names`). A filled cache is no state, but a later example reading it
    reads what the code that filled it made (:mod:`docsaccel.cache.deps`)."""
    files = {path for path, _ in before if path}
    left: set[tuple[str, str]] = set()
    filled: Fills = {}
    differing: dict[tuple[int, int], bool] = {}
    for key, token in after.items():
        if key[0] not in files:
            continue
        if key not in before:
            if type(token) is _Cache:  # a function or class made at run time is code
                filled[key] = frozenset({key[1]})
            elif not (_module(token) or _made_lazily(token)):
                left.add(key)
        elif _differ(before[key], token, differing):
            if not _filled(before[key], token):
                left.add(key)
            elif names := _fill_names(before[key], token, key[1]):
                filled[key] = frozenset(names)
    after_files = {path for path, _ in after}
    left |= {key for key in before if key not in after and key[0] in after_files}
    left.discard(_KEPT)
    return left, filled


def changed(before: Snapshot, after: Snapshot) -> set[tuple[str, str]]:
    """The globals that differ between two snapshots but for caches filled lazily: the
    state an example left (see :func:`compare`)."""
    return compare(before, after)[0]


class LeftState:
    """What the examples that ran in this process left in the project's modules, by
    label: the globals each changed, and the caches each filled lazily with the code it
    ran. Process-wide, as those modules are: each recording reports what the examples
    before it left (:attr:`.recorder.Seen.carried_state`, ``carried_fills``), then adds
    its own."""

    def __init__(self) -> None:
        self._left_by: dict[tuple[str, str], set[str]] = {}
        self._filled_by: dict[tuple[str, str, str], dict[str, frozenset[tuple[str, str]]]] = {}

    def left(self) -> dict[tuple[str, str], frozenset[str]]:
        """``{(module file, global name): labels}`` of the globals examples changed so far
        (a copy)."""
        return {key: frozenset(by) for key, by in self._left_by.items()}

    def fills(self) -> dict[tuple[str, str, str], dict[str, frozenset[tuple[str, str]]]]:
        """``{(module file, global name, name holding it): {label: code}}`` of the caches
        examples filled so far (a copy)."""
        return {key: dict(by) for key, by in self._filled_by.items()}

    def note(
        self,
        label: str,
        left: Iterable[tuple[str, str]],
        filled: Fills,
        ran: frozenset[tuple[str, str]],
    ) -> None:
        """The example ``label`` changed the globals ``left`` and filled ``filled`` (what
        :func:`compare` found), having run the code ``ran``: the fill is what that code
        made."""
        for key in left:
            self._left_by.setdefault(key, set()).add(label)
        for (path, name), holders in filled.items():
            for holder in holders:
                self._filled_by.setdefault((path, name, holder), {})[label] = ran
