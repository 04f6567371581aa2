"""The fast-path switch and the knobs tutorials pick with it."""

from __future__ import annotations

import pytest

from docsaccel import registry
from docsaccel.fast import is_fast, parse_switch, pick

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
