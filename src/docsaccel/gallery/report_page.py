"""The "Build budget report" page: the report's HTML view, added to the built site.

The design, in full: the reports guide's *Design* section.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sphinx.util import logging

from docsaccel import layout, sg_compat
from docsaccel.child_python import python_command
from docsaccel.contract import started_not_finished
from docsaccel.formats import replace_atomically
from docsaccel.gallery.page_file import (
    GENERATED_MARKER,
    TITLE,
    VIEW_BEGINS,
    VIEW_ENDS,
    is_generated,
    note_page,
    page_html,
    published_pages,
)
from docsaccel.report.html import render_html_fragment
from docsaccel.report.inputs import report_input
from docsaccel.report.summary import summarize
from docsaccel.settings import given_where
from docsaccel.stops import config_error

__all__ = [
    "CHART_PLACEHOLDER",
    "GENERATED_MARKER",
    "UNFINISHED_VIEW",
    "VIEW_BEGINS",
    "VIEW_ENDS",
    "check_report_page",
    "insert_chart",
    "page_text",
    "rewrite_report_page",
    "show_unfinished",
    "show_unfinished_pages",
    "show_unfinished_site",
    "write_report_page",
]

logger = logging.getLogger(__name__)

#: Stands in the page for the chart until the chart process has drawn it.
CHART_PLACEHOLDER = "<!-- docsaccel: budget chart -->"
_CHART_SECONDS = 300
#: After :data:`VIEW_BEGINS` in a page :func:`show_unfinished` rewrote: the next build
#: that writes the page dates its HTML before its source, so Sphinx writes it again (with
#: Sphinx's state, a page whose source did not change is otherwise kept as it is).
UNFINISHED_VIEW = "<!-- docsaccel: view of a build that did not finish -->"


@dataclass
class _PendingChart:
    process: subprocess.Popen[str]
    svg: Path
    page: Path


def page_text(
    report: dict[str, Any],
    chart: str | None = None,
    history: Path | None = None,
    warn: Callable[[str], None] | None = None,
) -> str:
    """The reST of the page for ``report`` (a valid report, as the plugin holds it).

    ``chart``: markup in place of the chart (default: draw it now); ``history``: a history
    file whose builds of the report's kind give the trends; ``warn``: how to say what is
    wrong with it (the build's :meth:`~.state.GalleryBuild.warn_history`, which says each
    thing once however often the page is written; default a Sphinx warning).
    """
    # Until the build's end puts the verdict into the page's HTML, the page says the build
    # has not finished; Sphinx's search index is written before that end, so the site's
    # search does not index the page (its copied source is withheld for the same reason:
    # :func:`.page_file.withhold_source`).
    return (
        f":orphan:\n:nosearch:\n\n{GENERATED_MARKER}\n\n"
        f"{TITLE}\n{'=' * len(TITLE)}\n\n"
        "What each executed example of this build cost, against its budget. Sort the\n"
        "table by clicking a column header. The same view is ``docsaccel report\n"
        "REPORT --format html``; ``docsaccel check`` gates on it.\n\n"
        ".. raw:: html\n\n" + textwrap.indent(_view(report, chart, history, warn), "   ") + "\n"
    )


def _view(
    report: dict[str, Any],
    chart: str | None,
    history: Path | None,
    warn: Callable[[str], None] | None = None,
) -> str:
    """The report's HTML view, between :data:`VIEW_BEGINS` and :data:`VIEW_ENDS`."""
    # The page is written before Sphinx reads (its wall time so far is no build's time),
    # and a page whose text changes in every build is read and written in every build.
    build = {k: v for k, v in report["build"].items() if k != "wall_seconds"}
    # Name the report as the site serves it, not by where this build put it on disk.
    loaded = report_input({**report, "build": build}, "docsaccel/report.json")
    trends = _trends(history, bool(report["build"].get("fast")), warn) if history else None
    fragment = render_html_fragment(summarize(loaded), chart=chart, trends=trends)
    return f"{VIEW_BEGINS}\n{fragment}\n{VIEW_ENDS}"


#: The page's setting, as its messages name it (``-D`` when given there).
_KEY = "docsaccel_report_page"


def _page_file(app: Any, docname: str) -> Path:
    srcdir = Path(app.srcdir).resolve()
    target = (srcdir / f"{docname}.rst").resolve()
    if srcdir not in target.parents:
        raise config_error(
            f"{given_where(_KEY, app.config)} = {docname!r}: the page must be inside the "
            f"source folder {srcdir}; use a document name such as 'budget_report' or "
            "'reports/budget'"
        )
    return target


def check_report_page(app: Any, docname: str) -> Path:
    """The page's file; a configuration error when it would replace a file of the project.

    Any source file of that name counts (``index.rst``, ``index.md``, ...): the plugin
    replaces only the ``.rst`` it wrote itself (:data:`GENERATED_MARKER`).
    """
    target = _page_file(app, docname)
    _check_not_sphinx_gallerys(app, docname, target)
    _check_a_document(app, docname, target)
    suffixes = list(getattr(app.config, "source_suffix", None) or {".rst": None})
    for suffix in dict.fromkeys([".rst", *suffixes]):
        existing = target.with_name(target.name[: -len(".rst")] + suffix)
        if existing.exists() and not is_generated(existing):
            other = "budget_report" if docname != "budget_report" else "docsaccel_budget_report"
            raise config_error(
                f"{given_where(_KEY, app.config)} = {docname!r} would replace {existing}, a file "
                f"docsaccel did not write; choose another document name, e.g. {other!r}"
            )
    return target


def _check_not_sphinx_gallerys(app: Any, docname: str, target: Path) -> None:
    """Refuse a page in a folder of a gallery: sphinx-gallery writes a gallery folder's
    pages (known from the configuration, before the file exists: a fresh checkout has no
    gallery pages until the examples ran), and an examples folder holds the user's
    tracked examples and gallery header, where a generated page would land among them."""
    srcdir = Path(app.srcdir).resolve()
    gallery_conf = getattr(app.config, "sphinx_gallery_conf", None) or {}
    try:
        pairs = sg_compat.gallery_dirs(gallery_conf)
    except TypeError:
        pairs = []  # not folder names: sphinx-gallery refuses them, naming the key
    for examples_dir, gallery_dir in pairs:
        if (srcdir / gallery_dir).resolve() in target.parents:
            raise config_error(
                f"{given_where(_KEY, app.config)} = {docname!r} is in {gallery_dir}, the folder "
                "sphinx-gallery writes a gallery's pages into; choose a document name "
                "outside every gallery folder, e.g. 'budget_report'"
            )
        if (srcdir / examples_dir).resolve() in target.parents:
            raise config_error(
                f"{given_where(_KEY, app.config)} = {docname!r} is in {examples_dir}, an examples "
                "folder of sphinx_gallery_conf (examples_dirs), among the user's examples; "
                "choose a document name outside every examples and gallery folder, e.g. "
                "'budget_report'"
            )
    if target.parent == srcdir and target.stem in sg_compat.ROOT_PAGES:
        raise config_error(
            f"{given_where(_KEY, app.config)} = {docname!r} is sphinx-gallery's own page "
            f"{target.name}; choose another document name, e.g. 'budget_report'"
        )


def _check_a_document(app: Any, docname: str, target: Path) -> None:
    """Refuse a page Sphinx would not read as a document: one inside a folder of
    ``html_static_path``, ``html_extra_path`` or ``templates_path`` (its reST source
    would be published as a file, or taken for a template), or matched by
    ``exclude_patterns``; the site would have no report page, and nothing would say so.
    One line names the key, the value and the folder (or pattern)."""
    config = app.config
    confdir = Path(getattr(app, "confdir", app.srcdir))
    for name, does, folder in layout.conf_folders(config, confdir):
        if folder in target.parents:
            raise config_error(
                f"{given_where(_KEY, app.config)} = {docname!r} is in {folder}, a folder of "
                f"{name} ({does}, never read as a page); choose a document name "
                "outside it, e.g. 'budget_report'"
            )
    relative = target.relative_to(Path(app.srcdir).resolve()).as_posix()
    for pattern in getattr(config, "exclude_patterns", None) or []:
        if isinstance(pattern, str) and _excluded(relative, pattern):
            raise config_error(
                f"{given_where(_KEY, app.config)} = {docname!r} is matched by exclude_patterns "
                f"entry {pattern!r} (Sphinx never reads it); choose a document name outside it, "
                "e.g. 'budget_report'"
            )


def _excluded(relative: str, pattern: str) -> bool:
    """Whether Sphinx's ``exclude_patterns`` entry ``pattern`` leaves out the source
    file ``relative``: the file, or a folder above it (Sphinx skips a matched folder's
    whole content).

    >>> _excluded("_static/x.rst", "_static"), _excluded("budget_report.rst", "_build")
    (True, False)
    """
    from sphinx.util.matching import Matcher

    matcher = Matcher([pattern])
    parts = relative.split("/")
    return any(matcher("/".join(parts[:end])) for end in range(1, len(parts) + 1))


def _trends(history: Path, fast: bool, warn: Callable[[str], None] | None) -> Any:
    from docsaccel.report.history import read_builds, same_kind
    from docsaccel.report.model import InputError
    from docsaccel.report.trend import build_trends

    if not history.is_file():
        return None  # no build recorded yet
    warn = warn or _history_warning
    try:
        builds = read_builds(history, warn=warn)
        return build_trends(same_kind(builds, fast))
    except InputError as exc:
        warn(f"{exc}; the report page shows no trends")
        return None


def _history_warning(message: str) -> None:
    logger.warning(f"docsaccel_history: {message}", type="docsaccel", subtype="history")


def write_report_page(app: Any, report: dict[str, Any]) -> None:
    """Write ``<srcdir>/<docsaccel_report_page>.rst``; start drawing its chart if asked."""
    build = getattr(app, "_docsaccel_gallery", None)
    docname = build.settings.report_page if build else None
    if docname is None:
        return
    draw_chart = build.settings.report_chart
    target = check_report_page(app, docname)
    target.parent.mkdir(parents=True, exist_ok=True)
    chart = CHART_PLACEHOLDER if draw_chart else ""
    # Sphinx publishes the page while the build still runs: a build killed outright after
    # that (SIGKILL, out of memory) runs no handler, so until the build's end puts its
    # final verdict in (events._page_shows_the_verdict), the page says it has not finished.
    report = _not_finished_yet(report)
    text = page_text(report, chart=chart, history=build.settings.history, warn=build.warn_history)
    if not target.is_file() or target.read_text(encoding="utf-8") != text:
        target.write_text(text, encoding="utf-8")
    note_page(app, target)
    page = page_html(Path(app.outdir), docname, getattr(app, "builder", None))
    _forget_unfinished_view(page)
    build.report_page_files = (target, page)
    build.report_on_page = report
    if not draw_chart:
        return
    svg = layout.chart_path(app.outdir)
    command = python_command("-m", "docsaccel.report.chart", str(build.report_path), str(svg))
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    app._docsaccel_pending_chart = _PendingChart(process, svg, page)  # type: ignore[attr-defined]
    # After the report is final (priority 100), before the overrun verdict (900).
    app.connect("build-finished", insert_chart, priority=200)


def _not_finished_yet(report: dict[str, Any]) -> dict[str, Any]:
    """``report`` as the page shows it while its build runs on: not complete, started
    when the build did, and not finished (:func:`~docsaccel.contract.started_not_finished`)."""
    build = report["build"]
    started = datetime.fromisoformat(report["generated_at"]) - timedelta(
        seconds=float(build.get("wall_seconds") or 0)
    )
    at = started.isoformat(timespec="seconds")
    build = {**build, "complete": False, "ended_because": started_not_finished(at)}
    return {**report, "build": build}


def _forget_unfinished_view(page: Path) -> None:
    """Date ``page`` before its source when it shows a build that did not finish
    (:func:`show_unfinished`), so Sphinx writes it again whether or not its source
    changed. The page is kept, never removed: until Sphinx replaces it, the site holds
    a report page saying the build has not finished, and a build killed meanwhile leaves
    that page, not a broken link."""
    try:
        with page.open(encoding="utf-8") as stream:
            unfinished = any(UNFINISHED_VIEW in line for line in stream)
    except (OSError, UnicodeDecodeError):
        return
    if unfinished:
        # Sphinx writes again a page older than its source; the epoch is older than any.
        with contextlib.suppress(OSError):
            os.utime(page, ns=(0, 0))


def insert_chart(app: Any, exception: BaseException | None) -> None:
    """``build-finished``: wait for the chart and put it into the page's HTML."""
    pending: _PendingChart | None = getattr(app, "_docsaccel_pending_chart", None)
    if pending is None:
        return
    app._docsaccel_pending_chart = None
    try:
        _, errors = pending.process.communicate(timeout=_CHART_SECONDS)
    except subprocess.TimeoutExpired:
        pending.process.kill()
        pending.process.communicate()
        errors = f"no chart after {_CHART_SECONDS} s"
    if exception is not None:
        return
    if pending.process.returncode != 0:
        logger.warning(
            f"docsaccel: the budget report chart could not be drawn: {errors.strip()}",
            type="docsaccel",
            subtype="report",
        )
        return
    # An unchanged page is not written again, and keeps the chart it already has.
    if pending.page.is_file():
        html = pending.page.read_text(encoding="utf-8")
        if CHART_PLACEHOLDER in html:
            svg = pending.svg.read_text(encoding="utf-8")
            _replace_page(pending.page, html.replace(CHART_PLACEHOLDER, svg, 1))


def rewrite_report_page(build: Any, report: dict[str, Any]) -> None:
    """Put the view of ``report``, a verdict that came after the pages were written (the
    build's process could not end), into the page this build wrote: its HTML, between
    :data:`VIEW_BEGINS` and :data:`VIEW_ENDS`, keeping the chart drawn into it, and its
    source, so the next build sees the page changed. Nothing when the build wrote no page.
    """
    files = getattr(build, "report_page_files", None)
    if files is None:
        return
    source, page = files
    build.report_on_page = report
    history = build.settings.history
    placeholder = CHART_PLACEHOLDER if build.settings.report_chart else ""
    warn = build.warn_history
    source.write_text(page_text(report, placeholder, history, warn), encoding="utf-8")
    if not page.is_file():
        return
    html = page.read_text(encoding="utf-8")
    begins, ends = html.find(VIEW_BEGINS), html.find(VIEW_ENDS)
    if begins < 0 or ends < begins:
        return
    view = _view(report, _drawn_chart(build, placeholder), history, warn)
    _replace_page(page, html[:begins] + view + html[ends + len(VIEW_ENDS) :])


def _replace_page(page: Path, html: str) -> None:
    """Make the page's HTML ``html``, renamed over the old one: the site holds one page
    or the other at every instant, also when the build is killed meanwhile."""
    replace_atomically(page, html.encode("utf-8"))


def _drawn_chart(build: Any, placeholder: str) -> str:
    """The chart the page shows (drawn by then, as the build has ended), else nothing."""
    if not placeholder:
        return ""
    try:
        return layout.chart_path(build.outdir).read_text(encoding="utf-8")
    except OSError:
        return ""


def show_unfinished(build: Any, report: dict[str, Any], but_own: bool = False) -> list[Path]:
    """Put the view of ``report``, the incomplete report of a build that ends without
    finishing, into every report page docsaccel published in the build's output folder
    (:func:`show_unfinished_pages`). Returns the HTML files rewritten or removed.

    ``but_own``: leave the page this build wrote (at ``build-finished``, whose last
    handler puts the final verdict into it, chart and trends kept)."""
    own = getattr(build, "report_page_files", None)
    shown = show_unfinished_pages(
        Path(build.srcdir or "."),
        build.outdir,
        getattr(build, "doctreedir", None),
        build.settings.report_page,
        report,
        keep=own[0] if but_own and own is not None else None,
        builder=getattr(build, "builder", None),
    )
    if own is not None and not but_own:
        build.report_on_page = report
    return shown


def show_unfinished_site(
    srcdir: Path, outdir: Path, wanted: str | None, report: dict[str, Any], builder: str
) -> list[Path]:
    """:func:`show_unfinished_pages` for a site that several Sphinx builds make (the shard
    commands: shards, then a merge build into ``outdir`` with the doctree folder of the
    sharded builds of ``srcdir``), when it stops or fails outside any of those builds;
    ``builder``: the name of the builder making it, which names the pages' files.
    Nothing when ``outdir`` publishes no report page."""
    doctreedir = layout.shard_dir(srcdir, "shard-doctrees")
    pages = published_pages(Path(srcdir), Path(outdir), doctreedir, wanted, builder)
    if not any(html.is_file() for _source, html in pages):
        return []
    return show_unfinished_pages(
        Path(srcdir), Path(outdir), doctreedir, wanted, report, builder=builder
    )


def show_unfinished_pages(
    srcdir: Path,
    outdir: Path,
    doctreedir: Path | None,
    wanted: str | None,
    report: dict[str, Any],
    keep: Path | None = None,
    builder: Any = None,
) -> list[Path]:
    """Put the view of ``report`` into every report page docsaccel published in
    ``outdir`` (:func:`.page_file.published_pages` whose HTML carries the view's markers),
    and into the page's source when docsaccel wrote it, so the next build sees the page
    changed. A page that cannot be rewritten is removed: no page is left saying an
    earlier build's verdict. Returns the HTML files rewritten or removed. ``keep``: the
    source of a page to leave as it is; ``builder``: Sphinx's, which names the pages'
    files (:func:`.page_file.page_html`)."""
    candidates = published_pages(srcdir, outdir, doctreedir, wanted, builder)
    shown: list[Path] = []
    for source, page in candidates:
        if keep is not None and source == keep:
            continue
        try:
            html = page.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            html = ""
        begins, ends = html.find(VIEW_BEGINS), html.find(VIEW_ENDS)
        ours = begins >= 0 and ends > begins
        try:
            if is_generated(source):
                source.write_text(page_text(report, chart=""), encoding="utf-8")
            if ours:
                view = _view(report, "", None).replace(
                    VIEW_BEGINS, f"{VIEW_BEGINS}\n{UNFINISHED_VIEW}", 1
                )
                _replace_page(page, html[:begins] + view + html[ends + len(VIEW_ENDS) :])
        except Exception as exc:  # a page left as it was would say the last verdict
            if ours:
                with contextlib.suppress(OSError):
                    page.unlink()
            logger.warning(
                f"docsaccel: the report page {page} could not show this build's unfinished "
                f"report ({exc}); {'it is removed' if ours else 'it is left as it was'}",
                type="docsaccel",
                subtype="report",
            )
        if ours:
            shown.append(page)
    return shown
