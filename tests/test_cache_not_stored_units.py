"""Unit tests of the record of why an example that ran made no cache entry: its stored
form round-trips, and anything else (another version, a hand-edited file) reads as no
record rather than a crash."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docsaccel.cache import not_stored
from docsaccel.cache.not_stored import RUNS_EVERY_BUILD, UNSTORABLE, VERSION, NotStored


@pytest.mark.parametrize("kind", [UNSTORABLE, RUNS_EVERY_BUILD])
def test_a_record_written_reads_back_the_same(tmp_path: Path, kind: str) -> None:
    record = NotStored(kind, ("a child docsaccel cannot follow", "x.py changed while it ran"))
    record.write(tmp_path / f"plot_a.py{not_stored.SUFFIX}")
    assert not_stored.read(tmp_path / f"plot_a.py{not_stored.SUFFIX}") == record
    assert NotStored.from_json(json.loads(json.dumps(record.to_json()))) == record


def test_the_message_joins_the_reasons_and_says_what_happens_next() -> None:
    every = NotStored(RUNS_EVERY_BUILD, ("what a.py read is unknown", "it removed b.csv"))
    assert every.why == "what a.py read is unknown; it removed b.csv"
    assert every.quiet
    assert every.message("g/plot_a.py") == (
        "docsaccel cache: not storing g/plot_a.py: what a.py read is unknown; it removed "
        "b.csv; it runs in every build"
    )
    again = NotStored(UNSTORABLE, ("x.py changed while it ran",))
    assert not again.quiet
    assert again.message("plot_b.py") == (
        "docsaccel cache: not storing plot_b.py: x.py changed while it ran; it runs again next time"
    )


@pytest.mark.parametrize(
    "stored",
    [
        {"version": VERSION + 1, "kind": UNSTORABLE, "reasons": ["why"]},
        {"kind": UNSTORABLE, "reasons": ["why"]},  # before versions
        {"unstorable": ["why"]},  # the sentinel-key form it replaces
        {"version": VERSION, "kind": "something new", "reasons": ["why"]},
        {"version": VERSION, "kind": UNSTORABLE, "reasons": "why"},
        ["why"],
        None,
    ],
)
def test_anything_but_this_version_s_record_reads_as_no_record(tmp_path: Path, stored) -> None:
    assert NotStored.from_json(stored) is None
    path = tmp_path / "plot_a.py.not-stored.json"
    path.write_text(json.dumps(stored), encoding="utf-8")
    assert not_stored.read(path) is None


def test_a_missing_or_broken_file_reads_as_no_record(tmp_path: Path) -> None:
    assert not_stored.read(tmp_path / "absent.json") is None
    (tmp_path / "half.json").write_text('{"version": 1, "ki', encoding="utf-8")
    assert not_stored.read(tmp_path / "half.json") is None


def test_an_unknown_kind_is_refused_when_made() -> None:
    with pytest.raises(ValueError, match="kind 'oops'"):
        NotStored("oops", ("why",))
