"""The fast-path switch and the knobs tutorials pick with it."""

from __future__ import annotations

import pytest

from docsaccel import registry
from docsaccel.fast import LATER, is_fast, knob_picks, knob_problems, parse_switch, pick

pytestmark = pytest.mark.usefixtures("clean_registry")


@pytest.mark.parametrize(("value", "expected"), [("1", True), ("true", True), ("ON", True)])
def test_switch_on(value, expected) -> None:
    assert is_fast({"DOCSACCEL_FAST": value}) is expected


@pytest.mark.parametrize("env", [{}, {"DOCSACCEL_FAST": ""}, {"DOCSACCEL_FAST": "0"}])
def test_switch_off(env) -> None:
    assert is_fast(env) is False


def test_bad_switch_names_the_variable_and_value() -> None:
    with pytest.raises(ValueError, match=r"DOCSACCEL_FAST='maybe' is not a switch"):
        is_fast({"DOCSACCEL_FAST": "maybe"})
    with pytest.raises(ValueError, match=r"docsaccel_fast='2'"):
        parse_switch("2", where="docsaccel_fast")


def test_pick_follows_the_environment_and_publishes_the_knob(monkeypatch) -> None:
    monkeypatch.setenv("DOCSACCEL_FAST", "1")
    assert pick(full=4, fast=1, name="rollouts") == 1
    monkeypatch.setenv("DOCSACCEL_FAST", "0")
    assert pick(full=[480, 360], fast=[96, 72], name="size") == [480, 360]
    assert registry.snapshot()["knobs"] == {
        "rollouts": {"value": 1, "fast": 1, "full": 4},
        "size": {"value": [480, 360], "fast": [96, 72], "full": [480, 360]},
    }


def test_pick_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="non-empty string"):
        pick(full=1, fast=0, name="")
    with pytest.raises(TypeError, match=r"pick\(name='model'\): full=.* is not JSON data"):
        pick(full=object(), fast=0, name="model")
    with pytest.raises(TypeError):
        pick(4, 1, "rollouts")  # keyword-only: which value is which must be explicit


def test_a_name_picked_with_other_values_keeps_each_pair(monkeypatch) -> None:
    monkeypatch.setenv("DOCSACCEL_FAST", "1")
    assert pick(full=1, fast=5, name="steps") == 5
    assert pick(full=3, fast=2, name="steps") == 2
    assert pick(full=3, fast=2, name="steps") == 2  # the same knob again: kept once
    knobs = registry.snapshot()["knobs"]
    assert knobs == {
        "steps": {
            "value": 5,
            "fast": 5,
            "full": 1,
            LATER: [{"value": 2, "fast": 2, "full": 3}],
        }
    }
    assert [pick["value"] for _, pick in knob_picks(knobs)] == [5, 2]
    assert knob_problems(knobs) == [
        "knob 'steps' picked with different values: fast=5, full=1, then fast=2, full=3 "
        "(each is shown on the fast-path note; give each its own name)",
        "knob 'steps' has fast=5 above full=1: its fast path does more than the full build",
    ]


@pytest.mark.parametrize(
    ("fast", "full"), [(2, 3), (3, 3), (0.5, 1), (True, False), ("big", "abc"), ([9], [1])]
)
def test_only_a_numeric_fast_value_above_its_full_one_is_a_problem(fast, full) -> None:
    assert knob_problems({"k": {"value": fast, "fast": fast, "full": full}}) == []
