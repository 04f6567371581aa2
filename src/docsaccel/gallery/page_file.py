"""The report page's source file: how docsaccel marks it, notes it, and takes it away.

The design, in full: the reports guide's *Design* section.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from sphinx.util import logging

from docsaccel import layout

__all__ = [
    "GENERATED_MARKER",
    "TITLE",
    "VIEW_BEGINS",
    "VIEW_ENDS",
    "is_generated",
    "note_page",
    "page_html",
    "published_pages",
    "remove_unwanted_pages",
    "withhold_source",
]

logger = logging.getLogger(__name__)

TITLE = "Build budget report"
#: A reST comment in every page the plugin writes: the files it may replace or remove.
GENERATED_MARKER = (
    ".. docsaccel-generated-page: written by docsaccel_report_page at every build; edits are lost"
)
#: Around the report's view in the page (and so in its HTML, which holds the raw markup
#: as written): the HTML of a report page docsaccel published carries them, and
#: :func:`.report_page.rewrite_report_page` replaces what lies between them.
VIEW_BEGINS = "<!-- docsaccel: report view -->"
VIEW_ENDS = "<!-- docsaccel: end of report view -->"
#: How pages written before :data:`GENERATED_MARKER` existed begin: replacing one of them
#: is an upgrade, not an overwrite of the project's file.
_LEGACY_HEAD = (
    f":orphan:\n\n{TITLE}\n{'=' * len(TITLE)}\n\n"
    "What each executed example of this build cost, against its budget."
)
#: The docname the guides give the page: looked at even when no note says it was written.
DOCUMENTED_DOCNAME = "budget_report"
#: The note, in Sphinx's doctree folder: the path of every page docsaccel wrote and has
#: not removed, relative to the source folder, one a line.
_NOTE = "docsaccel-report-page.txt"


def is_generated(path: Path) -> bool:
    """Whether ``path`` is a page docsaccel wrote (it carries the marker)."""
    try:
        with path.open(encoding="utf-8") as stream:
            head = stream.read(4096)
    except (OSError, UnicodeDecodeError):
        return False
    return GENERATED_MARKER in head or head.startswith(_LEGACY_HEAD)


def _note_in(doctreedir: Path) -> Path:
    return doctreedir / _NOTE


def _notes(doctreedir: Path | None, outdir: Path) -> list[Path]:
    """Where the pages are noted: the doctree folder's note, the output folder's."""
    doctree_note = [] if doctreedir is None else [_note_in(doctreedir)]
    return [*doctree_note, layout.report_pages_path(outdir)]


def _app_notes(app: Any) -> list[Path]:
    return _notes(Path(app.doctreedir), Path(app.outdir))


def note_page(app: Any, page: Path) -> None:
    """Note that this build wrote ``page`` (inside the source folder), beside the pages
    earlier builds wrote and no build has removed yet."""
    relative = page.resolve().relative_to(Path(app.srcdir).resolve()).as_posix()
    notes = _app_notes(app)
    for note in notes:
        noted = _noted_in(note)
        if relative not in noted:
            _write_note(note, [*noted, relative])


def _write_note(note: Path, pages: list[str]) -> None:
    """Note ``pages`` in ``note`` (none: remove it)."""
    with contextlib.suppress(OSError):
        if not pages:
            note.unlink(missing_ok=True)
            return
        note.parent.mkdir(parents=True, exist_ok=True)
        note.write_text("\n".join(pages) + "\n", encoding="utf-8")


def _noted_in(note: Path) -> list[str]:
    """The pages ``note`` names (a note of one page, as earlier versions wrote it in the
    doctree folder, is one line too)."""
    try:
        text = note.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    return list(dict.fromkeys(line.strip() for line in text.splitlines() if line.strip()))


def _noted(notes: list[Path]) -> list[str]:
    """Every page any of ``notes`` names."""
    return list(dict.fromkeys(name for note in notes for name in _noted_in(note)))


def withhold_source(outdir: Path, context: dict[str, Any]) -> None:
    """``html-page-context`` of the report page (``context``, its page's): publish no copy
    of its source (``_sources/``, the "Show source" link), and remove the one an earlier
    build published. The source is written before the examples run, saying the build has
    not finished, and Sphinx copies it before the build's end puts the final verdict into
    the page's HTML: the copy would keep saying the build did not finish."""
    sourcename = context.get("sourcename")
    if not sourcename:
        return  # html_copy_source off: no copy
    context["sourcename"] = ""
    copy = Path(outdir, "_sources", sourcename)
    try:
        copy.unlink(missing_ok=True)
    except OSError as exc:
        logger.warning(
            f"docsaccel: {copy}, the report page's source an earlier build published, could "
            f"not be removed ({exc})",
            type="docsaccel",
            subtype="report",
        )


def remove_unwanted_pages(app: Any, keep: Path | None) -> None:
    """Remove the pages docsaccel wrote other than ``keep`` (the page this build writes;
    None: no page), and their HTML; the note keeps ``keep`` and any page that could not
    be removed, so a later build removes it or marks it unfinished."""
    srcdir = Path(app.srcdir).resolve()
    notes = _app_notes(app)
    noted = _noted(notes)
    candidates = {srcdir / f"{DOCUMENTED_DOCNAME}.rst"}
    candidates.update((srcdir / name).resolve() for name in noted)
    left: list[Path] = []
    for page in sorted(candidates):
        if page == keep or srcdir not in page.parents:
            continue
        docname = page.relative_to(srcdir).with_suffix("").as_posix()
        generated = is_generated(page)
        try:
            if generated:
                page.unlink()
            removed_html = _remove_output(app, docname, any_html=generated)
        except OSError as exc:
            left.append(page)
            logger.warning(
                f"docsaccel: {page}, the report page an earlier build wrote, could not be "
                f"removed ({exc})",
                type="docsaccel",
                subtype="report",
            )
            continue
        if generated or removed_html:
            logger.info(f"docsaccel: removed {page}, the report page an earlier build wrote")
    still = {keep, *left}
    remaining = [name for name in noted if (srcdir / name).resolve() in still]
    remaining += [page.relative_to(srcdir).as_posix() for page in left]
    remaining = list(dict.fromkeys(remaining))
    for note in notes:
        if _noted_in(note) != remaining:
            _write_note(note, remaining)


def _remove_output(app: Any, docname: str, any_html: bool) -> bool:
    """Remove what an earlier build made of ``docname`` in the output folder: Sphinx
    drops a removed source from its environment, but leaves its page published.
    ``any_html``: the source was docsaccel's, so its HTML is too; else only HTML that
    carries the report's view (:data:`VIEW_BEGINS`) is docsaccel's. Whether a file went.
    """
    builder = getattr(app, "builder", None)
    get_outfilename = getattr(builder, "get_outfilename", None)
    if get_outfilename is None:
        return False  # a builder without one page per document (latex, ...): nothing of it
    try:
        output = Path(get_outfilename(docname))
    except ValueError:
        return False
    if not output.is_file() or not (any_html or _shows_a_report(output)):
        return False
    output.unlink()
    return True


def _shows_a_report(html: Path) -> bool:
    """Whether ``html`` carries the report's view: a page docsaccel published."""
    try:
        return VIEW_BEGINS in html.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False


def page_html(outdir: Path, docname: str, builder: Any = None) -> Path:
    """The HTML file of the page ``docname`` in ``outdir``: the one Sphinx's ``builder``
    writes it into (``dirhtml``: ``<docname>/index.html``), which the plugin puts the
    report's view into. ``builder`` may be a builder's name instead (the shard commands,
    outside their builds): ``"dirhtml"`` names the file as that builder does.
    ``<outdir>/<docname>.html`` for a builder whose pages are not HTML files (``json``,
    ``pickle``: the view is escaped in them, no marker to find), and with no builder
    (``None``: a setting refused before Sphinx made it)."""
    from sphinx.builders.dirhtml import DirectoryHTMLBuilder
    from sphinx.builders.html import StandaloneHTMLBuilder
    from sphinxcontrib.serializinghtml import SerializingHTMLBuilder

    if builder == DirectoryHTMLBuilder.name:
        # Sphinx's rule, without a builder to ask: a page named index is its folder's.
        parts = docname.split("/")
        if parts[-1] == "index":
            parts.pop()
        return Path(outdir, *parts, "index.html")

    if isinstance(builder, StandaloneHTMLBuilder) and not isinstance(
        builder, SerializingHTMLBuilder
    ):
        return Path(builder.get_outfilename(docname))
    return Path(outdir, f"{docname}.html")


def published_pages(
    srcdir: Path,
    outdir: Path,
    doctreedir: Path | None,
    wanted: str | None,
    builder: Any = None,
) -> list[tuple[Path, Path]]:
    """The report pages that may be published in ``outdir``, each as its source and its
    HTML (:func:`page_html` of ``builder``, where it writes them): the page the settings ask
    for (``wanted``, a document name), every one noted in ``doctreedir`` or ``outdir``
    (whatever the settings are now), and the documented ``budget_report``. Candidates
    only: what marks a page as docsaccel's is for the caller to check
    (:data:`GENERATED_MARKER` in the source, the report view's markers in the HTML), and
    a name outside the source folder is left out."""
    srcdir = srcdir.resolve()
    names = [wanted, *_noted(_notes(doctreedir, outdir)), DOCUMENTED_DOCNAME]
    pages: dict[Path, Path] = {}
    for name in names:
        if not name:
            continue
        source = (srcdir / (name if name.endswith(".rst") else f"{name}.rst")).resolve()
        if srcdir not in source.parents:
            continue
        docname = source.relative_to(srcdir).with_suffix("").as_posix()
        pages.setdefault(source, page_html(outdir, docname, builder))
    return list(pages.items())
