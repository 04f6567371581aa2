"""Sphinx's event handlers as docsaccel reads and wraps them: the one use of Sphinx's
``EventManager.listeners`` (an internal), for every part.

A handler connected to an event is a :class:`HandlerSlot`, whose ``handler`` is replaced
through :func:`docsaccel.intercept.patch` like any other function docsaccel intercepts,
and put back by :func:`wrap_handlers` once the event has been emitted.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from typing import Any

from docsaccel.intercept import Patch, patch

__all__ = ["HandlerSlot", "connected_handlers", "handler_slots", "wrap_handlers"]

#: The priority of the handler that undoes :func:`wrap_handlers`' patches: after every
#: other handler of the event (Sphinx runs them by priority, lowest first; 500 is the
#: default).
_LAST = 10_000


def _listeners(app: Any) -> dict[str, list[Any]]:
    """``{event: [EventListener(id, handler, priority)]}`` of the build (``{}`` when the
    Sphinx in use keeps them otherwise)."""
    listeners = getattr(getattr(app, "events", None), "listeners", None)
    return listeners if isinstance(listeners, dict) else {}


def connected_handlers(app: Any) -> list[Any]:
    """Every handler connected to an event of the build (``[]`` when they cannot be told)."""
    return [getattr(item, "handler", None) for items in _listeners(app).values() for item in items]


class HandlerSlot:
    """Where one handler is connected to one event, with the handler as an attribute (so
    :class:`~docsaccel.intercept.Patch` can replace it and undo it). It holds the event
    manager weakly: a patch left in place never keeps a finished build alive."""

    def __init__(self, app: Any, event: str, listener_id: int) -> None:
        self._events = weakref.ref(app.events)
        self.event, self.listener_id = event, listener_id

    def _where(self) -> tuple[list[Any], int] | None:
        events = self._events()
        items = getattr(events, "listeners", {}).get(self.event, []) if events else []
        for index, item in enumerate(items):
            if item.id == self.listener_id:
                return items, index
        return None

    @property
    def handler(self) -> Any:
        """The handler connected there now (``None`` once it is gone)."""
        where = self._where()
        return where[0][where[1]].handler if where else None

    @handler.setter
    def handler(self, handler: Any) -> None:
        # Sphinx's EventListener is a named tuple: replaced whole, at its priority.
        where = self._where()
        if where is not None:
            items, index = where
            items[index] = items[index]._replace(handler=handler)

    def __eq__(self, other: object) -> bool:
        # Two slots of one listener are one place (Patch chains patches by owner).
        return isinstance(other, HandlerSlot) and (
            (self._events(), self.event, self.listener_id)
            == (other._events(), other.event, other.listener_id)
        )

    def __hash__(self) -> int:
        return hash((self.event, self.listener_id))


def handler_slots(app: Any, event: str) -> list[HandlerSlot]:
    """A slot for each handler connected to ``event``, in the order they were connected."""
    return [HandlerSlot(app, event, item.id) for item in _listeners(app).get(event, [])]


def wrap_handlers(
    app: Any, event: str, wrap: Callable[[Any], Callable[[Patch], Any] | None]
) -> list[Patch]:
    """Replace each handler of ``event`` for which ``wrap(handler)`` gives a wrapper maker
    (see :class:`~docsaccel.intercept.Patch`; ``None``: leave it), until every handler of
    that event has run, or one of the replaced ones raised: a handler of docsaccel's, last
    of all, or the raising replacement undoes the patches. The patches, in the order of
    the handlers."""
    patches: list[Patch] = []

    def undo(*args: Any) -> None:
        for applied in reversed(patches):
            applied.undo()

    for slot in handler_slots(app, event):
        maker = wrap(slot.handler)
        if maker is not None:
            patches.append(patch(slot, "handler", _undone_on_raise(maker, undo)))
    if patches:
        app.connect(event, undo, priority=_LAST)
    return patches


def _undone_on_raise(
    maker: Callable[[Patch], Any], undo: Callable[[], None]
) -> Callable[[Patch], Any]:
    """``maker``'s replacement, undoing every patch of the event when it raises: Sphinx
    then runs no later handler of that event, docsaccel's undo included, and a patch left
    in place would keep the build's application alive for the life of the process."""

    def make(applied: Patch) -> Any:
        replacement = maker(applied)

        # functools.wraps keeps the handler's name and module, which Sphinx's message names.
        @functools.wraps(replacement)
        def undone_on_raise(*args: Any, **kwargs: Any) -> Any:
            try:
                return replacement(*args, **kwargs)
            except BaseException:
                undo()
                raise

        return undone_on_raise

    return make
