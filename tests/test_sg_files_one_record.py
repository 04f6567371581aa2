"""Every file of one build says each example as its report does: one status, one time and
one peak per example, whichever of them a reader is given.

A project laid out like matplotlib's documentation (``conf.py`` in ``doc/``, two galleries
beside it) builds an example in ``expected_failing_examples`` and one that passes.
sphinx-gallery times the failing example up to its error and measures no peak
(``show_memory`` off), where the report holds the example's whole run and its peak:
read with the report found beside them, its root ``sg_execution_times.rst``, a gallery's
and its JUnit XML give ``history append`` and ``compare`` the report's facts.
"""

from __future__ import annotations

import json
import shutil

import pytest
from helpers.gallery_build import FIXTURES, build, make_doc_layout

from docsaccel.report.commands import run_compare, run_history_append

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("one_record")
    for gallery, names in {"examples": ["plot_crash.py"], "tutorials": ["plot_quick.py"]}.items():
        (root / gallery).mkdir()
        for name in ["README.rst", *names]:
            shutil.copy(FIXTURES / "examples" / name, root / gallery / name)
    doc = make_doc_layout(
        root, ["gallery", "tutorials"], expected_failing_examples=["../examples/plot_crash.py"]
    )
    done = build(doc)
    assert done.returncode == 0, done.output
    return done


def _history(path, tmp_path, name: str) -> dict:
    history = tmp_path / f"{name}.jsonl"
    text, code = run_history_append(str(path), history)
    assert code == 0, text
    return json.loads(history.read_text("utf-8"))["examples"]


def _by_file_name(examples: dict) -> dict:
    return {key.rsplit("/", 1)[-1]: value for key, value in examples.items()}


def test_history_of_each_file_of_the_build_stores_what_its_report_does(built, tmp_path) -> None:
    doc = built.outdir.parents[1]
    report = _by_file_name(_history(built.report_path, tmp_path, "report"))
    assert report["plot_crash.py"]["status"] == "failed", report
    assert "peak_bytes" in report["plot_crash.py"], report

    for name, path in {
        "root": doc / "sg_execution_times.rst",
        "gallery": doc / "gallery" / "sg_execution_times.rst",
        "junit": built.outdir / "junit.xml",
    }.items():
        stored = _by_file_name(_history(path, tmp_path, name))
        assert {key: report[key] for key in stored} == stored, name


def test_compare_of_the_report_and_its_root_file_says_each_example_once(built) -> None:
    doc = built.outdir.parents[1]

    text, code = run_compare(str(built.report_path), str(doc / "sg_execution_times.rst"))

    assert code == 0, text
    line = next(line for line in text.splitlines() if "plot_crash.py:" in line)
    before, _, after = line.partition(": ")[2].partition(" -> ")
    assert before == after, line
