"""Warnings are never lost: a page that warned is read (or written) again in the next build.

Sphinx warns about a document while it reads it, checks consistency, resolves its
references or writes it; a build that skips the document would skip its warnings, and a
``-W`` build that failed would pass the next time with nothing changed. So every warning
of the build is attributed to a document and phase, and the next build reads again each
document that warned while read and writes again each page that warned while written:
their warnings come back, word for word, from Sphinx itself.

The design, in full: the caching guide's *Design* section.
"""

from __future__ import annotations

import logging
import os
import re
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util.logging import NAMESPACE

from docsaccel.incremental.sphinxext.state_build import IncrementalBuild, current
from docsaccel.sphinx_logs import handled_once

__all__ = [
    "assign_chunk",
    "docname_of",
    "install",
    "note_document",
    "other_instances",
    "read_in",
    "uninstall",
]

#: The process that attributed a record (Sphinx hands a postponed warning to the handlers
#: again when it flushes them; a parallel worker's come again in the main process).
_SEEN = "_docsaccel_attributed"
#: ``(phase, docname)`` of the process that made a record, when it made it.
_PLACE = "_docsaccel_place"
#: How Sphinx's domains name the other document of a duplicate (a docname or a path).
_OTHER_INSTANCE = re.compile(r"other instance in ([^,]+)")


class _Attributor(logging.Handler):
    def __init__(self, app: Sphinx) -> None:
        super().__init__(logging.WARNING)
        self.app = app
        #: The main process: a parallel worker only notes where its warnings were made.
        self.pid = os.getpid()
        #: Warnings of a parallel reader without a document, until its chunk is merged.
        self.unplaced: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if not handled_once(record, _SEEN):
            return
        pid = os.getpid()
        build = current(self.app)
        if build is None:
            return
        phase, doing = _place(record, build, pid)
        if pid != self.pid:
            return
        located = docname_of(self.app, getattr(record, "location", None))
        docnames = {d for d in (located, doing) if d}
        if not docnames:
            if phase == "read" and self.app.parallel > 1:
                self.unplaced.append(record.getMessage())
            elif phase == "write" and self.app.parallel > 1:
                build.writing.warned.add("*")
            return
        warned = build.writing.warned if phase == "write" else build.reading.warned
        warned.update(docnames)
        # A duplicate (an object, a label, a citation) warns in the document read second
        # and names the first: read alone, the second finds no other instance (the first's
        # entry was replaced by its own) and says nothing. Both are read again.
        warned.update(other_instances(self.app, record))


def other_instances(app: Sphinx, record: logging.LogRecord) -> list[str]:
    """The documents a duplicate's warning names as holding the other instance."""
    named = (docname_of(app, o.strip()) for o in _OTHER_INSTANCE.findall(record.getMessage()))
    return [d for d in named if d is not None]


def read_in(record: logging.LogRecord) -> str | None:
    """The document whose reading made ``record`` (as the handler noted it), else None."""
    place = getattr(record, _PLACE, None)
    return place[1] if place and place[0] == "read" else None


def docname_of(app: Sphinx, location: Any) -> str | None:
    """The document ``location`` names; ``None`` for a file that is none (a module's
    docstring, an included file)."""
    env = getattr(app, "env", None)
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
        docname = env.path2doc(os.path.abspath(path))
    except (ValueError, OSError):
        return None
    # An included file under the source folder has a docname and is no document.
    return docname if docname in env.all_docs or docname in env.found_docs else None


def _place(record: logging.LogRecord, build: IncrementalBuild, pid: int) -> tuple[str, Any]:
    """``(phase, docname)`` where ``record`` was made: noted on it by the process that
    made it (a parallel worker's, handed to the main process); no document for one a
    worker made outside any document."""
    place = getattr(record, _PLACE, None)
    if place is None:
        made_here = getattr(record, "process", None) in (None, pid)
        place = (build.phase, build.current_doc if made_here else None)
        setattr(record, _PLACE, place)
    return place


def note_document(app: Sphinx, build: IncrementalBuild, phase: str, docname: str) -> None:
    """From now on this process reads or writes ``docname``: its warnings are that
    document's. In a parallel worker (whose warnings Sphinx collects and hands to the main
    process) the handler is put back for it to note the document on each warning."""
    build.phase, build.current_doc = phase, docname
    handler = getattr(app, "_docsaccel_warnings", None)
    if handler is not None and os.getpid() != handler.pid:
        logger = logging.getLogger(NAMESPACE)
        if handler not in logger.handlers:
            logger.addHandler(handler)


def _note_resolving(app: Sphinx) -> type[SphinxPostTransform]:
    class NoteResolving(SphinxPostTransform):
        """The document whose references are about to be resolved is being written:
        Sphinx's warnings about them (and its toctrees') come before ``doctree-resolved``."""

        default_priority = 0  # before every other post-transform

        def run(self, **kwargs: Any) -> None:
            build = current(app)
            if build is not None and build.phase == "write":
                build.current_doc = self.env.docname

    return NoteResolving


def _watch_writing(app: Sphinx) -> None:
    """``builder-inited``: the builder notes each document it writes (in a parallel
    writer too), before its writer's warnings."""
    builder = app.builder
    write_doc = builder.write_doc

    def noted_write_doc(docname: str, doctree: Any) -> None:
        build = current(app)
        if build is not None:
            note_document(app, build, "write", docname)
        write_doc(docname, doctree)

    builder.write_doc = noted_write_doc  # type: ignore[method-assign]


def install(app: Sphinx) -> None:
    handler = _Attributor(app)
    logging.getLogger(NAMESPACE).addHandler(handler)
    app._docsaccel_warnings = handler  # type: ignore[attr-defined]
    app.add_post_transform(_note_resolving(app))
    app.connect("builder-inited", _watch_writing)


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
    build.reading.warned.update(docnames)
