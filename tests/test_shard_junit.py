"""sphinx-gallery's JUnit XML and ``sg_execution_times.rst`` of a sharded build are the
serial build's.

The merge build skips every example as unchanged, and sphinx-gallery lists in its JUnit
XML only the examples it ran: the sharded site must still leave the file a serial
``sphinx-build -M html`` of the same tree leaves (one testcase per example, with how it
ended and the time its shard measured, measured times masked), where that build leaves it,
and ``docsaccel check`` of it must give the serial build's verdict. Its
``sg_execution_times.rst`` (the root one, each gallery's) list every example a shard ran
with the time it measured, never 0 (what sphinx-gallery before 0.22 lists for an example
it skips), and with ``show_memory`` the memory of none reads 0 where the serial build
measured it (sphinx-gallery's figure where the shard's ``.cost.json`` kept it, else
``nan``). Both ways of sharding: ``shard-local``, and CI's ``shard-build`` per shard
then ``shard-merge``.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path

import pytest
from test_shard_layouts import BUILD_FOLDERS, make_layout, run, serial_build

pytestmark = pytest.mark.slow

JUNIT = 'sphinx_gallery_conf["junit"] = "../test-results/sphinx-gallery/junit.xml"\n'
# The examples sphinx-gallery runs in the tree, by the path its JUnit XML names.
RUN = 7
# Appended to each example that does not sleep yet: every run takes long enough that a
# time written in milliseconds is not 0.
SLEEP = "\nimport time\n\ntime.sleep(0.01)\n"
# Appended to each example: memory it holds while it runs, so a measure of its growth
# is not 0. Above the C allocator's largest mmap threshold (glibc's is 32 MiB): freed, it
# goes back to the system, so no later example grows into it again unmeasured.
HOLD = '\n_held = b"x" * (48 << 20)\n'
# A row of sg_execution_times.rst: the example's page label, then its time (mm:ss.sss).
TIMES_ROW = re.compile(r":ref:`(sphx_glr_[^`]+)`[^\n]*\n\s*- (\d+):(\d+\.\d+)")
# A row's memory, after its time (sphinx-gallery writes "<MiB> MB").
MEMORY_ROW = re.compile(r":ref:`(sphx_glr_[^`]+)`[^\n]*\n\s*- [\d:.]+\n\s*- ([^\s]+)")
#: Whether sphinx-gallery can measure memory itself (``show_memory = True``): with
#: memory_profiler only. Without it, ``show_memory`` is a measure of the project's own.
MEMORY_PROFILER = importlib.util.find_spec("memory_profiler") is not None
# The project's own measure: the resident memory of the example's process, in MiB.
MEASURE = """\
import os


def resident_mib(func):
    out = func()
    with open("/proc/self/statm", encoding="ascii") as statm:
        pages = int(statm.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20, out
"""
SHOW_MEMORY = (
    'sphinx_gallery_conf["show_memory"] = True\n'
    if MEMORY_PROFILER
    else "import os, sys\n"
    "sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))\n"
    "from memory_measure import resident_mib\n"
    'sphinx_gallery_conf["show_memory"] = resident_mib\n'
    # A function in the configuration: Sphinx does not cache it, and says so.
    'suppress_warnings = [*globals().get("suppress_warnings", ()), "config.cache"]\n'
)


def with_junit(root: Path) -> Path:
    make_layout(root, expected_failure=True)
    conf = root / "source" / "conf.py"
    conf.write_text(conf.read_text(encoding="utf-8") + JUNIT + SHOW_MEMORY, encoding="utf-8")
    (root / "source" / "memory_measure.py").write_text(MEASURE, encoding="utf-8")
    for example in root.glob("**/plot_*.py"):
        text = example.read_text(encoding="utf-8")
        if "time.sleep" not in text:
            text += SLEEP
        example.write_text(text + HOLD, encoding="utf-8")
    return root


def timed(root: Path) -> dict[str, list[str]]:
    """The examples each ``sg_execution_times.rst`` of the source tree lists with a time
    other than 0, by page label, by file."""
    found = {}
    for page in sorted(root.glob("**/sg_execution_times.rst")):
        name = page.relative_to(root).as_posix()
        if not name.startswith(BUILD_FOLDERS):
            rows = TIMES_ROW.findall(page.read_text(encoding="utf-8"))
            found[name] = sorted(label for label, m, s in rows if int(m) * 60 + float(s) > 0)
    return found


def memory(root: Path) -> dict[str, dict[str, str]]:
    """How each ``sg_execution_times.rst`` of the source tree lists each example's memory,
    by page label, by file: ``"0"`` (not measured, as sphinx-gallery writes it), ``"nan"``
    (not measured, as docsaccel writes it for a run made elsewhere) or ``"measured"``."""
    found = {}
    for page in sorted(root.glob("**/sg_execution_times.rst")):
        name = page.relative_to(root).as_posix()
        if not name.startswith(BUILD_FOLDERS):
            rows = MEMORY_ROW.findall(page.read_text(encoding="utf-8"))
            found[name] = {label: _memory_kind(value) for label, value in rows}
    return found


def _memory_kind(value: str) -> str:
    if value == "nan":
        return value
    return "measured" if float(value) > 0 else "0"


def not_listed_as_measured(
    serial: dict[str, dict[str, str]], built: dict[str, dict[str, str]]
) -> dict[tuple[str, str], str | None]:
    """The examples whose memory the serial build measured and ``built`` lists as 0 (or
    not at all), with how it lists them: a run made elsewhere is listed with the memory
    sphinx-gallery measured of it where it kept it, else as not measured, never as 0."""
    return {
        (page, label): built.get(page, {}).get(label)
        for page, rows in serial.items()
        for label, kind in rows.items()
        if kind == "measured" and built.get(page, {}).get(label) not in ("measured", "nan")
    }


def masked(junit: Path) -> str:
    """The JUnit XML's text, its measured times (each example's, the suite's) masked."""
    return re.sub(r'\btime="[^"]*"', 'time="<time>"', junit.read_text(encoding="utf-8"))


def check(root: Path, junit: Path) -> tuple[int, str]:
    done = run(root, "-m", "docsaccel.cli", "check", str(junit))
    return done.returncode, done.stdout + done.stderr


def shard_ci(root: Path) -> None:
    """CI's matrix: ``shard-build`` of each shard, then ``shard-merge`` of their artifacts
    into the default site folder."""
    artifacts = root / "source" / "_build" / "ci-artifacts"
    for index in range(2):
        command = ["shard-build", "--docs", "source", "--shards", "2", "--index", str(index)]
        command += ["--artifact", str(artifacts / f"docs-shard-{index}")]
        done = run(root, "-m", "docsaccel.cli", *command, "-W")
        assert done.returncode == 0, done.stdout + done.stderr
    done = run(root, "-m", "docsaccel.cli", "shard-merge", str(artifacts), "--docs", "source")
    assert done.returncode == 0, done.stdout + done.stderr


def shard_local(root: Path) -> None:
    command = ["shard-local", "--docs", "source", "--shards", "2", "-W"]
    done = run(root, "-m", "docsaccel.cli", *command)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("shard", [shard_local, shard_ci], ids=["shard-local", "ci"])
def test_a_sharded_build_writes_the_serial_junit_xml(tmp_path, shard) -> None:
    root = with_junit(tmp_path / "tree")
    done = serial_build(root)
    assert done.returncode == 0, done.stdout + done.stderr
    serial_junit = root / "build" / "test-results" / "sphinx-gallery" / "junit.xml"
    serial = masked(serial_junit)
    serial_check = check(root, serial_junit)
    assert serial.count("<testcase ") == RUN, serial
    assert serial_check[0] == 0, serial_check[1]
    serial_times = timed(root)
    assert len(serial_times["source/sg_execution_times.rst"]) == RUN, serial_times
    serial_memory = memory(root)
    listed = serial_memory["source/sg_execution_times.rst"]
    assert list(listed.values()) == ["measured"] * RUN, serial_memory
    shutil.rmtree(root)

    root = with_junit(tmp_path / "tree")
    shard(root)

    # Where the serial build writes it, relative to the site folder.
    junit = root / "source" / "_build" / "test-results" / "sphinx-gallery" / "junit.xml"
    assert masked(junit) == serial
    times = re.findall(r'<testcase [^>]*\btime="([^"]*)"', junit.read_text(encoding="utf-8"))
    assert all(float(seconds) > 0 for seconds in times), times
    code, said = check(root, junit)
    assert code == serial_check[0], said
    assert "no example could be read" not in said
    assert timed(root) == serial_times
    assert not_listed_as_measured(serial_memory, memory(root)) == {}, memory(root)
    # docsaccel reads the times it lists, "nan" memory included.
    code, said = check(root, root / "source" / "sg_execution_times.rst")
    assert code == 0, said
