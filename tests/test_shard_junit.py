"""sphinx-gallery's JUnit XML and ``sg_execution_times.rst`` of a sharded build are the
serial build's.

The merge build skips every example as unchanged, and sphinx-gallery lists in its JUnit
XML only the examples it ran: the sharded site must still leave the file a serial
``sphinx-build -M html`` of the same tree leaves (one testcase per example, with how it
ended and the time its shard measured, measured times masked), where that build leaves it,
and ``docsaccel check`` of it must give the serial build's verdict. Its
``sg_execution_times.rst`` (the root one, each gallery's) list every example a shard ran
with the time it measured, never 0 (what sphinx-gallery before 0.22 lists for an example
it skips). Both ways of sharding: ``shard-local``, and CI's ``shard-build`` per shard then
``shard-merge``.
"""

from __future__ import annotations

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
# A row of sg_execution_times.rst: the example's page label, then its time (mm:ss.sss).
TIMES_ROW = re.compile(r":ref:`(sphx_glr_[^`]+)`[^\n]*\n\s*- (\d+):(\d+\.\d+)")


def with_junit(root: Path) -> Path:
    make_layout(root, expected_failure=True)
    conf = root / "source" / "conf.py"
    conf.write_text(conf.read_text(encoding="utf-8") + JUNIT, encoding="utf-8")
    for example in root.glob("**/plot_*.py"):
        text = example.read_text(encoding="utf-8")
        if "time.sleep" not in text:
            example.write_text(text + SLEEP, encoding="utf-8")
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
