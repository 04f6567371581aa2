"""sphinx-gallery's JUnit XML and ``sg_execution_times.rst`` of a build with the example
cache are a clean build's.

sphinx-gallery skips a restored example as unchanged, and lists in its JUnit XML only the
examples it ran: a build restoring examples must still leave the file a clean build of the
same tree leaves (one testcase per example, its classname, name and file, with the time
of the run the cache stored, measured times masked), and ``docsaccel check`` of it must
give the clean build's verdict. Its ``sg_execution_times.rst`` (the root one, the
gallery's) list every restored example with that time, never 0, and with ``show_memory``
its memory, never 0 where the clean build measured it. Three builds with the
cache: a cold one (every example runs), a warm one (every example restored) and one after
an example was edited (it runs, the others are restored).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers.cache_project import ALL, CONF, FILES, Build, Project
from test_shard_junit import (
    HOLD,
    MEASURE,
    SHOW_MEMORY,
    TIMES_ROW,
    masked,
    memory,
    not_listed_as_measured,
)

from docsaccel.report.commands import run_check
from docsaccel.settings import env_name

pytestmark = pytest.mark.slow

JUNIT = "junit.xml"
# Appended to each example: a run long enough that a time in milliseconds is not 0.
SLEEP = "\nimport time\n\ntime.sleep(0.01)\n"
# The total line of an sg_execution_times.rst, its measured time masked by TIMES_ROW's.
TOTAL = re.compile(r"\*\*\d+:\d+\.\d+\*\*")
# The memory cell of a row of an sg_execution_times.rst (compared by _memory_as_clean).
MEMORY_CELL = re.compile(r"^(\s+- )(?:[\d.]+|nan)$", re.MULTILINE)
WITHOUT_CACHE = {env_name("cache"): "0"}
EDITED = "plot_b_beta.py"


def _project(root: Path) -> Project:
    project = Project(root)
    conf = CONF + f'sphinx_gallery_conf["junit"] = "{JUNIT}"\n' + SHOW_MEMORY
    project.write("docs/conf.py", conf)
    project.write("docs/memory_measure.py", MEASURE)
    for name in ALL:
        project.write(f"docs/examples/{name}", FILES[f"docs/examples/{name}"] + SLEEP + HOLD)
    return project


def _memory_as_clean(build: Build, clean: Build) -> None:
    """Every example whose memory the clean build measured is listed as measured (or,
    with the project's own measure, as not measured), never as 0."""
    clean_memory = memory(clean.docs)
    listed = clean_memory["sg_execution_times.rst"]
    assert set(listed.values()) == {"measured"}, clean_memory
    assert not_listed_as_measured(clean_memory, memory(build.docs)) == {}, memory(build.docs)


def _times(build: Build) -> dict[str, list[str]]:
    """Each ``sg_execution_times.rst`` of the build (the root one, the gallery's), its
    times masked, its lines sorted (they are in order of time), after checking that it
    lists every example with a time other than 0."""
    found = {}
    for page in (build.docs / "sg_execution_times.rst", build.docs / "auto_examples"):
        page = page if page.suffix else page / "sg_execution_times.rst"
        text = page.read_text(encoding="utf-8")
        rows = TIMES_ROW.findall(text)
        assert len(rows) == len(ALL), text
        assert all(int(m) * 60 + float(s) > 0 for _, m, s in rows), text
        text = TIMES_ROW.sub(lambda row: f":ref:`{row.group(1)}` <time>", text)
        text = MEMORY_CELL.sub(r"\1<memory>", text)
        found[page.relative_to(build.docs).as_posix()] = sorted(TOTAL.sub("<t>", text).split("\n"))
    return found


def _junit(build: Build) -> str:
    """The build's JUnit XML, its times masked once checked not 0."""
    junit = build.outdir / JUNIT
    times = re.findall(r'<testcase [^>]*\btime="([^"]*)"', junit.read_text(encoding="utf-8"))
    assert len(times) == len(ALL) and all(float(t) > 0 for t in times), times
    return masked(junit)


def _built(project: Project, env: dict[str, str] | None = None) -> Build:
    build = project.build(env=env)
    assert build.returncode == 0, build.output
    return build


def test_a_cached_build_writes_the_junit_xml_and_times_of_a_clean_build(tmp_path) -> None:
    project = _project(tmp_path)
    clean = _built(project, WITHOUT_CACHE)
    clean_check = run_check([str(clean.outdir / JUNIT)])
    assert clean_check[1] == 0, clean_check[0]

    cold = _built(project)
    warm = _built(project)
    assert warm.cached() == set(ALL), warm.records

    for build in (cold, warm):
        assert _junit(build) == _junit(clean)
        assert _times(build) == _times(clean)
        _memory_as_clean(build, clean)
    text, code = run_check([str(warm.outdir / JUNIT)])
    assert code == clean_check[1], text
    assert "no example could be read" not in text, text

    source = f"docs/examples/{EDITED}"
    project.write(source, FILES[source].replace('print("beta"', 'print("beta two"') + SLEEP + HOLD)
    clean = _built(project, WITHOUT_CACHE)
    edited = _built(project)
    assert edited.executed() == {EDITED}, edited.records
    assert edited.cached() == set(ALL) - {EDITED}, edited.records
    assert _junit(edited) == _junit(clean)
    assert _times(edited) == _times(clean)
    _memory_as_clean(edited, clean)


def test_a_merge_of_shards_that_restored_examples_writes_a_clean_builds_junit_xml(
    tmp_path,
) -> None:
    project = _project(tmp_path)
    clean = _built(project, WITHOUT_CACHE)

    ran = project.shards_then_merge("ran")
    restored = project.shards_then_merge("restored")
    assert restored.cached() == set(ALL), restored.records

    for merge in (ran, restored):
        assert _junit(merge) == _junit(clean)
        assert _times(merge) == _times(clean)
        _memory_as_clean(merge, clean)
