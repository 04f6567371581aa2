"""The report page's source file: how docsaccel marks it, notes it, and takes it away.

The page (``docsaccel_report_page``) is a ``.rst`` file docsaccel writes into the source
folder; Sphinx reads it like any other. Left there once the setting is off (or names
another page), it would be read and published again by every later build. So:

- every page docsaccel writes carries :data:`GENERATED_MARKER`, and only a file that
  carries it (:func:`is_generated`) is ever replaced or removed: a file of the project
  with the same name never is;
- where it wrote the page is noted in Sphinx's doctree folder (:func:`note_page`);
- each build, before Sphinx looks for its sources, removes the pages it wrote that the
  settings no longer ask for (:func:`remove_unwanted_pages`): the noted one, and the
  documented name ``budget_report`` (the note is gone after a clean of the build folder),
  with the HTML an earlier build made of them, which Sphinx itself never removes;
- a build that ends without finishing finds the pages an earlier build published in its
  output folder (:func:`published_pages`; restored with Sphinx's state, or left there),
  so none of them keeps showing that build's verdict (:func:`.report_page.show_unfinished`).

Kept apart from :mod:`.report_page` so that a build without the page, which runs the
removal, does not import the report views.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

from sphinx.util import logging

__all__ = [
    "GENERATED_MARKER",
    "TITLE",
    "is_generated",
    "note_page",
    "published_pages",
    "remove_unwanted_pages",
]

logger = logging.getLogger(__name__)

TITLE = "Build budget report"
#: A reST comment in every page the plugin writes: the files it may replace or remove.
GENERATED_MARKER = (
    ".. docsaccel-generated-page: written by docsaccel_report_page at every build; edits are lost"
)
#: How pages written before :data:`GENERATED_MARKER` existed begin: replacing one of them
#: is an upgrade, not an overwrite of the project's file.
_LEGACY_HEAD = (
    f":orphan:\n\n{TITLE}\n{'=' * len(TITLE)}\n\n"
    "What each executed example of this build cost, against its budget."
)
#: The docname the guides give the page: looked at even when no note says it was written.
DOCUMENTED_DOCNAME = "budget_report"
#: The note, in Sphinx's doctree folder: the page's path, relative to the source folder.
_NOTE = "docsaccel-report-page.txt"


def is_generated(path: Path) -> bool:
    """Whether ``path`` is a page docsaccel wrote (it carries the marker)."""
    try:
        with path.open(encoding="utf-8") as stream:
            head = stream.read(4096)
    except (OSError, UnicodeDecodeError):
        return False
    return GENERATED_MARKER in head or head.startswith(_LEGACY_HEAD)


def _note_path(app: Any) -> Path:
    return _note_in(Path(app.doctreedir))


def _note_in(doctreedir: Path) -> Path:
    return doctreedir / _NOTE


def note_page(app: Any, page: Path) -> None:
    """Note that this build wrote ``page`` (inside the source folder)."""
    note = _note_path(app)
    relative = page.resolve().relative_to(Path(app.srcdir).resolve()).as_posix()
    with contextlib.suppress(OSError):
        if not note.is_file() or note.read_text(encoding="utf-8") != relative:
            note.parent.mkdir(parents=True, exist_ok=True)
            note.write_text(relative, encoding="utf-8")


def _noted(app: Any) -> str | None:
    return _noted_in(Path(app.doctreedir))


def _noted_in(doctreedir: Path) -> str | None:
    try:
        text = _note_in(doctreedir).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text or None


def remove_unwanted_pages(app: Any, keep: Path | None) -> None:
    """Remove the pages docsaccel wrote other than ``keep`` (the page this build writes;
    None: no page), and their HTML; forget the note when no page stays."""
    srcdir = Path(app.srcdir).resolve()
    noted = _noted(app)
    candidates = {srcdir / f"{DOCUMENTED_DOCNAME}.rst"}
    if noted is not None:
        candidates.add((srcdir / noted).resolve())
    for page in sorted(candidates):
        if page == keep or srcdir not in page.parents or not is_generated(page):
            continue
        page.unlink()
        docname = page.relative_to(srcdir).with_suffix("").as_posix()
        _remove_output(app, docname)
        logger.info(f"docsaccel: removed {page}, the report page an earlier build wrote")
    if keep is None and noted is not None:
        with contextlib.suppress(OSError):
            _note_path(app).unlink()


def _remove_output(app: Any, docname: str) -> None:
    """Remove what an earlier build made of ``docname`` in the output folder: Sphinx
    drops a removed source from its environment, but leaves its page published."""
    builder = getattr(app, "builder", None)
    get_outfilename = getattr(builder, "get_outfilename", None)
    if get_outfilename is None:
        return  # a builder without one page per document (latex, ...): nothing of it
    with contextlib.suppress(OSError, ValueError):
        os.remove(get_outfilename(docname))


def published_pages(
    srcdir: Path, outdir: Path, doctreedir: Path | None, wanted: str | None
) -> list[tuple[Path, Path]]:
    """The report pages that may be published in ``outdir``, each as its source and its
    HTML (``<outdir>/<docname>.html``, as the plugin writes it): the page the settings ask
    for (``wanted``, a document name), the one the note in ``doctreedir`` names, and the
    documented ``budget_report``. Candidates only: what marks a page as docsaccel's is
    for the caller to check (:data:`GENERATED_MARKER` in the source, the report view's
    markers in the HTML), and a name outside the source folder is left out."""
    srcdir = srcdir.resolve()
    names = [wanted, _noted_in(doctreedir) if doctreedir else None, DOCUMENTED_DOCNAME]
    pages: dict[Path, Path] = {}
    for name in names:
        if not name:
            continue
        source = (srcdir / (name if name.endswith(".rst") else f"{name}.rst")).resolve()
        if srcdir not in source.parents:
            continue
        docname = source.relative_to(srcdir).with_suffix("").as_posix()
        pages.setdefault(source, Path(outdir, f"{docname}.html"))
    return list(pages.items())
