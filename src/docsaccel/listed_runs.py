"""sphinx-gallery's JUnit XML and ``sg_execution_times.rst`` of a build that runs fewer
examples than a clean build: they list every example as a clean build's list them.

A shard merge runs none, and a build with the example cache skips the examples it
restored: sphinx-gallery skips those as unchanged, and lists in its JUnit XML only the
examples it ran (before sphinx-gallery 0.22, it lists a skipped one's time as 0). Both
builds hand the records of what they take as they are to :func:`list_taken_runs`, the one
owner of which record is listed with which time.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from docsaccel import sg_compat
from docsaccel.contract import CACHED, EXECUTED, FAILED, INTERRUPTED
from docsaccel.examples import Example

__all__ = ["list_taken_runs", "stored_run_seconds"]


def stored_run_seconds(record: Mapping[str, Any]) -> float | None:
    """The time of the run the example cache stored, for the record of an example it
    restored (its ``cache`` field's ``saved_seconds``); ``None`` for any other record (one
    sphinx-gallery skipped as unchanged without the cache is also ``cached``).

    >>> stored_run_seconds({"status": "cached", "cache": {"hit": True, "saved_seconds": 1.5}})
    1.5
    >>> stored_run_seconds({"status": "cached", "cache": None}) is None
    True
    """
    cache = record.get("cache") or {}
    if record.get("status") != CACHED or not cache.get("hit"):
        return None
    saved = cache.get("saved_seconds")
    return float(saved) if isinstance(saved, int | float) else None


def list_taken_runs(
    examples: Iterable[Example],
    records: Mapping[str, Mapping[str, Any]],
    gallery_conf: dict[str, Any],
) -> None:
    """Have sphinx-gallery's JUnit XML and ``sg_execution_times.rst`` list the examples
    of ``records`` (by id) this build takes as they are, as a clean build lists them
    (:func:`.sg_compat.list_runs_elsewhere`): one another build ran, with how it ended
    and the time it measured; one the example cache restored, as passing, with the time
    of the run it stored (only passing runs are stored). An example none of them names
    (one sphinx-gallery skipped as unchanged by its ``.md5`` alone) stays as
    sphinx-gallery lists it."""
    passing, failing, seconds = [], {}, {}
    for example in examples:
        record = records.get(example.id)
        if record is None:
            continue
        stored = stored_run_seconds(record)
        if record["status"] in EXECUTED:
            seconds[example.src_file] = float(record["wall_seconds"])
        elif stored is not None:
            seconds[example.src_file] = stored
        else:
            continue
        if record["status"] in (FAILED, INTERRUPTED):
            failing[example.src_file] = str(record.get("error") or "it raised")
        else:
            passing.append(example.src_file)
    sg_compat.list_runs_elsewhere(gallery_conf, passing, failing, seconds)
