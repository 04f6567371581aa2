"""The "Build budget report" page: the report's HTML view, added to the built site.

Connected to ``docsaccel-report-ready``, which fires after every example has run and
before Sphinx reads the sources, so the page written here is read like any other. The
plugin does not format the report itself: the view comes from :mod:`docsaccel.report`.

The page is ``:orphan:``, so it needs no toctree entry; list it in one to link it::

    .. toctree::

       budget_report
"""

from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path
from typing import Any

from docsaccel.report.html import render_html_fragment
from docsaccel.report.inputs import load_input
from docsaccel.report.summary import summarize

__all__ = ["page_text", "write_report_page"]

TITLE = "Build budget report"


def page_text(report_path: Path) -> str:
    """The reST of the page for the report JSON at ``report_path``."""
    # Name the report as the site serves it, not by where this build put it on disk.
    loaded = dataclasses.replace(load_input(report_path), path="docsaccel/report.json")
    fragment = render_html_fragment(summarize(loaded))
    return (
        ":orphan:\n\n"
        f"{TITLE}\n{'=' * len(TITLE)}\n\n"
        "What each executed example of this build cost, against its budget. Sort the\n"
        "table by clicking a column header. The same view is ``docsaccel report\n"
        "REPORT --format html``; ``docsaccel check`` gates on it.\n\n"
        ".. raw:: html\n\n" + textwrap.indent(fragment, "   ") + "\n"
    )


def write_report_page(app: Any, report: dict[str, Any]) -> None:
    """Write ``<srcdir>/<docsaccel_report_page>.rst`` from the report just written."""
    build = getattr(app, "_docsaccel_gallery", None)
    docname = build.settings.report_page if build else None
    if docname is None:
        return
    target = Path(app.srcdir, f"{docname}.rst")
    target.parent.mkdir(parents=True, exist_ok=True)
    text = page_text(build.report_path)
    if not target.is_file() or target.read_text(encoding="utf-8") != text:
        target.write_text(text, encoding="utf-8")
