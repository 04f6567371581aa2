"""docsaccel's configuration errors, printed by ``sphinx-build`` as one line, status 2.

A bad ``docsaccel_*`` value, ``DOCSACCEL_*`` variable or budget file stops the build
before any example runs. Raising Sphinx's :class:`~sphinx.errors.ConfigError` is not
enough for one line: Sphinx 9's ``sphinx-build`` prints every exception out of a build as
a crash report (versions, extensions, a traceback saved to a file, "please report this"),
and Sphinx 7 and 8 print a ``SphinxError`` as its category on a line of its own. The one
exception every release's handler leaves unprinted is :class:`bdb.BdbQuit` (the user
quit the debugger): ``build_main`` then returns 2 without a word. So :func:`config_error`
logs the message through Sphinx's logging (one ``ERROR:`` line in the warning stream, so
``-w`` and ``-Q`` apply) and returns a :class:`DocsaccelConfigError` to raise: a
``ConfigError`` (Sphinx's event manager passes it on unwrapped, and code using the Sphinx
API catches it as any configuration error) that is also a ``BdbQuit``, so ``sphinx-build``
adds nothing and exits with status 2.

An event handler raises ``config_error(...) from None`` with a message naming the
setting and its value.
"""

from __future__ import annotations

import bdb

from sphinx.errors import ConfigError
from sphinx.util import logging

__all__ = ["DocsaccelConfigError", "config_error"]

logger = logging.getLogger(__name__)


class DocsaccelConfigError(ConfigError, bdb.BdbQuit):
    """A configuration error whose message is already logged: ``sphinx-build`` prints
    nothing more and exits with status 2."""


def config_error(message: str) -> DocsaccelConfigError:
    """Log ``message`` (one line naming the setting and its value) as Sphinx's error and
    return the exception that stops the build."""
    logger.error(message)
    return DocsaccelConfigError(message)
