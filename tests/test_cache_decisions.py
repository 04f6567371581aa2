"""``last-build.json``'s per-example decision: its stored form read back."""

from __future__ import annotations

from docsaccel.cache.decisions import ExampleDecision, decisions_from_json


def test_a_decision_reads_back_as_it_was_written() -> None:
    decision = ExampleDecision("passed", "source changed", None, "it reads the clock")
    assert decision.to_json() == {
        "status": "passed",
        "reason": "source changed",
        "not_stored": "it reads the clock",
    }
    assert ExampleDecision.from_json(decision.to_json()) == decision


def test_what_is_not_a_decision_is_none_and_a_wrong_field_is_unset() -> None:
    assert ExampleDecision.from_json(["passed"]) is None
    assert ExampleDecision.from_json({"status": "failed", "error": 3}) == ExampleDecision("failed")
    stored = {"a.py": {"status": "cached"}, "b.py": "passed", "c.py": None}
    assert decisions_from_json(stored) == {"a.py": ExampleDecision("cached")}
    assert decisions_from_json(["a.py"]) == {}
