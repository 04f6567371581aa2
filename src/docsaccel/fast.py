"""The CI fast path: one switch for the whole build, read by tutorials through :func:`pick`.

A tutorial that does heavy work (many rollouts, long training, a long video) names each
setting it can shrink, with its full and its fast value::

    from docsaccel.fast import pick

    rollouts = pick(full=4, fast=1, name="rollouts")
    steps = pick(full=1000, fast=100, name="steps")

In a fast build (``DOCSACCEL_FAST=1``, or ``docsaccel_fast = True`` in ``conf.py``) each
call returns the fast value, otherwise the full one. Outside a docs build the switch is the
environment variable alone, so ``DOCSACCEL_FAST=1 python plot_x.py`` runs the tutorial as a
plain script with its fast values.

Every call publishes the knob to :mod:`docsaccel.registry` (section ``"knobs"``), so the
gallery plugin writes it into the example's record and, in fast builds, shows a note on the
page: "Built with the CI fast path: rollouts = 1 (full build: 4)".

The switch travels in the environment variable because sphinx-gallery may run examples in
separate worker processes (``parallel: N``); the gallery plugin sets it before each example.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any, TypeVar

from docsaccel import registry
from docsaccel.contract import KNOBS_SECTION
from docsaccel.contract import parse_switch as _parse_switch
from docsaccel.settings import env_name

__all__ = ["ENV_VAR", "KNOBS_SECTION", "is_fast", "parse_switch", "pick"]

#: The switch's environment variable (declared in :mod:`docsaccel.settings`).
ENV_VAR = env_name("fast")

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
    registry.publish(KNOBS_SECTION, name, {"value": chosen, "fast": fast, "full": full})
    return chosen
