"""The texts that count things say one thing in the singular and more in the plural
(:func:`docsaccel.counts.counted`): each function that builds one, with one and with two."""

from __future__ import annotations

from pathlib import Path

from docsaccel.contract import (
    BUDGETS_FAILED,
    SG_FAILED_PREFIX,
    budgets_failed_text,
    build_failures,
    expected_passed_text,
    failed_examples_text,
)
from docsaccel.doctor import check_budgets
from docsaccel.gallery.process_end import _threads_running
from docsaccel.report.markdown import _total_change, render_markdown
from docsaccel.report.model import LoadedInput, Timing
from docsaccel.report.summary import summarize
from docsaccel.report.trend import TotalChange


def test_the_contract_texts_count_examples_by_number() -> None:
    one = budgets_failed_text(["a.py took 3s"], "r.json")
    two = budgets_failed_text(["a.py took 3s", "b.py took 4s"], "r.json")
    assert one.startswith("docsaccel: 1 example ran out of their budget (time or memory): ")
    assert two.startswith("docsaccel: 2 examples ran out of their budget (time or memory): ")
    assert failed_examples_text(["a.py (E)"]).startswith("1 example failed: a.py (E); ")
    assert failed_examples_text(["a.py (E)", "b.py (E)"]).startswith("2 examples failed: ")
    assert expected_passed_text(["a.py"]).startswith("1 example expected to fail did not: ")
    assert expected_passed_text(["a.py", "b.py"]).startswith("2 examples expected to fail")


def test_a_build_failure_the_views_list_is_found_in_either_number() -> None:
    # The views list these examples themselves: the lines counting them are left out.
    for named in (["a.py (E)"], ["a.py (E)", "b.py (E)"]):
        build = {
            BUDGETS_FAILED: budgets_failed_text(named, "r.json"),
            "sphinx_failed": SG_FAILED_PREFIX + failed_examples_text(named),
        }
        assert build_failures(build, ["E"] * len(named), overruns=len(named)) == []


def test_the_threads_an_example_left_are_counted_by_their_names() -> None:
    assert _threads_running(["poller"]) == "thread running: poller"
    assert _threads_running(["poller", "feeder"]) == "threads running: poller, feeder"


def test_the_history_total_counts_the_examples_it_covers() -> None:
    one = _total_change(3, TotalChange(first=2.0, latest=3.0, examples=1, left_out=1))
    two = _total_change(3, TotalChange(first=2.0, latest=3.0, examples=2, left_out=1))
    assert "(over the 1 example that ran whole" in one
    assert "(over the 2 examples that ran whole" in two


def test_the_summary_counts_the_examples_over_budget() -> None:
    def over(name: str) -> Timing:
        return Timing(f"tutorials/{name}", name, 42.0, budget_seconds=30.0)

    for timings, said in (
        ([over("plot_a.py")], "1 example"),
        ([over("a.py"), over("b.py")], "2 examples"),
    ):
        markdown = render_markdown(summarize(LoadedInput("r.json", "docsaccel-report", timings)))
        assert f"**{said} over budget.**" in markdown


def test_the_doctor_counts_the_patterns_of_a_budget_file(tmp_path: Path) -> None:
    budgets = tmp_path / "budgets.toml"
    budgets.write_text('[examples]\n"plot_a.py" = "2m"\n', encoding="utf-8")
    assert check_budgets(budgets, tmp_path, {})[0].text == f"{budgets}: loads (1 pattern)"
    budgets.write_text('[examples]\n"plot_a.py" = "2m"\n"plot_b.py" = "3m"\n', encoding="utf-8")
    assert check_budgets(budgets, tmp_path, {})[0].text == f"{budgets}: loads (2 patterns)"
