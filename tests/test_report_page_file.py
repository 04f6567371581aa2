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
