"""A history holds one line per build, through whichever of its files it is given.

One build of two galleries leaves its report, the root ``sg_execution_times.rst``, each
gallery's own and a JUnit XML: every one of them names the same build (its report), so
once one is appended the others are refused, and a gallery's file says it recorded only
part of its build.
"""

from __future__ import annotations

import json

import pytest
from helpers.gallery_build import (
    SAME_NAME_CONF,
    SAME_NAME_GALLERIES,
    SUPPRESS_SAME_NAMES,
    build,
    make_same_name_galleries,
    run_cli,
)

from docsaccel.report.history import BUILD_SHA256, PART_OF_BUILD, PART_OF_BUILD_TEXT

pytestmark = pytest.mark.slow

CONF = (
    SAME_NAME_CONF
    + SUPPRESS_SAME_NAMES
    + 'sphinx_gallery_conf["junit"] = "../test-results/junit.xml"\n'
)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Every file one build of two galleries leaves that ``history append`` reads."""
    src = tmp_path_factory.mktemp("one_build") / "src"
    make_same_name_galleries(src, "plot_quick.py", CONF)
    done = build(src)
    assert done.returncode == 0, done.output
    found = {
        "report": done.report_path,
        "root": src / "sg_execution_times.rst",
        "junit": done.outdir.parent / "test-results" / "junit.xml",
        **{g: src / f / "sg_execution_times.rst" for g, f in SAME_NAME_GALLERIES.items()},
    }
    assert all(path.is_file() for path in found.values()), found
    return found


def _lines(history) -> list[dict]:
    return [json.loads(line) for line in history.read_text("utf-8").splitlines()]


@pytest.mark.parametrize("first", ["report", "root", "junit", "examples"])
def test_every_file_of_one_build_appends_it_once(tmp_path, files, first) -> None:
    history = tmp_path / f"{first}.jsonl"
    done = run_cli("history", "append", "--to", str(history), str(files[first]))
    assert done.returncode == 0, done.stderr

    for name, path in files.items():
        again = run_cli("history", "append", "--to", str(history), str(path))
        assert again.returncode == 2, (name, again.stdout)
        assert again.stderr.count("\n") == 1, again.stderr
        assert "already records the build of" in again.stderr and "not appended" in again.stderr

    (line,) = _lines(history)
    assert line[BUILD_SHA256] == _lines_of(tmp_path, files["report"])[0][BUILD_SHA256]


def _lines_of(tmp_path, report) -> list[dict]:
    """The line the build's report itself appends to a history of its own."""
    history = tmp_path / "by_report.jsonl"
    if not history.exists():
        assert run_cli("history", "append", "--to", str(history), str(report)).returncode == 0
    return _lines(history)


def test_a_gallerys_file_records_part_of_its_build_and_says_so(tmp_path, files) -> None:
    history = tmp_path / "h.jsonl"

    done = run_cli("history", "append", "--to", str(history), str(files["tutorials"]))

    assert done.returncode == 0, done.stderr
    assert "appended 1 examples" in done.stdout and PART_OF_BUILD_TEXT in done.stdout
    (line,) = _lines(history)
    assert line[PART_OF_BUILD] is True and len(line["examples"]) == 1
    whole = run_cli("history", "append", "--to", str(tmp_path / "w.jsonl"), str(files["root"]))
    assert whole.returncode == 0 and PART_OF_BUILD_TEXT not in whole.stdout
    assert PART_OF_BUILD not in _lines(tmp_path / "w.jsonl")[0]
