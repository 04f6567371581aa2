"""The Sphinx state's part of one build: its setting, its context, what it decided and why.

One :class:`IncrementalBuild` per Sphinx application (``app._docsaccel_incremental``),
made at ``config-inited`` when the state is on; the other handlers find it with
:func:`current`. The records of the documents live in the environment
(:data:`PAGES_ATTR`, :data:`TABLES_ATTR`), so parallel readers hand them back with it; the
facts of the write side and the warnings live in :data:`MARKER` beside the doctrees,
written when a build has finished.
"""

from __future__ import annotations

import os
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docsaccel.formats import Format
from docsaccel.incremental.last_build import LastBuild
from docsaccel.incremental.sphinxext import MARKER, PAGES_ATTR

if TYPE_CHECKING:
    # Types only: every build asks this module for PAGES_ATTR (at env-purge-doc), and
    # most builds keep no state and need none of these modules.
    from docsaccel.cache.deps import Project
    from docsaccel.incremental.pages import Place
    from docsaccel.incremental.sphinxext.untrusted_output import FinishedBuild
    from docsaccel.incremental.state_store import Known, StateStore

__all__ = [
    "MARKER",
    "MARKER_FORMAT",
    "PAGES_ATTR",
    "TABLES_ATTR",
    "IncrementalBuild",
    "Reading",
    "Restored",
    "Writing",
    "current",
    "pages_of",
]

#: The environment's attribute holding the digests the page records were checked against
#: (the records themselves: :data:`PAGES_ATTR`).
TABLES_ATTR = "docsaccel_tables"
MARKER_FORMAT = Format("docsaccel.sphinx-marker", 1, "Sphinx state marker")


@dataclass
class Restored:
    """What the build started from: the state restored or kept, where it came from, and
    why there is none. Decided at ``config-inited`` (:mod:`.restore`); the later phases
    ask it whether a file is still as that state left it (:meth:`left_as_it_was`)."""

    #: Where the states are kept, and the project root the paths are relative to.
    store: StateStore
    place: Place
    #: ``"cache"`` (restored from the cache), ``"local"`` (the last build in these folders)
    #: or ``""`` (no state: every document is read).
    origin: str = ""
    #: Why no state was used, for the log and the report.
    full_reason: str | None = None
    #: The record the build that made the state left (see :data:`MARKER`); empty when
    #: there is none.
    previous: LastBuild = field(default_factory=LastBuild)
    #: The root the restored state was made in, when it is another (a moved checkout),
    #: the documents whose text showed a path under it (read again), and those whose
    #: page did (written again).
    moved_from: str | None = None
    moved_texts: set[str] = field(default_factory=set)
    moved_pages: set[str] = field(default_factory=set)
    #: Files a restore wrote, with their stat and digest (not hashed again when saved).
    files: Known = field(default_factory=dict)
    #: Set when a state was restored or kept, so build-finished may save a new one.
    usable: bool = True
    #: When this build began (``time.time_ns()`` at config-inited).
    started_ns: int = field(default_factory=time.time_ns)
    #: The last build that finished in these folders, of any context (``None``: none
    #: did), which tells the files builds wrote there from a user's.
    finished: FinishedBuild | None = None

    def left_as_it_was(self, path: str | os.PathLike[str]) -> bool:
        """Whether a file of the doctree or output folder is as the state left it, not
        written by this build: restored and untouched since (a state from the cache), or
        not modified since this build began (the last build's, in these folders)."""
        if self.origin == "local":
            try:
                return os.stat(path).st_mtime_ns < self.started_ns
            except OSError:
                return False
        from docsaccel.incremental.state_store import untouched

        return untouched(path, self.files)


@dataclass
class Reading:
    """Which documents this build reads again and why, and what the pages took from them
    before they were read (compared once they are, see :mod:`.reading`)."""

    #: The documents this build reads (Sphinx's list, as handed to the handlers).
    docnames: list[str] = field(default_factory=list)
    #: ``{docname: reasons}`` of the documents read again.
    reasons: dict[str, list[str]] = field(default_factory=dict)
    #: When the documents began to be read (``time.time_ns()``), 0 before.
    started_ns: int = 0
    #: The checker of this build's records (its digests of the files as they are now).
    checker: Any = None
    #: What other pages took from the documents read again, before they were read.
    exports_before: dict[str, Any] = field(default_factory=dict)
    navigation_before: dict[str, str] = field(default_factory=dict)
    domains_before: dict[str, str | None] = field(default_factory=dict)
    numbers_before: str = ""
    #: viewcode's module links before the documents were read (:func:`.viewcode.links`).
    viewcode_before: dict[str, Any] | None = None
    #: The intersphinx inventories' digest when the pages to write were decided.
    intersphinx: str | None = None
    #: Documents that warned while read.
    warned: set[str] = field(default_factory=set)


@dataclass
class Writing:
    """Which pages this build writes and why, and what writing them did (the facts
    build-finished keeps for the next build, see :mod:`.writing`)."""

    #: ``{docname: reason}`` of the pages written although not read again.
    reasons: dict[str, str] = field(default_factory=dict)
    #: A reason that covers every page (the navigation, the theme).
    every_page: str | None = None
    #: The pages written in this build.
    written: set[str] = field(default_factory=set)
    #: The pages written this build that are no document (indices, search, extensions').
    other_pages: set[str] = field(default_factory=set)
    #: ``{docname: classes}`` of the placeholders filled when each page was written.
    filled_late: dict[str, list[str]] = field(default_factory=dict)
    #: Documents that warned while their page was written.
    warned: set[str] = field(default_factory=set)
    #: What the write side compares with the previous build's (see :mod:`.writing`).
    context: dict[str, Any] = field(default_factory=dict)
    #: What the builder's copies of static and extra files did this build
    #: (:func:`.sphinx_compat.watch_site_copies`; ``None``: not an HTML build).
    site_copies: Any = None
    #: ``{file the pages link as CSS or JavaScript: whether it is there for them}``, and
    #: the undo of the checksum that answers so (:mod:`.assets`).
    assets: dict[str, bool] | None = None
    unwatch_assets: Any = None
    #: ``env.files_to_rebuild`` while pages are written (see :mod:`.writing`).
    files_to_rebuild: dict[str, set[str]] | None = None


@dataclass
class IncrementalBuild:
    """The state of one build (main process; parallel readers get a copy): which build it
    is, and what each phase decided (:class:`Restored`, :class:`Reading`, :class:`Writing`)."""

    project: Project
    context: dict[str, Any]
    key: str
    builder: str
    #: Whether the builder's pages are restored and written by content (HTML builders).
    pages: bool
    restored: Restored
    doctreedir: Path = Path()
    outdir: Path = Path()
    #: Marks the page records made in this build.
    run: str = field(default_factory=lambda: uuid.uuid4().hex)
    #: The document being read or written in this process, for warnings without a place.
    current_doc: str | None = None
    phase: str = ""
    reading: Reading = field(default_factory=Reading)
    writing: Writing = field(default_factory=Writing)


def current(app: Any) -> IncrementalBuild | None:
    return getattr(app, "_docsaccel_incremental", None)


def pages_of(env: Any) -> dict[str, dict[str, Any]]:
    """The page records of ``env`` (created empty when it has none)."""
    records = getattr(env, PAGES_ATTR, None)
    if not isinstance(records, dict):
        records = {}
        setattr(env, PAGES_ATTR, records)
    return records
