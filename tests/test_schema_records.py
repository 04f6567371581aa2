"""The example record's declaration (``schema.ExampleRecord``) is what validation checks:
its required keys, the types of each key, nothing declared elsewhere."""

from __future__ import annotations

from typing import get_type_hints

import pytest

from docsaccel import schema
from docsaccel.budgets import BudgetTable
from docsaccel.examples import Example
from docsaccel.records import base_record
from docsaccel.schema import ExampleRecord, SchemaError, validate_record

DECLARED = get_type_hints(ExampleRecord, include_extras=True)
REQUIRED = [key for key, hint in DECLARED.items() if "Required[" in str(hint)]


def record(**changes) -> dict:
    base = {
        **schema.RECORD.header(),
        "id": "examples/plot_a.py",
        "gallery": "examples",
        "name": "plot_a.py",
        "status": "ok",
        "wall_seconds": 1.5,
        "budget_seconds": 30.0,
        "budget_source": "default",
        "fast": False,
    }
    return {**base, **changes}


def test_the_required_keys_are_those_declared_required() -> None:
    assert sorted(REQUIRED) == sorted(record())
    for key in REQUIRED:
        incomplete = {k: v for k, v in record().items() if k != key}
        with pytest.raises(SchemaError, match=f"has no key '{key}'"):
            validate_record(incomplete, "r.json")


@pytest.mark.parametrize(
    ("key", "value", "accepted"),
    [
        ("wall_seconds", 2, True),  # a float may be written as an integer
        ("cpu_seconds", None, True),
        ("expected_failure", "yes", False),
        ("fast", 1, False),  # a bool is no int, nor an int a bool
        ("pid", True, False),
        ("knobs", [], False),
        ("cache", {"hit": True, "saved_seconds": 1.0}, True),
        ("cache", "hit", False),
        (
            "memory_budget",
            {"bytes": None, "source": "default", "detail": None, "reason": None},
            True,
        ),
        ("memory_budget", {"bytes": "1G", "source": "default"}, False),
    ],
)
def test_each_key_takes_the_types_its_declaration_says(key, value, accepted) -> None:
    assert key in DECLARED
    given = record(**{key: value})
    if accepted:
        assert validate_record(given, "r.json") is given
    else:
        with pytest.raises(SchemaError, match=f"r.json: record.{key}"):
            validate_record(given, "r.json")


def test_a_built_record_declares_every_key_it_has() -> None:
    budget = BudgetTable().resolve("plot_a.py", "")
    example = Example(
        "ex", "plot_a.py", "ex/plot_a.py", "auto/plot_a.py", "auto/plot_a", True, budget
    )

    built = base_record(example, "ok", fast=True)

    assert set(built) <= set(DECLARED)
    assert validate_record(built) is built
