"""Stops of a Sphinx build whose message docsaccel has already logged: one line, status 2.

A bad ``docsaccel_*`` value, ``DOCSACCEL_*`` variable or budget file stops the build
before any example runs; an example over its budget in fail mode, or over the memory
ceiling, fails it at its end. Raising a Sphinx error is not enough for one line: Sphinx
9's ``sphinx-build`` prints every exception out of a build as a crash report (versions,
extensions, a traceback saved to a file, "please report this"), and Sphinx 7 and 8 print a
``SphinxError`` as its category on a line of its own. The one exception every release's
handler leaves unprinted is :class:`bdb.BdbQuit` (the user quit the debugger):
``build_main`` then returns 2 without a word.

So :func:`reported` logs the message through Sphinx's logging (one ``ERROR:`` line in the
warning stream, so ``-w`` and ``-Q`` apply) and returns the exception to raise: a
:class:`ReportedStop`, also a ``SphinxError`` subclass (Sphinx's event manager passes it
on unwrapped, and code using the Sphinx API catches it as the Sphinx error it is), so
``sphinx-build`` adds nothing and exits with status 2. :func:`config_error` is the
configuration error's case: an event handler raises ``config_error(...) from None``
with a message naming the setting and its value.
"""

from __future__ import annotations

import bdb
from typing import TypeVar

from sphinx.errors import ConfigError
from sphinx.util import logging

__all__ = ["DocsaccelConfigError", "ReportedStop", "config_error", "reported"]

logger = logging.getLogger(__name__)

_Stop = TypeVar("_Stop", bound="ReportedStop")


class ReportedStop(bdb.BdbQuit):
    """A stop of the build whose message is already logged: ``sphinx-build`` prints
    nothing more and exits with status 2. Subclasses are Sphinx errors too."""


class DocsaccelConfigError(ConfigError, ReportedStop):
    """A configuration error whose message is already logged."""


def reported(kind: type[_Stop], message: str) -> _Stop:
    """Log ``message`` (one line naming what failed) as Sphinx's error and return the
    ``kind`` of stop to raise."""
    logger.error(message)
    return kind(message)


def config_error(message: str) -> DocsaccelConfigError:
    """Log ``message`` (one line naming the setting and its value) as Sphinx's error and
    return the exception that stops the build."""
    return reported(DocsaccelConfigError, message)
