"""Build history: one JSON line per build, and per example its recent typical duration.

The design, in full: the reports guide's *Design* section.

Example: four builds (:func:`append_history` writes each line from a report), one of
them on a slow runner.

>>> import tempfile
>>> from pathlib import Path
>>> from docsaccel.report.model import Timing, running_text
>>> folder = tempfile.TemporaryDirectory()
>>> history = Path(folder.name, "history.jsonl")
>>> lines = [history_line([Timing("tutorials/plot_a.py", "plot_a.py", seconds)], "report.json")
...          for seconds in (10.0, 11.0, 30.0, 10.5)]
>>> _ = history.write_text("\\n".join(lines) + "\\n")
>>> stats = read_history(history, last=10)
>>> stats["tutorials/plot_a.py"].median_seconds, stats["tutorials/plot_a.py"].noisy
(10.75, False)
>>> folder.cleanup()
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import re
import statistics
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

from docsaccel.contract import (
    CACHED,
    EXPECTED_FAILURE,
    FAILED,
    INTERRUPTED,
    NOT_EXECUTED,
    OK,
    SHARD_RUNS,
    UNMEASURED,
    WHOLE_RUNS,
    InputError,
    is_finite_number,
    parse_json,
    read_text,
    status_text,
)
from docsaccel.formats import Format
from docsaccel.report.inputs import judged_input, other_kind, other_kind_at
from docsaccel.report.model import Timing, running_text
from docsaccel.schema import REPORT_SCHEMA
from docsaccel.settings import in_package, missing_folder

__all__ = [
    "BUILD_SHA256",
    "HISTORY_SCHEMA",
    "HISTORY_VERSION",
    "MIN_RUNS_FOR_NOISE",
    "NOISY_ABOVE",
    "PART_OF_BUILD",
    "PART_OF_BUILD_TEXT",
    "RUNS_SHA256",
    "SHARD_RUN_IDS",
    "STATUSES_KNOWN",
    "Appended",
    "ExampleHistory",
    "HistoryBuild",
    "append_history",
    "cut_short_line",
    "cut_short_text",
    "history_line",
    "is_history",
    "read_builds",
    "read_history",
    "read_runs",
    "recent_history",
    "runs_digest",
    "same_kind",
    "shard_run_ids",
    "warn_stderr",
]

#: One line of a history file (:class:`docsaccel.formats.Format`).
HISTORY = Format("docsaccel.history", 1, "docsaccel.history line")
HISTORY_SCHEMA = HISTORY.schema
#: Characters of a history read to tell another file of docsaccel's given for it.
_PEEK = 1 << 16
HISTORY_VERSION = HISTORY.version
NOISY_ABOVE = 0.25
MIN_RUNS_FOR_NOISE = 3
#: The line-level key that is false when the input did not say how its examples ended.
STATUSES_KNOWN = "statuses_known"
#: The line-level key naming the build a line records: the SHA-256 of its report.
BUILD_SHA256 = "build_sha256"
#: The line-level key naming the shard builds a merge's line records: the SHA-256 of
#: their build ids (:func:`runs_digest`), the same for every merge of those shards.
RUNS_SHA256 = "runs_sha256"
#: The line-level key listing the shard builds a merge's line records, by build id
#: (``build.shard.runs``): a later merge reusing any of them is refused, each run
#: recorded once.
SHARD_RUN_IDS = "shard_runs"
#: The line-level key that is true when the line records one gallery of its build.
PART_OF_BUILD = "part_of_build"
#: What ``history append`` says of a line made from one gallery's file: one line per
#: build, so the build's other galleries cannot be added to it later.
PART_OF_BUILD_TEXT = (
    "the file lists one gallery's examples of its build: the history now records that "
    "build with those examples only, and refuses its other files; append the build's "
    "report to record all of them"
)


@dataclass(frozen=True)
class ExampleHistory:
    """An example's last durations (oldest first), their median and noise."""

    id: str
    durations: tuple[float, ...]

    @property
    def runs(self) -> int:
        return len(self.durations)

    @property
    def median_seconds(self) -> float:
        return statistics.median(self.durations)

    @property
    def noise(self) -> float:
        """Median absolute deviation over the median (0 = perfectly steady)."""
        median = self.median_seconds
        if median <= 0:
            return 0.0
        return statistics.median(abs(d - median) for d in self.durations) / median

    @property
    def noisy(self) -> bool:
        return self.runs >= MIN_RUNS_FOR_NOISE and self.noise > NOISY_ABOVE


@dataclass(frozen=True)
class HistoryBuild:
    """One line of a history: when, which kind of build, and each example's seconds."""

    recorded_at: str | None
    fast: bool | None
    durations: dict[str, float]
    #: Each example's peak memory, where the line recorded it.
    peaks: dict[str, int] = field(default_factory=dict)
    #: The examples the line recorded without a whole run (stopped, failed, not
    #: measured): in the build, but with no time to compare or trend.
    not_whole: frozenset[str] = frozenset()
    #: The status each example of :attr:`not_whole` was recorded with, as the views write
    #: it (:func:`~docsaccel.contract.status_text`: ``"failed (expected)"``).
    not_whole_status: Mapping[str, str] = field(default_factory=dict)
    #: False for a line made from an input that does not say how its examples ended
    #: (``sg_execution_times.rst``): an example that raised is among :attr:`durations`.
    statuses_known: bool = True
    #: The seconds of each example of :attr:`not_whole` that failed as expected
    #: (``expected_failing_examples``): a real run up to the error it was expected to
    #: raise, so what running it costs (a shard plan's prediction), but no duration of its
    #: speed to compare or trend.
    expected_failure_seconds: Mapping[str, float] = field(default_factory=dict)

    @property
    def total_seconds(self) -> float:
        """The total of the whole runs only: partial when :attr:`not_whole` is not empty."""
        return sum(self.durations.values())

    @property
    def partial(self) -> bool:
        """Whether an example of the build did not run whole: its total is no timing."""
        return bool(self.not_whole)

    def left_out_text(self) -> str:
        """Why a :attr:`partial` build's total is no timing to trend, from what its
        examples without a whole run were recorded as ("" for a build that is not):
        a build whose examples were all restored from the cache ran none of them.

        >>> print(HistoryBuild(None, True, {}, not_whole=frozenset({"a.py"}),
        ...                    not_whole_status={"a.py": "cached"}).left_out_text())
        its examples were restored from the cache: a build of cache hits only has no timing...
        >>> HistoryBuild(None, True, {"a.py": 1.0}, not_whole=frozenset({"b.py", "c.py"}),
        ...              not_whole_status={"b.py": "cached", "c.py": "failed"}).left_out_text()
        'an example was restored from the cache, an example failed: its total is no timing'
        >>> HistoryBuild(None, True, {"a.py": 1.0}, not_whole=frozenset({"b.py"}),
        ...              not_whole_status={"b.py": "failed (expected)"}).left_out_text()
        'an example failed (expected): its total is no timing'
        """
        if not self.partial:
            return ""
        statuses = [self.not_whole_status.get(i, "") for i in sorted(self.not_whole)]
        if not self.durations and set(statuses) <= set(UNMEASURED):
            restored = set(statuses) == {CACHED}
            ran = "were restored from the cache" if restored else "did not run in it"
            return f"its examples {ran}: a build of cache hits only has no timing to trend"
        counts = Counter(_NOT_WHOLE_WHY.get(status, "did not run whole") for status in statuses)
        said = [
            f"{'an example' if count == 1 else f'{count} examples'} {why}"
            for why, count in counts.items()
        ]
        return f"{', '.join(said)}: its total is no timing"


#: What an example without a whole run was, by its recorded status, for
#: :meth:`HistoryBuild.left_out_text`.
_NOT_WHOLE_WHY = {
    CACHED: "was restored from the cache",
    NOT_EXECUTED: "did not run",
    INTERRUPTED: "was stopped",
    FAILED: "failed",
    status_text(FAILED, expected_failure=True): status_text(FAILED, expected_failure=True),
}


def history_line(
    timings: Sequence[Timing],
    source: str,
    recorded_at: str | None = None,
    build: Mapping[str, object] | None = None,
    digest: str | None = None,
    statuses_known: bool = True,
    build_digest: str | None = None,
    part_of_build: bool = False,
    runs: str | None = None,
    run_ids: Sequence[str] = (),
) -> str:
    """The JSON line recording one build's ``timings``; ``build``: the report's build facts;
    ``digest``: the SHA-256 of the input file; ``build_digest``: that of its build's
    report (:attr:`~docsaccel.report.model.LoadedInput.build_report`), the same through
    any file of the build, which says whether a build is recorded; ``part_of_build``: the
    input lists one gallery's examples of its build (``"part_of_build": true``);
    ``runs``, ``run_ids``: the shard builds a merge's input holds (:func:`runs_digest`,
    :func:`shard_run_ids`); ``statuses_known``: whether the input says how each example ended
    (:attr:`~docsaccel.report.model.LoadedInput.holds_status`). When it does not, the line
    says so (``"statuses_known": false``) and an example it read as ``ok`` is written
    without a status: it may have raised, and the history must not say it passed.

    >>> line = json.loads(history_line([Timing("a.py", "a.py", 2.0)], "t.rst", digest=None,
    ...                                statuses_known=False))
    >>> line["statuses_known"], line["examples"]
    (False, {'a.py': {'seconds': 2.0}})
    """
    build = build or {}
    fast = build.get("fast")
    entry = {
        **HISTORY.header(),
        "recorded_at": recorded_at or datetime.now(UTC).isoformat(timespec="seconds"),
        "source": source,
        "fast": fast if isinstance(fast, bool) else None,
        "shard": build.get("shard"),
        "examples": {t.id: _entry(t, statuses_known) for t in timings},
    }
    if not statuses_known:
        entry[STATUSES_KNOWN] = False
    if digest is not None:
        entry["input_sha256"] = digest
    if build_digest is not None:
        entry[BUILD_SHA256] = build_digest
    if part_of_build:
        entry[PART_OF_BUILD] = True
    if runs is not None:
        entry[RUNS_SHA256] = runs
    if run_ids:
        entry[SHARD_RUN_IDS] = sorted(run_ids)
    return json.dumps(entry, sort_keys=True)


def runs_digest(build: Mapping[str, object]) -> str | None:
    """The identity of the runs a merge's report holds: the SHA-256 of the build ids of
    its shards (``build.shard.runs``), or ``None`` for a report of no merge, or of shards
    not named. Two merges of the same shard artifacts write two reports (their times,
    their ids differ) of the same runs, which a history records once.

    >>> runs_digest({"shard": {"role": "merge", "runs": ["b1", "a0"]}}) == runs_digest(
    ...     {"shard": {"role": "merge", "runs": ["a0", "b1"]}})
    True
    >>> runs_digest({"shard": {"role": "shard"}}) is None
    True
    """
    shard = build.get("shard")
    if not isinstance(shard, Mapping) or shard.get("role") != "merge":
        return None
    runs = shard_run_ids(build)
    if not runs:
        return None
    return hashlib.sha256("\n".join(sorted(runs)).encode("utf-8")).hexdigest()


def shard_run_ids(build: Mapping[str, object]) -> list[str]:
    """The build ids of the shards a merge's report holds (``build.shard.runs``), sorted;
    empty for a report of no merge, or of shards not named.

    >>> shard_run_ids({"shard": {"role": "merge", "runs": ["b1", "a0"]}})
    ['a0', 'b1']
    """
    shard = build.get("shard")
    if not isinstance(shard, Mapping) or shard.get("role") != "merge":
        return []
    runs = shard.get(SHARD_RUNS)
    if not isinstance(runs, list) or not all(isinstance(r, str) for r in runs):
        return []
    return sorted(set(runs))


def _entry(timing: Timing, statuses_known: bool = True) -> dict[str, object]:
    entry: dict[str, object] = {"seconds": timing.seconds}
    # An input that cannot tell how an example ended read it as ok from its time alone.
    if statuses_known or timing.status != OK:
        entry["status"] = timing.status
    if timing.expected_failure:
        # Marked as the record marks it, so the history's readers say what every view says.
        entry[EXPECTED_FAILURE] = True
    if timing.memory_bytes is not None:
        entry["peak_bytes"] = timing.memory_bytes
    return entry


def warn_stderr(message: str) -> None:
    """How the history's readers warn by default: one line on stderr."""
    print(f"docsaccel: warning: {message}", file=sys.stderr)


#: Where a reader of the history says it skipped a line: one line naming file and line.
Warn = Callable[[str], None]


@dataclass(frozen=True)
class Appended:
    """What :func:`append_history` recorded: how many examples, and the note every view
    says of its input (:meth:`~docsaccel.report.model.LoadedInput.no_status_text`, ``""``
    for a docsaccel report)."""

    examples: int
    note: str = ""
    #: The input listed one gallery's examples of its build: the build is recorded now.
    part_of_build: bool = False


def append_history(report: str | Path, history: str | Path, warn: Warn = warn_stderr) -> Appended:
    """Append the build in ``report`` (any input ``check`` reads) to ``history``.

    Returns what it recorded (:class:`Appended`). The history is locked while it is read and
    written (:func:`_appending`), so concurrent appends neither interleave nor drop each
    other's lines, nor record one build twice. A last
    line an interrupted append cut short (:func:`cut_short_line`) is dropped first, with
    a warning (``warn``), so the history reads again.
    :class:`~docsaccel.contract.InputError`, naming the file and why, and nothing written:
    a history that cannot be written, a target that is not a history (a report...), the
    report of a build that did not finish, that failed (an example failed unexpectedly,
    or the build itself: :meth:`~.model.LoadedInput.failures`), that ran no example, or
    that a later build left behind, a build the history already records (through any of
    its files: its report, the root or a gallery's ``sg_execution_times.rst``, its JUnit
    XML all name the build's report).
    """
    history = Path(history)
    _refuse_target(Path(report), history)
    # A sphinx-gallery file of a failed build: that build's report says so.
    loaded = judged_input(report)
    loaded.require_current()
    if loaded.ran_nothing:
        raise InputError(
            f"{report}: the build ran none of its examples: a history records measured "
            "builds only; not appended"
        )
    holder = loaded.building_now
    if holder is not None:  # none of its examples was stopped: it runs on
        raise InputError(
            running_text(report, holder, "append it after it ends", written=loaded.complete)
        )
    if not loaded.complete:
        raise InputError(
            f"{report}: {loaded.incomplete_text()}: a history records finished builds only "
            "(its stopped examples would read as fast ones); not appended"
        )
    failures = loaded.failures()
    if failures:
        raise InputError(
            f"{report}: the build failed ({'; '.join(failures)}): a history records passing "
            "builds only (a failed example's time is not that of its run); not appended"
        )
    # The file read, not the argument: an output folder names the report it holds.
    digest = _sha256(loaded.path)
    # Every file of one build resolves to its report: one line per build, through any.
    identity = digest if loaded.build_report is None else _sha256(loaded.build_report)
    line = history_line(
        loaded.timings,
        str(report),
        build=loaded.build,
        digest=digest,
        statuses_known=loaded.holds_status,
        build_digest=identity,
        part_of_build=loaded.part_of_build,
        runs=runs_digest(loaded.build or {}),
        run_ids=shard_run_ids(loaded.build or {}),
    )
    line += "\n"
    problem = in_package(history) or missing_folder(history)
    if problem is not None:
        raise InputError(f"{history}: cannot append to the history: {problem}")
    try:
        with _appending(history) as stream:
            # Under the lock: another append may have recorded the same build meanwhile,
            # and a last line without its end is then a line cut short, not one being
            # written. A last line cut short is said once, as it is dropped below.
            _refuse_other_kind(history)
            _refuse_damaged(history)
            recorded, recorded_runs = _recorded(history)
            if identity in recorded or digest in recorded:
                raise InputError(f"{history}: already records the build of {report}; not appended")
            runs = runs_digest(loaded.build or {})
            run_ids = shard_run_ids(loaded.build or {})
            if runs is not None and runs in recorded:
                raise InputError(
                    f"{history}: already records the runs of {report} (another merge of the "
                    "same shard builds); not appended"
                )
            again = [run for run in run_ids if run in recorded_runs]
            if again:
                raise InputError(_reused_runs_text(history, report, again))
            stream.write((_repair_end(history, warn) + line).encode("utf-8"))
    except IsADirectoryError:
        raise InputError(f"{history}: cannot append to the history: it is a directory") from None
    except OSError as exc:
        raise InputError(
            f"{history}: cannot append to the history: {exc.strerror or exc}"
        ) from None
    return Appended(len(loaded.timings), loaded.no_status_text(), loaded.part_of_build)


@contextlib.contextmanager
def _appending(history: Path) -> Iterator[BinaryIO]:
    """``history`` open for appending, held by this process alone: two appends at once
    (CI jobs sharing a history) each read, repair and write it whole, and neither takes
    the other's line being written for one an interrupted append cut short. A ``flock``
    lock, which its process's end drops; the readers take none (they skip a last line
    cut short)."""
    with history.open("ab") as stream:
        fcntl.flock(stream.fileno(), fcntl.LOCK_EX)
        yield stream


def _refuse_target(report: Path, history: Path) -> None:
    """Raise if ``history`` is ``report`` itself (whether it is a history is asked under
    the history's lock: :func:`_refuse_other_kind`)."""
    if report.exists() and history.exists() and report.samefile(history):
        # Named as what it is (a history given as the report, too), not as a report.
        kind = other_kind_at(report, REPORT_SCHEMA)
        what = f"is {kind}, given" if kind else "is the report to append, given"
        raise InputError(
            f"{history}: {what} both as the report to append and as --to; append a build's "
            "report to another file"
        )


def _refuse_other_kind(history: Path) -> None:
    """Raise unless ``history`` is a history, empty, or not there yet (a first append
    under way holds its lock: asked under it, :func:`_appending`)."""
    if history.is_file() and history.stat().st_size and not is_history(history):
        raise InputError(
            f"{history}: is not a docsaccel history (its first line is not a "
            f"{HISTORY_SCHEMA!r} line); not appended, so it stays as it is"
        )


def _refuse_damaged(history: Path) -> None:
    """Raise if a line of ``history`` is one no reader takes (every reader refuses the
    whole history for it): appended to, it would record a build nothing can read back.
    A last line cut short is no such line: it is dropped (:func:`_repair_end`)."""
    for where, entry in _entries(history)[0]:
        try:
            _build(entry, where)
        except InputError as exc:
            raise InputError(f"{exc}; not appended, so the history stays as it is") from None


def _sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _recorded(history: Path) -> tuple[set[str], set[str]]:
    """The digests every line of ``history`` names (:data:`_DIGEST_KEYS`; a line without
    them is skipped: a line made from a report before lines named their build has its
    report's digest as ``input_sha256``, which is that build's identity), and the shard
    builds they record (:data:`SHARD_RUN_IDS`). A last line cut short is said once, as
    it is dropped before the append (:func:`_repair_end`)."""
    digests: set[str] = set()
    runs: set[str] = set()
    for _, entry in _entries(history)[0]:
        if not isinstance(entry, dict):
            continue
        digests.update(entry[key] for key in _DIGEST_KEYS if isinstance(entry.get(key), str))
        ids = entry.get(SHARD_RUN_IDS)
        if isinstance(ids, list):
            runs.update(run for run in ids if isinstance(run, str))
    return digests, runs


def _reused_runs_text(history: Path, report: str | Path, again: Sequence[str]) -> str:
    """Why a merge reusing shard builds an earlier line records is not appended: its
    examples' times are not told apart by shard, so the reused runs would count twice."""
    which = f"shard build {again[0]}" if len(again) == 1 else f"shard builds {', '.join(again)}"
    return (
        f"{history}: already records the {which} of {report} (an earlier merge's; a history "
        "records each shard build once, and this merge's times are not told apart by "
        "shard); not appended"
    )


#: The keys of a history line that say which file and which build it was made from.
_DIGEST_KEYS = ("input_sha256", BUILD_SHA256, RUNS_SHA256)


def cut_short_line(text: str) -> int | None:
    """The number of the last line of a history's ``text`` when an interrupted append cut
    it short (no line end, and not valid JSON), else ``None``. Every line a complete
    append writes ends with a line end, so only the last line can be cut so."""
    if not text or text.endswith(("\n", "\r")):
        return None
    lines = text.splitlines()
    try:
        json.loads(lines[-1])
    except RecursionError:
        return None  # whole, nested too deeply: its parser says so, naming the line
    except ValueError:
        return len(lines)
    return None


def _entries(path: Path) -> tuple[list[tuple[str, object]], int | None]:
    """``(where, parsed line)`` of each line of the history at ``path``, blank ones left
    out, and the number of a last line cut short (:func:`cut_short_line`), left out too:
    each reader says it once (:func:`cut_short_text`). Any other line that is not valid
    JSON raises :class:`InputError` naming file and line."""
    text = read_text(path, "history")
    other = other_kind(text[:_PEEK], HISTORY_SCHEMA)
    if other is not None:
        raise InputError(
            f"{path}: is {other}, not a history: give the history file "
            "(the one `history append --to` writes) here"
        )
    cut = cut_short_line(text)
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or number == cut:
            continue
        where = f"{path}:{number}"
        found.append((where, parse_json(line, where, "history line")))
    return found, cut


def cut_short_text(path: str | Path, line: int) -> str:
    """What every reader of a history says of its last ``line`` an interrupted append cut
    short, before what it did with it (skipped, dropped)."""
    return (
        f"{path}:{line}: the history's last line is cut short (not valid JSON, no line "
        "end: an interrupted `docsaccel history append`)"
    )


#: How a history line begins: its keys are written sorted, so its build's digest, or its
#: examples in a line of before digests, come first. Tells a history whose only line an
#: interrupted append cut short (its ``schema`` not written yet) from another file.
_LINE_START = re.compile(r'\{"(?:build_sha256|examples)": ')


def _repair_end(history: Path, warn: Warn) -> str:
    """Drop a last line an interrupted append cut short (with a warning); what to write
    before the new line: a line end when the last line is whole but has none."""
    if not history.is_file():
        return ""
    data = history.read_bytes()
    if not data or data.endswith((b"\n", b"\r")):
        return ""
    cut = cut_short_line(data.decode("utf-8", "replace"))
    if cut is None:
        return "\n"  # a whole line without its end: the new line must not join it
    kept = data.rsplit(b"\n", 1)[0] + b"\n" if b"\n" in data else b""
    with history.open("r+b") as stream:
        stream.truncate(len(kept))
    warn(f"{cut_short_text(history, cut)}; dropped it before appending")
    return ""


def _build(entry: object, where: str) -> HistoryBuild:
    HISTORY.check(entry, where, missing_version=1)
    assert isinstance(entry, dict)
    examples = entry.get("examples")
    if not isinstance(examples, dict):
        raise InputError(f"{where}: examples must be an object, got {examples!r:.60}")
    found, peaks, not_whole, expected_failures = {}, {}, {}, {}
    for example_id, value in examples.items():
        seconds = value.get("seconds") if isinstance(value, dict) else None
        if not is_finite_number(seconds) or seconds < 0:
            raise InputError(
                f"{where}: examples[{example_id!r}].seconds is {seconds!r:.40}; expected "
                "a finite number of 0 or more"
            )
        status = value.get("status") if isinstance(value, dict) else None
        if status is not None and status not in WHOLE_RUNS:
            # Stopped, failed or not run: no time of its speed. A line written before
            # expected failures were marked reads as the plain failure it recorded.
            expected = _expected_failure(value, example_id, where)
            not_whole[example_id] = status_text(str(status), expected_failure=expected)
            if expected:
                expected_failures[example_id] = float(seconds)
            continue
        found[example_id] = float(seconds)
        peak = value.get("peak_bytes")
        if peak is not None and (not isinstance(peak, int) or isinstance(peak, bool) or peak < 0):
            raise InputError(
                f"{where}: examples[{example_id!r}].peak_bytes is {peak!r:.40}; expected a "
                "whole number of bytes"
            )
        if peak is not None:
            peaks[example_id] = peak
    fast = entry.get("fast")
    if fast is not None and not isinstance(fast, bool):
        raise InputError(f"{where}: fast is {fast!r}, expected true, false or null")
    known = entry.get(STATUSES_KNOWN, True)
    if not isinstance(known, bool):
        raise InputError(f"{where}: {STATUSES_KNOWN} is {known!r:.40}; expected true or false")
    recorded_at = entry.get("recorded_at")
    return HistoryBuild(
        recorded_at if isinstance(recorded_at, str) else None,
        fast,
        found,
        peaks,
        frozenset(not_whole),
        not_whole,
        known,
        expected_failures,
    )


def _expected_failure(value: Mapping[str, object], example_id: str, where: str) -> bool:
    """Whether a line's ``value`` of one example marks its failure as expected."""
    expected = value.get(EXPECTED_FAILURE, False)
    if not isinstance(expected, bool):
        raise InputError(
            f"{where}: examples[{example_id!r}].{EXPECTED_FAILURE} is {expected!r:.40}; "
            "expected true or false"
        )
    return expected


def is_history(path: str | Path) -> bool:
    """Whether ``path`` starts with a history line (so it is a history, not a report)."""
    try:
        text = read_text(path, "history")
    except InputError:
        return False
    first = next((line for line in text.splitlines() if line.strip()), "")
    try:
        entry = parse_json(first, str(path), "history")
    except InputError:
        # Its only line, cut short: a history when it starts as a history line does.
        only = text.strip() == first.strip() and cut_short_line(text) is not None
        return only and bool(_LINE_START.match(first.lstrip()))
    return isinstance(entry, dict) and entry.get("schema") == HISTORY_SCHEMA


def read_runs(
    path: str | Path, fast: bool | None = None, warn: Warn = warn_stderr
) -> list[dict[str, float]]:
    """The builds of one kind in a history, oldest first: ``[{example id: seconds}, ...]``.

    ``fast``: the kind (see :func:`same_kind`; default: the kind of the latest build).
    """
    return [build.durations for build in same_kind(read_builds(path, warn), fast)]


def same_kind(builds: Sequence[HistoryBuild], fast: bool | None = None) -> list[HistoryBuild]:
    """The ``builds`` with the fast flag ``fast``; ``None``: that of the latest build.

    Builds whose kind is unknown form a kind of their own.
    """
    if not builds:
        return []
    kind = builds[-1].fast if fast is None else fast
    return [build for build in builds if build.fast == kind]


def read_builds(path: str | Path, warn: Warn = warn_stderr) -> list[HistoryBuild]:
    """Every build of a history, oldest first, whatever its kind. A last line an
    interrupted append cut short is skipped, said through ``warn``."""
    path = Path(path)
    entries, cut = _entries(path)
    runs = [_build(entry, where) for where, entry in entries]
    if not runs and cut is not None:
        # Said once, as the error: a warning that it was skipped would say it twice.
        raise InputError(f"{cut_short_text(path, cut)}, its only line: it records no build")
    if not runs:
        raise InputError(f"{path}: the history records no build")
    if cut is not None:
        warn(f"{cut_short_text(path, cut)}; skipped")
    return runs


def read_history(
    path: str | Path, last: int = 10, fast: bool | None = None, warn: Warn = warn_stderr
) -> dict[str, ExampleHistory]:
    """Per example id, its durations in the ``last`` builds of one kind that ran it.

    ``fast``: the kind of builds to use (default: that of the latest build).
    """
    if last < 1:
        raise InputError(f"--last must be 1 or more, got {last!r}")
    return recent_history(read_runs(path, fast, warn), last)


def recent_history(runs: Iterable[Mapping[str, float]], last: int) -> dict[str, ExampleHistory]:
    """Per example id, its durations in the ``last`` of ``runs`` (oldest first) that ran it."""
    durations: dict[str, list[float]] = {}
    for run in runs:
        for example_id, seconds in run.items():
            durations.setdefault(example_id, []).append(seconds)
    return {i: ExampleHistory(i, tuple(found[-last:])) for i, found in durations.items()}
