"""The CI fast path: one switch for the whole build, read by tutorials through :func:`pick`.

The design, in full: the fast path guide's *Design* section.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any, TypeVar

from docsaccel import registry
from docsaccel.contract import KNOB_LATER, KNOBS_SECTION, knob_picks, knob_picks_of
from docsaccel.contract import knob_value_text as show_value
from docsaccel.contract import parse_switch as _parse_switch
from docsaccel.settings import env_name

__all__ = [
    "ENV_VAR",
    "KNOBS_SECTION",
    "LATER",
    "is_fast",
    "knob_picks",
    "knob_problems",
    "parse_switch",
    "pick",
    "show_value",
]

#: The switch's environment variable (declared in :mod:`docsaccel.settings`).
ENV_VAR = env_name("fast")

#: The key of a knob's entry listing the later picks of its name with other values.
LATER = KNOB_LATER

T = TypeVar("T")


def parse_switch(value: str, where: str = ENV_VAR) -> bool:
    """``"1"``/``"true"``/``"yes"``/``"on"`` -> True, ``""``/``"0"``/``"false"``/... -> False.

    Anything else raises :class:`ValueError` naming ``where`` and the value
    (:func:`docsaccel.contract.parse_switch`, the one spelling of a switch).
    """
    return _parse_switch(value, where)


def is_fast(env: Mapping[str, str] | None = None) -> bool:
    """Whether this run uses the fast path: the ``DOCSACCEL_FAST`` variable of ``env``.

    ``env`` defaults to ``os.environ``. Example:

    >>> is_fast({"DOCSACCEL_FAST": "1"}), is_fast({"DOCSACCEL_FAST": "off"})
    (True, False)
    """
    return parse_switch((os.environ if env is None else env).get(ENV_VAR, ""))


def pick(*, full: T, fast: T, name: str) -> T:
    """Return ``fast`` in a fast build and ``full`` otherwise, and record the choice.

    ``name`` identifies the knob on the page note and in the example's record; both values
    must be JSON data (numbers, strings, lists, dicts), as they are written to the record.

    >>> from docsaccel import registry
    >>> pick(full=50, fast=2, name="episodes")  # not a fast build: the full value
    50
    >>> registry.snapshot()["knobs"]["episodes"]  # what the example's record will show
    {'value': 50, 'fast': 2, 'full': 50}
    >>> registry.clear()
    >>> pick(full=50, fast={1, 2}, name="episodes")
    Traceback (most recent call last):
    ...
    TypeError: pick(name='episodes'): fast={1, 2} is not JSON data; use numbers, ...
    """
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"pick(name=...) must be a non-empty string, got {name!r}")
    for label, value in (("full", full), ("fast", fast)):
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError):
            raise TypeError(
                f"pick(name={name!r}): {label}={value!r:.80} is not JSON data; "
                "use numbers, strings, booleans, lists or dicts"
            ) from None
    chosen: Any = fast if is_fast() else full
    entry = {"value": chosen, "fast": fast, "full": full}
    registry.update(KNOBS_SECTION, name, lambda known: _with_pick(known, entry))
    return chosen


def knob_problems(knobs: Mapping[str, Any]) -> list[str]:
    """One line for each knob of a record's ``knobs`` that is likely a mistake: a name
    picked with different values, a numeric fast value above its full one.

    >>> knob_problems({"steps": {"value": 5, "fast": 5, "full": 1}})
    ["knob 'steps' has fast=5 above full=1: its fast path does more than the full build"]
    """
    problems = []
    for name, knob in sorted(knobs.items()):
        picks = knob_picks_of(knob)
        if len(picks) > 1:
            pairs = ", then ".join(
                f"fast={show_value(p['fast'])}, full={show_value(p['full'])}" for p in picks
            )
            problems.append(
                f"knob {name!r} picked with different values: {pairs} (each is shown on "
                "the fast-path note; give each its own name)"
            )
        for pick in picks:
            if _numeric(pick["fast"]) and _numeric(pick["full"]) and pick["fast"] > pick["full"]:
                problems.append(
                    f"knob {name!r} has fast={show_value(pick['fast'])} above "
                    f"full={show_value(pick['full'])}: its fast path does more than the full build"
                )
    return problems


def _with_pick(known: Any, entry: dict[str, Any]) -> dict[str, Any]:
    """A knob's entry once ``entry`` is picked too: the first pick of a name is its entry;
    a later one with other values is added under :data:`LATER`, once."""
    if not isinstance(known, dict):
        return entry
    if any(_same(pick, entry) for pick in knob_picks_of(known)):
        return known
    return {**known, LATER: [*known.get(LATER, []), entry]}


def _same(one: Mapping[str, Any], other: Mapping[str, Any]) -> bool:
    return (one.get("fast"), one.get("full")) == (other.get("fast"), other.get("full"))


def _numeric(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
