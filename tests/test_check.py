"""``docsaccel check``: exit codes 1/0/2, the listing, and the one budget precedence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.report_factory import record, write_report

from docsaccel.budgets import load_budgets
from docsaccel.cli import main
from docsaccel.contract import unmeasured_text
from docsaccel.report.check import CheckResult, apply_budgets, failure_lines
from docsaccel.report.inputs import load_timings
from docsaccel.report.model import Timing

FIXTURES = Path(__file__).parent / "fixtures" / "sg_times"
BULLETS = str(FIXTURES / "bullets.rst")  # 62.5 s, 1.234 s, 0 s


def test_over_a_flat_budget_exits_1_listing_slowest_first(capsys) -> None:
    grid = str(FIXTURES / "grid.rst")  # 600.1 s, 5.2 s, 00:00.000 (not run)
    assert main(["check", BULLETS, grid, "--budget", "5s"]) == 1
    out = capsys.readouterr().out
    # Two timings of the same two examples run: each timing judged, each example counted
    # once; the third one's 00:00.000 is sphinx-gallery's for an example it did not run.
    assert out.startswith("FAIL: 2 of 2 examples over budget")
    assert "note: 1 example not measured by this build" in out
    lines = [line for line in out.splitlines()[1:] if not line.startswith("note: ")]
    assert [line.split(":")[0].strip() for line in lines] == [
        "plot_train_agent.py",
        "plot_train_agent.py",
        "plot_env_basics.py",
    ]
    assert "10m0.1s > budget 5s from --budget 5s" in lines[0]


def test_within_budget_exits_0(capsys) -> None:
    assert main(["check", BULLETS, "--budget", "2m"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("OK: 2 timings checked against budgets, 2 with a budget")


def test_no_budget_anywhere_passes_with_zero_bounded(capsys) -> None:
    assert main(["check", BULLETS]) == 0
    assert "0 with a budget" in capsys.readouterr().out


def test_sphinx_gallerys_file_never_reads_as_a_plain_ok(tmp_path, capsys) -> None:
    """sg_execution_times.rst lists an example that raised as any other: only its times
    were checked, and the check says so (exit 0 as documented: no budget was broken)."""
    assert main(["check", BULLETS]) == 0
    out = capsys.readouterr().out
    assert out == (
        "OK: 2 timings checked against budgets, 0 with a budget, none over budget.\n"
        "note: 1 example not measured by this build (outputs reused, or not run): no budget "
        "judged.\n"
        f"note: {BULLETS}: sphinx-gallery's file does not say whether an example failed, "
        "nor whether its build finished (a stopped build leaves the files of the galleries "
        "it ended): check the build's report (<outdir>/docsaccel/report.json)\n"
    )
    assert "examples checked" not in out
    assert main(["check", BULLETS, "--format", "github"]) == 0
    notes = capsys.readouterr().out
    assert notes.startswith("::notice title=Failures not known::"), notes
    assert f"{BULLETS}: sphinx-gallery's file does not say whether an example failed" in notes
    report = write_report(tmp_path / "r.json", [record("plot_a.py", 1.0)])
    assert main(["check", str(report)]) == 0
    assert "note:" not in capsys.readouterr().out  # a report says how each example ended


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["check", "MISSING.rst"], "MISSING.rst: cannot read"),
        (["check", str(FIXTURES / "list_table_empty.rst")], "no example"),
        (["check", BULLETS, "--budget", "soon"], "--budget: 'soon' is not a duration"),
        (["check", BULLETS, "--budget", "none"], '--budget: "none" is not a budget'),
        (["check", BULLETS, "--budgets", "MISSING.toml"], "MISSING.toml"),
    ],
)
def test_unreadable_inputs_exit_2(capsys, args, message) -> None:
    assert main(args) == 2
    assert message in capsys.readouterr().err


def test_report_json_budgets_apply_without_options(tmp_path, capsys) -> None:
    path = write_report(
        tmp_path / "r.json",
        [
            record("plot_a.py", 70.0, budget=60.0, budget_detail="conf/budgets.toml default"),
            record("plot_b.py", 10.0, budget=60.0),
            record("plot_c.py", 1.0, budget=None),
        ],
    )
    assert main(["check", str(path)]) == 1
    out = capsys.readouterr().out
    assert "tutorials/plot_a.py: 1m10s > budget 1m from conf/budgets.toml default" in out
    assert "plot_b" not in out


def test_interrupted_example_is_over_budget(tmp_path, capsys) -> None:
    path = write_report(
        tmp_path / "r.json", [record("plot_a.py", 30.0, budget=30.0, status="interrupted")]
    )
    assert main(["check", str(path)]) == 1
    assert "(interrupted)" in capsys.readouterr().out


def test_precedence_file_then_flat_then_recorded(tmp_path) -> None:
    budgets = tmp_path / "budgets.toml"
    budgets.write_text('[examples]\n"plot_a.py" = "10s"\n', encoding="utf-8")
    report = write_report(
        tmp_path / "r.json",
        [
            record("plot_a.py", 5.0, budget=100.0),
            record("plot_b.py", 5.0, budget=100.0),
            record("plot_c.py", 5.0, budget=100.0),
        ],
    )
    timings = load_timings(report)
    table = load_budgets(budgets)
    resolved = {t.name: t for t in apply_budgets(timings, flat_seconds=20.0, table=table)}
    assert (resolved["plot_a.py"].budget_seconds, resolved["plot_a.py"].budget_source) == (
        10.0,
        "pattern",
    )
    assert (resolved["plot_b.py"].budget_seconds, resolved["plot_b.py"].budget_source) == (
        20.0,
        "flat",
    )
    # Without options the recorded budget stays.
    assert {t.budget_seconds for t in apply_budgets(timings)} == {100.0}
    # The file's default covers every example, so the flat budget no longer applies.
    budgets.write_text('default = "7s"\n', encoding="utf-8")
    resolved = apply_budgets(timings, flat_seconds=20.0, table=load_budgets(budgets))
    assert {t.budget_seconds for t in resolved} == {7.0}


def test_budget_file_on_sphinx_gallery_input(tmp_path, capsys) -> None:
    budgets = tmp_path / "budgets.toml"
    budgets.write_text('default = "1m"\n[examples]\n"plot_train_*.py" = "2m"\n')
    assert main(["check", BULLETS, "--budgets", str(budgets)]) == 0
    budgets.write_text('default = "1s"\n[examples]\n"plot_train_*.py" = "2m"\n')
    assert main(["check", BULLETS, "--budgets", str(budgets)]) == 1
    out = capsys.readouterr().out
    assert "plot_env_basics.py: 1.234s > budget 1s from" in out and "default" in out
    assert "plot_train_agent" not in out.split("FAIL")[-1]


def test_help_documents_precedence_and_exit_codes(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    text = capsys.readouterr().out
    assert "precedence" in text and "Exit codes: 0" in text and "JUnit" in text


def test_budgets_file_keeps_an_inline_budget_like_the_build(tmp_path, capsys) -> None:
    """check --budgets resolves as the build does: the example's own comment wins."""
    budgets = tmp_path / "budgets.toml"
    budgets.write_text('default = "1m"\n[examples]\n"plot_*.py" = "10s"\n', encoding="utf-8")
    source = '"""Doc."""\n# docsaccel_budget = "30s"\n'
    build_budget = load_budgets(budgets).resolve("plot_a.py", source_text=source, ci=False)
    assert (build_budget.seconds, build_budget.source) == (30.0, "inline")
    report = write_report(
        tmp_path / "r.json",
        [
            record(
                "plot_a.py",
                20.0,
                budget=build_budget.seconds,
                budget_source=build_budget.source,
                budget_detail=build_budget.detail,
            ),
            record("plot_b.py", 20.0, budget=60.0),
        ],
    )
    assert main(["check", str(report), "--budgets", str(budgets)]) == 1
    out = capsys.readouterr().out
    assert "plot_b.py" in out and "plot_a.py" not in out  # 20 s within its inline 30 s
    # A flat budget does not override the example's own word either.
    assert main(["check", str(report), "--budget", "5s"]) == 1
    assert "plot_a.py" not in capsys.readouterr().out


def test_fast_report_takes_the_fast_budget_of_the_winning_rule(tmp_path, capsys) -> None:
    budgets = tmp_path / "budgets.toml"
    budgets.write_text(
        '[examples]\n"plot_a.py" = { budget = "1m", fast = "5s" }\n', encoding="utf-8"
    )
    for fast, code in ((True, 1), (False, 0)):
        report = write_report(tmp_path / "r.json", [record("plot_a.py", 8.0, fast=fast)])
        assert main(["check", str(report), "--budgets", str(budgets)]) == code
    assert "(fast path)" in capsys.readouterr().out


def test_a_name_with_a_line_break_stays_on_its_line() -> None:
    from docsaccel.report.check import check_timings, format_check
    from docsaccel.report.model import Timing

    hostile = Timing(
        id="g/plot_a\n::error file=x::injected.py",
        name="plot_a\n::error file=x::injected.py",
        seconds=5.0,
        budget_seconds=1.0,
        budget_source="default",
    )
    text = format_check(check_timings([hostile]))
    assert not any(line.startswith("::") for line in text.splitlines())
    assert "plot_a\\n::error" in text


def test_a_budget_rule_that_matches_no_example_is_said(tmp_path) -> None:
    from pathlib import Path

    from docsaccel.budgets import MATCHED_AGAINST
    from docsaccel.report.commands import run_check

    fixture = Path(__file__).parent / "fixtures" / "sg_times" / "list_table_no_memory.rst"
    budgets = tmp_path / "budgets.toml"
    budgets.write_text('default = "1h"\n[examples]\n"sub/nomatch_*.py" = "1s"\n', "utf-8")
    text, code = run_check([str(fixture)], budgets=str(budgets))
    assert code == 0
    assert text.splitlines()[0] == (
        f"warning: {budgets}: [examples] pattern 'sub/nomatch_*.py' matches no example "
        f"({MATCHED_AGAINST})"
    )
    github, _ = run_check([str(fixture)], budgets=str(budgets), fmt="github")
    assert github.startswith("::warning title=Unused budget rule::")


def test_an_example_the_cache_restored_is_judged_but_not_one_sphinx_gallery_reused(
    tmp_path, capsys
) -> None:
    # A cache entry serves only the context that made it, so its time was measured under
    # this build's budgets, and the build log calls it over budget too; sphinx-gallery's
    # reuse of an unchanged example keeps a time of whatever build last ran it.
    restored = record(
        "plot_a.py", 70.0, status="cached", cache={"hit": True, "saved_seconds": 70.0}
    )
    reused = record("plot_b.py", 90.0, status="cached")
    path = write_report(tmp_path / "r.json", [restored, reused])
    assert main(["check", str(path)]) == 1
    out = capsys.readouterr().out
    # Judged by its stored run's time, said so; neither is measured by this build.
    assert "FAIL: 1 of 1 example over budget" in out
    assert "tutorials/plot_a.py: 1m10s (stored run) > budget 1m" in out
    assert "plot_b" not in out
    assert f"note: {unmeasured_text(1, restored=1)}." in out


def _failed_build_report(tmp_path: Path, sg_summary: str) -> Path:
    """Four failed examples: three raised (sphinx-gallery's summary names them), the fourth
    left a thread that kept the build's process from ending (``exit_blocked``)."""
    records = [
        record(f"plot_{name}.py", 1.0, status="failed", error=f"ValueError: {name}")
        for name in ("a", "b", "c")
    ]
    stuck = "a thread it started was still running, so the build's process could not end"
    records.append(record("plot_thread.py", 1.0, status="failed", error=stuck))
    path = write_report(tmp_path / "r.json", records)
    report = json.loads(path.read_text(encoding="utf-8"))
    report["build"]["sphinx_failed"] = sg_summary
    report["build"]["exit_blocked"] = (
        "the build's process had not ended 5 s after the build: a thread of "
        "tutorials/plot_thread.py was still running"
    )
    path.write_text(json.dumps(report), encoding="utf-8")
    return path


def test_a_failed_build_says_each_failure_once_with_one_count(tmp_path, capsys) -> None:
    named = ", ".join(f"tutorials/plot_{n}.py (ValueError: {n})" for n in "abc")
    report = _failed_build_report(
        tmp_path, f"sphinx-gallery: 3 examples failed: {named}; tracebacks above"
    )
    assert main(["check", str(report)]) == 3
    out = capsys.readouterr().out
    fails = [line for line in out.splitlines() if line.startswith("FAIL")]
    assert len(fails) == 1, out
    assert fails[0].startswith("FAIL: the build failed: 4 examples failed: tutorials/plot_a.py")
    assert "tutorials/plot_thread.py (a thread it started was still running" in fails[0]
    assert "3 examples" not in out


def test_what_the_failed_examples_do_not_say_is_still_said(tmp_path, capsys) -> None:
    passing = "1 example expected to fail did not: tutorials/plot_x.py (remove them)"
    report = _failed_build_report(
        tmp_path,
        f"sphinx-gallery: 3 examples failed: tutorials/plot_a.py (ValueError: a), "
        f"tutorials/plot_b.py (ValueError: b), tutorials/plot_c.py (ValueError: c); "
        f"tracebacks above; {passing}",
    )
    assert main(["check", str(report)]) == 3
    out = capsys.readouterr().out
    assert f"FAIL: the build failed: sphinx-gallery: {passing} (" in out
    assert "3 examples failed" not in out and "4 examples failed" in out


def test_a_fast_budget_above_the_full_one_is_warned_once_naming_key_and_values(
    tmp_path, capsys
) -> None:
    budgets = tmp_path / "budgets.toml"
    budgets.write_text(
        'default = "1m"\nfast_default = "90s"\n'
        '[examples]\n"plot_*.py" = { budget = "1m", fast = "2m" }\n'
        '"plot_b.py" = { budget = "1m", fast = "20s" }\n',
        encoding="utf-8",
    )
    report = write_report(tmp_path / "r.json", [record("plot_a.py", 1.0), record("plot_b.py", 1.0)])
    assert main(["check", str(report), "--budgets", str(budgets)]) == 0
    warnings = [line for line in capsys.readouterr().out.splitlines() if "warning" in line]
    assert warnings == [
        f"warning: {budgets}: fast_default = 1m30s is larger than default = 1m: a fast-path "
        "budget above the full build's (the two swapped?)",
        f"warning: {budgets}: [examples] 'plot_*.py'.fast = 2m is larger than budget = 1m: "
        "a fast-path budget above the full build's (the two swapped?)",
    ]


@pytest.mark.parametrize("complete", ["missing", None], ids=["key-missing", "null"])
def test_a_report_that_does_not_say_whether_its_build_finished_is_refused(
    tmp_path, capsys, complete
) -> None:
    """Whether the build finished is never assumed: every gate refuses the report."""
    path = write_report(tmp_path / "report.json", [record("plot_a.py", 1.0)])
    report = json.loads(path.read_text("utf-8"))
    if complete == "missing":
        del report["build"]["complete"]
    else:
        report["build"]["complete"] = complete
    path.write_text(json.dumps(report), "utf-8")
    for command in (["check", str(path)], ["check", str(path), "--allow-incomplete"]):
        assert main(command) == 2
        captured = capsys.readouterr()
        text = captured.out + captured.err
        assert text.count("\n") == 1, text
        assert f"{path}: build.complete is " in text, text
        assert "expected true or false" in text, text
    assert main(["report", str(path)]) == 2
    assert "build.complete" in capsys.readouterr().err


def test_check_reads_a_budget_file_by_the_builds_rules(tmp_path, capsys) -> None:
    """An empty file passed silently, and a memory budget above this machine's memory,
    which the build refuses, was accepted."""
    report = write_report(tmp_path / "r.json", [record("plot_a.py", 1.0)])
    empty = tmp_path / "empty.toml"
    empty.write_text("", encoding="utf-8")
    assert main(["check", str(report), "--budgets", str(empty)]) == 0
    warnings = [line for line in capsys.readouterr().out.splitlines() if "warning" in line]
    assert warnings == [
        f"warning: {empty}: sets no budget (no default, memory_default or [examples] rule); "
        "every example runs unbounded"
    ]
    huge = tmp_path / "huge.toml"
    huge.write_text('memory_default = "99T"\n', encoding="utf-8")
    assert main(["check", str(report), "--budgets", str(huge)]) == 2
    err = capsys.readouterr().err
    assert f"{huge}: memory_default: '99T' is more than the memory of this machine" in err
    assert err.count("\n") == 1, err


@pytest.mark.parametrize("key", ["budgets_failed", "sphinx_failed", "exit_blocked"])
@pytest.mark.parametrize("blank", ["", "  "])
def test_a_build_failure_without_a_reason_fails_with_a_generic_one(
    tmp_path, capsys, key, blank
) -> None:
    """A report saying its build failed with an empty reason fails the gate all the same,
    saying which key said so, never with an empty reason."""
    path = write_report(tmp_path / "r.json", [record("plot_a.py", 1.0)])
    report = json.loads(path.read_text(encoding="utf-8"))
    report["build"][key] = blank
    path.write_text(json.dumps(report), encoding="utf-8")
    assert main(["check", str(path)]) == 3
    failed = [line for line in capsys.readouterr().out.splitlines() if "build failed" in line]
    assert failed == [f"FAIL: the build failed: its report's build.{key} gives no reason ({path})"]


def test_the_budgets_that_stopped_a_build_come_before_the_examples_it_stopped() -> None:
    # A budget's stop aborts a parallel build (abort_on_example_error): the example the
    # other worker ran did not finish because of it, so the budgets' line is the first.
    stopped = Timing("b.py", "b.py", 0.0, status="failed", unfinished=True)
    budgets = "1 example stopped at its budget: a.py"
    result = CheckResult([], 2, 2, failed=[stopped], budgets_failed=[budgets])

    lines = failure_lines(result)

    assert lines[0] == f"FAIL: the build failed: {budgets}", lines
    assert lines[1].startswith("FAIL: the build failed: 1 example did not finish: b.py"), lines


def test_an_example_that_failed_comes_before_the_budgets() -> None:
    failed = Timing("c.py", "c.py", 1.0, status="failed", error="ValueError: x")
    stopped = Timing("b.py", "b.py", 0.0, status="failed", unfinished=True)
    budgets = "1 example stopped at its budget: a.py"
    result = CheckResult([], 3, 3, failed=[failed, stopped], budgets_failed=[budgets])

    lines = failure_lines(result)

    assert lines[0].startswith("FAIL: the build failed: 1 example failed: c.py"), lines
    assert lines[1] == f"FAIL: the build failed: {budgets}", lines


def test_one_example_checked_is_said_in_the_singular(tmp_path, capsys) -> None:
    report = write_report(tmp_path / "r.json", [record("plot_a.py", 1.0)])
    assert main(["check", str(report)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("OK: 1 example checked, 1 with a budget, none over budget."), out


def test_an_output_folder_whose_report_is_a_folder_is_said_so(tmp_path, capsys) -> None:
    """The report path is there but is no file: said in one line, naming it, not that the
    output folder holds no report at all."""
    report = tmp_path / "html" / "docsaccel" / "report.json"
    report.mkdir(parents=True)
    assert main(["check", str(tmp_path / "html")]) == 2
    err = capsys.readouterr().err
    assert err == f"docsaccel: error: {report}: cannot read the report: it is a directory\n"
