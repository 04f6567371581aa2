"""An example stopped for its memory has one status in every file of its build.

The examples here allocate in one call, which no sample of the memory tripwire can
interrupt: one keeps what it allocated as its code returns (the stop is decided once its
code is over), the other lets it go within the same statement (only its process's
high-water mark saw it). Stopped by the build's ceiling (any mode) or by its memory budget
(fail mode), each fails as sphinx-gallery sees it too: the page shows the interruption's
traceback, the JUnit XML a failure, and ``check`` fails on each of the build's files.
"""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET

import pytest
from helpers.gallery_build import build, make_project, run_cli

from docsaccel.report.check import EXIT_BUILD_FAILED

pytestmark = pytest.mark.slow

MIB = 1 << 20
#: The most virtual memory one process of a test build may map.
ADDRESS_SPACE = 4 << 30
NAMES = ["plot_m_blip.py", "plot_m_quick.py"]
CONF = 'sphinx_gallery_conf["junit"] = "junit.xml"\n'


def _headroom(tmp_path, extra: int) -> int:
    """``extra`` above what a build of a trivial example peaks at."""
    src = make_project(tmp_path / "baseline", ["plot_quick.py"])
    built = build(src)
    assert built.returncode == 0, built.output
    return built.record("plot_quick.py")["peak_rss_bytes"] + extra


@pytest.mark.parametrize("limit", ["ceiling", "budget"])
def test_an_example_stopped_for_its_memory_after_its_code_fails_in_every_file(
    tmp_path, limit
) -> None:
    bound = _headroom(tmp_path, 200 * MIB)
    if limit == "ceiling":  # warn mode: the ceiling stops an example in any mode
        env, budgets, by = {"DOCSACCEL_MEMORY_LIMIT": f"{bound}B"}, "", "ceiling"
    else:
        env, by = {"DOCSACCEL_ON_OVERRUN": "fail"}, "memory"
        budgets = "[examples]\n" + "".join(f'"{n}" = {{ memory = "{bound}B" }}\n' for n in NAMES)
    src = make_project(tmp_path, NAMES, conf=CONF, budgets=budgets)

    built = build(src, env=env, address_space=ADDRESS_SPACE)

    assert built.returncode == 2, built.output
    junit = ET.parse(built.outdir / "junit.xml").getroot()
    assert junit.get("failures") == str(len(NAMES)), ET.tostring(junit)
    for name in NAMES:
        record = built.record(name)
        assert (record["status"], record["interrupted_by"]) == ("interrupted", by), record
        page = built.page(name)
        assert "MemoryExceeded" in page and "was interrupted at a peak of" in page, name
        # Its code had returned: no frame of the build's own code is on its page.
        assert "sg_compat" not in page and "gen_rst" not in page, name
        case = next(c for c in junit.iter("testcase") if c.get("file", "").endswith(name))
        failure = case.find("failure")
        assert failure is not None and "MemoryExceeded" in (failure.text or ""), name
    # A copy of the JUnit XML kept apart from the build's report fails on its own.
    kept = tmp_path / "kept" / "junit.xml"
    kept.parent.mkdir()
    shutil.copy(built.outdir / "junit.xml", kept)
    given = ["--budgets", str(src / "budgets.toml")] if budgets else []
    for path in [
        built.report_path,
        kept,
        src / "auto_examples" / "sg_execution_times.rst",
    ]:
        done = run_cli("check", str(path), *given)
        assert done.returncode == EXIT_BUILD_FAILED, (path, done.stdout, done.stderr)
        for name in NAMES:
            assert name in done.stdout + done.stderr, (path, done.stdout)
