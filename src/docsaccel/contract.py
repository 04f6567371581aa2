"""The contract between docsaccel's parts: the names and rules they share, stated once.

The gallery plugin, render gating, the fast path, the report views and sharding do not
import each other; they agree on these facts instead, and import them from here:

- the statuses of an example's record and the groups the parts ask about
  (:data:`EXECUTED`, :data:`OVERRUNS`, :data:`REUSABLE`);
- the over-budget and near-budget rules (:func:`is_over_budget`, :func:`is_near_budget`);
- the environment variables and the ``conf.py`` names of every setting;
- the sections of :mod:`docsaccel.registry` where capabilities publish facts;
- how a yes/no switch is spelled (:func:`parse_switch`);
- how a JSON input is read, and the one error class of unreadable inputs
  (:func:`read_json`, :class:`InputError`).

This module imports nothing of docsaccel, so every part can import it.

Example:

>>> is_over_budget("ok", 31.0, 30.0), is_near_budget("ok", 25.0, 30.0)
(True, True)
>>> parse_switch("yes", where="DOCSACCEL_FAST")
True
>>> sorted(OVERRUNS)
['interrupted', 'over-budget']
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

__all__ = [
    "BUDGET_SOURCES",
    "CACHED",
    "CACHE_ENV",
    "CI_ENV",
    "CONFIG_PREFIX",
    "EXECUTED",
    "FAILED",
    "FAST_ENV",
    "INTERRUPTED",
    "KNOBS_SECTION",
    "NEAR_BUDGET",
    "NOT_EXECUTED",
    "OK",
    "ON_OVERRUN_ENV",
    "OVERRUNS",
    "OVER_BUDGET",
    "RENDER_SECTION",
    "REUSABLE",
    "SHARD_EXAMPLES_ENV",
    "SHARD_RECORDS_ENV",
    "STATUSES",
    "VIDEOS_SECTION",
    "VIDEO_SCAN_ENV",
    "InputError",
    "is_finite_number",
    "is_near_budget",
    "is_over_budget",
    "parse_json",
    "parse_switch",
    "read_json",
]

# --- Statuses ---------------------------------------------------------------------------

#: Ran within its budget.
OK = "ok"
#: Finished, but over its budget (``docsaccel_on_overrun = "warn"``).
OVER_BUDGET = "over-budget"
#: Stopped when its budget ran out (``docsaccel_on_overrun = "fail"``).
INTERRUPTED = "interrupted"
#: Raised an error, or its process died while it ran.
FAILED = "failed"
#: Not run: the build stopped first, or the build was told not to run it.
NOT_EXECUTED = "not-executed"
#: Not run because its outputs were reused (sphinx-gallery's unchanged-example skip, a
#: shard, the example cache); its time is that of the run that made the outputs.
CACHED = "cached"

#: Every status a record can have.
STATUSES = (OK, OVER_BUDGET, INTERRUPTED, FAILED, NOT_EXECUTED, CACHED)
#: The statuses of examples that ran in the build that recorded them.
EXECUTED = (OK, OVER_BUDGET, INTERRUPTED, FAILED)
#: The statuses of examples that ran out of their budget.
OVERRUNS = (OVER_BUDGET, INTERRUPTED)
#: The statuses of examples whose outputs a later build can reuse.
REUSABLE = (OK, OVER_BUDGET, CACHED)
#: Where an example's budget came from (see :mod:`docsaccel.budgets`).
BUDGET_SOURCES = ("inline", "pattern", "default", "builtin")

# --- Budget rules -----------------------------------------------------------------------

#: An example is *near* its budget above this fraction of it.
NEAR_BUDGET = 0.8


def is_over_budget(status: str, seconds: float, budget_seconds: float | None) -> bool:
    """Slower than a finite budget; an interrupted example always is over."""
    if status == INTERRUPTED:
        return True
    return budget_seconds is not None and seconds > budget_seconds


def is_near_budget(status: str, seconds: float, budget_seconds: float | None) -> bool:
    """Not over its budget, but above :data:`NEAR_BUDGET` of it."""
    if budget_seconds is None or budget_seconds <= 0:
        return False
    if is_over_budget(status, seconds, budget_seconds):
        return False
    return seconds > NEAR_BUDGET * budget_seconds


# --- Settings ---------------------------------------------------------------------------

#: Every ``conf.py`` setting of docsaccel starts with this.
CONFIG_PREFIX = "docsaccel_"
#: The CI fast path switch (``docsaccel_fast``).
FAST_ENV = "DOCSACCEL_FAST"
#: ``warn`` or ``fail`` (``docsaccel_on_overrun``).
ON_OVERRUN_ENV = "DOCSACCEL_ON_OVERRUN"
#: A file listing the examples a shard build executes (no ``conf.py`` name: one run).
SHARD_EXAMPLES_ENV = "DOCSACCEL_SHARD_EXAMPLES"
#: A folder of records of examples executed by the shards a merge build assembles.
SHARD_RECORDS_ENV = "DOCSACCEL_SHARD_RECORDS"
#: ``0`` turns the video scraper's folder scan off.
VIDEO_SCAN_ENV = "DOCSACCEL_VIDEO_SCAN"
#: The folder of the example cache across builds (``docsaccel_cache``); empty: no cache.
CACHE_ENV = "DOCSACCEL_CACHE"
#: Set to true by CI services; budgets are multiplied by the file's ``ci_factor`` then.
CI_ENV = "CI"

# --- Registry sections ------------------------------------------------------------------

#: Render gating publishes each gated env's statistics here.
RENDER_SECTION = "render"
#: :func:`docsaccel.fast.pick` publishes the knobs it chose here.
KNOBS_SECTION = "knobs"
#: :func:`docsaccel.video.embed` publishes the videos to embed here.
VIDEOS_SECTION = "videos"

# --- Switches ---------------------------------------------------------------------------

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("", "0", "false", "no", "off")


def parse_switch(value: str, where: str) -> bool:
    """``"1"``/``"true"``/``"yes"``/``"on"`` -> True; ``""``/``"0"``/``"false"``/... -> False.

    Case and surrounding spaces do not matter. Anything else raises :class:`ValueError`
    naming ``where`` (the variable or key) and the value.
    """
    text = value.strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(
        f"{where}={value!r} is not a switch; use 1 (on) or 0 (off), "
        f"or one of {', '.join(repr(v) for v in _TRUE + _FALSE[1:])}"
    )


# --- Reading inputs ---------------------------------------------------------------------


class InputError(ValueError):
    """An input that cannot be read or understood; the message names the file and why."""


def read_json(path: str | os.PathLike[str], what: str = "file") -> Any:
    """Parse the JSON file at ``path``; raise :class:`InputError` naming it otherwise.

    ``what`` says what the file should be, for the message ("report", "manifest").
    A UTF-8 byte-order mark is accepted; NaN and infinities are refused, as JSON has none.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except IsADirectoryError:
        raise InputError(f"{path}: cannot read the {what}: it is a directory") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read the {what}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: the {what} is not UTF-8 text: {exc}") from None
    return parse_json(text, f"{path}", what)


def parse_json(text: str, where: str, what: str = "file") -> Any:
    """Parse JSON ``text`` read from ``where``; raise :class:`InputError` naming it."""
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}: the {what} is not valid JSON: {exc}") from None
    except ValueError as exc:
        raise InputError(f"{where}: the {what} is not valid JSON: {exc}") from None
    except RecursionError:
        # The C parser recurses per level: deep nesting is hostile, never a real file.
        raise InputError(f"{where}: the {what} is nested too deeply to read") from None


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def is_finite_number(value: Any) -> bool:
    """A JSON number (not a bool) that is finite."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
