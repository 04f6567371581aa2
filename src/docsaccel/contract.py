"""The contract between docsaccel's parts: the names and rules they share, stated once.

The design, in full: the adopting guide's *Design* section.

Example:

>>> is_over_budget("ok", 31.0, 30.0), is_near_budget("ok", 25.0, 30.0)
(True, True)
>>> is_over_budget("interrupted", 3.0, 30.0, interrupted_by=BY_MEMORY)
False
>>> is_over_memory_budget("interrupted", 900, 1000, interrupted_by=BY_MEMORY)
True
>>> parse_switch("yes", where="DOCSACCEL_FAST")
True
>>> sorted(OVERRUNS)
['interrupted', 'over-budget']
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import signal
import stat
import sys
from collections.abc import Iterable, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from docsaccel.counts import count_of, counted
from docsaccel.loaded_code import content_changed

__all__ = [
    "AUDIT_REASON",
    "AUDIT_STATUSES",
    "BUDGETS_FAILED",
    "BUDGET_SOURCES",
    "BUILD_FAILURES",
    "BY_CEILING",
    "BY_MEMORY",
    "BY_TIME",
    "CACHED",
    "CI_ENV",
    "DID_NOT_FINISH",
    "EARLIER_RUN",
    "EXECUTED",
    "EXIT_BLOCKED_ERROR",
    "EXPECTED_FAILURE",
    "FAILED",
    "HARD_STOP",
    "INTERRUPTED",
    "INTERRUPTED_BY",
    "KILLED_RUNNING",
    "KNOBS_SECTION",
    "KNOB_LATER",
    "MAX_BUDGET_SECONDS",
    "MAX_INPUT_BYTES",
    "MAX_JSON_DEPTH",
    "MULTIPROCESSING_HELPERS",
    "NEAR_BUDGET",
    "NONDETERMINISTIC",
    "NOT_EXECUTED",
    "NOT_MEASURED",
    "NOT_REACHED",
    "NOT_RUN",
    "OK",
    "OVERRUNS",
    "OVER_BUDGET",
    "RECORD_LOST_ERROR",
    "RENDER_SECTION",
    "REUSABLE",
    "RUNNING",
    "SG_FAILED_END",
    "SG_FAILED_PREFIX",
    "SHARD_COMMAND",
    "SHARD_RUNS",
    "STALE",
    "STATUSES",
    "STOPPED_BEFORE_EXAMPLES",
    "STOPPED_WHILE_GENERATING",
    "STOP_SIGNAL_WORDS",
    "STORED_RUN",
    "UNFINISHED_ERROR",
    "UNMEASURED",
    "VERDICT_PENDING",
    "VERDICT_PENDING_KEY",
    "VERIFIED",
    "VIDEOS_SECTION",
    "VIDEO_SUFFIXES",
    "WHOLE_RUNS",
    "InputError",
    "MissingExtraError",
    "Terminated",
    "budgets_failed_text",
    "build_failed_text",
    "build_failures",
    "conf_changed",
    "conf_fingerprint",
    "distributions_changed",
    "ended_by",
    "error_line",
    "expected_passed_text",
    "failed_examples_text",
    "fails_build",
    "fork_safe_lock",
    "free_locks_in_child",
    "is_build_failure",
    "is_finite_number",
    "is_judged",
    "is_measured",
    "is_near_budget",
    "is_near_memory_budget",
    "is_over_budget",
    "is_over_memory_budget",
    "is_start_record",
    "is_stopped_hard",
    "is_timed",
    "is_unfinished",
    "knob_picks",
    "knob_picks_of",
    "knob_value_text",
    "merged_budgets_failed",
    "merged_sphinx_failed",
    "near_budget_text",
    "opens_for_writing",
    "opens_keeping_content",
    "parse_json",
    "parse_switch",
    "ran_none",
    "read_bytes",
    "read_json",
    "read_text",
    "require_extra",
    "shard_command_text",
    "shown_path",
    "started_not_finished",
    "status_text",
    "stop_signal",
    "stopped_by",
    "unfinished_error",
    "unfinished_why",
    "unmeasured_text",
    "verdict_at_process_end",
    "warnings_failed_text",
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
#: The statuses of examples this build did not measure: it never ran them, or
#: sphinx-gallery reused the outputs of whatever build last ran them (:data:`CACHED`
#: or the example cache restored its outputs). None was measured by this build
#: (:func:`is_measured`); budgets judge a restored one by the time of the run that stored
#: it (:func:`is_judged`) and no other one: such an example is neither within its budget
#: nor over it. The views count them apart (:func:`unmeasured_text`).
UNMEASURED = (NOT_EXECUTED, CACHED)
#: How the views say it of one such example, after its status.
NOT_MEASURED = "not measured by this build"
#: The statuses whose time is that of a whole run of the build that recorded it, so a view
#: may compare or trend it: an example stopped at its budget, one that raised, one that
#: never ran or one whose time is another build's (:data:`UNMEASURED`) has no such time.
WHOLE_RUNS = (OK, OVER_BUDGET)
#: The key of a :data:`FAILED` record whose failure sphinx-gallery was told to expect
#: (``expected_failing_examples``): true there, absent otherwise. Such a failure does not
#: fail the build, nor a gate.
EXPECTED_FAILURE = "expected_failure"


def is_build_failure(record: Any) -> bool:
    """Whether a record (a dict) fails its build: it failed, and not as expected.

    >>> is_build_failure({"status": "failed"}), is_build_failure({"status": "ok"})
    (True, False)
    >>> is_build_failure({"status": "failed", "expected_failure": True})
    False
    """
    return isinstance(record, dict) and fails_build(
        record.get("status"), record.get(EXPECTED_FAILURE) is True
    )


def fails_build(status: Any, expected_failure: bool = False) -> bool:
    """Whether an example of ``status`` fails its build: it failed, and not as expected.
    The one rule the gates, the views and the plugin's own verdict ask.

    >>> fails_build("failed"), fails_build("failed", expected_failure=True), fails_build("ok")
    (True, False, False)
    """
    return status == FAILED and not expected_failure


#: The report's ``build`` key that says a build ended because of its budgets, and so
#: failed: an example ran out of its budget in fail mode (``docsaccel_on_overrun =
#: "fail"``), or the build's memory ceiling stopped one (in any mode). Its value is the
#: line the build ended with (:func:`budgets_failed_text`).
BUDGETS_FAILED = "budgets_failed"
#: The report's ``build`` keys that say why a build whose examples ran failed all the same
#: (each present only then, a string), causes first: its budgets failed it
#: (:data:`BUDGETS_FAILED`), Sphinx failed it (``-W``), something an example left kept
#: its process from ending (``exit_blocked``, set after the build's end), or the build
#: ended without Sphinx's verdict reaching the report (``verdict_pending``).
#: The key of a report's ``build`` saying its verdict was still to come when it was
#: written (:data:`VERDICT_PENDING`, :func:`verdict_at_process_end`): a failure once its
#: build's process is gone, not while it runs.
VERDICT_PENDING_KEY = "verdict_pending"
BUILD_FAILURES = (BUDGETS_FAILED, "sphinx_failed", "exit_blocked", VERDICT_PENDING_KEY)
#: How the log and every view say a build stopped before any example was processed
#: (``build.stopped_before_examples``), and once some were, while sphinx-gallery generated
#: the galleries (``build.stopped_while_generating``): each followed by why.
STOPPED_BEFORE_EXAMPLES = "stopped before its examples ran"
STOPPED_WHILE_GENERATING = "stopped while generating the galleries"
#: How the line a build's budgets ended it with counts the examples it names.
_BUDGETS_FAILED_PREFIX = "docsaccel: "
_BUDGETS_FAILED_AFTER_COUNT = " ran out of their budget (time or memory): "


def build_failed_text(why: str, build: str = "build") -> str:
    """How every gate and view says a build failed (a build that did not finish did,
    whatever its examples did), and why: one sentence.

    >>> build_failed_text("the build did not finish (a.py was running)", "head build")
    'The head build failed: the build did not finish (a.py was running).'
    """
    return f"The {build} failed: {why}."


def budgets_failed_text(said: Sequence[str], report: str) -> str:
    """The line a build's budgets end it with (:data:`BUDGETS_FAILED`): each example that
    ran out of its budget as ``said`` says it, and where its ``report`` is.

    >>> budgets_failed_text(["a.py took 3s"], "r.json")
    'docsaccel: 1 example ran out of their budget (time or memory): a.py took 3s (see r.json)'
    """
    return (
        f"{_BUDGETS_FAILED_PREFIX}{counted(len(said), 'example')}{_BUDGETS_FAILED_AFTER_COUNT}"
        f"{'; '.join(said)} "
        f"(see {report})"
    )


def merged_budgets_failed(lines: Sequence[str], report: str) -> str:
    """One :data:`BUDGETS_FAILED` line for the lines of several builds of one project (a
    sharded build's shards): every example they name, pointing at ``report`` (the merged
    one, not the builds' own, whose folders go), as one build of them all would say it. A
    line not of that form is kept as it is, first, so nothing it says is lost.

    >>> merged = merged_budgets_failed(
    ...     [budgets_failed_text(["a.py"], "0/r.json"), budgets_failed_text(["b.py"], "1/r.json")],
    ...     "r.json",
    ... )
    >>> merged == budgets_failed_text(["a.py", "b.py"], "r.json")
    True
    """
    named, count, other = [], 0, []
    for line in lines:
        head, found, rest = line.removeprefix(_BUDGETS_FAILED_PREFIX).partition(
            _BUDGETS_FAILED_AFTER_COUNT
        )
        said, see, _ = rest.rpartition(" (see ")
        examples = count_of(head, "example")
        if not line.startswith(_BUDGETS_FAILED_PREFIX) or not found or not see or not examples:
            other.append(line)
            continue
        named.append(said)
        count += examples
    if named:
        other.append(
            f"{_BUDGETS_FAILED_PREFIX}{counted(count, 'example')}{_BUDGETS_FAILED_AFTER_COUNT}"
            f"{'; '.join(named)} (see {report})"
        )
    return "; ".join(other)


#: How a build's ``sphinx_failed`` says ``-W`` failed it, after the count of warnings.
_WARNINGS_FAILED_AFTER_COUNT = ", treated as errors (-W)"


def warnings_failed_text(warnings: int) -> str:
    """The ``sphinx_failed`` of a build that ``-W`` failed on its ``warnings``.

    >>> warnings_failed_text(2)
    'Sphinx gave 2 warnings, treated as errors (-W)'
    """
    return f"Sphinx gave {counted(warnings, 'warning')}{_WARNINGS_FAILED_AFTER_COUNT}"


def merged_sphinx_failed(lines: Sequence[str]) -> str:
    """One ``sphinx_failed`` for those of several builds of one project (a sharded build's
    shards), each reason said once: the warnings ``-W`` failed them on counted together,
    as one build of them all would count them (two shards' "1 warning" are two).

    >>> merged_sphinx_failed([warnings_failed_text(1), "x", warnings_failed_text(1), "x"])
    'x; Sphinx gave 2 warnings, treated as errors (-W)'
    """
    warnings, other = 0, []
    for line in lines:
        count = count_of(line.removeprefix("Sphinx gave ").partition(",")[0], "warning")
        if count is not None and line == warnings_failed_text(count):
            warnings += count
        elif line not in other:
            other.append(line)
    return "; ".join([*other, *([warnings_failed_text(warnings)] if warnings else [])])


def _reason(key: str, why: str) -> str:
    """``why``, or a reason naming ``key`` when it is blank: the key says the build
    failed (a reason is never empty, as a gate's line would be)."""
    return why if why.strip() else f"its report's build.{key} gives no reason"


def _names_only(why: str, overruns: int) -> bool:
    """Whether a :data:`BUDGETS_FAILED` line ``why`` names only the ``overruns`` examples
    a view lists itself (it counts as many)."""
    count, found, _ = why.removeprefix(_BUDGETS_FAILED_PREFIX).partition(
        _BUDGETS_FAILED_AFTER_COUNT
    )
    return bool(found) and count_of(count, "example") == overruns > 0


#: The ``verdict_pending`` of a report written at the build's end, until the plugin's
#: last ``build-finished`` handler has seen how the build ended: a report whose build
#: never got that far (a later handler raised on each emission of the event, or a
#: ``KeyboardInterrupt``; ``sphinx.cmd.build.main`` then returns 2) keeps it, and fails.
VERDICT_PENDING = (
    "the build ended without its verdict: a build-finished handler after docsaccel's "
    "report failed it (see the build log), or its process ended first"
)


def verdict_at_process_end(held: str) -> str:
    """The ``verdict_pending`` of a report written once the build ended while what its
    examples left (``held``: each example and what it left) holds its process: their
    verdict comes as that process ends, which writes the report again. A report that
    still says so outlived its process, killed outright before it ended: it fails.

    >>> print(verdict_at_process_end("a.py: it left a thread 'poller' running")[:58])
    its verdict waits for its process to end, held by what its
    """
    return (
        f"its verdict waits for its process to end, held by what its examples left "
        f"({held}); a report that still says so outlived that process (killed outright)"
    )


#: How sphinx-gallery's summary of a build's failures names the examples that failed
#: unexpectedly (``"sphinx-gallery: 3 examples failed: a.py (ValueError: x), ...;
#: tracebacks above"``, :func:`docsaccel.sg_compat.failure_summary`), and how that part
#: ends; each of those examples' records says its failure too.
SG_FAILED_PREFIX = "sphinx-gallery: "
_SG_FAILED_AFTER_COUNT = " failed: "
SG_FAILED_END = "; tracebacks above"


def failed_examples_text(named: Sequence[str]) -> str:
    """The part of sphinx-gallery's summary of a build's failures (after
    :data:`SG_FAILED_PREFIX`) that names the examples that failed unexpectedly: each as
    ``named`` says it (its path and its exception's last line).

    >>> failed_examples_text(["a.py (ValueError)"])
    '1 example failed: a.py (ValueError); tracebacks above'
    """
    return (
        f"{counted(len(named), 'example')}{_SG_FAILED_AFTER_COUNT}{', '.join(named)}{SG_FAILED_END}"
    )


def expected_passed_text(named: Sequence[str]) -> str:
    """The part of sphinx-gallery's summary of a build's failures (after
    :data:`SG_FAILED_PREFIX`) that names the examples expected to fail that did not:
    each passed, and its build failed.

    >>> expected_passed_text(["a.py"]).partition(" (")[0]
    '1 example expected to fail did not: a.py'
    """
    return (
        f"{counted(len(named), 'example')} expected to fail did not: {', '.join(named)} "
        "(remove them from sphinx_gallery_conf['expected_failing_examples'] in conf.py)"
    )


#: How the error of an example that kept the build's process from ending ends (its record
#: is failed, and the report's ``exit_blocked`` says the same of the build).
EXIT_BLOCKED_ERROR = "so the build's process could not end"


def build_failures(
    build: Any, failed_errors: Sequence[str | None] = (), overruns: int = 0
) -> list[str]:
    """Why a report's ``build`` (a dict) failed although its examples ran: one line per
    :data:`BUILD_FAILURES` key it holds, in that order; empty for a build that did not
    fail so. Every gate and view asks here, so none passes a build another fails.

    ``failed_errors``: the errors of the examples whose records fail the build
    (:func:`fails_build`), which the views list themselves. A reason that only repeats
    them is left out, so each failure is said once: sphinx-gallery's count of the failed
    examples (the rest of its summary kept), and ``exit_blocked`` when the example that
    kept the process from ending is among them. ``overruns``: how many examples whose
    budgets failed the build the views list themselves; the :data:`BUDGETS_FAILED` line
    is left out when it names as many.

    >>> build_failures({"exit_blocked": "a thread held it", "complete": True})
    ['a thread held it']
    >>> build_failures({"complete": True})
    []
    >>> summary = "sphinx-gallery: 1 example failed: a.py (ValueError); tracebacks above"
    >>> build_failures({"sphinx_failed": summary}, ["ValueError"])
    []
    """
    if not isinstance(build, dict):
        return []
    said = {
        key: _reason(key, build[key]) for key in BUILD_FAILURES if isinstance(build.get(key), str)
    }
    if not failed_errors and not overruns:
        return list(said.values())
    blocked_by_example = any(
        isinstance(error, str) and error.endswith(EXIT_BLOCKED_ERROR) for error in failed_errors
    )
    kept = []
    for key, why in said.items():
        if key == "exit_blocked" and blocked_by_example:
            continue
        if key == BUDGETS_FAILED and _names_only(why, overruns):
            continue
        if key == "sphinx_failed":
            why = _without_failed_examples(why)
        if why:
            kept.append(why)
    return kept


def _without_failed_examples(why: str) -> str:
    """sphinx-gallery's summary ``why`` without its part naming the failed examples."""
    rest = why.removeprefix(SG_FAILED_PREFIX)
    count, _, named = rest.partition(_SG_FAILED_AFTER_COUNT)
    if rest == why or count_of(count, "example") is None or SG_FAILED_END not in named:
        return why
    after = named.split(SG_FAILED_END, 1)[1].removeprefix("; ")
    return f"{SG_FAILED_PREFIX}{after}" if after else ""


def ran_none(statuses: Iterable[str]) -> bool:
    """Whether a build listing examples of ``statuses`` ran none of them (every one
    :data:`NOT_EXECUTED`): it measured nothing a gate or a view could judge. A build
    listing no example is not such a build.

    >>> ran_none(["not-executed", "not-executed"]), ran_none(["not-executed", "ok"]), ran_none([])
    (True, False, False)
    """
    seen = False
    for status in statuses:
        if status != NOT_EXECUTED:
            return False
        seen = True
    return seen


def is_measured(status: str) -> bool:
    """Whether the build that recorded a status measured the example's run: it ran it
    (not one of :data:`UNMEASURED`). An example the example cache restored, or whose
    outputs sphinx-gallery kept, was not run by this build: its time is another run's.
    Whether budgets judge it is :func:`is_judged`.

    >>> is_measured("ok"), is_measured("cached"), is_measured("not-executed")
    (True, False, False)
    """
    return status not in UNMEASURED


def is_judged(status: str, cache_hit: bool = False) -> bool:
    """Whether the budgets judge an example of a status: one this build measured
    (:func:`is_measured`), or one the example cache restored (``cache_hit``), by the time
    of the run that stored it. The cache serves an entry only in the context that made it
    (fast path or not, :mod:`docsaccel.cache.context`), so that run was under this build's
    budgets, and the build log judges it too (under ``-W`` the verdict must not depend on
    the cache). sphinx-gallery's own reuse of an example whose source did not change
    (``cached`` without a hit) keeps a time of whatever build ran it: not judged.

    >>> is_judged("ok"), is_judged("cached"), is_judged("cached", cache_hit=True)
    (True, False, True)
    """
    return is_measured(status) or (status == CACHED and cache_hit)


#: How the views label the time of an example this build did not run: the example
#: cache's stored run's (:data:`STORED_RUN`), or whatever earlier build ran it.
STORED_RUN = "stored run"
EARLIER_RUN = "earlier build"


def unmeasured_text(count: int, restored: int = 0) -> str:
    """How every view says how many examples the build did not measure
    (:func:`is_measured`): ``count`` neither measured nor judged (outputs sphinx-gallery
    kept, not run), and ``restored`` from the example cache, judged by the time of the run
    that stored them (:func:`is_judged`).

    >>> unmeasured_text(1)
    '1 example not measured by this build (outputs reused, or not run): no budget judged'
    >>> print(unmeasured_text(1, restored=10))
    11 examples not measured by this build: 10 restored from the example cache (judged...
    >>> print(unmeasured_text(1, restored=10).split("; ")[1])
    1 with outputs reused, or not run (no budget judged)
    """
    if not restored:
        examples = f"{count} example{'s' if count != 1 else ''}"
        return f"{examples} {NOT_MEASURED} (outputs reused, or not run): no budget judged"
    total = count + restored
    stored = (
        "the time of the run that stored it"
        if restored == 1
        else "the times of the runs that stored them"
    )
    parts = [f"{restored} restored from the example cache (judged by {stored})"]
    if count:
        parts.append(f"{count} with outputs reused, or not run (no budget judged)")
    return f"{total} example{'s' if total != 1 else ''} {NOT_MEASURED}: {'; '.join(parts)}"


#: The one word for an example the build stopped while it ran (:func:`is_unfinished`):
#: its record says :data:`FAILED`, but it did not fail by itself. The views write its
#: status so, the gates name it so among the reasons a build failed ("1 example did not
#: finish: ..."), and its record's error starts with it (:func:`unfinished_why`), so a
#: reader meets one word for it wherever it is said.
DID_NOT_FINISH = "did not finish"
#: How the views write an unfinished example of a build killed outright (SIGKILL, out of
#: memory: it wrote no report, its journal is read): its record was written as it started,
#: so its ``0.0`` is no time at all, neither a partial one nor a speed-up.
KILLED_RUNNING = "was running when the build was killed"
#: How the views write an unfinished example of a build running now (it holds its output
#: folder's lock: no report yet, its journal is read): it runs still, so it was neither
#: stopped nor killed, and its record's ``0.0`` is that of its start, no time at all.
RUNNING = "running"
#: How the views write the time of an example this build never ran (:data:`NOT_EXECUTED`):
#: its record's ``0.0`` is no measurement, so never a zero.
NOT_RUN = "not run"
#: How the views write an example an unfinished build holds no record of while another
#: input does: the build stopped before it, so it was not reached, never removed nor new.
NOT_REACHED = "not reached"


def status_text(
    status: str,
    expected_failure: bool = False,
    unfinished: bool = False,
    killed: bool = False,
    running: bool = False,
) -> str:
    """How the views write a status: ``"failed (expected)"`` for an expected failure,
    :data:`DID_NOT_FINISH` for a :data:`FAILED` example the build stopped while it ran
    (``unfinished``, :func:`is_unfinished`), :data:`KILLED_RUNNING` when that build was
    killed outright (``killed``), :data:`RUNNING` when that build runs now (``running``).
    An example its budget interrupted before the build stopped stays :data:`INTERRUPTED`:
    its budget stopped it, not the build.

    >>> status_text("failed", expected_failure=True), status_text("ok")
    ('failed (expected)', 'ok')
    >>> status_text("failed", unfinished=True), status_text("interrupted", unfinished=True)
    ('did not finish', 'interrupted')
    >>> status_text("failed", unfinished=True, killed=True)
    'was running when the build was killed'
    >>> status_text("failed", unfinished=True, running=True)
    'running'
    """
    if unfinished and status == FAILED:
        if running:
            return RUNNING
        return KILLED_RUNNING if killed else DID_NOT_FINISH
    return f"{status} (expected)" if status == FAILED and expected_failure else status


def is_timed(status: str, unfinished: bool = False) -> bool:
    """Whether a record's time is that of a run, so a view may set it against its budget
    (a share, a headroom, a bar): not for an example never run (:data:`NOT_EXECUTED`, whose
    ``0.0`` is no time) nor a :data:`FAILED` one the build stopped while it ran
    (``unfinished``: its time is only how long it had run then). One its budget
    interrupted ran out of its budget: that time is set against it. Budgets judge by
    :func:`is_judged`, not by this.

    >>> is_timed("ok"), is_timed("not-executed"), is_timed("failed", unfinished=True)
    (True, False, False)
    >>> is_timed("interrupted", unfinished=True)
    True
    """
    return status != NOT_EXECUTED and not (unfinished and status == FAILED)


# What an audit of the example cache found of an entry it would have restored: the
# example ran instead, and its outputs were compared with the entry's.
#: The fresh run's outputs are the entry's (measured times aside).
VERIFIED = "verified"
#: They differ, and a second run gives the first one's: the cache would have served an
#: outdated page (a dependency the recorder cannot see changed). ``docsaccel check`` fails.
STALE = "stale"
#: Two runs with the same inputs differ (unseeded randomness, the clock, addresses): no
#: cache can serve the example faithfully.
NONDETERMINISTIC = "nondeterministic"
#: Every audit status.
AUDIT_STATUSES = (VERIFIED, STALE, NONDETERMINISTIC)
#: The ``reason`` of the record's ``cache`` value of an example that ran to be audited.
AUDIT_REASON = "audit"

#: Where an example's budget came from (see :mod:`docsaccel.budgets`).
BUDGET_SOURCES = ("inline", "pattern", "default", "builtin")

#: What interrupted an example (its record's ``interrupted_by``; a record without the key
#: was written before memory was bounded, and its time budget interrupted it): its time
#: budget, its memory budget, or the build's memory ceiling (``docsaccel_memory_limit``).
BY_TIME = "time"
BY_MEMORY = "memory"
BY_CEILING = "ceiling"
INTERRUPTED_BY = (BY_TIME, BY_MEMORY, BY_CEILING)
#: The limits of memory: an example interrupted by one of them ran out of memory, not time.
_MEMORY_LIMITS = (BY_MEMORY, BY_CEILING)


def unfinished_error(why: str) -> str:
    """The error of the record of an example the build stopped while it ran, ``why``:
    :data:`DID_NOT_FINISH` first, so the record says it in the views' word.

    >>> unfinished_error("the build was terminated (SIGTERM) while it ran")
    'did not finish: the build was terminated (SIGTERM) while it ran'
    """
    return f"{DID_NOT_FINISH}: {why}"


def unfinished_why(error: str) -> str:
    """Why an example the build stopped while it ran did not finish: its record's
    ``error`` without :data:`DID_NOT_FINISH` (:func:`unfinished_error`), for a line that
    has said that already ("1 example did not finish: a.py (<why>)"), so it says it once.
    Any other error is kept whole.

    >>> unfinished_why("did not finish: the build was interrupted by Ctrl-C (SIGINT) while it ran")
    'the build was interrupted by Ctrl-C (SIGINT) while it ran'
    >>> unfinished_why("ValueError: boom")
    'ValueError: boom'
    """
    return error.removeprefix(unfinished_error(""))


#: The error of the record of an example that was running when the build stopped (status
#: :data:`FAILED`, ``finished_at`` null): written when the example starts, replaced when
#: it finishes.
UNFINISHED_ERROR = unfinished_error(
    "the build stopped while this example was running "
    "(an error with abort_on_example_error, a crash, or an interrupted build)"
)


def started_not_finished(at: str) -> str:
    """Why a report page shows a build as unfinished while it runs: what the serial and
    the sharded builds put into the pages they publish when they start.

    >>> started_not_finished("2026-12-07T06:00:00+00:00")[:40]
    'it started at 2026-12-07T06:00:00+00:00 '
    """
    return f"it started at {at} and has not finished: this page is replaced when it does"


#: The ``build`` key of the report a shard command (``shard-local``, ``shard-merge``) puts
#: in the site folder as it starts, until its merge build writes the site's own: which
#: process it is, ``{"command": ..., "pid": ..., "started_at": ..., "process_start": ...}``
#: (``process_start``: the start time :func:`docsaccel.process_stat.start_time` read,
#: ``null`` where it could not), so a reader tells it running from killed outright.
SHARD_COMMAND = "shard_command"
#: The key of a merge's ``build.shard`` listing the build ids of the shards whose runs it
#: reports: two merges of the same shard builds report the same runs.
SHARD_RUNS = "runs"


def shard_command_text(command: str, pid: int, at: str, runs: bool | None) -> str:
    """What the report of a shard command that has not finished says of it: as written
    when it starts (``runs`` ``None``), and as read while that process runs or once it
    no longer does (killed outright: no handler of its own was left to say so).

    >>> print(shard_command_text("shard-local", 42, "T", None))
    docsaccel shard-local (process 42) started at T and has not finished: this is replaced when it does
    >>> print(shard_command_text("shard-local", 42, "T", False))
    docsaccel shard-local (process 42) started at T and ended before finishing: it was killed (SIGKILL, out of memory); run it again
    """  # noqa: E501
    started = f"docsaccel {command} (process {pid}) started at {at}"
    if runs is None:
        return f"{started} and has not finished: this is replaced when it does"
    if runs:
        return f"{started}, is running now and has not finished: this is replaced when it does"
    return (
        f"{started} and ended before finishing: it was killed (SIGKILL, out of memory); "
        "run it again"
    )


def is_start_record(record: Any) -> bool:
    """Whether a record (a dict) is the one an example's run writes as it starts, which
    no end replaced (its process was killed, or a ``parallel`` worker ended with the
    build): :data:`UNFINISHED_ERROR`, and a time that is no time at all.

    >>> is_start_record({"status": "failed", "error": UNFINISHED_ERROR, "finished_at": None})
    True
    """
    return is_unfinished(record) and record["error"] == UNFINISHED_ERROR


def is_unfinished(record: Any) -> bool:
    """Whether a record (a dict) is that of an example the build stopped while it ran."""
    return (
        isinstance(record, dict)
        and record.get("status") == FAILED
        and record.get("finished_at") is None
        and isinstance(record.get("error"), str)
        and record["error"].startswith(DID_NOT_FINISH)
    )


#: The error of an example that ran, but whose record the build could not read back (a
#: file of the records folder was removed or replaced while the build ran, by an
#: example's code): status :data:`FAILED`, and the report says ``"complete": false``.
RECORD_LOST_ERROR = (
    "its record was lost: it ran, but the file its record was written to was removed or "
    "replaced while the build ran (by an example's code?), so its time and memory are unknown"
)

#: What follows the example's id at the start of the error of the record of an example
#: the hard stop ended (status :data:`INTERRUPTED`): it ignored its budget's interruption
#: for the grace period, so its process was ended and the build stopped there.
HARD_STOP = "was stopped hard after"


def is_stopped_hard(record: Any) -> bool:
    """Whether a record (a dict) is that of an example the hard stop ended.

    >>> is_stopped_hard({"id": "a/plot_x.py", "status": "interrupted",
    ...                  "error": "a/plot_x.py was stopped hard after 8.0 s (...)"})
    True
    """
    return (
        isinstance(record, dict)
        and record.get("status") == INTERRUPTED
        and isinstance(record.get("error"), str)
        and record["error"].startswith(f"{record.get('id')} {HARD_STOP} ")
    )


# --- Budget rules -----------------------------------------------------------------------

#: An example is *near* its budget above this fraction of it.
NEAR_BUDGET = 0.8
#: The largest finite budget: a week. Longer is a typo or an attack (timers overflow
#: past ~9.2e9 s); an example that may run that long is unbounded, ``"none"``.
MAX_BUDGET_SECONDS = 7 * 24 * 3600


def near_budget_text() -> str:
    """:data:`NEAR_BUDGET` as the views write it: ``"80%"``."""
    return f"{NEAR_BUDGET * 100:g}%"


def _over(stopped: bool, used: float | None, budget: float | None) -> bool:
    return stopped or (budget is not None and used is not None and used > budget)


def _near(over: bool, used: float | None, budget: float | None) -> bool:
    if over or budget is None or budget <= 0 or used is None:
        return False
    return used > NEAR_BUDGET * budget


def is_over_budget(
    status: str, seconds: float, budget_seconds: float | None, interrupted_by: str | None = None
) -> bool:
    """Slower than a finite time budget; an example its time budget interrupted always is
    over (``interrupted_by`` ``None``: a record from before memory was bounded, the time).
    Whether the budgets judge it at all is the caller's question (:func:`is_judged`)."""
    stopped = status == INTERRUPTED and interrupted_by not in _MEMORY_LIMITS
    return _over(stopped, seconds, budget_seconds)


def is_near_budget(
    status: str, seconds: float, budget_seconds: float | None, interrupted_by: str | None = None
) -> bool:
    """Not over its time budget, but above :data:`NEAR_BUDGET` of it."""
    over = is_over_budget(status, seconds, budget_seconds, interrupted_by)
    return _near(over, seconds, budget_seconds)


def is_over_memory_budget(
    status: str, peak_bytes: int | None, budget_bytes: int | None, interrupted_by: str | None
) -> bool:
    """Its peak above a finite memory budget; an example interrupted by its memory budget
    or by the build's memory ceiling always is over."""
    stopped = status == INTERRUPTED and interrupted_by in _MEMORY_LIMITS
    return _over(stopped, peak_bytes, budget_bytes)


def is_near_memory_budget(
    status: str, peak_bytes: int | None, budget_bytes: int | None, interrupted_by: str | None
) -> bool:
    """Not over its memory budget, but its peak above :data:`NEAR_BUDGET` of it."""
    over = is_over_memory_budget(status, peak_bytes, budget_bytes, interrupted_by)
    return _near(over, peak_bytes, budget_bytes)


# --- Environment ------------------------------------------------------------------------

#: Set to true by CI services; budgets are multiplied by the file's ``ci_factor`` then.
#: (docsaccel's own variables are declared with its settings, :mod:`docsaccel.settings`.)
CI_ENV = "CI"

# --- Registry sections ------------------------------------------------------------------

#: Render gating publishes each gated env's statistics here.
RENDER_SECTION = "render"
#: :func:`docsaccel.fast.pick` publishes the knobs it chose here.
KNOBS_SECTION = "knobs"
#: The key of a knob's entry (in a record's ``knobs``) listing the later picks of its
#: name with other values: ``{"value", "fast", "full", "later": [{...}, ...]}``.
KNOB_LATER = "later"


def knob_picks_of(knob: Any) -> list[dict[str, Any]]:
    """The distinct picks ``{"value", "fast", "full"}`` of one knob's entry, in the order
    the example made them (a record written before :data:`KNOB_LATER` has only the first)."""
    if not isinstance(knob, Mapping):
        return []
    first = {key: knob.get(key) for key in ("value", "fast", "full")}
    later = knob.get(KNOB_LATER)
    if not isinstance(later, list):
        return [first]
    return [first, *(dict(pick) for pick in later if isinstance(pick, Mapping))]


def knob_picks(knobs: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """``(name, {"value", "fast", "full"})`` of every distinct pick in a record's ``knobs``,
    by name, each name's picks in the order the example made them: what the fast-path
    note and the report's knobs column both show.

    >>> knob_picks({"steps": {"value": 5, "fast": 5, "full": 1,
    ...                       "later": [{"value": 2, "fast": 2, "full": 3}]}})
    [('steps', {'value': 5, 'fast': 5, 'full': 1}), ('steps', {'value': 2, 'fast': 2, 'full': 3})]
    """
    return [(name, pick) for name, knob in sorted(knobs.items()) for pick in knob_picks_of(knob)]


def knob_value_text(value: Any) -> str:
    """A knob's value as the note, the report and warnings show it: strings bare, the rest
    as JSON."""
    return value if isinstance(value, str) else json.dumps(value)


#: :func:`docsaccel.video.embed` publishes the videos to embed here.
VIDEOS_SECTION = "videos"
#: The files that are videos: what the video file recorder writes, what the scraper embeds.
VIDEO_SUFFIXES = (".mp4", ".gif")

# --- Processes --------------------------------------------------------------------------

#: What the command line of a helper process of ``multiprocessing`` (or joblib's loky)
#: holds: the fork server and the resource trackers. Each serves its whole process, not
#: the example that happened to start it first, and ends when that process ends.
MULTIPROCESSING_HELPERS = (
    "multiprocessing.forkserver import main",
    "multiprocessing.resource_tracker import main",
    "loky.backend.resource_tracker import main",
)

#: The ``os.open`` flags that may write a file.
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


def opens_for_writing(mode: Any, flags: Any) -> bool:
    """Whether an ``open`` audit event's ``mode`` (``open``) or ``flags`` (``os.open``)
    may write the file (the example cache's recorder, its early-reads child and the output
    watch all decide it so).

    >>> opens_for_writing("rb", None), opens_for_writing("r+", None)
    (False, True)
    >>> opens_for_writing(None, os.O_RDONLY), opens_for_writing(None, os.O_CREAT)
    (False, True)
    """
    if isinstance(mode, str):
        return any(c in mode for c in "wax+")
    return isinstance(flags, int) and bool(flags & _WRITE_FLAGS)


def opens_keeping_content(mode: Any, flags: Any) -> bool:
    """Whether an ``open`` audit event's ``mode`` or ``flags`` keep what the file held
    (an update in place, an append): what the file holds after depends on what it held.

    >>> opens_keeping_content("a", None), opens_keeping_content("r+", None)
    (True, True)
    >>> opens_keeping_content("w", None), opens_keeping_content(None, os.O_WRONLY | os.O_TRUNC)
    (False, False)
    >>> opens_keeping_content(None, os.O_WRONLY | os.O_APPEND)
    True
    """
    if isinstance(mode, str):
        return "r" in mode or "a" in mode
    return isinstance(flags, int) and bool(flags & _WRITE_FLAGS) and not flags & os.O_TRUNC


#: The module-level locks of docsaccel (:func:`fork_safe_lock`).
_FORK_SAFE: list[Any] = []
#: The process :func:`free_locks_in_child` last ran in.
_freed_in: int | None = None


def fork_safe_lock() -> Any:
    """A ``threading.Lock`` that a forked child finds free (:func:`free_locks_in_child`):
    held by another thread at the fork, it would be held forever in the child, whose
    copy of that thread never runs.

    >>> lock = fork_safe_lock(); lock.acquire(); free_locks_in_child(); lock.locked()
    True
    False
    """
    import threading

    lock = threading.Lock()
    _FORK_SAFE.append(lock)
    return lock


def free_locks_in_child() -> None:
    """In a forked child (the at-fork hooks of :mod:`docsaccel.gallery.process_end` and
    :mod:`docsaccel.cache.child`): every :func:`fork_safe_lock` made free, as the
    standard library frees its own locks in a child. Once per process: both hooks call it,
    and each call costs a forked pool worker its share of copied memory."""
    global _freed_in
    pid = os.getpid()
    if _freed_in == pid:
        return
    _freed_in = pid
    for lock in _FORK_SAFE:
        reinit = getattr(lock, "_at_fork_reinit", None)
        if reinit is not None:
            reinit()


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


#: Text inputs are at most this large: a report of thousands of examples is a few MB, and
#: a device or a runaway file must not exhaust memory.
MAX_INPUT_BYTES = 256 * 1024 * 1024
#: JSON inputs nest at most this deep (records and reports nest 4 levels): deeper input
#: is hostile and would exhaust the recursion of the code that walks it.
MAX_JSON_DEPTH = 64


class InputError(ValueError):
    """An input that cannot be read or understood; the message names the file and why.

    Every reader of docsaccel raises this class or a subclass of it (a bad report, budget
    file, history, shard artifact), so a command catches one class and exits 2.
    """


def error_line(message: str) -> str:
    """The line a command prints for exit status 2 (an input, argument or resource that is
    wrong): every command's says ``error:`` first, whichever part found the problem.

    >>> error_line("--cache 'x': no such cache folder")
    "error: --cache 'x': no such cache folder\\n"
    """
    return f"error: {message.rstrip()}\n"


def shown_path(path: str | os.PathLike[str]) -> str:
    """``path`` as a message names it for a user: from the working directory (where
    ``sphinx-build`` or ``docsaccel`` runs, usually the repository root) when inside it,
    else absolute.

    >>> shown_path(os.path.join(os.getcwd(), "docs", "plot_a.py"))
    'docs/plot_a.py'
    """
    absolute = os.path.abspath(path)
    relative = os.path.relpath(absolute, os.getcwd())
    return absolute if relative == ".." or relative.startswith(".." + os.sep) else relative


class MissingExtraError(InputError):
    """An optional library is not installed; the message names the extra to install."""


def require_extra(module: str, extra: str) -> Any:
    """Import ``module``, or raise :class:`MissingExtraError` naming ``docsaccel[extra]``.

    >>> require_extra("json", "report").__name__
    'json'
    """
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtraError(
            f"{module} is not installed; it comes with the {extra!r} extra: "
            f'pip install "docsaccel[{extra}]"'
        ) from None


def read_text(path: str | os.PathLike[str], what: str = "file") -> str:
    """The UTF-8 text of the regular file at ``path``; :class:`InputError` naming it if not.

    A byte-order mark is dropped. Directories, devices and pipes, files above
    :data:`MAX_INPUT_BYTES` and bytes that are not UTF-8 are refused.
    """
    path = Path(path)
    data = read_bytes(path, what)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{path}: the {what} is not UTF-8 text (byte {data[exc.start]:#04x} at offset "
            f"{exc.start})"
        ) from None


def read_bytes(path: str | os.PathLike[str], what: str = "file") -> bytes:
    """The bytes of the regular file at ``path``; :class:`InputError` naming it if not.

    Directories, devices and pipes, and files above :data:`MAX_INPUT_BYTES` are refused.
    """
    path = Path(path)
    try:
        # Checked before opening too: opening a named pipe would block until a writer came.
        if path.exists() and not path.is_dir() and not path.is_file():
            raise InputError(f"{path}: cannot read the {what}: it is not a regular file")
        with path.open("rb") as stream:
            info = os.fstat(stream.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise InputError(f"{path}: cannot read the {what}: it is not a regular file")
            if info.st_size > MAX_INPUT_BYTES:
                raise InputError(
                    f"{path}: the {what} is {info.st_size} bytes, more than docsaccel reads "
                    f"({MAX_INPUT_BYTES})"
                )
            data = stream.read(MAX_INPUT_BYTES + 1)
    except IsADirectoryError:
        raise InputError(f"{path}: cannot read the {what}: it is a directory") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read the {what}: {exc.strerror or exc}") from None
    return data


def read_json(path: str | os.PathLike[str], what: str = "file") -> Any:
    """Parse the JSON file at ``path``; raise :class:`InputError` naming it otherwise.

    ``what`` says what the file should be, for the message ("report", "manifest").
    Read with :func:`read_text` (a byte-order mark is accepted); NaN and infinities are
    refused, as JSON has none.
    """
    return parse_json(read_text(path, what), f"{path}", what)


def parse_json(text: str, where: str, what: str = "file") -> Any:
    """Parse JSON ``text`` read from ``where``; raise :class:`InputError` naming it.

    Refused: NaN and infinities (JSON has none; ``1e999`` too), and nesting deeper than
    :data:`MAX_JSON_DEPTH`.
    """
    try:
        data = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}: the {what} is not valid JSON: {exc}") from None
    except ValueError as exc:
        raise InputError(f"{where}: the {what} is not valid JSON: {exc}") from None
    except RecursionError:
        # The C parser recurses per level: deep nesting is hostile, never a real file.
        raise InputError(f"{where}: the {what} is nested too deeply to read") from None
    if _depth_exceeds(data, MAX_JSON_DEPTH):
        raise InputError(
            f"{where}: the {what} is nested more than {MAX_JSON_DEPTH} levels deep; "
            "docsaccel's files nest a few levels"
        )
    return data


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is out of range for a number")
    return value


def _depth_exceeds(data: Any, limit: int) -> bool:
    """Whether ``data`` nests containers more than ``limit`` deep (walked without recursion)."""
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def is_finite_number(value: Any) -> bool:
    """A JSON number (not a bool) that is finite, and small enough to be a float."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int with hundreds of digits
        return False


# --- The conf.py a build read -------------------------------------------------------------


def conf_fingerprint(confdir: str | os.PathLike[str]) -> dict[str, str] | None:
    """``{"path": ..., "sha256": ...}`` of the ``conf.py`` in ``confdir``, as a report
    records it; ``None`` when it cannot be read (a build without one: ``-C``)."""
    path = Path(confdir, "conf.py").resolve()
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None
    return {"path": str(path), "sha256": digest}


def project_modules(root: str | os.PathLike[str], outside: Iterable[str] = ()) -> list[str]:
    """The files of the modules loaded now that lie in the project at ``root`` and in none
    of the folders ``outside`` (the interpreter's, its site-packages): what ``conf.py``
    imported and the project's extensions, which a later build runs before docsaccel
    loads. A report records them (``build.conf.modules``) so a reader can tell when one
    changed after it (:func:`modules_changed`)."""
    root = os.path.join(os.path.abspath(root), "")
    skip = tuple(os.path.join(os.path.abspath(folder), "") for folder in outside)
    found = set()
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if not isinstance(path, str) or not path.endswith(".py"):
            continue
        path = os.path.abspath(path)
        if path.startswith(root) and not path.startswith(skip):
            found.add(path)
    return sorted(found)


def modules_changed(recorded: Any, written_ns: int) -> str | None:
    """Why a report written at ``written_ns`` (its file's modification time) is not of
    the current tree, or ``None``: a module its build loaded before docsaccel's plugin
    ran (``build.conf.modules``: :func:`project_modules`) changed since. A build since
    then that failed on it (an import that raised, an extension whose ``setup`` raised)
    never reached docsaccel, and left the report.

    A module the report stamped (``build.conf.module_stamps``) changed when its bytes
    did (:func:`docsaccel.loaded_code.content_changed`): an edit within the filesystem's
    timestamp resolution of the report's write keeps its time, and a fresh checkout of
    the same bytes is the same module. One of a report without stamps (an earlier
    release's) changed when it was modified after the report was written (not the
    build's start: the build writes generated files while it runs). A module that is not
    there (the report read on another machine) says nothing.

    >>> modules_changed({"path": "conf.py", "sha256": "0"}, 0) is None
    True
    """
    if not isinstance(recorded, dict) or not isinstance(recorded.get("modules"), list):
        return None
    stamps = recorded.get("module_stamps")
    stamps = stamps if isinstance(stamps, dict) else {}
    for path in recorded["modules"]:
        if path in stamps:
            changed = content_changed(path, stamps[path])
        else:
            try:
                changed = os.stat(path).st_mtime_ns > written_ns
            except (OSError, TypeError, ValueError):
                continue
        if changed:
            return (
                f"{path} was modified after this report's build loaded it, so the last "
                "build may have failed before docsaccel ran (a module conf.py imports, or an "
                "extension listed before docsaccel.gallery, that raised) and left this "
                "earlier build's report; rebuild"
            )
    return None


def distributions_changed(recorded: Any) -> str | None:
    """Why a report's build is not the last one of its project, or ``None``: the
    installed version of a distribution holding one of its Sphinx extensions
    (``build.conf.distributions``: :func:`docsaccel.loaded_code.distribution_versions`)
    is not the one it ran. A build since then that failed on it never reached docsaccel.
    A distribution not installed now (the report read elsewhere) says nothing.

    >>> distributions_changed({"distributions": {"no-such-distribution-x": "1"}}) is None
    True
    """
    versions = recorded.get("distributions") if isinstance(recorded, dict) else None
    if not isinstance(versions, dict):
        return None
    for name, version in sorted(versions.items()):
        try:
            now = metadata.version(name)
        except (metadata.PackageNotFoundError, ValueError):
            continue
        if now != version:
            return (
                f"the distribution {name} of a Sphinx extension was {version} for this "
                f"report's build and is {now} now, so the last build may have failed before "
                "docsaccel ran and left this earlier build's report; rebuild"
            )
    return None


def conf_changed(recorded: Any) -> str | None:
    """Why a report's build is not the last one of its project, or ``None``.

    ``recorded``: the report's ``build.conf`` (:func:`conf_fingerprint`). The ``conf.py``
    it names was edited since that build (its bytes differ): a build after the edit never
    reached docsaccel (``conf.py`` raised, an extension before ``docsaccel.gallery``
    failed to load) or would have replaced the report. Bytes, not the modification time,
    so a fresh checkout of the same file is the same file; a ``conf.py`` that is not there
    (the report read on another machine) says nothing, so this is never a false alarm.

    >>> conf_changed(None) is None
    True
    """
    if not isinstance(recorded, dict) or not isinstance(recorded.get("path"), str):
        return None
    path = Path(recorded["path"])
    now = conf_fingerprint(path.parent) if path.name == "conf.py" else None
    if now is None or now["sha256"] == recorded.get("sha256"):
        return None
    return (
        f"{path} changed since this report's build, so the last build may have failed "
        "before docsaccel ran (an error in conf.py, an extension that failed to load) and "
        "left this earlier build's report; rebuild"
    )


#: How every message names a signal that stops a build, Ctrl-C and SIGTERM alike: what
#: ended its process (:func:`ended_by`) and why its running example did not finish
#: (:func:`stopped_by`), so ``check``, ``compare`` and the log name both the same way.
STOP_SIGNAL_WORDS = {
    signal.SIGINT: "interrupted by Ctrl-C (SIGINT)",
    signal.SIGTERM: "terminated (SIGTERM)",
}


def ended_by(signum: int) -> str:
    """What ended the build's process, as the log and the report say it.

    >>> ended_by(signal.SIGINT)
    'it was interrupted by Ctrl-C (SIGINT)'
    """
    return f"it was {STOP_SIGNAL_WORDS[signum]}"


def stopped_by(signum: int) -> str:
    """Why the example running when ``signum`` stopped the build did not finish.

    >>> stopped_by(signal.SIGTERM)
    'the build was terminated (SIGTERM) while it ran'
    """
    return f"the build was {STOP_SIGNAL_WORDS[signum]} while it ran"


class Terminated(KeyboardInterrupt):
    """``SIGTERM`` stopping a command that handles it as Ctrl-C (a shard command stops
    its builds either way), keeping which signal it was for :func:`stop_signal`."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def stop_signal(exc: KeyboardInterrupt) -> int:
    """The signal a ``KeyboardInterrupt`` stands for: Ctrl-C unless it is a
    :class:`Terminated`.

    >>> stop_signal(Terminated(signal.SIGTERM)) == signal.SIGTERM
    True
    >>> stop_signal(KeyboardInterrupt()) == signal.SIGINT
    True
    """
    return exc.signum if isinstance(exc, Terminated) else signal.SIGINT
