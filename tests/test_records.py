"""Records on disk: the per-process journal, record files, and which one counts."""

from __future__ import annotations

import json
import os
import pickle

from docsaccel.budgets import BudgetTable
from docsaccel.examples import Example
from docsaccel.formats import write_json
from docsaccel.records import (
    RecordJournal,
    base_record,
    build_report,
    forget_written,
    read_records,
    write_record,
    written_here,
)


def example(name: str) -> Example:
    budget = BudgetTable().resolve(name, "")
    return Example("examples", name, name, name, name, True, budget)


def test_the_last_journal_line_of_an_example_counts(tmp_path) -> None:
    journal = RecordJournal(tmp_path)
    journal.append(base_record(example("plot_a.py"), "failed", False, error="did not finish"))
    journal.append(base_record(example("plot_b.py"), "failed", False))
    journal.append(base_record(example("plot_a.py"), "ok", False, wall_seconds=1.5))

    records = read_records(tmp_path)

    assert records["examples/plot_a.py"]["status"] == "ok"
    assert records["examples/plot_a.py"]["wall_seconds"] == 1.5
    assert records["examples/plot_b.py"]["status"] == "failed"
    [journal_file] = tmp_path.glob("journal-*.jsonl")
    assert journal_file.name == f"journal-{os.getpid()}.jsonl"
    assert len(journal_file.read_text("utf-8").splitlines()) == 3


def test_a_record_file_wins_over_journal_lines(tmp_path) -> None:
    RecordJournal(tmp_path).append(base_record(example("plot_a.py"), "ok", False))
    write_record(tmp_path, base_record(example("plot_a.py"), "failed", False, error="boom"))

    assert read_records(tmp_path)["examples/plot_a.py"]["error"] == "boom"


def test_a_line_cut_short_by_a_crash_is_skipped(tmp_path) -> None:
    RecordJournal(tmp_path).append(base_record(example("plot_a.py"), "failed", False))
    complete = json.dumps(base_record(example("plot_a.py"), "ok", False))
    with open(tmp_path / "journal-1.jsonl", "w", encoding="utf-8") as stream:
        stream.write(complete[: len(complete) // 2])  # the process died mid-line

    records = read_records(tmp_path)

    assert records["examples/plot_a.py"]["status"] == "failed"
    report = build_report(
        tmp_path, [example("plot_a.py"), example("plot_b.py")], {"complete": False}
    )
    assert [r["status"] for r in report["examples"]] == ["failed", "not-executed"]


def test_a_journal_travels_by_pickle_without_its_open_file(tmp_path) -> None:
    journal = RecordJournal(tmp_path)
    journal.append(base_record(example("plot_a.py"), "ok", False))

    copy = pickle.loads(pickle.dumps(journal))
    # In a worker process the copy opens the worker's own journal; here, the same one.
    copy.append(base_record(example("plot_b.py"), "ok", False))

    assert sorted(read_records(tmp_path)) == ["examples/plot_a.py", "examples/plot_b.py"]


def test_records_and_reports_are_as_readable_as_any_new_file(tmp_path) -> None:
    # Not private (mkstemp's 0600): the built site is often served by another user.
    mask = os.umask(0o022)
    os.umask(mask)
    expected = 0o666 & ~mask
    RecordJournal(tmp_path).append(base_record(example("plot_a.py"), "ok", False))
    path = write_record(tmp_path, base_record(example("plot_b.py"), "ok", False))
    write_json(tmp_path / "report.json", {"a": 1})

    for written in [path, tmp_path / "report.json", *tmp_path.glob("journal-*.jsonl")]:
        assert written.stat().st_mode & 0o777 == expected, written


def test_a_removed_or_altered_journal_is_written_again_before_the_next_line(tmp_path) -> None:
    journal = RecordJournal(tmp_path)
    journal.append(base_record(example("plot_a.py"), "ok", False, wall_seconds=1.0))
    path = tmp_path / f"journal-{os.getpid()}.jsonl"
    path.unlink()  # an example removed it: appending to the open file would lose it
    journal.append(base_record(example("plot_b.py"), "ok", False))
    assert sorted(read_records(tmp_path)) == ["examples/plot_a.py", "examples/plot_b.py"]

    forged = base_record(example("plot_a.py"), "ok", False, wall_seconds=0.1)
    with path.open("a", encoding="utf-8") as stream:  # a line this process never wrote
        stream.write(json.dumps(forged) + "\n")
    journal.append(base_record(example("plot_c.py"), "ok", False))
    records = read_records(tmp_path)
    assert records["examples/plot_a.py"]["wall_seconds"] == 1.0
    assert sorted(records) == ["examples/plot_a.py", "examples/plot_b.py", "examples/plot_c.py"]


def test_what_this_process_wrote_outlives_the_files(tmp_path) -> None:
    RecordJournal(tmp_path).append(base_record(example("plot_a.py"), "failed", False))
    RecordJournal(tmp_path).append(base_record(example("plot_a.py"), "ok", False))
    write_record(tmp_path, base_record(example("plot_b.py"), "cached", False))
    for path in tmp_path.iterdir():
        path.unlink()

    kept = written_here(tmp_path)

    assert {key: record["status"] for key, record in kept.items()} == {
        "examples/plot_a.py": "ok",
        "examples/plot_b.py": "cached",
    }
    forget_written(tmp_path)
    assert written_here(tmp_path) == {}
