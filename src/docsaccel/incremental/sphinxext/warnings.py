"""Warnings are never lost: a page that warned is read (or written) again in the next build.

Sphinx warns about a document while it reads it, checks consistency, resolves its
references or writes it; a build that skips the document would skip its warnings, and a
``-W`` build that failed would pass the next time with nothing changed. So every warning
of the build is attributed to a document and phase, and the next build reads again each
document that warned while read and writes again each page that warned while written:
their warnings come back, word for word, from Sphinx itself.

A warning is the document's whose location it names (a docname, or its source file);
without one, the document being read or written in that process. Warnings of a parallel
reader arrive in the main process just before its documents are merged
(:func:`assign_chunk`): one without a location counts for every document of that reader.
One from a parallel writer without a location counts for every page written. A
duplicate's warning ("other instance in ...") counts for the other document too.

Example (what ``setup`` installs)::

    install(app)      # a handler on Sphinx's logger, for this build
"""

from __future__ import annotations

import logging
import os
import re
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.logging import NAMESPACE

from docsaccel.incremental.sphinxext.build import IncrementalBuild, current

__all__ = ["assign_chunk", "install", "uninstall"]

_SEEN = "_docsaccel_attributed"
#: How Sphinx's domains name the other document of a duplicate (a docname or a path).
_OTHER_INSTANCE = re.compile(r"other instance in ([^,]+)")


class _Attributor(logging.Handler):
    def __init__(self, app: Sphinx) -> None:
        super().__init__(logging.WARNING)
        self.app = app
        #: Warnings of a parallel reader without a document, until its chunk is merged.
        self.unplaced: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        # Sphinx hands a postponed warning to the handlers again when it flushes them.
        if getattr(record, _SEEN, False):
            return
        setattr(record, _SEEN, True)
        build = current(self.app)
        if build is None:
            return
        docname = self._docname(getattr(record, "location", None))
        phase = build.phase
        if docname is None:
            docname = build.current_doc
        if docname is None:
            if phase == "read" and self.app.parallel > 1:
                self.unplaced.append(record.getMessage())
            elif phase == "write" and self.app.parallel > 1:
                build.warned_write.add("*")
            return
        warned = build.warned_write if phase == "write" else build.warned_read
        warned.add(docname)
        # A duplicate (an object, a label, a citation) warns in the document read second
        # and names the first: read alone, the second finds no other instance (the first's
        # entry was replaced by its own) and says nothing. Both are read again.
        for other in _OTHER_INSTANCE.findall(record.getMessage()):
            named = self._docname(other.strip())
            if named is not None:
                warned.add(named)

    def _docname(self, location: Any) -> str | None:
        env = getattr(self.app, "env", None)
        if env is None or location is None:
            return None
        if isinstance(location, tuple):
            location = location[0]
        if isinstance(location, nodes.Node):
            location = location.source or ""
        if not isinstance(location, str) or not location:
            return None
        if location in env.all_docs or location in env.found_docs:
            return location
        path = location.rsplit(":", 1)[0] if ":" in location[2:] else location
        # "<file>:docstring of pkg.mean:3" names the file of a docstring, no document.
        path = path.split(":docstring of ", 1)[0]
        try:
            return env.path2doc(os.path.abspath(path))
        except (ValueError, OSError):
            return None


def install(app: Sphinx) -> None:
    handler = _Attributor(app)
    logging.getLogger(NAMESPACE).addHandler(handler)
    app._docsaccel_warnings = handler  # type: ignore[attr-defined]


def uninstall(app: Sphinx) -> None:
    handler = getattr(app, "_docsaccel_warnings", None)
    if handler is not None:
        logging.getLogger(NAMESPACE).removeHandler(handler)
        app._docsaccel_warnings = None  # type: ignore[attr-defined]


def assign_chunk(app: Sphinx, build: IncrementalBuild, docnames: Any) -> None:
    """The warnings without a document a parallel reader sent count for its documents."""
    handler = getattr(app, "_docsaccel_warnings", None)
    if handler is None or not handler.unplaced:
        return
    handler.unplaced.clear()
    build.warned_read.update(docnames)
