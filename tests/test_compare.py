"""``docsaccel compare``: deltas, new and removed examples, both thresholds."""

from __future__ import annotations

import json

import pytest
from helpers.report_factory import record, write_report

from docsaccel.cli import main
from docsaccel.report.commands import run_compare, run_report
from docsaccel.report.compare import compare_timings, format_comparison
from docsaccel.report.model import Timing


def timings(**seconds: float) -> list[Timing]:
    return [Timing(id=name, name=name, seconds=value) for name, value in seconds.items()]


def test_regression_needs_both_thresholds() -> None:
    base = timings(small=0.1, big=600.0, real=10.0, same=3.0, gone=1.0)
    head = timings(small=0.3, big=604.0, real=16.0, same=3.0, new=2.0)
    result = compare_timings(base, head)
    deltas = {d.id: d for d in result.deltas}
    assert not deltas["small"].regressed  # +200 % but only +0.2 s
    assert not deltas["big"].regressed  # +4 s, under 5 s
    assert deltas["real"].regressed  # +6 s and +60 %
    assert [d.id for d in result.regressions] == ["real"]
    assert [t.id for t in result.added] == ["new"] and [t.id for t in result.removed] == ["gone"]
    # Over the examples both ran: "new" and "gone" add to neither total.
    assert result.total_delta == pytest.approx(623.3 - 613.1)
    assert deltas["real"].relative == pytest.approx(0.6)
    # Thresholds are configurable.
    loose = compare_timings(base, head, relative=0.01, absolute_seconds=0.1)
    assert {d.id for d in loose.regressions} == {"small", "real"}


@pytest.mark.parametrize("value", [-0.1, float("nan"), float("inf")])
def test_bad_thresholds_are_rejected(value) -> None:
    with pytest.raises(ValueError, match="threshold"):
        compare_timings([], [], relative=value)


def test_cli_fail_on_regression_and_markdown(tmp_path, capsys) -> None:
    base = write_report(
        tmp_path / "base.json", [record("plot_a.py", 10.0), record("plot_b.py", 5.0)]
    )
    head = write_report(
        tmp_path / "head.json", [record("plot_a.py", 20.0), record("plot_c.py", 1.0)]
    )
    assert main(["compare", str(base), str(head)]) == 0
    text = capsys.readouterr().out
    assert "tutorials/plot_a.py: 10s -> 20s (+10s, +100%)  REGRESSED" in text
    assert "New examples:" in text and "Removed examples:" in text
    assert main(["compare", str(base), str(head), "--fail-on-regression"]) == 1
    capsys.readouterr()
    args = ["compare", str(base), str(head), "--fail-on-regression", "--absolute", "11"]
    assert main(args) == 0
    capsys.readouterr()
    assert main(["compare", str(base), str(head), "--format", "md", "--relative", "150"]) == 0
    markdown = capsys.readouterr().out
    # Only plot_a.py ran in both: plot_b.py (removed) and plot_c.py (new) are listed apart.
    assert markdown.startswith("### Execution time: 20s (+10s vs base 10s); 0 regression")
    assert "; 2 in one build only, not in the totals" in markdown.splitlines()[0]
    assert "| tutorials/plot\\_a.py | 10s | 20s | +10s (+100%) | 100M |  |" in markdown


def test_cli_unreadable_input_exits_2(tmp_path, capsys) -> None:
    base = write_report(tmp_path / "base.json", [record("plot_a.py", 10.0)])
    assert main(["compare", str(base), str(tmp_path / "missing.json")]) == 2
    assert "missing.json" in capsys.readouterr().err


def test_a_time_the_head_build_reused_is_neither_compared_nor_in_a_total() -> None:
    base = [Timing("a.py", "a.py", 10.0), Timing("b.py", "b.py", 30.0)]
    head = [Timing("a.py", "a.py", 11.0), Timing("b.py", "b.py", 90.0, status="cached")]
    comparison = compare_timings(base, head)
    assert [delta.id for delta in comparison.deltas] == ["a.py"]
    assert [new.id for _, new in comparison.not_compared] == ["b.py"]
    # Neither a 60 s regression (90 s is an earlier build's) nor a 30 s speed-up.
    assert (comparison.base_total, comparison.head_total) == (10.0, 11.0)


def test_the_report_counts_as_executed_only_the_examples_the_build_ran(tmp_path) -> None:
    report = write_report(
        tmp_path / "r.json",
        [
            record("plot_a.py", 1.0),
            record("plot_b.py", 4.0, status="cached"),
            record("plot_c.py", 0.0, status="not-executed"),
        ],
    )
    for fmt in ("md", "html"):
        text, code = run_report(str(report), fmt=fmt)
        assert code == 0 and "over 1 example run (1 ok); 1 reused from an earlier build" in text, (
            text
        )


@pytest.mark.parametrize("fmt", ["text", "md"])
def test_a_new_or_removed_example_that_did_not_run_whole_shows_its_status(
    tmp_path, capsys, fmt
) -> None:
    both = record("plot_a.py", 10.0)
    base = write_report(tmp_path / "base.json", [both, record("plot_gone.py", 3.0)])
    head = write_report(
        tmp_path / "head.json",
        [
            both,
            record("plot_loop.py", 2.0, budget=2.0, status="interrupted"),
            record("plot_bad.py", 0.5, status="failed"),
            record("plot_new.py", 1.5),
        ],
    )
    bullet = "- " if fmt == "md" else "  "
    # A head build plot_bad.py failed is a failed build (exit 3), its list all the same.
    for first, second, title, code in ((base, head, "New", 3), (head, base, "Removed", 0)):
        assert main(["compare", str(first), str(second), "--format", fmt]) == code
        text = capsys.readouterr().out
        listed = text.split(f"{title} examples:\n", 1)[1]
        loop = "plot\\_loop.py" if fmt == "md" else "plot_loop.py"
        bad = "plot\\_bad.py" if fmt == "md" else "plot_bad.py"
        assert f"{bullet}tutorials/{loop}: interrupted at its budget of 2s (after 2s)" in listed
        assert f"{bullet}tutorials/{bad}: failed after 0.5s" in listed
        new = "plot\\_new.py" if fmt == "md" else "plot_new.py"
        assert f"{bullet}tutorials/{new}: 1.5s" in listed
        assert ": 2s\n" not in text


@pytest.mark.parametrize("fmt", ["text", "md", "github"])
def test_a_failed_base_build_is_said_first_and_leaves_the_head_verdict(
    tmp_path, capsys, fmt
) -> None:
    """An example that raised early in the base build makes its times no measure: the
    comparison says the base failed before anything else, and judges the head alone."""
    base = write_report(
        tmp_path / "base.json",
        [record("plot_a.py", 10.0), record("plot_bad.py", 0.2, status="failed")],
    )
    head = write_report(
        tmp_path / "head.json", [record("plot_a.py", 10.0), record("plot_bad.py", 5.0)]
    )
    assert main(["compare", str(base), str(head), "--format", fmt, "--fail-on-regression"]) == 0
    first = capsys.readouterr().out.strip().splitlines()[0]
    assert "base build failed" in first.lower(), first
    assert "plot_bad.py" in first.replace("\\_", "_"), first


def test_a_removed_example_is_no_speed_up_in_the_totals(tmp_path, capsys) -> None:
    base = write_report(
        tmp_path / "base.json", [record("plot_a.py", 2.0), record("plot_b.py", 4.6)]
    )
    head = write_report(tmp_path / "head.json", [record("plot_a.py", 2.0)])
    assert main(["compare", str(base), str(head)]) == 0
    first, *rest = capsys.readouterr().out.splitlines()
    # Not "Execution time: 2s (-4.6s vs base 6.6s)": plot_b.py was removed, not sped up.
    assert first.startswith("Execution time: 2s (+0s vs base 2s); 0 regressions")
    assert first.endswith("; 1 in one build only, not in the totals")
    assert "Removed examples:" in rest


def test_one_file_as_base_and_head_is_refused(tmp_path, capsys, monkeypatch) -> None:
    report = write_report(tmp_path / "r1.json", [record("plot_a.py", 1.0)])
    monkeypatch.chdir(tmp_path)
    # Also by another name of the same file: nothing would be compared.
    for head in ("r1.json", str(report), "./sub/../r1.json"):
        (tmp_path / "sub").mkdir(exist_ok=True)
        assert main(["compare", "r1.json", head]) == 2
        err = capsys.readouterr().err.strip()
        assert err.endswith("is the base (r1.json) too; compare the reports of two builds")
        assert len(err.splitlines()) == 1


def test_a_report_as_its_own_baseline_is_refused(tmp_path, capsys) -> None:
    report = write_report(tmp_path / "r1.json", [record("plot_a.py", 1.0)])
    assert main(["report", str(report), "--baseline", str(report)]) == 2
    err = capsys.readouterr().err.strip()
    assert f"is the report ({report}) too; give another build's report as --baseline" in err


def test_compare_notes_a_sphinx_gallery_file_it_cannot_judge_the_build_of(tmp_path) -> None:
    """Either of sphinx-gallery's files as an input: the comparison ends with the note every
    gate gives it (a notice with ``--format github``); a report gets none."""
    from docsaccel.report.commands import run_compare

    times = tmp_path / "sg_execution_times.rst"
    times.write_text(
        "- **00:01.000**: :ref:`sphx_glr_auto_examples_plot_a.py` (``plot_a.py``)\n",
        encoding="utf-8",
    )
    junit = tmp_path / "junit.xml"
    junit.write_text(
        '<testsuite><testcase file="plot_a.py" time="1.0"></testcase></testsuite>',
        encoding="utf-8",
    )
    report = write_report(tmp_path / "r.json", [record("plot_a.py", 1.0)])
    text, code = run_compare(str(times), str(junit), allow_mixed=True)
    assert code == 0, text
    assert text.rstrip().splitlines()[-2:] == [
        f"note: {junit}: sphinx-gallery's JUnit XML says how each example ended, not whether "
        "its build finished or failed otherwise (-W, a budget in fail mode, killed after its "
        "examples), nor whether it is the last build's: check the build's report "
        "(<outdir>/docsaccel/report.json)",
        f"note: {times}: sphinx-gallery's file does not say whether an example failed, nor "
        "whether its build finished (a stopped build leaves the files of the galleries it "
        "ended): check the build's report (<outdir>/docsaccel/report.json)",
    ]
    text, code = run_compare(str(report), str(times), allow_mixed=True, fmt="github")
    assert text.count("::notice title=Failures not known::") == 1, text
    other = write_report(tmp_path / "r2.json", [record("plot_a.py", 1.0)])
    text, code = run_compare(str(report), str(other))
    assert code == 0 and "note:" not in text, text


def _stopped_report(path, records):
    """The report of a build stopped by SIGTERM: every example it planned listed, those it
    did not reach as ``not-executed``."""
    import json

    report = {
        "schema": "docsaccel.report",
        "version": 1,
        "build": {
            "wall_seconds": 3.0,
            "complete": False,
            "ended_because": "it was terminated (SIGTERM)",
        },
        "examples": records,
    }
    path.write_text(json.dumps(report), encoding="utf-8")
    return path


def test_an_example_absent_from_a_stopped_builds_report_was_removed_or_added(
    tmp_path, capsys
) -> None:
    """A stopped build's report lists its whole plan: an example it does not list is not
    in that build (removed from the head, new in the head), never "not reached"."""
    planned = [record("plot_a.py", 2.0), record("plot_b.py", 0.0, status="not-executed")]
    base = write_report(
        tmp_path / "base.json",
        [record("plot_a.py", 2.0), record("plot_gone.py", 1.0), record("plot_b.py", 1.0)],
    )
    stopped = _stopped_report(tmp_path / "stopped.json", planned)
    for first, second, title, role in (
        (base, stopped, "Removed", "head"),
        (stopped, base, "New", "base"),
    ):
        main(["compare", "--allow-incomplete", str(first), str(second)])
        text = capsys.readouterr().out
        assert f"{title} examples:\n  tutorials/plot_gone.py: 1s" in text, text
        assert f"by the {role} build (it did not finish)" not in text, text


def test_only_journals_without_their_plan_leave_an_absent_example_not_reached(
    tmp_path, capsys
) -> None:
    """The journals of a build killed outright list its whole plan only beside the plan
    it wrote first: without it, an example they do not name may be one not reached."""
    import json

    base = write_report(
        tmp_path / "base.json", [record("plot_a.py", 2.0), record("plot_gone.py", 1.0)]
    )
    records = tmp_path / "records"
    records.mkdir()
    journal = records / "journal-42.jsonl"
    journal.write_text(json.dumps(record("plot_a.py", 2.0)) + "\n", encoding="utf-8")
    main(["compare", "--allow-incomplete", str(base), str(journal)])
    text = capsys.readouterr().out
    assert "by the head build (it did not finish):\n  tutorials/plot_gone.py" in text, text
    plan = [record("plot_a.py", 0.0, status="not-executed")]
    (records / "plan.jsonl").write_text("".join(json.dumps(r) + "\n" for r in plan), "utf-8")
    main(["compare", "--allow-incomplete", str(base), str(journal)])
    text = capsys.readouterr().out
    assert "Removed examples:\n  tutorials/plot_gone.py: 1s" in text, text
    assert "(it did not finish)" not in text, text


#: A restored example's cache field when its input holds the time of the run that stored
#: it (a docsaccel report), and when it does not: its time is then only the restore's.
STORED = {"hit": True, "saved_seconds": 3.0}
RESTORE_ONLY = {"hit": True}


def test_a_restored_example_is_compared_by_its_stored_run_and_never_by_a_restore() -> None:
    base = [
        # sphinx-gallery's file gives the restore's milliseconds; the report holds 3 s.
        Timing("a.py", "a.py", 0.004, status="cached", cache=STORED),
        Timing("b.py", "b.py", 0.003, status="cached", cache=RESTORE_ONLY),
        Timing("c.py", "c.py", 2.0),
    ]
    head = [Timing("a.py", "a.py", 3.3), Timing("b.py", "b.py", 0.4), Timing("c.py", "c.py", 2.0)]

    comparison = compare_timings(base, head, relative=0.0, absolute_seconds=0.0)

    assert [(d.id, d.base_seconds, d.head_seconds) for d in comparison.deltas] == [
        ("a.py", 3.0, 3.3),
        ("c.py", 2.0, 2.0),
    ]
    assert [old.id for old, _ in comparison.not_compared] == ["b.py"]
    assert (comparison.base_total, comparison.head_total) == (5.0, 5.3)
    text = format_comparison(comparison)
    assert "  a.py: 3s (stored run) -> 3.3s (+0.3s, +10%)" in text, text
    assert "  b.py: cached (not measured by this build) -> 0.4s" in text, text


def test_fail_on_regression_judges_a_restored_example_by_its_stored_run(tmp_path) -> None:
    base = write_report(
        tmp_path / "base.json",
        [
            record("plot_a.py", 1.0, status="cached", cache={"hit": True, "saved_seconds": 1.0}),
            record("plot_b.py", 0.002, status="cached", cache=RESTORE_ONLY),
        ],
    )
    head = write_report(tmp_path / "head.json", [record("plot_a.py", 10.0), record("plot_b.py", 9)])

    text, code = run_compare(str(base), str(head), fail_on_regression=True)

    assert code == 1, text
    assert "tutorials/plot_a.py: 1s (stored run) -> 10s (+9s, +900%)  REGRESSED" in text, text
    assert "tutorials/plot_b.py: cached (not measured by this build) -> 9s" in text, text
    report, _ = run_report(str(head), fmt="json", baseline=str(base))
    view = json.loads(report)
    rows = {row["id"]: row for row in view["examples"]}
    assert rows["tutorials/plot_a.py"]["delta_seconds"] == 9.0, report
    assert rows["tutorials/plot_b.py"]["delta_seconds"] is None, report
    # Like with like: plot_b.py has no time to compare in the baseline.
    assert (view["baseline_execution_seconds"], view["baseline_delta_seconds"]) == (1.0, 9.0)


#: A change every format writes as none: a zero of seconds, of percent or of bytes.
_SHOWN_AS_NONE = ("+0s", "-0s", "+0%", "-0%", "+0B")


@pytest.mark.parametrize("fmt", ["text", "md", "github"])
def test_a_regressed_rows_shown_change_is_never_zero(tmp_path, capsys, fmt) -> None:
    """With thresholds of 0, a change smaller than a view's rounding is a regression: its
    row shows it with the digits it needs, in time and in memory."""
    peak = 100 * 1024 * 1024
    base = write_report(tmp_path / "full.json", [record("plot_slow.py", 3.0)])
    head = write_report(
        tmp_path / "restored.json",
        [record("plot_slow.py", 3.004, peak_rss_bytes=peak + 100 * 1024)],
    )
    args = ["compare", "--relative", "0", "--absolute", "0", "--absolute-memory", "0B"]

    assert main([*args, "--format", fmt, str(base), str(head)]) == 0

    out = capsys.readouterr().out
    flagged = [line for line in out.splitlines() if "regress" in line.lower() and "plot" in line]
    assert flagged, out
    for line in flagged:
        assert not any(zero in line.replace(",", " ").split() for zero in _SHOWN_AS_NONE), line
        assert not any(f"({zero}" in line for zero in _SHOWN_AS_NONE), line
    assert "+0.004s" in out and "+0.1%" in out, out
