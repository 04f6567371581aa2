"""What Sphinx derives from the report page says nothing its final view does not.

The page is written before the examples run, saying the build has not finished (a build
killed outright leaves it so), and its HTML gets the final verdict as the build ends.
Sphinx has by then copied that source for the "Show source" link (``_sources/``) and
indexed its words for the site's search: neither may keep saying the build did not
finish once it has. Real Sphinx builds in temporary folders.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.derived_files import UNFINISHED, assert_no_unfinished_text
from helpers.gallery_build import build, make_project

pytestmark = pytest.mark.slow

CONF = 'docsaccel_report_page = "budget_report"\n'


@pytest.mark.parametrize("cache", [False, True], ids=["serial", "cache-restored"])
def test_a_finished_build_publishes_no_derived_file_saying_it_did_not(
    tmp_path: Path, cache: bool
) -> None:
    src = make_project(tmp_path, ["plot_quick.py"], conf=CONF)
    env = {"DOCSACCEL_CACHE": str(tmp_path / "cache")} if cache else {}
    built = build(src, env=env)
    assert built.returncode == 0, built.output
    if cache:  # again, Sphinx's state and the example restored from the cache
        (src / "index.rst").write_text(
            (src / "index.rst").read_text("utf-8") + "\nEdited.\n", encoding="utf-8"
        )
        built = build(src, env=env)
        assert built.returncode == 0, built.output
        assert "restored" in (built.outdir / "budget_report.html").read_text("utf-8")
    assert "Execution time" in (built.outdir / "budget_report.html").read_text("utf-8")
    assert_no_unfinished_text(built.outdir)


def test_a_failed_build_publishes_no_derived_file_saying_it_did_not_finish(
    tmp_path: Path,
) -> None:
    built = build(make_project(tmp_path, ["plot_quick.py", "plot_crash.py"], conf=CONF))
    assert built.returncode != 0, built.output
    assert "The build failed" in (built.outdir / "budget_report.html").read_text("utf-8")
    assert_no_unfinished_text(built.outdir)


def test_a_dirhtml_site_says_the_final_verdict(tmp_path: Path) -> None:
    src = make_project(tmp_path, ["plot_quick.py"], conf=CONF)
    built = build(src, "-b", "dirhtml", outdir=src / "_build" / "dirhtml")
    assert built.returncode == 0, built.output
    page = (built.outdir / "budget_report" / "index.html").read_text("utf-8")
    assert "Execution time" in page
    assert UNFINISHED not in page
