"""Turning the report page off, or renaming it, in a tree an earlier build published it
from: the page docsaccel wrote is gone from the sources and from the site, and a file of
the project with the page's name is never touched."""

from __future__ import annotations

import pytest
from helpers.gallery_build import build, make_project

from docsaccel import layout

pytestmark = pytest.mark.slow

PAGE = 'docsaccel_report_page = "budget_report"\ndocsaccel_report_chart = True\n'


def _set_conf(src, extra: str) -> None:
    conf = src / "conf.py"
    base = conf.read_text("utf-8").split("# docsaccel settings of the test\n")[0]
    conf.write_text(f"{base}# docsaccel settings of the test\n{extra}", encoding="utf-8")


def test_turning_the_page_off_unpublishes_it(tmp_path) -> None:
    src = make_project(tmp_path, ["plot_quick.py"])
    _set_conf(src, PAGE)
    on = build(src, "-W")
    assert on.returncode == 0, on.output
    assert (src / "budget_report.rst").is_file()
    assert (on.outdir / "budget_report.html").is_file()
    assert layout.chart_path(on.outdir).is_file()

    _set_conf(src, "")
    off = build(src, "-W")

    assert off.returncode == 0, off.output
    assert not (src / "budget_report.rst").exists(), "the generated source stayed"
    assert not (off.outdir / "budget_report.html").exists(), "the page stayed published"
    assert not layout.chart_path(off.outdir).exists(), "the chart stayed published"
    assert "budget_report" not in (off.outdir / "searchindex.js").read_text("utf-8")
    assert off.record("plot_quick.py")["status"] in ("ok", "cached")


def test_a_renamed_page_leaves_no_copy_and_a_project_file_is_kept(tmp_path) -> None:
    src = make_project(tmp_path, ["plot_quick.py"])
    _set_conf(src, 'docsaccel_report_page = "reports/budget"\n')
    first = build(src, "-W")
    assert first.returncode == 0, first.output
    assert (src / "reports" / "budget.rst").is_file()

    _set_conf(src, PAGE)
    renamed = build(src, "-W")

    assert renamed.returncode == 0, renamed.output
    assert not (src / "reports" / "budget.rst").exists()
    assert not (renamed.outdir / "reports" / "budget.html").exists()
    assert (renamed.outdir / "budget_report.html").is_file()

    # The project's own page of that name (it carries no marker) is never removed.
    _set_conf(src, "")
    mine = ":orphan:\n\nBuild budget report\n===================\n\nMy own notes.\n"
    (src / "budget_report.rst").write_text(mine, encoding="utf-8")
    off = build(src, "-W")
    assert off.returncode == 0, off.output
    assert (src / "budget_report.rst").read_text("utf-8") == mine
    assert "My own notes." in (off.outdir / "budget_report.html").read_text("utf-8")


#: The verdict of a build whose examples were all restored from the example cache.
RESTORED_FINE = (
    "restored from the example cache (judged by the time of the run that stored it); "
    "none over budget"
)


@pytest.mark.parametrize("now", ["budget_report", None], ids=["renamed", "turned-off"])
def test_every_page_ever_published_is_removed_or_marked(tmp_path, now) -> None:
    """A page published under another name (``-D docsaccel_report_page=perf``) with the
    example cache on: the next build that finishes removes it whatever its setting now
    (its generated source was already taken away with the other generated files), and a
    build that does not finish marks it unfinished before that."""
    src = make_project(tmp_path, ["plot_quick.py"])
    env = {"DOCSACCEL_CACHE": str(tmp_path / "cache")}
    _set_conf(src, PAGE)
    first = build(src, "-W", env=env, quiet=False)
    assert first.returncode == 0, first.output
    assert ": 0 examples restored, 1 to run" in first.output, first.output
    perf = build(src, "-W", "-D", "docsaccel_report_page=perf", env=env, quiet=False)
    assert perf.returncode == 0, perf.output
    # Its one example restored from the cache: judged by its stored run, none over.
    assert ": 1 example restored, 0 to run" in perf.output, perf.output
    assert RESTORED_FINE in (perf.outdir / "perf.html").read_text("utf-8")

    _set_conf(src, PAGE if now else "")
    refused = build(src, "-W", env={**env, "DOCSACCEL_ON_OVERRUN": "bogus"})
    assert refused.returncode != 0, refused.output
    shown = (perf.outdir / "perf.html").read_text("utf-8")
    assert RESTORED_FINE not in shown, "a failed build left the old page"
    assert "the build did not finish" in shown

    again = build(src, "-W", env=env)

    assert again.returncode == 0, again.output
    assert not (src / "perf.rst").exists()
    assert not (again.outdir / "perf.html").exists(), "the renamed page stayed published"
    if now:
        assert (again.outdir / "budget_report.html").is_file()
