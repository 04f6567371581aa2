"""Which restored examples run for the state a running example reads (:mod:`.carried`)."""

from __future__ import annotations

import ast
from types import SimpleNamespace
from typing import Any

from docsaccel.cache.carried import Rerun, must_run
from docsaccel.cache.deps import Change
from docsaccel.cache.pieces import split

STATS = """
_OFFSET = 0
_UNIT = "m"


def set_offset(v):
    global _OFFSET
    _OFFSET = v


def mean(xs):
    return sum(xs) / len(xs) + _OFFSET


def unit():
    return _UNIT


def report(xs):
    return unit()
"""
FACTS = {"mylib/stats.py": split(ast.parse(STATS))}
ORDER = ["a0_setoff.py", "b_mean.py", "c_unit.py", "d_later.py"]


def _entry(**deps: Any) -> SimpleNamespace:
    return SimpleNamespace(deps={"files": {}, "code": {"mylib/stats.py": {}}, **deps})


SETOFF = _entry(names=["set_offset"], leaves=["mylib/stats.py:_OFFSET"])
LATER = _entry(names=["set_offset"], leaves=["mylib/stats.py:_OFFSET"])


def _run(missed: dict[str, Any], changed: dict[str, list[Change]], parallel: bool = False):
    restored = {"a0_setoff.py": SETOFF, "d_later.py": LATER}
    return must_run(ORDER, missed, restored, changed, FACTS.get, parallel)


def test_an_earlier_example_whose_state_was_read_runs() -> None:
    reader = _entry(names=["mean"], state={"a0_setoff.py": ["mylib/stats.py:_OFFSET"]})
    found = _run({"b_mean.py": reader}, {"b_mean.py": [Change("file:data/x", "changed")]})
    assert found == {
        "a0_setoff.py": Rerun(
            "b_mean.py", "b_mean.py reads the state it leaves (mylib/stats.py:_OFFSET) and runs"
        )
    }


def test_the_reason_names_why_the_reader_runs() -> None:
    # The chain back to its root: the reader runs for what changed of its own.
    reader = _entry(names=["mean"], state={"a0_setoff.py": ["mylib/stats.py:_OFFSET"]})
    changes = {"b_mean.py": [Change("file:data/x", "changed")]}
    restored = {"a0_setoff.py": SETOFF}
    why = {"b_mean.py": "data/x changed"}
    found = must_run(ORDER, {"b_mean.py": reader}, restored, changes, FACTS.get, False, why)
    assert found["a0_setoff.py"].reason == (
        "b_mean.py reads the state it leaves (mylib/stats.py:_OFFSET) and runs: data/x changed"
    )


def test_a_changed_source_or_no_entry_may_read_any_state_of_earlier_examples() -> None:
    reader = _entry(names=["unit"])
    assert set(_run({"c_unit.py": reader}, {"c_unit.py": [Change("source", "")]})) == {
        "a0_setoff.py"
    }
    assert set(_run({"c_unit.py": None}, {})) == {"a0_setoff.py"}  # never one after it


def test_names_followed_through_the_current_code_say_which_state_it_may_read() -> None:
    # c_unit reads _UNIT only: set_offset's global is out of its reach.
    reader = _entry(names=["report"])
    change = Change("code:mylib/stats.py:unit", "changed")
    assert _run({"c_unit.py": reader}, {"c_unit.py": [change]}) == {}
    # report now calls mean, which reads _OFFSET.
    facts = {"mylib/stats.py": split(ast.parse(STATS.replace("return unit()", "return mean(xs)")))}
    restored = {"a0_setoff.py": SETOFF}
    found = must_run(
        ORDER, {"c_unit.py": reader}, restored, {"c_unit.py": [change]}, facts.get, False
    )
    assert set(found) == {"a0_setoff.py"}


def test_in_a_parallel_build_every_restored_example_runs() -> None:
    found = _run({"c_unit.py": None}, {}, parallel=True)
    assert set(found) == {"a0_setoff.py", "d_later.py"}
    assert all(why.reason.startswith("a parallel build: ") for why in found.values())
    assert _run({"c_unit.py": _entry(names=["report"])}, {}, parallel=True) == {}
