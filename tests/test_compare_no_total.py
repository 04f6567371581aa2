"""A total over no compared example is no total, never ``0s``.

The base build's examples were all restored from the example cache, and its report
holds no stored run's time for them: none can be compared with the head's runs, so
``compare`` and ``report --baseline`` say there is no total to compare.
"""

from __future__ import annotations

import json

from helpers.report_factory import record, write_report

from docsaccel.report.commands import run_compare, run_report

NAMES = ["plot_a.py", "plot_b.py"]


def _builds(tmp_path):
    restored = {"status": "cached", "cache": {"hit": True}}
    base = write_report(tmp_path / "base.json", [record(n, 0.004, **restored) for n in NAMES])
    head = write_report(tmp_path / "head.json", [record(n, 3.0) for n in NAMES])
    return str(base), str(head)


def test_compare_says_no_total_where_no_example_is_compared(tmp_path) -> None:
    base, head = _builds(tmp_path)
    text, code = run_compare(base, head, fail_on_regression=True)
    assert code == 0, text
    first = text.splitlines()[0]
    assert first.startswith("Execution time: no total to compare"), text
    assert "0s" not in first and "2 not compared" in first, text
    text, _ = run_compare(base, head, fmt="md")
    assert "no total to compare" in text and "vs base 0s" not in text, text


def test_report_baseline_says_no_total_where_no_example_is_compared(tmp_path) -> None:
    base, head = _builds(tmp_path)
    for fmt in ("md", "html"):
        text, code = run_report(head, baseline=base, fmt=fmt)
        assert code == 0, text
        assert "Against the baseline: no total to compare" in text.replace("**", ""), text
        assert "baseline 0s" not in text, text
    view = json.loads(run_report(head, baseline=base, fmt="json")[0])
    assert view["baseline_execution_seconds"] is None, view
    assert view["baseline_delta_seconds"] is None, view


def test_a_compared_example_still_totals(tmp_path) -> None:
    base = write_report(tmp_path / "base.json", [record(n, 2.0) for n in NAMES])
    head = write_report(tmp_path / "head.json", [record(n, 3.0) for n in NAMES])
    text, _ = run_compare(str(base), str(head))
    assert text.startswith("Execution time: 6s (+2s vs base 4s)"), text
