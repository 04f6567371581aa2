"""Gates and statuses that never lie: check, report, compare and history on report files.

A failed build never passes ``check`` nor reads "within budget"; an example stopped at its
budget is never a speed-up; sphinx-gallery's ``0.0 MB`` is "not measured"; two files of
one build are not two builds; no command writes over its input or a file of another kind.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.report_factory import record, write_report

from docsaccel.cli import main
from docsaccel.report.check import EXIT_BUILD_FAILED
from docsaccel.report.commands import run_check, run_compare, run_history_append, run_report
from docsaccel.report.history import read_builds, read_history

FINISHED = "2026-11-29T17:00:10+00:00"


def failed(name: str, **extra) -> dict:
    return record(name, 0.1, status="failed", error="ValueError: boom", **extra)


def stopped(name: str, budget: float) -> dict:
    """An example its time budget interrupted, after ``budget`` seconds and a bit."""
    return record(
        name,
        budget + 0.1,
        budget=budget,
        status="interrupted",
        interrupted_by="time",
        error=f"tutorials/{name} was interrupted after {budget} s",
        finished_at=FINISHED,
    )


def write_build(path: Path, records: list[dict], generated_at: str, **build) -> Path:
    """A report of its own build (``generated_at``), with ``build`` facts overridden."""
    write_report(path, records)
    data = json.loads(path.read_text())
    data["generated_at"] = generated_at
    data["build"].update(build)
    path.write_text(json.dumps(data))
    return path


# --- check and the report's verdict on a failed build ------------------------------------


def test_check_fails_a_build_whose_example_raised(tmp_path) -> None:
    report = write_report(tmp_path / "r.json", [record("plot_a.py", 1.0), failed("plot_bad.py")])
    text, code = run_check([str(report)])
    assert code == EXIT_BUILD_FAILED == 3
    assert text == (
        "FAIL: the build failed: 1 example failed: tutorials/plot_bad.py (ValueError: boom)\n"
    )
    assert main(["check", str(report)]) == 3


def test_check_keeps_the_budgets_verdict_beside_the_failure(tmp_path) -> None:
    records = [record("plot_slow.py", 90.0, budget=60.0), failed("plot_bad.py")]
    text, code = run_check([str(write_report(tmp_path / "r.json", records))])
    assert code == EXIT_BUILD_FAILED
    lines = text.splitlines()
    assert lines[0].startswith("FAIL: the build failed: 1 example failed")
    assert lines[1] == "FAIL: 1 of 2 examples over budget:"


def test_an_expected_failure_passes_check_and_says_so_in_the_report(tmp_path) -> None:
    records = [record("plot_a.py", 1.0), failed("plot_xfail.py", expected_failure=True)]
    report = write_report(tmp_path / "r.json", records)
    text, code = run_check([str(report)])
    assert code == 0 and text.startswith("OK: 2 examples checked")
    markdown, _ = run_report(str(report))
    assert "All examples within budget." in markdown
    assert "| failed \\(expected\\) |" in markdown


@pytest.mark.parametrize("fmt", ["md", "html", "json"])
def test_a_failed_build_is_never_within_budget_in_the_report(tmp_path, fmt) -> None:
    report = write_report(tmp_path / "r.json", [record("plot_a.py", 1.0), failed("plot_bad.py")])
    text, code = run_report(str(report), fmt=fmt)
    assert code == 0
    assert "within budget" not in text
    if fmt == "json":
        assert json.loads(text)["failed"] == ["tutorials/plot_bad.py"]
    else:
        assert "The build failed: 1 example failed: tutorials/plot" in text


def test_github_check_annotates_the_failed_example(tmp_path) -> None:
    report = write_report(tmp_path / "r.json", [failed("plot_bad.py")])
    text, code = run_check([str(report)], fmt="github")
    assert code == EXIT_BUILD_FAILED
    assert "::error" in text and "tutorials/plot_bad.py failed: ValueError: boom" in text


# --- a stopped example is never a timing -------------------------------------------------


def test_compare_lists_a_stopped_example_apart_never_as_a_speed_up(tmp_path) -> None:
    base = write_build(tmp_path / "base.json", [record("plot_sleep.py", 3.0)], FINISHED)
    head = write_build(tmp_path / "head.json", [stopped("plot_sleep.py", 2.0)], FINISHED)
    text, code = run_compare(str(base), str(head), fail_on_regression=True)
    assert code == 0
    assert "-0.9s" not in text and "-31%" not in text
    assert "Not compared (not a whole run in both):" in text
    assert "plot_sleep.py: 3s -> interrupted at its budget of 2s (after 2.1s)" in text


def test_compare_allowed_an_unfinished_build_says_so_first(tmp_path) -> None:
    """``--allow-incomplete`` compares what an unfinished build measured, never silently:
    each input that did not finish is named first, in text and in annotations, as a
    build that failed (a head that did not finish: exit 3)."""
    base = write_build(tmp_path / "base.json", [record("plot_a.py", 1.0)], FINISHED)
    head = write_build(
        tmp_path / "head.json",
        [record("plot_a.py", 1.0)],
        FINISHED,
        complete=False,
        ended_because="it was terminated (SIGTERM)",
    )
    text, code = run_compare(str(base), str(head), allow_incomplete=True)
    assert code == EXIT_BUILD_FAILED, text
    assert text.splitlines()[0] == (
        "The head build failed: the build did not finish (it was terminated (SIGTERM))."
    ), text
    notes, code = run_compare(str(base), str(head), allow_incomplete=True, fmt="github")
    assert code == EXIT_BUILD_FAILED
    assert notes == (
        "::error title=Build failed::the head build failed: the build did not finish "
        "(it was terminated (SIGTERM))\n"
    ), notes
    text, code = run_compare(str(head), str(base), allow_incomplete=True)
    assert code == 0, text
    assert text.splitlines()[0] == (
        "The base build failed: the build did not finish (it was terminated (SIGTERM))."
    ), text


def test_github_compare_annotates_a_failed_head_build(tmp_path) -> None:
    base = write_build(tmp_path / "base.json", [record("plot_bad.py", 0.1)], FINISHED)
    head = write_build(tmp_path / "head.json", [failed("plot_bad.py")], FINISHED)
    notes, _ = run_compare(str(base), str(head), fmt="github")
    assert notes.startswith(
        "::error title=Build failed::the head build failed: tutorials/plot_bad.py failed "
        "(ValueError: boom)\n"
    ), notes


def test_report_baseline_shows_no_delta_for_a_stopped_example(tmp_path) -> None:
    base = write_build(tmp_path / "base.json", [record("plot_sleep.py", 3.0)], FINISHED)
    head = write_build(tmp_path / "head.json", [stopped("plot_sleep.py", 2.0)], FINISHED)
    text, _ = run_report(str(head), baseline=str(base), fmt="json")
    (row,) = json.loads(text)["examples"]
    assert row["delta_seconds"] is None


@pytest.mark.parametrize(
    ("records", "build", "said"),
    [
        (
            [stopped("plot_a.py", 2.0)],
            {"complete": False, "ended_because": "it was terminated (SIGTERM)"},
            "the build did not finish (it was terminated (SIGTERM)",
        ),
        (
            [failed("plot_a.py")],
            {"complete": False},
            "the build did not finish",
        ),
        (
            [record("plot_a.py", 0.0, status="not-executed")],
            {},
            "ran none of its 1 example (every one not-executed)",
        ),
    ],
    ids=["stopped", "failed-and-stopped", "ran-nothing"],
)
def test_report_refuses_a_baseline_compare_refuses(tmp_path, records, build, said) -> None:
    """A baseline of a build that did not finish or ran nothing is no "+0s against the
    baseline": refused in one line, as ``compare`` refuses it as its base (or, one an
    example failed, says so first: ``report`` has no line for that, and refuses it)."""
    good = write_build(tmp_path / "good.json", [record("plot_a.py", 1.0)], FINISHED)
    hard = write_build(tmp_path / "hard.json", records, FINISHED, **build)
    compared, _ = run_compare(str(hard), str(good))
    assert said in compared.splitlines()[0], compared
    for fmt in ("md", "html", "json"):
        text, code = run_report(str(good), baseline=str(hard), fmt=fmt)
        assert code == 2, text
        assert text.count("\n") == 1 and text.startswith(f"error: {hard}: "), text
        assert said in text and "--allow-incomplete" not in text, text


def test_history_trends_never_read_a_stopped_example_as_a_duration(tmp_path) -> None:
    history = tmp_path / "h.jsonl"
    runs = [
        record("plot_sleep.py", 3.0),
        record("plot_sleep.py", 3.0),
        stopped("plot_sleep.py", 2.0),
    ]
    for index, one in enumerate(runs):
        report = write_build(tmp_path / f"r{index}.json", [one], f"2026-11-29T17:0{index}:00+00:00")
        assert run_history_append(str(report), history)[1] == 0
    assert read_history(history)["tutorials/plot_sleep.py"].durations == (3.0, 3.0)
    assert (
        json.loads(history.read_text().splitlines()[-1])["examples"]["tutorials/plot_sleep.py"][
            "status"
        ]
        == "interrupted"
    )
    md, _ = run_report(str(tmp_path / "r2.json"), history=str(history))
    assert "-29%" not in md and "-31%" not in md


# --- history append refuses what is not one more finished build --------------------------


def test_history_append_refuses_an_incomplete_build(tmp_path) -> None:
    report = write_build(tmp_path / "r.json", [record("plot_a.py", 1.0)], FINISHED, complete=False)
    history = tmp_path / "h.jsonl"
    text, code = run_history_append(str(report), history)
    assert code == 2 and not history.exists()
    assert text.startswith(f"error: {report}: the build did not finish")
    assert "not appended" in text and text.count("\n") == 1


def test_history_append_refuses_the_same_build_twice(tmp_path) -> None:
    report = write_build(tmp_path / "r.json", [record("plot_a.py", 1.0)], FINISHED)
    history = tmp_path / "h.jsonl"
    assert run_history_append(str(report), history)[1] == 0
    text, code = run_history_append(str(report), history)
    assert code == 2 and "already records the build" in text
    assert len(read_builds(history)) == 1


def test_history_append_refuses_a_target_that_is_not_a_history(tmp_path) -> None:
    report = write_build(tmp_path / "r.json", [record("plot_a.py", 1.0)], FINISHED)
    other = write_build(tmp_path / "other.json", [record("plot_b.py", 2.0)], FINISHED)
    before = other.read_bytes()
    assert main(["history", "append", str(report), "--to", str(other)]) == 2
    text, code = run_history_append(str(report), other)
    assert code == 2 and "is not a docsaccel history" in text
    text, code = run_history_append(str(report), report)
    assert code == 2 and "given both as the report to append and as --to" in text
    assert other.read_bytes() == before


# --- "not measured" is never zero --------------------------------------------------------

SG_GRID = """\
+-------------------------------------------------------------------+-----------+--------+
| :ref:`sphx_glr_tutorials_plot_a.py` (``plot_a.py``)               | 00:01.000 | 0.0 MB |
+-------------------------------------------------------------------+-----------+--------+
"""


def test_compare_takes_sphinx_gallerys_zero_memory_for_unmeasured(tmp_path) -> None:
    base = tmp_path / "sg_execution_times.rst"
    base.write_text(SG_GRID)
    head = write_build(tmp_path / "r.json", [record("plot_a.py", 1.0)], FINISHED)
    data = json.loads(head.read_text())
    data["examples"][0]["id"] = "plot_a.py"
    head.write_text(json.dumps(data))
    text, code = run_compare(str(base), str(head), fail_on_regression=True)
    assert code == 0, text
    assert "MEMORY REGRESSED" not in text and "0B" not in text


# --- several inputs of one build ----------------------------------------------------------


def _list_table(entries: list[tuple[str, str]]) -> str:
    rows = "".join(
        f"   * - :ref:`sphx_glr_tutorials_{name}` (``{path}``)\n     - 00:0{i}.500\n     - 0.0\n"
        for i, (name, path) in enumerate(entries, 1)
    )
    head = ".. list-table::\n   :header-rows: 1\n\n   * - Example\n     - Time\n     - Mem (MB)\n"
    return head + rows


def test_check_counts_the_root_and_a_gallerys_file_of_one_build_once(tmp_path) -> None:
    names = ["plot_a.py", "plot_b.py", "plot_c.py"]
    root = tmp_path / "root.rst"
    root.write_text(_list_table([(n, f"tutorials/{n}") for n in names]))
    gallery = tmp_path / "gallery.rst"
    gallery.write_text(_list_table([(n, n) for n in names]))
    text, code = run_check([str(root), str(gallery)], flat_budget="2s")
    assert text.startswith("FAIL: 2 of 3 examples over budget:"), text
    assert code == 1
    text, code = run_check([str(root), str(gallery)], flat_budget="1m")
    assert text.startswith("OK: 3 timings checked against budgets, 3 with a budget, none over")
    assert text.count("does not say whether an example failed") == 2, text


# --- no command writes over its input ------------------------------------------------------


def test_report_refuses_to_write_over_its_input_or_another_kind_of_file(tmp_path, capsys) -> None:
    report = write_build(tmp_path / "r.json", [record("plot_a.py", 1.0)], FINISHED)
    other = write_build(tmp_path / "other.json", [record("plot_b.py", 1.0)], FINISHED)
    before, other_before = report.read_bytes(), other.read_bytes()
    assert main(["report", str(report), "-o", str(report)]) == 2
    assert "is an input of this command" in capsys.readouterr().err
    assert main(["report", str(report), "-o", str(other)]) == 2
    assert "is a docsaccel report (pass it to" in capsys.readouterr().err
    assert report.read_bytes() == before and other.read_bytes() == other_before
    # Its own kind of file is replaced, as before.
    summary = tmp_path / "summary.json"
    assert main(["report", str(report), "--format", "json", "-o", str(summary)]) == 0
    assert main(["report", str(report), "--format", "json", "-o", str(summary)]) == 0
    assert main(["report", str(report), "-o", str(tmp_path / "r.md")]) == 0


def test_report_writes_the_view_its_output_is_named_for(tmp_path, capsys) -> None:
    """``-o budget.html`` is the HTML view, not Markdown in a file named ``.html``; a
    ``--format`` the name contradicts is refused in one line, nothing written."""
    report = write_build(tmp_path / "r.json", [record("plot_a.py", 1.0)], FINISHED)
    page, summary = tmp_path / "budget.html", tmp_path / "summary.json"
    assert main(["report", str(report), "-o", str(page)]) == 0
    assert page.read_text().lstrip().lower().startswith("<!doctype html")
    assert main(["report", str(report), "-o", str(summary)]) == 0
    assert json.loads(summary.read_text())["schema"]
    capsys.readouterr()
    wrong = tmp_path / "wrong.html"
    assert main(["report", str(report), "--format", "md", "-o", str(wrong)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--format md" in err and "--format html" in err, err
    assert not wrong.exists()


@pytest.mark.parametrize(
    ("name", "fmt", "text"),
    [
        ("budgets.toml", "md", '[budgets]\n"plot_a.py" = "30s"\n'),
        ("index.rst", "html", "Docs\n====\n"),
        ("conf.py", "md", "project = 'x'\n"),
        ("README.md", "md", "# My project\n\n## Docs build budget report\n\nHow to read it.\n"),
        ("page.html", "html", "<!DOCTYPE html>\n<html><body>mine</body></html>\n"),
        ("data.json", "json", '{"name": "mine"}\n'),
    ],
)
def test_report_never_overwrites_a_file_it_did_not_write(tmp_path, capsys, name, fmt, text):
    report = write_build(tmp_path / "r.json", [record("plot_a.py", 1.0)], FINISHED)
    target = tmp_path / name
    target.write_text(text)
    assert main(["report", str(report), "--format", fmt, "-o", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(target) in err, err
    assert "not a file docsaccel wrote" in err and "remove it first" in err, err
    assert target.read_text() == text


def test_the_chart_program_never_overwrites_a_file_it_did_not_write(tmp_path, capsys) -> None:
    from docsaccel.report.chart import main as chart_main

    report = write_build(tmp_path / "r.json", [record("plot_a.py", 1.0)], FINISHED)
    budgets = tmp_path / "budgets.toml"
    budgets.write_text('default = "1m"\n')
    assert chart_main([str(report), str(budgets)]) == 2
    err = capsys.readouterr().err
    assert f"{budgets}: not a file docsaccel wrote" in err and err.count("\n") == 1, err
    assert budgets.read_text() == 'default = "1m"\n'
    chart = tmp_path / "chart.svg"
    assert chart_main([str(report), str(chart)]) == 0
    assert chart_main([str(report), str(chart)]) == 0  # its own chart: replaced
    assert "plot_a.py" in chart.read_text()


@pytest.mark.parametrize("fmt", ["md", "html", "json"])
def test_report_replaces_its_own_view_or_an_empty_file(tmp_path, fmt) -> None:
    report = write_build(tmp_path / "r.json", [record("plot_a.py", 1.0)], FINISHED)
    # An unfinished build's view starts with its warning: still recognised as ours.
    unfinished = write_build(
        tmp_path / "u.json", [record("plot_b.py", 1.0)], FINISHED, complete=False
    )
    target = tmp_path / f"out.{fmt}"
    target.write_text("")
    assert main(["report", str(unfinished), "--format", fmt, "-o", str(target)]) == 0
    assert main(["report", str(report), "--format", fmt, "-o", str(target)]) == 0
    assert "r.json" in target.read_text() and "u.json" not in target.read_text()
