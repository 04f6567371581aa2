"""sphinx-gallery's ``sg_execution_times.rst`` of a build an example failed, at the gates.

sphinx-gallery lists an example that raised with its time, as any other: its files alone
would pass the build. The gates judge such a file by its build's docsaccel report, as if
the report had been given; a file with no report of its build (a copy kept elsewhere, a
passing build's) is judged by its times, with the note that it cannot tell a failure.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from helpers.gallery_build import build, make_project, run_cli

from docsaccel import layout
from docsaccel.report.check import EXIT_BUILD_FAILED
from docsaccel.report.commands import run_check, run_compare, run_history_append

pytestmark = pytest.mark.slow

NO_STATUS = "sphinx-gallery's file does not say whether an example failed"


def _timing_files(src: Path) -> list[Path]:
    """The root file and the gallery's own."""
    return [src / "sg_execution_times.rst", src / "auto_examples" / "sg_execution_times.rst"]


def _kept_copy(times: Path, folder: Path) -> Path:
    """A copy of ``times`` kept outside the project, as a CI job keeps a base."""
    copy = folder / "kept" / times.parent.name / times.name
    copy.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(times, copy)
    return copy


def test_a_failed_builds_sphinx_gallery_files_pass_no_gate(tmp_path) -> None:
    """An example raised: the build exits 2, its report names the example, and each of
    sphinx-gallery's files it wrote is judged by that report: ``check`` and ``compare``
    exit 3 naming the example, ``history append`` refuses it in one line. A copy kept
    elsewhere has no report beside its project: its times pass, with the note."""
    src = make_project(tmp_path, ["plot_quick.py", "plot_crash.py"])
    built = build(src)
    assert built.returncode == 2, built.output
    history = tmp_path / "history.jsonl"

    for times in _timing_files(src):
        assert times.is_file(), built.output
        base = _kept_copy(times, tmp_path)
        text, code = run_check([str(times)])
        assert code == EXIT_BUILD_FAILED, text
        assert "plot_crash.py" in text and "this example crashes on purpose" in text, text
        text, code = run_compare(str(base), str(times))
        assert code == EXIT_BUILD_FAILED, text
        assert "The head build failed: examples/plot_crash.py failed" in text, text
        text, code = run_history_append(str(times), history)
        assert code == 2, text
        assert text.count("\n") == 1, text
        assert f"{times}: the build failed (examples/plot_crash.py failed" in text, text
        assert not history.exists()

        text, code = run_check([str(base)])
        assert code == 0, text
        assert NO_STATUS in text, text

    # As a CI step runs it.
    done = run_cli("check", str(_timing_files(src)[0]))
    assert done.returncode == EXIT_BUILD_FAILED, done.stdout + done.stderr
    assert "examples/plot_crash.py" in done.stdout, done.stdout


def test_a_passing_builds_sphinx_gallery_files_still_pass(tmp_path) -> None:
    """Its report beside it says the build passed: the files are judged by their times,
    with the statuses the report gives, so no note says that they cannot tell a failure."""
    src = make_project(tmp_path, ["plot_quick.py"])
    built = build(src)
    assert built.returncode == 0, built.output

    for number, times in enumerate(_timing_files(src)):
        text, code = run_check([str(times)], flat_budget="5m")
        assert code == 0, text
        assert NO_STATUS not in text, text
        text, code = run_compare(str(_kept_copy(times, tmp_path)), str(times))
        assert code == 0, text
        # A history of its own: one history records the build once, through any file.
        text, code = run_history_append(str(times), tmp_path / f"history{number}.jsonl")
        assert code == 0, text
        assert text.startswith("appended 1 examples"), text


def test_a_report_older_than_sphinx_gallerys_file_does_not_judge_it(tmp_path) -> None:
    """The failed build's report judges its files only while it is of their build or a
    later one: files rewritten since (here by hand, long after) are judged by their
    times again."""
    src = make_project(tmp_path, ["plot_quick.py", "plot_crash.py"])
    built = build(src)
    assert built.returncode == 2, built.output
    times = _timing_files(src)[0]
    assert layout.built_outdir(times) == (src.resolve(), built.outdir.resolve())
    report = layout.report_path(built.outdir)
    written = report.stat().st_mtime_ns
    older = written - 60 * 1_000_000_000
    os.utime(report, ns=(older, older))

    text, code = run_check([str(times)])
    assert code == 0, text
    assert NO_STATUS in text, text


def test_a_kept_copy_of_a_failed_builds_file_is_appended_as_times_only(tmp_path) -> None:
    """A copy kept elsewhere has no report of its build: ``history append`` takes its
    times, says (as ``check`` does) that it cannot tell a failure, and its line does not
    record the example that raised as ok; ``report --baseline`` says it too."""
    src = make_project(tmp_path, ["plot_quick.py", "plot_crash.py"])
    built = build(src)
    assert built.returncode == 2, built.output
    copy = _kept_copy(_timing_files(src)[0], tmp_path)
    history = tmp_path / "history.jsonl"

    done = run_cli("history", "append", str(copy), "--to", str(history))
    assert done.returncode == 0, done.stdout + done.stderr
    said = done.stdout.splitlines()
    assert said[0].startswith("appended 2 examples"), said
    assert said[1].startswith(f"note: {copy}: {NO_STATUS}"), said
    line = json.loads(history.read_text(encoding="utf-8"))
    assert line["statuses_known"] is False, line
    crashed = next(v for k, v in line["examples"].items() if k.endswith("plot_crash.py"))
    assert crashed.get("status") != "ok", line

    good = make_project(tmp_path / "good", ["plot_quick.py", "plot_crash.py"])
    (good / "examples" / "plot_crash.py").write_text('"""\nFine\n====\n"""\n', "utf-8")
    passed = build(good)
    assert passed.returncode == 0, passed.output
    done = run_cli("report", str(passed.report_path), "--baseline", str(copy))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Baseline failures not known:" in done.stdout, done.stdout
    assert "does not say whether an example failed" in done.stdout, done.stdout
