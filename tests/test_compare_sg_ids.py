"""One example, one id, whichever of its build's files names it.

A gallery's own ``sg_execution_times.rst`` names an example by its path inside the
gallery (``plot_quick.py``); the root one, the JUnit XML and docsaccel's report from the
source folder (``examples/plot_quick.py``). The root and per-gallery files and the report
share sphinx-gallery's label of the example's page, on which ``compare`` and ``check``
pair them; two galleries each with a ``plot_quick.py`` keep two examples.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers.gallery_build import (
    SAME_NAME_CONF,
    SAME_NAME_GALLERIES,
    SUPPRESS_SAME_NAMES,
    build,
    make_project,
    make_same_name_galleries,
    run_cli,
)

from docsaccel import layout
from docsaccel.report.check import EXIT_BUILD_FAILED
from docsaccel.report.commands import run_check, run_compare, run_report
from docsaccel.report.compare import compare_timings
from docsaccel.report.inputs import judged_input

pytestmark = pytest.mark.slow

GALLERIES = SAME_NAME_GALLERIES
CONF = SAME_NAME_CONF + SUPPRESS_SAME_NAMES
BOTH = ["examples/plot_quick.py", "tutorials/plot_quick.py"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Two galleries, each with a ``plot_quick.py``, built once."""
    src = tmp_path_factory.mktemp("sg_ids") / "src"
    make_same_name_galleries(src, "plot_quick.py", CONF)
    done = build(src)
    assert done.returncode == 0, done.output
    return src, done


def _per_gallery(src: Path, gallery: str) -> Path:
    times = src / GALLERIES[gallery] / "sg_execution_times.rst"
    assert times.is_file()
    return times


def test_the_report_records_sphinx_gallerys_label_of_each_page(built) -> None:
    src, done = built
    refs = {record["id"]: record.get("ref") for record in done.report["examples"]}
    assert refs == {
        "examples/plot_quick.py": "sphx_glr_auto_examples_plot_quick.py",
        "tutorials/plot_quick.py": "sphx_glr_auto_tutorials_plot_quick.py",
    }
    # The label is the one sphinx-gallery's own files name the example by.
    for gallery, folder in GALLERIES.items():
        text = _per_gallery(src, gallery).read_text("utf-8")
        assert f":ref:`sphx_glr_{folder}_plot_quick.py`" in text


@pytest.mark.parametrize("gallery", list(GALLERIES))
def test_a_gallerys_own_times_file_pairs_with_the_report(built, gallery) -> None:
    """Its example is compared under the report's id, never listed as removed and new;
    the other gallery's example of the same file name is the report's alone."""
    src, done = built
    base = judged_input(_per_gallery(src, gallery))
    # Named as its build's report names it, not by the file name the file prints.
    assert [t.id for t in base.timings] == [f"{gallery}/plot_quick.py"]
    head = judged_input(done.report_path)
    comparison = compare_timings(base.timings, head.timings)
    assert [d.id for d in comparison.deltas] == [f"{gallery}/plot_quick.py"]
    assert comparison.removed == []
    assert [t.id for t in comparison.added] == [i for i in BOTH if not i.startswith(gallery)]
    # Either way round.
    comparison = compare_timings(head.timings, base.timings)
    assert [d.id for d in comparison.deltas] == [f"{gallery}/plot_quick.py"]
    assert comparison.added == []

    text, code = run_compare(str(_per_gallery(src, gallery)), str(done.report_path))
    assert code == 0, text
    assert "Removed examples" not in text, text
    assert "New examples:" in text and f"{gallery}/plot_quick.py" not in text.split("New")[1]


def test_a_gallerys_own_times_file_is_a_baseline_of_the_report(built) -> None:
    """``report --baseline``: its example has a delta under the report's id; the other
    gallery's is the report's alone."""
    src, done = built
    text, code = run_report(
        str(done.report_path), baseline=str(_per_gallery(src, "examples")), fmt="json"
    )
    assert code == 0, text
    view = json.loads(text)
    rows = {row["id"]: row for row in view["examples"]}
    assert sorted(rows) == BOTH
    assert rows["examples/plot_quick.py"]["delta_seconds"] is not None
    assert rows["tutorials/plot_quick.py"]["delta_seconds"] is None
    assert view["not_in_baseline"] == ["tutorials/plot_quick.py"], view
    assert view["not_in_this_build"] == [], view


def test_the_root_times_file_pairs_with_the_report(built) -> None:
    src, done = built
    root = src / "sg_execution_times.rst"
    base = judged_input(root)
    assert sorted(t.id for t in base.timings) == BOTH
    comparison = compare_timings(base.timings, judged_input(done.report_path).timings)
    assert sorted(d.id for d in comparison.deltas) == BOTH
    assert comparison.added == [] and comparison.removed == []
    done_cli = run_cli("compare", str(root), str(done.outdir))
    assert done_cli.returncode == 0, done_cli.stdout + done_cli.stderr
    assert "New examples" not in done_cli.stdout and "Removed" not in done_cli.stdout


def test_two_galleries_files_keep_their_same_named_examples_apart(built) -> None:
    """Both list ``plot_quick.py``, under two labels: two examples, one in each."""
    src, _ = built
    base = judged_input(_per_gallery(src, "examples"))
    head = judged_input(_per_gallery(src, "tutorials"))
    comparison = compare_timings(base.timings, head.timings)
    assert comparison.deltas == [] and comparison.not_compared == []
    assert [t.ref for t in comparison.removed] == ["sphx_glr_auto_examples_plot_quick.py"]
    assert [t.ref for t in comparison.added] == ["sphx_glr_auto_tutorials_plot_quick.py"]


def test_check_counts_an_example_its_files_and_report_all_time_once(built) -> None:
    src, done = built
    inputs = [
        str(src / "sg_execution_times.rst"),
        *(str(_per_gallery(src, gallery)) for gallery in GALLERIES),
        str(done.report_path),
    ]
    text, code = run_check(inputs, flat_budget="1h")
    assert code == 0, text
    assert "OK: 2 examples checked" in text, text


def test_a_failed_builds_gallery_file_pairs_with_a_kept_copy(tmp_path) -> None:
    """The head build failed: its gallery's file is judged by its report, whose ids are
    the source folder's; the base, a copy of that file kept elsewhere, names its examples
    by file name. Each example is compared or listed apart, never removed and new."""
    src = make_project(tmp_path, ["plot_quick.py", "plot_crash.py"])
    done = build(src)
    assert done.returncode == 2, done.output
    times = src / "auto_examples" / "sg_execution_times.rst"
    kept = tmp_path / "kept" / "sg_execution_times.rst"
    kept.parent.mkdir()
    shutil.copy2(times, kept)

    head = judged_input(times)
    assert head.path == str(layout.report_path(done.outdir))
    comparison = compare_timings(judged_input(kept).timings, head.timings)
    assert comparison.added == [] and comparison.removed == []
    assert [d.id for d in comparison.deltas] == ["examples/plot_quick.py"]
    assert [new.id for _, new in comparison.not_compared] == ["examples/plot_crash.py"]

    text, code = run_compare(str(kept), str(times))
    assert code == EXIT_BUILD_FAILED, text
    assert "New examples" not in text and "Removed examples" not in text, text


def test_a_subsections_own_times_file_pairs_with_the_report(tmp_path) -> None:
    """A subsection writes its own file, naming its examples by file name too: its
    ``plot_quick.py`` is the report's ``examples/sub/plot_quick.py``, never the gallery's
    ``examples/plot_quick.py``."""
    src = make_project(tmp_path, ["plot_quick.py"])
    sub = src / "examples" / "sub"
    sub.mkdir()
    (sub / "README.txt").write_text("Sub\n===\n", encoding="utf-8")
    shutil.copy(src / "examples" / "plot_quick.py", sub / "plot_quick.py")
    done = build(src)
    assert done.returncode == 0, done.output
    times = src / "auto_examples" / "sub" / "sg_execution_times.rst"
    comparison = compare_timings(
        judged_input(times).timings, judged_input(done.report_path).timings
    )
    assert [d.id for d in comparison.deltas] == ["examples/sub/plot_quick.py"]
    assert [t.id for t in comparison.added] == ["examples/plot_quick.py"]
    assert comparison.removed == []
