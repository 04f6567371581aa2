"""The readers' rules for a report a later build left behind or a build that ran nothing,
on reports written by hand (the real builds are in ``test_gate_stale_reports.py``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from helpers.report_factory import record, write_report

from docsaccel import layout
from docsaccel.contract import conf_changed, conf_fingerprint
from docsaccel.report.commands import run_check, run_compare, run_history_append, run_report
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


def _built_report(outdir, conf) -> Path:
    """A report where its build wrote it, beside its records, of a build that read ``conf``."""
    layout.records_dir(outdir).mkdir(parents=True)
    report = write_report(layout.report_path(outdir), [record("plot_a.py", 3.0)])
    _with_conf(report, conf)
    return report


def test_a_report_in_its_output_folder_is_refused_by_every_reader_once_conf_changed(
    tmp_path,
) -> None:
    """One rule for every input of every command: base, head, baseline, history alike."""
    (tmp_path / "conf.py").write_text("project = 'x'\n", encoding="utf-8")
    stale = _built_report(tmp_path / "old", conf_fingerprint(tmp_path))
    (tmp_path / "conf.py").write_text("project = 'y'\n", encoding="utf-8")
    fresh = _built_report(tmp_path / "new", conf_fingerprint(tmp_path))

    for text, code in (
        run_check([str(stale)]),
        run_report(str(stale)),
        run_report(str(fresh), baseline=str(stale)),
        run_compare(str(stale), str(fresh)),
        run_compare(str(fresh), str(stale)),
        run_history_append(str(stale), tmp_path / "h.jsonl"),
    ):
        assert code == 2 and text.count("\n") == 1, text
        assert f"error: {stale}: " in text and "changed since this report's build" in text
    # Two builds' reports read since: one file twice is refused as the same input.
    other = _built_report(tmp_path / "other", conf_fingerprint(tmp_path))
    assert run_compare(str(fresh), str(other))[1] == 0


def test_an_archived_copy_of_a_report_is_read_whatever_conf_became(tmp_path) -> None:
    """A copy kept outside its output folder (``main-report.json`` from CI) is the build it
    names: no later build can have failed to replace it, so every reader takes it."""
    (tmp_path / "conf.py").write_text("project = 'x'\n", encoding="utf-8")
    built = _built_report(tmp_path / "old", conf_fingerprint(tmp_path))
    archived = tmp_path / "ci-state" / "main-report.json"
    archived.parent.mkdir()
    shutil.copy(built, archived)
    (tmp_path / "conf.py").write_text("project = 'y'\n", encoding="utf-8")
    fresh = _built_report(tmp_path / "new", conf_fingerprint(tmp_path))

    for text, code in (
        run_check([str(archived)]),
        run_report(str(archived), fmt="md"),
        run_report(str(fresh), baseline=str(archived)),
        run_compare(str(archived), str(fresh)),
        run_compare(str(fresh), str(archived)),
        run_history_append(str(archived), tmp_path / "h.jsonl"),
    ):
        assert code == 0, text
    assert run_check([str(built)])[1] == 2  # the same bytes, left in their output folder


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
