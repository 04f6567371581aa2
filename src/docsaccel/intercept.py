"""The one owner of everything docsaccel intercepts in a process.

The design, in full: the adopting guide's *Design* section.

Example: a listener sees the events it subscribed to, while it is registered.

>>> import os
>>> seen = []
>>> with listen({"os.listdir"}, lambda event, args: seen.append(event)):
...     _ = os.listdir(".")
>>> _ = os.listdir(".")
>>> seen
['os.listdir']
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import importlib
import importlib.util
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

from docsaccel.contract import fork_safe_lock

__all__ = [
    "IMPORT_EVENTS",
    "ImportsDone",
    "Listener",
    "ModuleImported",
    "ModuleNotFound",
    "Patch",
    "listen",
    "patch",
    "subscribe",
    "wrap_imports",
]

AuditCallback = Callable[[str, tuple[Any, ...]], None]

#: ``{audit event name, or import event kind: its listeners' callbacks, in the order
#: they were registered}``. Replaced whole, never changed in place: the hook and the
#: import wrappers read it without a lock, from any thread.
_by_event: dict[Any, tuple[Callable[..., None], ...]] = {}
_listeners: list[Listener] = []
_lock = fork_safe_lock()
_hook_installed = False


def _dispatch(event: str, args: tuple[Any, ...]) -> None:
    # A plain function, not a bound method: Python asks every hook for __cantrace__ at
    # every audit event of the process, which a bound method answers by raising. A
    # listener is called straight from here, so the code that raised the event is two
    # frames above it (``sys._getframe(2)``), as it was under a hook of its own.
    callbacks = _by_event.get(event)
    if callbacks is not None:
        for callback in callbacks:
            callback(event, args)


class Listener:
    """One subscription to some audit events (:func:`listen`) or import events
    (:func:`subscribe`), until :meth:`close` (or the end of its ``with`` block)."""

    def __init__(self, callbacks: Mapping[Any, Callable[..., None]]) -> None:
        #: ``{event name or kind: what it calls}``.
        self.callbacks = dict(callbacks)

    @property
    def events(self) -> frozenset[Any]:
        """The audit event names or import event kinds it listens to."""
        return frozenset(self.callbacks)

    def close(self) -> None:
        """Stop handing this listener events (closing twice does nothing)."""
        with _lock:
            if self in _listeners:
                _listeners.remove(self)
                _rebuild()

    @property
    def listening(self) -> bool:
        """Whether it is registered."""
        return self in _listeners

    def __enter__(self) -> Listener:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def listen(events: Iterable[str], callback: AuditCallback) -> Listener:
    """Call ``callback(event, args)`` for every audit event named in ``events`` from now
    on, in any thread, until the returned :class:`Listener` is closed. The first listener
    of the process installs the audit hook (inherited by the processes it forks)."""
    global _hook_installed
    listener = Listener(dict.fromkeys(events, callback))
    with _lock:
        _listeners.append(listener)
        _rebuild()
        if not _hook_installed:
            sys.addaudithook(_dispatch)
            _hook_installed = True
    return listener


def _rebuild() -> None:
    """The event table from the registered listeners (with the lock held)."""
    global _by_event
    table: dict[Any, list[Callable[..., None]]] = {}
    for listener in _listeners:
        for event, callback in listener.callbacks.items():
            table.setdefault(event, []).append(callback)
    _by_event = {event: tuple(callbacks) for event, callbacks in table.items()}


# --- Process-wide functions ---------------------------------------------------------------

_MISSING = object()

#: Every patch applied and not undone, oldest first.
_patches: list[Patch] = []


class Patch:
    """The replacement of ``owner.name`` (a process-wide function), beside its undo.

    ``wrap(patch)`` makes the replacement once; it calls what it replaced as
    ``patch.original(...)`` (looked up at each call, see the adopting guide's *Design*
    section). A replacement that may still be called after :meth:`undo` (a wrapper someone
    else stacked on it keeps it) only forwards to ``patch.original`` while :attr:`active`
    is false.
    """

    def __init__(self, owner: Any, name: str, wrap: Callable[[Patch], Any]) -> None:
        self.owner, self.name = owner, name
        self.original: Any = getattr(owner, name)
        self.active = False
        self.replacement = wrap(self)

    def apply(self) -> Patch:
        """Put the replacement in place; again when something replaced it meanwhile (what
        it replaced then is dropped, and :attr:`original` stays what it was)."""
        with _lock:
            if getattr(self.owner, self.name, _MISSING) is not self.replacement:
                setattr(self.owner, self.name, self.replacement)
            self.active = True
            if self not in _patches:
                _patches.append(self)
        return self

    def undo(self) -> None:
        """Restore what was there before :meth:`apply`. Under a later patch of this module
        it is taken out of the chain (that one calls :attr:`original` now); under a
        wrapper from elsewhere it stays there, inactive, forwarding to :attr:`original`."""
        with _lock:
            self.active = False
            if self not in _patches:
                return
            _patches.remove(self)
            if getattr(self.owner, self.name, _MISSING) is self.replacement:
                setattr(self.owner, self.name, self.original)
                return
            for later in _patches:
                if (later.owner, later.name) == (self.owner, self.name) and (
                    later.original is self.replacement
                ):
                    later.original = self.original


def patch(owner: Any, name: str, wrap: Callable[[Patch], Any]) -> Patch:
    """Replace ``owner.name`` with ``wrap(patch)`` now (see :class:`Patch`)."""
    return Patch(owner, name, wrap).apply()


# --- Imports ------------------------------------------------------------------------------


class ModuleImported(NamedTuple):
    """An import asked for a module: by an ``import`` statement (``builtins.__import__``,
    which C code such as pickle's calls too) or by name (:func:`importlib.import_module`).
    Published before the import runs, so one that fails is seen too."""

    #: The name as asked: relative to :attr:`package` when :attr:`level` is not 0.
    name: str
    #: The importer's package, which a relative name is resolved in (``None``: absolute).
    package: str | None
    level: int
    #: ``from name import a, b``: the names after ``import`` as the caller gave them (a
    #: tuple, a list from C callers, or anything); ``()`` for an import by name.
    fromlist: Any
    #: Whether an import statement asked (``False``: :func:`importlib.import_module`).
    statement: bool

    def absolute(self) -> str | None:
        """The module's absolute name (``None``: a relative name that resolves to none)."""
        if not self.level:
            return self.name
        try:
            return importlib.util.resolve_name("." * self.level + self.name, self.package)
        except (ImportError, ValueError, TypeError):
            return None


class ModuleNotFound(NamedTuple):
    """An import did not find a module: it raised ``ModuleNotFoundError`` (naming the
    module, perhaps a parent package of the one asked for), ``from package import name``
    found neither the name nor a submodule of that name in a package, or
    :func:`importlib.util.find_spec` found nothing. Code that takes another branch then
    (``except ImportError``, ``HAS_OPTDEP = find_spec(...) is not None``) depends on it."""

    #: The absolute name of the module not found.
    name: str
    #: ``__file__`` of the module whose code asked (``None``: not known).
    importer_file: str | None
    #: ``__name__`` of that module (``None``: not known).
    importer_name: str | None


class ImportsDone(NamedTuple):
    """The outermost import running, by statement or by name, returned or raised: the
    modules it loaded have run their bodies. (An import started before the wrappers were
    in place is not counted: those it runs meanwhile each end with one of these.)"""


#: The kinds of import event :func:`subscribe` takes.
IMPORT_EVENTS = frozenset({ModuleImported, ModuleNotFound, ImportsDone})
_DONE = ImportsDone()
#: Imports in progress through the wrappers, in every thread.
_import_depth = 0
_import_patches: list[Patch] = []
_imports_lock = fork_safe_lock()


def subscribe(callbacks: Mapping[type, Callable[[Any], None]]) -> Listener:
    """Call ``callbacks[kind](event)`` for every import event of those kinds
    (:data:`IMPORT_EVENTS`) from now on, in any thread, until the returned
    :class:`Listener` is closed. Puts the import wrappers in place the first time."""
    unknown = [kind for kind in callbacks if kind not in IMPORT_EVENTS]
    if unknown:
        raise ValueError(f"subscribe: {unknown[0]!r} is not an import event kind")
    wrap_imports()
    listener = Listener(callbacks)
    with _lock:
        _listeners.append(listener)
        _rebuild()
    return listener


def wrap_imports() -> None:
    """Put the import wrappers in place now, for the life of the process (once: later
    calls do nothing). What binds ``find_spec`` or ``import_module`` to a name of its own
    from then on calls them; with no subscriber they cost a dictionary look-up."""
    with _imports_lock:
        if _import_patches:
            return
        # What importlib.import_module calls, looked up at each call: a module that bound
        # import_module to a name of its own before this ran (Sphinx's
        # inheritance_diagram, autodoc) is seen too.
        bootstrap: Any = importlib._bootstrap  # type: ignore[attr-defined]
        _import_patches.extend(
            (
                patch(builtins, "__import__", _wrap_import),
                patch(bootstrap, "_gcd_import", _wrap_gcd_import),
                patch(importlib.util, "find_spec", _wrap_find_spec),
            )
        )


def _wrap_import(replaced: Patch) -> Any:
    def watched_import(
        name: str,
        globals: dict[str, Any] | None = None,
        locals: Any = None,
        fromlist: Any = (),
        level: int = 0,
    ) -> Any:
        global _import_depth
        callbacks = _by_event.get(ModuleImported)
        if callbacks:
            package = globals.get("__package__") if level and isinstance(globals, dict) else None
            _imported(callbacks, name, package, level, fromlist, True)
        _import_depth += 1
        try:
            module = replaced.original(name, globals, locals, fromlist, level)
        except ModuleNotFoundError as exc:
            _not_found(exc.name, globals)
            raise
        else:
            if fromlist and ModuleNotFound in _by_event:
                _submodules_not_found(module, fromlist, globals)
            return module
        finally:
            _import_depth -= 1
            if not _import_depth:
                _done()

    watched_import.__wrapped__ = replaced.original  # type: ignore[attr-defined]
    return watched_import


def _wrap_gcd_import(replaced: Patch) -> Any:
    def watched_gcd_import(name: str, package: str | None = None, level: int = 0) -> Any:
        global _import_depth
        callbacks = _by_event.get(ModuleImported)
        if callbacks:
            _imported(callbacks, name, package, level, (), False)
        _import_depth += 1
        try:
            return replaced.original(name, package, level)
        except ModuleNotFoundError as exc:
            if ModuleNotFound in _by_event:
                caller = sys._getframe(1)
                if caller.f_globals.get("__name__") == "importlib" and caller.f_back:
                    caller = caller.f_back  # through importlib.import_module
                _not_found(exc.name, caller.f_globals)
            raise
        finally:
            _import_depth -= 1
            if not _import_depth:
                _done()

    watched_gcd_import.__wrapped__ = replaced.original  # type: ignore[attr-defined]
    return watched_gcd_import


def _wrap_find_spec(replaced: Patch) -> Any:
    def watched_find_spec(name: str, package: str | None = None) -> Any:
        try:
            spec = replaced.original(name, package)
        except ModuleNotFoundError as exc:  # a parent package is missing
            _not_found(exc.name, sys._getframe(1).f_globals)
            raise
        if spec is None and ModuleNotFound in _by_event:
            full = None
            with contextlib.suppress(ImportError, ValueError, TypeError):
                full = importlib.util.resolve_name(name, package)
            _not_found(full, sys._getframe(1).f_globals)
        return spec

    return functools.wraps(replaced.original)(watched_find_spec)


def _imported(
    callbacks: tuple[Callable[..., None], ...],
    name: str,
    package: str | None,
    level: int,
    fromlist: Any,
    statement: bool,
) -> None:
    """Hand each of ``callbacks`` the :class:`ModuleImported` of one import."""
    # Made as the named tuple's own __new__ makes it, without calling that Python
    # function: the helper then costs an import no more calls than building it inline.
    event = tuple.__new__(ModuleImported, (name, package, level, fromlist, statement))
    for callback in callbacks:
        callback(event)


def _not_found(name: Any, importer: Any) -> None:
    """Publish that the module ``name`` was not found, for the code whose module's
    globals are ``importer`` (a name that is not a string tells nothing)."""
    callbacks = _by_event.get(ModuleNotFound)
    if not callbacks or not isinstance(name, str):
        return
    file = module = None
    if isinstance(importer, dict):
        file, module = importer.get("__file__"), importer.get("__name__")
    event = ModuleNotFound(
        name,
        file if isinstance(file, str) else None,
        module if isinstance(module, str) else None,
    )
    for callback in callbacks:
        callback(event)


def _submodules_not_found(module: Any, fromlist: Any, importer: Any) -> None:
    """``from package import name`` where the package has no ``name``: the import system
    did not find a submodule of that name either (it swallows that
    ``ModuleNotFoundError`` and the statement fails with an ``ImportError``). Read from
    the package's namespace, so no module ``__getattr__`` runs."""
    namespace = getattr(module, "__dict__", None)
    if not isinstance(namespace, dict) or "__path__" not in namespace:
        return  # a plain module has no submodules
    if "__getattr__" in namespace:
        return  # its names are made on demand: not known to be missing
    for item in fromlist:
        if isinstance(item, str) and item != "*" and item not in namespace:
            _not_found(f"{module.__name__}.{item}", importer)


def _done() -> None:
    callbacks = _by_event.get(ImportsDone)
    if callbacks:
        for callback in callbacks:
            callback(_DONE)
