"""Which existing files the report page may replace: its own pages, old and new, only."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from sphinx.errors import ConfigError

from docsaccel.gallery.report_page import check_report_page, page_text

# The beginning of a page written before pages carried their marker.
LEGACY_PAGE = """:orphan:

Build budget report
===================

What each executed example of this build cost, against its budget. Sort the
table by clicking a column header.
"""


def _app(srcdir):
    return SimpleNamespace(srcdir=str(srcdir), config=SimpleNamespace(source_suffix={".rst": None}))


def test_a_page_from_before_the_marker_is_replaced(tmp_path) -> None:
    (tmp_path / "budget_report.rst").write_text(LEGACY_PAGE, encoding="utf-8")
    assert check_report_page(_app(tmp_path), "budget_report") == tmp_path / "budget_report.rst"


def test_a_page_with_the_marker_is_replaced(tmp_path) -> None:
    report = {
        "schema": "docsaccel.report",
        "version": 1,
        "generated_at": "2026-11-30T00:00:00+00:00",
        "build": {"wall_seconds": 1.0, "fast": False, "complete": True},
        "examples": [],
    }
    (tmp_path / "budget_report.rst").write_text(page_text(report, chart=""), encoding="utf-8")
    assert check_report_page(_app(tmp_path), "budget_report").name == "budget_report.rst"


def test_a_project_page_that_only_looks_alike_is_refused(tmp_path) -> None:
    (tmp_path / "budget_report.rst").write_text(
        "Build budget report\n===================\n\nOur own notes.\n", encoding="utf-8"
    )
    with pytest.raises(ConfigError, match="did not write; choose another document name") as err:
        check_report_page(_app(tmp_path), "budget_report")
    # The suggestion is a name other than the refused one.
    assert "e.g. 'docsaccel_budget_report'" in str(err.value)


@pytest.mark.parametrize(
    ("docname", "said"),
    [
        ("auto_examples/index", "is in auto_examples, the folder sphinx-gallery writes"),
        ("more/sub/plot_a", "is in more, the folder sphinx-gallery writes"),
        ("sg_api_usage", "is sphinx-gallery's own page sg_api_usage.rst"),
    ],
)
def test_a_page_sphinx_gallery_writes_is_refused_before_it_exists(tmp_path, docname, said):
    app = _app(tmp_path)
    app.config.sphinx_gallery_conf = {
        "examples_dirs": ["examples", "more_examples"],
        "gallery_dirs": ["auto_examples", "more"],
    }
    with pytest.raises(ConfigError, match=said):
        check_report_page(app, docname)
    # Beside the gallery folders, and named like none of sphinx-gallery's pages: accepted.
    assert check_report_page(app, "auto_examples_report").name == "auto_examples_report.rst"


def _unfinished_report() -> dict:
    return {
        "schema": "docsaccel.report",
        "version": 1,
        "generated_at": "2026-11-30T00:00:00+00:00",
        "build": {
            "wall_seconds": 1.0,
            "fast": False,
            "complete": False,
            "stopped_before_examples": "docsaccel_on_overrun: 'bogus' is not a mode",
        },
        "examples": [],
    }


def _stopped_build(src, out, wanted=None):
    return SimpleNamespace(
        settings=SimpleNamespace(report_page=wanted),
        srcdir=str(src),
        outdir=out,
        doctreedir=out / ".doctrees",
        report_page_files=None,
    )


def test_a_stopped_build_shows_its_end_on_the_page_an_earlier_build_published(tmp_path) -> None:
    from docsaccel.gallery.report_page import (
        UNFINISHED_VIEW,
        VIEW_BEGINS,
        VIEW_ENDS,
        show_unfinished,
    )

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    out.mkdir()
    fine = f"<html><nav>site</nav>{VIEW_BEGINS}All examples within budget.{VIEW_ENDS}</html>"
    (out / "budget_report.html").write_text(fine, encoding="utf-8")
    (out / "index.html").write_text("<html>All examples within budget.</html>", "utf-8")
    index = src / "index.rst"
    index.write_text("Home\n====\n", encoding="utf-8")

    shown = show_unfinished(_stopped_build(src, out, wanted="index"), _unfinished_report())

    assert shown == [out / "budget_report.html"]
    html = (out / "budget_report.html").read_text("utf-8")
    assert "All examples within budget" not in html
    assert "the build did not finish" in html and UNFINISHED_VIEW in html
    assert html.startswith("<html><nav>site</nav>") and html.endswith("</html>")
    # Files docsaccel did not write are never touched, whatever the settings name.
    assert (out / "index.html").read_text("utf-8") == "<html>All examples within budget.</html>"
    assert index.read_text("utf-8") == "Home\n====\n"
    assert not (src / "budget_report.rst").exists(), "a source was made for a page"
