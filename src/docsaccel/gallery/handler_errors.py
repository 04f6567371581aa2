"""Which event handler stopped the build, and with what, for the report of a build that
ended before its examples ran, or while the galleries were generated.

Sphinx prints a handler's exception (a crash report, or sphinx-gallery's one line) and
ends the build with status 2; docsaccel's report, written at the process's end, must say
the true cause, not guess it. Every handler of an event that is not docsaccel's is
wrapped to note, once, the first exception it lets out, which it raises on unchanged;
but a Sphinx error sphinx-gallery raises itself (an example without a docstring, a
missing examples folder) is a message to the user, whose crash report and traceback
would show only sphinx-gallery's insides: it is logged as one ``ERROR`` line instead.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any

from sphinx.errors import SphinxError

from docsaccel.intercept import Patch
from docsaccel.sphinx_events import wrap_handlers
from docsaccel.stops import HandlerStop, ReportedStop, reported

#: At most this many characters of an exception's first line go into the report.
_LONGEST = 300


def note_errors(app: Any, event: str, note: Callable[[str, bool], str]) -> list[Patch]:
    """Wrap each handler of ``event`` that is not docsaccel's (its own stops say why they
    stop) so that an exception it raises is passed to ``note`` in one line
    (:func:`raised_by`) before it goes on to Sphinx, with whether it is logged as the
    build's one ``ERROR`` line (:func:`is_message`: then it goes on as a
    :class:`~docsaccel.stops.HandlerStop`, and Sphinx prints no traceback); ``note``
    returns that line (what the build stopped before or during, and the error). The
    wrappers are undone once the event has been emitted
    (:func:`.sphinx_events.wrap_handlers`)."""

    def wrap(handler: Any) -> Callable[[Patch], Any] | None:
        if _module(handler).split(".")[0] == "docsaccel":
            return None
        return lambda applied: _noting(app, event, applied, note)

    return wrap_handlers(app, event, wrap)


def _noting(app: Any, event: str, applied: Patch, note: Callable[[str, bool], str]) -> Any:
    # functools.wraps keeps the handler's name and module, which Sphinx's message names.
    @functools.wraps(applied.original)
    def noting(*args: Any, **kwargs: Any) -> Any:
        handler = applied.original
        if not applied.active:
            return handler(*args, **kwargs)
        try:
            return handler(*args, **kwargs)
        except ReportedStop:
            raise  # its ERROR line said why
        except Exception as exc:
            raised = raised_by(app, event, handler, exc)
            if not is_message(handler, exc):
                note(raised, False)
                raise
            raise reported(HandlerStop, note(raised, True)) from exc

    return noting


def raised_by(app: Any, event: str, handler: Callable[..., Any], exc: BaseException) -> str:
    """``handler`` raised ``exc``, in one line naming who and the exception's first line.

    >>> def fail(app): ...
    >>> raised_by(None, "builder-inited", fail, ValueError("no data\\nmore")).split(" raised ")
    ['the builder-inited handler fail of docsaccel.gallery.handler_errors', 'ValueError: no data']
    """
    module = _module(handler)
    if module.split(".")[0] == "sphinx_gallery":
        who = "sphinx-gallery"
    else:
        name = getattr(handler, "__qualname__", None) or repr(handler)
        who = f"the {event} handler {name} {_where(app, handler, module)}"
    lines = str(exc).strip().splitlines()
    first = lines[0] if lines else ""
    said = f": {first[:_LONGEST]}" + ("..." if len(first) > _LONGEST else "") if first else ""
    return f"{who} raised {type(exc).__name__}{said}"


def is_message(handler: Any, exc: BaseException) -> bool:
    """Whether ``exc`` is a Sphinx error sphinx-gallery's ``handler`` raised itself, not
    one wrapping another exception: its message says all, its traceback nothing.

    >>> is_message(None, SphinxError("x"))
    False
    """
    return (
        _module(handler).split(".")[0] == "sphinx_gallery"
        and isinstance(exc, SphinxError)
        and getattr(exc, "orig_exc", None) is None
    )


def _module(handler: Any) -> str:
    return getattr(handler, "__module__", None) or ""


def _where(app: Any, handler: Any, module: str) -> str:
    """Of which module, or in which file for a handler of ``conf.py`` (Sphinx runs it
    without a module name)."""
    if module and module != "builtins":
        return f"of {module}"
    code = getattr(handler, "__code__", None)
    if code is None:
        return "of an unnamed module"
    confdir = getattr(app, "confdir", None)
    filename = code.co_filename
    if confdir and os.path.dirname(os.path.abspath(filename)) == os.path.abspath(confdir):
        filename = os.path.basename(filename)
    return f"in {filename}"
