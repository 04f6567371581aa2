"""The readers' rules for a report a later build left behind or a build that ran nothing,
on reports written by hand (the real builds are in ``test_gate_stale_reports.py``)."""

from __future__ import annotations

import json

from helpers.report_factory import record, write_report

from docsaccel.contract import conf_changed, conf_fingerprint
from docsaccel.report.commands import run_check, run_compare, run_report
from docsaccel.settings import given_as


def _with_conf(path, conf) -> None:
    report = json.loads(path.read_text("utf-8"))
    report["build"]["conf"] = conf
    path.write_text(json.dumps(report), encoding="utf-8")


def test_a_conf_py_that_is_gone_or_unchanged_says_nothing(tmp_path) -> None:
    (tmp_path / "conf.py").write_text("project = 'x'\n", encoding="utf-8")
    recorded = conf_fingerprint(tmp_path)
    assert conf_changed(recorded) is None
    assert conf_changed({**recorded, "path": str(tmp_path / "gone" / "conf.py")}) is None
    (tmp_path / "conf.py").write_text("project = 'y'\n", encoding="utf-8")
    assert "changed since this report's build" in conf_changed(recorded)


def test_compare_refuses_a_stale_head_but_not_an_older_base(tmp_path) -> None:
    (tmp_path / "conf.py").write_text("project = 'x'\n", encoding="utf-8")
    base = write_report(tmp_path / "base.json", [record("plot_a.py", 3.0)])
    _with_conf(base, conf_fingerprint(tmp_path))
    (tmp_path / "conf.py").write_text("project = 'y'\n", encoding="utf-8")
    head = write_report(tmp_path / "head.json", [record("plot_a.py", 3.0)])
    _with_conf(head, conf_fingerprint(tmp_path))

    text, code = run_compare(str(base), str(head))
    assert code == 0, text
    text, code = run_compare(str(head), str(base))
    assert code == 2 and "changed since this report's build" in text, text


def test_a_report_the_top_option_is_named_as_typed(tmp_path) -> None:
    report = write_report(tmp_path / "r.json", [record("plot_a.py", 3.0)])
    text, code = run_report(str(report), top=0)
    assert code == 2 and "--top must be 1 or more, got 0" in text, text


def test_only_not_executed_examples_pass_no_check(tmp_path) -> None:
    ran = write_report(
        tmp_path / "r.json",
        [record("plot_a.py", 0.0, status="not-executed"), record("plot_b.py", 2.0)],
    )
    text, code = run_check([str(ran)])
    assert code == 0, text  # one example ran: the other is counted apart
    none = write_report(tmp_path / "n.json", [record("plot_a.py", 0.0, status="not-executed")])
    text, code = run_check([str(none)], allow_incomplete=True)
    assert code == 2 and "ran none of its 1 example (every one not-executed)" in text, text


def test_a_setting_is_named_as_the_user_set_it() -> None:
    assert given_as("memory_limit", {"DOCSACCEL_MEMORY_LIMIT": "2G"}) == "DOCSACCEL_MEMORY_LIMIT"
    assert given_as("memory_limit", {"DOCSACCEL_MEMORY_LIMIT": " "}) == "docsaccel_memory_limit"
