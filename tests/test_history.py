"""Build history: append one JSON line per build; medians and noise per example."""

from __future__ import annotations

import json

import pytest
from helpers.report_factory import record, write_report

from docsaccel.cli import main
from docsaccel.report.history import read_history
from docsaccel.report.model import InputError


def test_append_then_read_median_and_noise(tmp_path, capsys) -> None:
    history = tmp_path / "ci" / "history.jsonl"
    steady = [10.0, 10.2, 9.9, 10.1, 30.0, 10.0]  # one slow runner
    wobbly = [1.0, 2.0, 4.0, 1.5, 3.0, 0.8]
    for index, (a, b) in enumerate(zip(steady, wobbly, strict=True)):
        records = [record("plot_steady.py", a), record("plot_wobbly.py", b)]
        report = write_report(tmp_path / f"r{index}.json", records)
        assert main(["history", "append", str(report), "--to", str(history)]) == 0
    assert "appended 2 examples" in capsys.readouterr().out
    lines = history.read_text().splitlines()
    assert len(lines) == 6 and json.loads(lines[0])["schema"] == "docsaccel.history"
    stats = read_history(history, last=5)
    steady_stats = stats["tutorials/plot_steady.py"]
    assert steady_stats.durations == (10.2, 9.9, 10.1, 30.0, 10.0)
    assert steady_stats.median_seconds == 10.1  # the 30 s outlier does not move it
    assert not steady_stats.noisy
    assert stats["tutorials/plot_wobbly.py"].noisy


def test_too_few_runs_are_never_noisy(tmp_path) -> None:
    history = tmp_path / "h.jsonl"
    for seconds in (1.0, 5.0):
        report = write_report(tmp_path / "r.json", [record("plot_a.py", seconds)])
        assert main(["history", "append", str(report), "--to", str(history)]) == 0
    stats = read_history(history)["tutorials/plot_a.py"]
    assert stats.runs == 2 and stats.median_seconds == 3.0 and not stats.noisy


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "records no build"),
        ("{not json\n", "h.jsonl:1: the history line is not valid JSON"),
        ('{"schema": "other"}\n', "h.jsonl:1: not a docsaccel.history line"),
        (
            '{"schema": "docsaccel.history", "examples": {"a": {"seconds": "x"}}}\n',
            "examples['a'].seconds is 'x'",
        ),
    ],
)
def test_bad_history_names_file_line_and_value(tmp_path, content, message) -> None:
    path = tmp_path / "h.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as excinfo:
        read_history(path)
    assert message in str(excinfo.value)


def test_append_of_unreadable_report_exits_2(tmp_path, capsys) -> None:
    bad = tmp_path / "r.json"
    bad.write_text("{", encoding="utf-8")
    assert main(["history", "append", str(bad), "--to", str(tmp_path / "h.jsonl")]) == 2
    assert "not valid JSON" in capsys.readouterr().err
    assert not (tmp_path / "h.jsonl").exists()
