"""The one owner of everything docsaccel intercepts in a process.

Two kinds of interception reach the whole process, whoever runs there:

- **Audit events** (:func:`sys.addaudithook`): a file opened, a module imported, a
  program started, a folder listed. An audit hook can never be removed, so this module
  installs exactly one, the first time something listens, and hands each event to the
  :class:`Listener` objects registered for that event name. A listener is registered and
  removed (:meth:`Listener.close`, or a ``with`` block); the events of no listener cost a
  dictionary look-up. A listener's exception ends the audited call, as an exception
  from its own hook would (the listeners after it do not see that event): one that
  refuses an operation raises, one that must never get in the way catches its own.
- **Process-wide functions** replaced (``builtins.__import__``, the import system's
  ``_gcd_import`` and ``find_spec``, ``sys.exit``, ``os._exit``, ``os.exec*``): each
  replacement is a :class:`Patch`, written beside its undo. A replacement calls what it
  replaced through :attr:`Patch.original`, read at each call, so undoing a patch another
  one was stacked on later restores exactly what was there: the later patch then calls
  what the undone one had replaced.

Nothing else in docsaccel calls :func:`sys.addaudithook` or assigns those functions
(``tests/test_layout.py`` checks it). Importing this module changes nothing.

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

import sys
from collections.abc import Callable, Iterable
from typing import Any

from docsaccel.contract import fork_safe_lock

__all__ = ["Listener", "Patch", "listen", "patch"]

AuditCallback = Callable[[str, tuple[Any, ...]], None]

#: ``{event name: its listeners' callbacks, in the order they were registered}``. Replaced
#: whole, never changed in place: the hook reads it without a lock, from any thread.
_by_event: dict[str, tuple[AuditCallback, ...]] = {}
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
    """One subscription to some audit events, until :meth:`close` (or the end of its
    ``with`` block). Made by :func:`listen`."""

    def __init__(self, events: Iterable[str], callback: AuditCallback) -> None:
        self.events = frozenset(events)
        self.callback = callback

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
    listener = Listener(events, callback)
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
    table: dict[str, list[AuditCallback]] = {}
    for listener in _listeners:
        for event in listener.events:
            table.setdefault(event, []).append(listener.callback)
    _by_event = {event: tuple(callbacks) for event, callbacks in table.items()}


# --- Process-wide functions ---------------------------------------------------------------

_MISSING = object()

#: Every patch applied and not undone, oldest first.
_patches: list[Patch] = []


class Patch:
    """The replacement of ``owner.name`` (a process-wide function), beside its undo.

    ``wrap(patch)`` makes the replacement once; it calls what it replaced as
    ``patch.original(...)`` (looked up at each call, see the module doc). A replacement
    that may still be called after :meth:`undo` (a wrapper someone else stacked on it
    keeps it) only forwards to ``patch.original`` while :attr:`active` is false.
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
