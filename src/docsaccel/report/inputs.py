"""Read any timing file a docs build leaves behind into :class:`~.model.Timing` entries.

The design, in full: the reports guide's *Design* section.

Example:

>>> import tempfile
>>> from pathlib import Path
>>> folder = tempfile.TemporaryDirectory()
>>> times = Path(folder.name) / "sg_execution_times.rst"
>>> _ = times.write_text('''
... .. list-table::
...    :header-rows: 1
...
...    * - Example
...      - Time
...      - Mem (MB)
...    * - :ref:`sphx_glr_auto_examples_plot_a.py` (``plot_a.py``)
...      - 00:07.250
...      - 12.5
... ''')
>>> loaded = load_input(times)
>>> loaded.format, [(t.id, t.seconds, t.memory_bytes) for t in loaded.timings]
('sg-rst-list-table', [('plot_a.py', 7.25, 13107200)])
>>> _ = times.write_text("Computation times\\n=================\\n")
>>> load_timings(times)
Traceback (most recent call last):
...
docsaccel.contract.InputError: .../sg_execution_times.rst: looks like a sphinx-gallery ...
>>> folder.cleanup()
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import re
from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from typing import Any

from docsaccel import layout
from docsaccel.budgets import BudgetError, BudgetTable, load_budgets
from docsaccel.contract import (
    EXPECTED_FAILURE,
    FAILED,
    INTERRUPTED,
    NOT_EXECUTED,
    OK,
    SG_FAILED_PREFIX,
    InputError,
    expected_passed_text,
    is_start_record,
    is_stopped_hard,
    is_unfinished,
    parse_json,
    read_text,
)
from docsaccel.report.html import begins_html_report
from docsaccel.report.journal import read_journal
from docsaccel.report.markdown import is_markdown_report
from docsaccel.report.model import (
    BUILDING_NOW,
    JOURNAL_DAMAGED,
    LATER_BUILD_STARTED,
    SG_FORMATS,
    SG_JUNIT,
    SG_RST_BULLETS,
    SG_RST_FORMATS,
    SG_RST_GRID,
    SG_RST_LIST_TABLE,
    IncompleteBuildError,
    LoadedInput,
    StaleReportError,
    Timing,
    pair_indices,
    running_text,
)
from docsaccel.report.summary import SUMMARY_SCHEMA
from docsaccel.schema import (
    RECORD_SCHEMA,
    REPORT_SCHEMA,
    TIME_UNKNOWN,
    peak_bytes,
    validate_record,
    validate_report,
)

__all__ = [
    "HTML_VIEW",
    "MARKDOWN_VIEW",
    "detect_format",
    "judged_input",
    "load_budget_file",
    "load_input",
    "load_timings",
    "other_kind",
    "other_kind_at",
    "parse_sg_time",
    "report_input",
]

_MIB = 1024 * 1024
# Milliseconds are 000 to 1000: sphinx-gallery rounds them after cutting the seconds.
_SG_TIME = re.compile(r"^(?P<minutes>\d{1,9}):(?P<seconds>[0-5]\d)\.(?P<millis>\d{3}|1000)$")
# ":ref:`sphx_glr_x_plot_a.py` (``plot_a.py``)": the path in double backquotes.
_ENTRY = re.compile(r"^:ref:`(?P<ref>[^`]+)`\s*\(``(?P<path>.+)``\)$")
_BULLET = re.compile(
    r"^- \*\*(?P<time>[^*]*)\*\*:\s*(?P<entry>.+?)(?:\s+\(?(?P<mem>[\d.]+) MB\)?)?\s*$"
)
# "nan": the memory docsaccel lists for an example another build ran without measuring
# its memory (sg_compat.MEMORY_NOT_MEASURED).
_MEMORY = re.compile(r"^(?:(?P<mb>\d{1,15}(?:\.\d+)?)|nan)(?: MB)?$")
_PLACEHOLDER = "N/A"


def parse_sg_time(text: str, where: str) -> float:
    """``"01:02.500"`` (sphinx-gallery's minutes:seconds.milliseconds) -> ``62.5``.

    ``"00:02.1000"`` -> ``3.0``: sphinx-gallery's rounding of 2.9996 s.
    """
    match = _SG_TIME.match(text.strip())
    if not match:
        raise InputError(f"{where}: time {text.strip()!r} is not MM:SS.mmm")
    minutes, seconds, millis = (int(match.group(key)) for key in ("minutes", "seconds", "millis"))
    return minutes * 60 + seconds + millis / 1000


def _read_text(path: Path) -> str:
    text = read_text(path, "input")
    if not text.strip():
        raise InputError(f"{path}: the file is empty")
    return text


def detect_format(text: str, path: str | Path) -> str:
    """Name of the format of ``text`` (see the reports guide's *Design* section); raise if
    unknown, or if it is another file of docsaccel's (:func:`other_kind`)."""
    head = text.lstrip()
    other = other_kind(head, REPORT_SCHEMA)
    if other is not None:
        raise InputError(
            f"{path}: is {other}, not a report: give the build's report "
            f"({layout.report_path('<outdir>')}) or its output folder here"
        )
    if head.startswith("{"):
        return "docsaccel-journal" if _is_record(head.partition("\n")[0]) else "docsaccel-report"
    if re.match(r"<(!doctype\s+html|html)\b", head, re.IGNORECASE):
        raise InputError(_html_message(path))
    if head.startswith("<"):
        return SG_JUNIT
    if ".. list-table::" in text:
        return SG_RST_LIST_TABLE
    if re.search(r"^\+-+\+", text, re.MULTILINE):
        return SG_RST_GRID
    if re.search(r"^- \*\*", text, re.MULTILINE):
        return SG_RST_BULLETS
    if "Computation times" in text or "sphx_glr" in text:
        raise InputError(
            f"{path}: looks like a sphinx-gallery execution times file, but has no bullet "
            "list, grid table or list-table of examples"
        )
    raise InputError(
        f"{path}: unknown format: expected a docsaccel report JSON, a sphinx-gallery "
        f"sg_execution_times.rst or a sphinx-gallery JUnit XML; starts with {head[:40]!r}"
    )


#: The kinds of the Markdown and HTML views of a report, which have no ``schema``.
MARKDOWN_VIEW = "markdown"
HTML_VIEW = "html"


def _kinds() -> dict[str, str]:
    """What each file docsaccel writes is, and where it goes, by its ``schema``."""
    # Imported here: the history module reads its inputs with this one.
    from docsaccel.report.history import HISTORY_SCHEMA

    return {
        HISTORY_SCHEMA: "a docsaccel history file (pass it to `report --history` or `shard`)",
        REPORT_SCHEMA: (
            "a docsaccel report (pass it to `report`, `check`, `compare` or `history append`)"
        ),
        SUMMARY_SCHEMA: "the JSON view of a report (`docsaccel report --format json`)",
        MARKDOWN_VIEW: "docsaccel's Markdown view of a report (`docsaccel report --format md`)",
        HTML_VIEW: "docsaccel's HTML view of a report (`docsaccel report --format html`)",
    }


def other_kind(head: str, expected: str) -> str | None:
    """What another file docsaccel writes ``head`` (a file's text) is, and where it goes,
    when it is one of them but not of the ``expected`` kind (its ``schema``): a history
    given for a report, a report given for a history, a view given for either. Said in
    one line rather than as the error of the reader it reached (a JSON decoder's ``Extra
    data`` or ``Expecting property name``, a Markdown line that is not sphinx-gallery's).

    >>> other_kind('{"schema": "docsaccel.report", "version": 1}', "docsaccel.history")
    'a docsaccel report (pass it to `report`, `check`, `compare` or `history append`)'
    """
    head = head.lstrip()
    kind = None
    if head.startswith("{"):
        kind = _json_schema(head)
    elif is_markdown_report(head[:2000], head.rstrip().rsplit("\n", 1)[-1]):
        kind = MARKDOWN_VIEW
    elif begins_html_report(head):
        kind = HTML_VIEW
    if kind is None or kind == expected:
        return None
    return _kinds().get(kind)


#: A ``schema`` of docsaccel's other than a record's (records sit inside a report): what
#: an object too long to parse whole says it is, wherever its keys put it.
_OWN_SCHEMA = re.compile(r'"schema":\s*"(docsaccel\.(?!record")[^"\\]{1,80})"')


#: What a budget file is checked against: no file of docsaccel's with a ``schema`` is one.
_BUDGET_FILE = "budget file"


def other_kind_at(path: str | Path, expected: str) -> str | None:
    """:func:`other_kind` of the file at ``path`` (``None`` for one that cannot be read:
    its reader says why)."""
    return other_kind(_head(Path(path)), expected)


def load_budget_file(path: str | Path, **options: Any) -> BudgetTable:
    """The budget file at ``path`` (:func:`docsaccel.budgets.load_budgets`, with
    ``options``), refused in one line naming the kind it is when it is another file of
    docsaccel's (a report, a history, a view given to ``--budgets``), rather than as TOML
    that does not parse."""
    other = other_kind_at(path, _BUDGET_FILE)
    if other is not None:
        raise BudgetError(f"{path}: is {other}, not a budget file (TOML)")
    return load_budgets(path, **options)


#: Bytes read from a file's start to tell which of docsaccel's files it is.
_KIND_PEEK = 1 << 16


def _head(path: Path) -> str:
    """The start of the regular file at ``path``, ``""`` for anything else (a device, a
    pipe: never read here) or a file that cannot be read (its reader says why)."""
    if not path.is_file():
        return ""
    try:
        with path.open("rb") as stream:
            return stream.read(_KIND_PEEK).decode("utf-8", "replace")
    except OSError:
        return ""


def _json_schema(head: str) -> str | None:
    """The ``schema`` of a JSON text: of its first line when that is a whole object (a
    history's line), else of the whole text (an indented file, its keys in any order:
    a report sorted by ``jq -S``), else, for a text cut at the part read, the first
    docsaccel ``schema`` in it that is not a record's; ``None`` when none says."""
    for text in (head.partition("\n")[0], head):
        try:
            found = parse_json(text, "", "line")
        except InputError:
            continue
        return found.get("schema") if isinstance(found, dict) else None
    match = re.match(r'\{\s*"schema":\s*"([^"\\]{1,80})"', head[:200]) or _OWN_SCHEMA.search(head)
    return match.group(1) if match else None


def _html_message(path: str | Path) -> str:
    return (
        f"{path}: is an HTML page, not a docsaccel report JSON, a sphinx-gallery "
        f"sg_execution_times.rst or JUnit XML (the report is {layout.report_path('<outdir>')})"
    )


def _entry(cell: str, where: str) -> tuple[str, str]:
    """``(id, ref)`` of an example cell; the id is the path sphinx-gallery printed."""
    match = _ENTRY.match(cell.strip())
    if not match:
        raise InputError(f"{where}: example {cell.strip()!r} is not :ref:`...` (``path``)")
    return match.group("path"), match.group("ref")


def _memory(text: str | None, where: str) -> int | None:
    """The peak of a memory cell; ``None`` when not measured: sphinx-gallery writes
    ``0.0`` for an example whose memory it did not measure (``show_memory`` off, a
    parallel build), and no example runs in 0 bytes; docsaccel writes ``nan`` for an
    example another build ran without measuring its memory."""
    if text is None or not text.strip():
        return None
    match = _MEMORY.match(text.strip())
    if not match:
        raise InputError(f"{where}: memory {text.strip()!r} is not a number of MB")
    if match.group("mb") is None:
        return None
    return round(float(match.group("mb")) * _MIB) or None


def _sg_timings(rows: Iterable[tuple[str, str, str | None, str]], path: Path) -> list[Timing]:
    """Timings from ``(example cell, time, memory, where)`` rows of any rst format."""
    timings: list[Timing] = []
    seen: set[str] = set()
    for cell, time, memory, where in rows:
        if cell.strip() == _PLACEHOLDER:
            continue  # sphinx-gallery's filler row of a gallery without examples
        example_id, ref = _entry(cell, where)
        if example_id in seen:  # same file name in two subsections of one gallery
            example_id = ref
        seen.add(example_id)
        seconds = parse_sg_time(time, where)
        timings.append(
            Timing(
                id=example_id,
                name=PurePosixPath(example_id).name,
                seconds=seconds,
                # sphinx-gallery writes 00:00.000 for an example it did not run (not
                # matched by filename_pattern, plot_gallery off), as it writes 0.0 MB for
                # memory it did not measure: not measured is never a time of zero. One that
                # ran in under half a millisecond reads so too: no budget could fail it.
                status=OK if seconds > 0 else NOT_EXECUTED,
                memory_bytes=_memory(memory, where),
                ref=ref,
            )
        )
    return timings


def _bullet_rows(text: str, path: Path):
    for number, line in enumerate(text.splitlines(), 1):
        if not line.startswith("- **"):
            continue
        where = f"{path}:{number}"
        match = _BULLET.match(line)
        if not match:
            raise InputError(f"{where}: cannot read the line {line!r}")
        yield match.group("entry"), match.group("time"), match.group("mem"), where


def _grid_rows(text: str, path: Path):
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped.startswith("|"):
            continue
        where = f"{path}:{number}"
        if not stripped.endswith("|"):
            raise InputError(f"{where}: table row {stripped!r} is cut short")
        cells = [cell.strip() for cell in stripped[1:-1].split("|")]
        if len(cells) >= 3 and cells[-1].endswith("MB"):
            yield "|".join(cells[:-2]), cells[-2], cells[-1], where
        elif len(cells) >= 2:
            yield "|".join(cells[:-1]), cells[-1], None, where
        else:
            raise InputError(f"{where}: table row {stripped!r} has no time column")


def _list_table_rows(text: str, path: Path):
    """Rows of ``* - a`` / ``  - b`` items; the header row names the columns."""
    rows: list[tuple[int, list[str]]] = []
    in_table = False
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith(".. list-table::"):
            in_table = True
        elif in_table and stripped.startswith("* - "):
            rows.append((number, [stripped[4:]]))
        elif in_table and stripped.startswith("- ") and rows:
            rows[-1][1].append(stripped[2:])
        elif in_table and stripped in ("*", "-"):
            raise InputError(f"{path}:{number}: empty list-table item {stripped!r}")
    if not rows:
        return
    header = [cell.lower() for cell in rows[0][1]]
    has_header = "time" in header
    time_col = header.index("time") if has_header else 1
    mem_col = next((i for i, cell in enumerate(header) if cell.startswith("mem")), None)
    if not has_header:
        mem_col = 2
    for number, cells in rows[1:] if has_header else rows:
        where = f"{path}:{number}"
        if len(cells) <= time_col:
            raise InputError(f"{where}: list-table row {cells!r} has no time column")
        memory = cells[mem_col] if mem_col is not None and mem_col < len(cells) else None
        if cells[0].strip() == _PLACEHOLDER:
            continue
        yield cells[0], cells[time_col], memory, where


def _is_record(line: str) -> bool:
    """Whether ``line`` is a whole record: the first line of a journal."""
    try:
        data = parse_json(line, "", "record")
    except InputError:
        return False
    return isinstance(data, dict) and data.get("schema") == RECORD_SCHEMA


def _journal_records(text: str, path: Path) -> list[dict[str, Any]]:
    """The records of a plan, in order. A last line cut short (the process was killed
    while writing it) is left out; any other line that is not a record is an error
    naming the file and the line."""
    lines = text.splitlines()
    found = []
    for number, line in enumerate(lines, start=1):
        where = f"{path}:{number}"
        try:
            found.append(validate_record(parse_json(line, where, "record"), where))
        except InputError:
            if number == len(lines):
                break
            raise
    return found


def journal_input(
    paths: list[Path], source: str, running: str | None = None, plan: Path | None = None
) -> LoadedInput:
    """The journals of a build that wrote no report, read as its report: not complete
    (``report_missing``), the running example's record naming it.

    ``running``: the pid of the build that holds their output folder's lock now
    (:func:`docsaccel.layout.lock_holder`): it has not written its report yet, and the
    example it runs was not killed (:data:`~docsaccel.report.model.BUILDING_NOW`).
    ``plan``: the build's plan (:data:`~docsaccel.layout.PLAN_FILE`): an example it
    names that no journal does is listed as the report lists one never reached. A
    journal damaged (:func:`~docsaccel.report.journal.read_journal`) is read up to the
    damage, which is said (:data:`~docsaccel.report.model.JOURNAL_DAMAGED`), and the plan
    is then left out: an example it names may have run in the lines lost."""
    records: dict[str, dict[str, Any]] = {}
    damaged = []
    for path in paths:
        read = read_journal(path, running=running is not None)
        for record in read.records:
            records[record["id"]] = record
        if read.damage is not None:
            damaged.append(read.damage)
    planned = False
    for path in [] if plan is None or damaged else [plan]:
        with contextlib.suppress(OSError):  # none: a build from before plans were kept
            for record in _journal_records(path.read_text(encoding="utf-8"), path):
                records.setdefault(record["id"], record)
            planned = True
    build: dict[str, Any] = {"complete": False, "report_missing": True}
    if running is not None:
        build[BUILDING_NOW] = running
    if damaged:
        build[JOURNAL_DAMAGED] = damaged
    kinds = {record["fast"] for record in records.values()}
    if len(kinds) == 1:
        build["fast"] = kinds.pop()
    # Killed outright (no build holds the folder): the example it was running has no
    # time at all.
    killed = running is None
    timings = [
        _record_timing(records[key], killed=killed, running_now=not killed)
        for key in sorted(records)
    ]
    return LoadedInput(source, "docsaccel-journal", timings, build, lists_plan=planned)


def _is_journal(path: Path) -> bool:
    """Whether ``path`` is named as a journal in a records folder is."""
    return (
        path.name.startswith(layout.JOURNAL_PREFIX)
        and path.suffix == ".jsonl"
        and path.parent.name == layout.records_dir("").name
    )


def _plan_of(journal: Path) -> Path | None:
    """The plan beside ``journal`` when it is its build's one journal: beside others, an
    example the plan names may have run in one of them."""
    alone = [p.resolve() for p in layout.journals(journal.parent)] == [journal.resolve()]
    return journal.parent / layout.PLAN_FILE if alone else None


def _folder_input(folder: Path) -> LoadedInput:
    """What an output folder (or its ``docsaccel`` or records folder) holds: its report,
    else the journals of a build that wrote none."""
    outdir, real = folder, layout.where_written(folder)
    if real.name == layout.records_dir("").name and real.parent.name == layout.FOLDER_NAME:
        outdir = real.parent.parent
    elif real.name == layout.FOLDER_NAME:
        outdir = real.parent
    # Asked before the report is looked for: a build ending meanwhile has written it by
    # the time its lock is free, so it is never taken for one killed outright.
    holder = _building_in(outdir)
    report = layout.report_path(outdir)
    if report.is_file():
        return load_input(report)
    if report.exists():
        read_text(report, "report")  # raises, naming what it is instead of a file
    journals = layout.journals(layout.records_dir(outdir))
    if journals:
        plan = layout.records_dir(outdir) / layout.PLAN_FILE
        loaded = journal_input(journals, str(folder), holder, plan)
        # A later build noted its start beside them and wrote no report (it failed before
        # docsaccel removed the last one's): the journals are an earlier build's.
        started = layout.started_after(max(journals, key=_written), report)
        if started is not None:
            loaded.build[LATER_BUILD_STARTED] = started
        return loaded
    raise InputError(
        f"{folder}: holds neither a docsaccel report ({layout.FOLDER_NAME}/report.json) nor "
        f"journals ({layout.FOLDER_NAME}/records/{layout.JOURNAL_PREFIX}*.jsonl)"
    )


def _building_in(outdir: Path) -> str | None:
    """The pid of the build running now in ``outdir`` (it holds its lock), unless it is
    this process (a build reading its own journals as it stops)."""
    holder = layout.lock_holder(outdir)
    return None if holder == str(os.getpid()) else holder


def _written(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0


def _parse_report(text: str, path: Path) -> LoadedInput:
    data = validate_report(parse_json(text, str(path), "report"), path)
    return report_input(data, str(path))


def report_input(report: dict[str, Any], source: str) -> LoadedInput:
    """A docsaccel report already in memory and valid (:func:`~docsaccel.schema.validate_report`).

    The docs build's report page starts from the report the plugin holds, rather than
    reading back and checking the file it has just written.
    """
    timings = [_record_timing(record) for record in report["examples"]]
    return LoadedInput(source, "docsaccel-report", timings, dict(report["build"]))


def _record_timing(
    record: dict[str, Any], killed: bool = False, running_now: bool = False
) -> Timing:
    """The timing of one record; ``killed``: its build was killed outright (a journal read
    as its report), so an example it was running was running at the kill; ``running_now``:
    its build runs now (a journal read while it holds its folder), so that example runs."""
    memory_budget = record.get("memory_budget") or {}
    stopped_hard = is_stopped_hard(record)
    # Interrupted, and the build ended before the example's end was recorded.
    cut_short = (
        record["status"] == INTERRUPTED and not stopped_hard and not record.get("finished_at")
    )
    return Timing(
        id=record["id"],
        name=record["name"],
        seconds=float(record["wall_seconds"]),
        status=record["status"],
        budget_seconds=record["budget_seconds"],
        budget_source=record["budget_source"],
        budget_detail=record.get("budget_detail"),
        memory_bytes=peak_bytes(record),
        retained_bytes=record.get("retained_bytes"),
        gpu_peak_bytes=record.get("gpu_peak_bytes"),
        gpu_retained_bytes=record.get("gpu_retained_bytes"),
        memory_budget_bytes=memory_budget.get("bytes"),
        memory_budget_source=memory_budget.get("source"),
        memory_budget_detail=memory_budget.get("detail"),
        interrupted_by=record.get("interrupted_by"),
        fast=record["fast"],
        knobs=record.get("knobs") or {},
        render=record.get("render") or {},
        unfinished=is_unfinished(record) or cut_short,
        killed=killed and is_unfinished(record),
        running_now=running_now and is_unfinished(record),
        stopped_hard=stopped_hard,
        cache=record.get("cache") or {},
        ref=record.get("ref"),
        error=record.get("error"),
        expected_failure=record.get(EXPECTED_FAILURE) is True,
        time_unknown=record.get(TIME_UNKNOWN) is True or is_start_record(record),
    )


def _parse_junit(text: str, path: Path) -> LoadedInput:
    # Imported here: the docs build loads this module for its report page, never JUnit.
    import xml.etree.ElementTree as ElementTree

    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError as exc:
        raise InputError(f"{path}: not valid XML: {exc}") from exc
    if root.tag.lower() == "html" or root.tag.endswith("}html"):
        raise InputError(_html_message(path))
    if root.tag not in ("testsuite", "testsuites"):
        raise InputError(f"{path}: root element is <{root.tag}>, expected <testsuite>")
    timings = []
    passed = []
    for index, case in enumerate(root.iter("testcase")):
        where = f"{path}: testcase[{index}]"
        example_id = case.get("file") or case.get("classname")
        if not example_id:
            raise InputError(f"{where} has neither a 'file' nor a 'classname' attribute")
        raw_time = case.get("time")
        try:
            seconds = float(raw_time)
        except (TypeError, ValueError):
            raise InputError(f"{where} ({example_id}): time {raw_time!r} is not a number") from None
        if not math.isfinite(seconds) or seconds < 0:
            raise InputError(f"{where} ({example_id}): time {raw_time!r} is not a duration")
        timing = Timing(
            id=example_id, name=PurePosixPath(example_id).name, seconds=seconds, status=OK
        )
        timings.append(_junit_ending(case, timing))
        if _passed_unexpectedly(case):
            passed.append(example_id)
    # As a build's report says it: the example passed, and its build failed.
    build = {"sphinx_failed": SG_FAILED_PREFIX + expected_passed_text(passed)} if passed else {}
    return LoadedInput(str(path), SG_JUNIT, timings, build)


#: What sphinx-gallery's JUnit XML says of an example in ``expected_failing_examples``
#: that raised (a ``<skipped>``), and of one that passed (a ``<failure>``).
_JUNIT_EXPECTED_FAILURE = "expected example failure"
_JUNIT_EXPECTED_PASSED = "Passed even though it was marked to fail"


def _failure(case: Any) -> Any:
    """The ``<failure>`` (or another writer's ``<error>``) of a ``testcase``, if any."""
    failure = case.find("failure")
    return case.find("error") if failure is None else failure


def _passed_unexpectedly(case: Any) -> bool:
    """Whether sphinx-gallery's ``testcase`` is of an example expected to fail that passed."""
    failure = _failure(case)
    return failure is not None and (failure.text or "").strip() == _JUNIT_EXPECTED_PASSED


def _junit_ending(case: Any, timing: Timing) -> Timing:
    """``timing`` with how sphinx-gallery's ``testcase`` says its example ended, as a
    build's report says it: ``failed`` with its error's last line (sphinx-gallery's
    ``message``), expected or not; ``ok`` for one expected to fail that passed (its build
    failed: :func:`_passed_unexpectedly`). A ``<skipped>`` of another writer did not run."""
    failure = _failure(case)
    if failure is not None:
        if _passed_unexpectedly(case):
            return timing
        message = failure.get("message") or (failure.text or "").strip()
        error = message.strip().splitlines()[-1] if message.strip() else None
        return dataclasses.replace(timing, status=FAILED, error=error)
    skipped = case.find("skipped")
    if skipped is None:
        return timing
    if skipped.get("message") == _JUNIT_EXPECTED_FAILURE:
        return dataclasses.replace(timing, status=FAILED, expected_failure=True)
    return dataclasses.replace(timing, status=NOT_EXECUTED)


_RST_ROWS = {
    SG_RST_BULLETS: _bullet_rows,
    SG_RST_GRID: _grid_rows,
    SG_RST_LIST_TABLE: _list_table_rows,
}


def load_input(path: str | Path) -> LoadedInput:
    """Read ``path`` in whichever supported format it is; at least one example or raise.

    A gallery's ``sg_execution_times.rst`` listing only "N/A" reads as its subsections'
    files together (:func:`_gallery_input`): every command reads a build's files through
    here, so a file one of them reads, all of them read."""
    return _gallery_input(Path(path))


def _require_examples(loaded: LoadedInput, path: Path, also: Iterable[Path] = ()) -> None:
    """Raise when ``loaded`` lists no example (nor do the files ``also`` read for it)."""
    if loaded.timings:
        return
    # A build that stopped before its examples ran says why: that is the error.
    loaded.require_complete()
    read = [str(other) for other in also]
    nor = f", nor from its subsections' files {', '.join(read)}" if read else ""
    raise InputError(f"{path}: no example could be read from this {loaded.format} file{nor}")


def _read_input(path: Path) -> LoadedInput:
    """:func:`load_input` of ``path``, which may list no example."""
    if path.is_dir():
        return _folder_input(path)
    report = _report_beside_records(path)
    if report is not None:
        return load_input(report)
    _refuse_missing_report(path)
    if _is_journal(path):
        # Read line by line: a damaged journal still says what ran before the damage.
        return journal_input([path], str(path), plan=_plan_of(path))
    text = _read_text(path)
    kind = detect_format(text, path)
    if kind == "docsaccel-report":
        loaded = _parse_report(text, path)
    elif kind == "docsaccel-journal":
        loaded = journal_input([path], str(path), plan=_plan_of(path))
    elif kind == SG_JUNIT:
        loaded = _parse_junit(text, path)
    else:
        loaded = LoadedInput(str(path), kind, _sg_timings(_RST_ROWS[kind](text, path), path))
    return loaded


def _gallery_input(path: Path) -> LoadedInput:
    """:func:`_read_input` of ``path``, except for the ``sg_execution_times.rst`` of a
    gallery whose examples are all in its subsections: sphinx-gallery lists each
    subsection's examples in the file of the same name in its folder, and writes in the
    gallery's own a table of one "N/A" row. That file stands for its gallery as a
    subsection's stands for its subsection, so it reads as the rows of its subsections'
    files together: the gallery's examples, each judged as its siblings judge it
    (refusing it would fail a gate on a build that passed, and reading it as the whole
    build's would judge the examples of other galleries). When those files list none
    either, the error names them."""
    loaded = _read_input(path)
    if loaded.timings or loaded.format not in SG_RST_FORMATS:
        _require_examples(loaded, path)
        return loaded
    subsections = sorted(path.parent.glob(f"*/{path.name}"))
    timings: list[Timing] = []
    for other in subsections:
        read = _read_input(other)
        if read.format not in SG_RST_FORMATS:
            continue
        for timing in read.timings:
            # Two subsections may each hold an example of one file name: the label tells.
            if timing.id in {t.id for t in timings}:
                timing = dataclasses.replace(timing, id=timing.ref or timing.id)
            timings.append(timing)
    loaded = dataclasses.replace(loaded, timings=timings)
    _require_examples(loaded, path, subsections)
    return loaded


#: How much older than a sphinx-gallery file its build's report may look and still be of
#: that build or a later one. The build writes its report after sphinx-gallery's files, and
#: every build removes the last report before sphinx-gallery writes anything, so a report
#: beside the build is never an earlier build's; the slack only absorbs filesystems that
#: keep whole seconds and a clock stepped back between the two writes.
_SAME_BUILD_SLACK_NS = 2_000_000_000


def judged_input(path: str | Path) -> LoadedInput:
    """The input at ``path`` as the gates (``check``, ``compare``, ``history append``)
    judge it: :func:`load_input`'s (a gallery's ``sg_execution_times.rst`` listing only
    "N/A" read as its subsections' files), except for a sphinx-gallery file
    (``sg_execution_times.rst``, the root one or a gallery's, or its JUnit XML) whose
    build, or a later one, failed, did not finish or runs now by its docsaccel report
    (:func:`_build_report`): that report, read in its stead, as if it had been given.
    sphinx-gallery lists a raising example with its time as any other, and its JUnit XML
    knows nothing of a build failing otherwise (``-W``, killed after its examples), so
    its file alone would pass a build that failed.

    A file with no such report (a copy kept elsewhere, a build without docsaccel, a report
    of a passing build) is its own input: its times are judged, and the views say that it
    cannot tell whether an example failed
    (:meth:`~docsaccel.report.model.LoadedInput.no_status_text`)."""
    loaded = load_input(path)
    if loaded.format not in SG_FORMATS:
        own = loaded.path if loaded.format == "docsaccel-report" else None
        return dataclasses.replace(loaded, build_report=own)
    # A file a later build left as it was (it stopped first) is refused as that: what is
    # wrong with the file itself says more than the verdict of the build that left it.
    loaded.require_current()
    report = _build_report(Path(path))
    if report is None:
        return loaded
    try:
        # A later build failed before docsaccel ran (its conf.py, or a module it loaded,
        # changed since): the report is left behind, and so is every file of its build.
        report.require_current()
    except StaleReportError as exc:
        raise StaleReportError(f"{path}: its build's report is an earlier build's: {exc}") from None
    # A build that ran none of its examples left sphinx-gallery's files as they were, or
    # with times of zero: its report says it measured nothing. A build whose process
    # runs on may still fail (what an example left holds it past its verdict): its
    # report says it runs.
    if (
        report.judged_failures()
        or not report.complete
        or report.ran_nothing
        or report.building_now is not None
    ):
        return dataclasses.replace(report, build_report=report.path)
    timings = _as_its_build_says(loaded, report)
    part = len(timings) < len(report.timings)
    return dataclasses.replace(
        loaded, timings=timings, build_report=report.path, part_of_build=part
    )


def _as_its_build_says(loaded: LoadedInput, report: LoadedInput) -> list[Timing]:
    """The timings of sphinx-gallery's file ``loaded``, each example as its build's
    ``report`` has it (its status, error, what stopped it, cache entry, time and peak:
    one of each per example, whichever file is read), under the file's id, paired
    as every reader pairs two inputs (:func:`~docsaccel.report.model.pair_indices`: the
    page label, or the path for its JUnit XML, which has no label). sphinx-gallery lists
    an example the example cache restored, or whose outputs it kept, with the time of
    the run that made them: :data:`~docsaccel.contract.CACHED` here, so no reader counts
    it as measured by this build. Its ``00:00.000`` (read as not run) is also its time of
    an example that ran in under half a millisecond: the report says which ones ran. Its
    JUnit XML lists only the examples it ran or restored from the example cache (not one
    whose outputs it kept), though it is a file of the whole build: the report's other
    examples are added as the report has them, so it says the build as its
    report does. Each example is named as the report names it (its id, its path inside its
    gallery), so a budget pattern, a baseline or a history selects the same example
    whichever file of its build was read."""
    pairs = dict(pair_indices(loaded.timings, report.timings))
    timings = []
    for i, timing in enumerate(loaded.timings):
        said = report.timings[pairs[i]] if i in pairs else None
        if said is not None:
            # The report owns every fact of the example: sphinx-gallery times a failed or
            # stopped example up to its error, and a restored one by its restore, where
            # the report holds the run's whole time, the stored run's, and the build's
            # peak. Its names are the build's too: the file's path is sphinx-gallery's
            # (relative to the conf folder, or only the file name), which budget patterns
            # and the build's other inputs do not know the example by. Only the file's
            # label stays.
            timing = dataclasses.replace(said, ref=timing.ref or said.ref)
        timings.append(timing)
    if loaded.format == SG_JUNIT:
        listed = set(pairs.values())
        timings.extend(t for j, t in enumerate(report.timings) if j not in listed)
    return timings


def _build_report(times: Path) -> LoadedInput | None:
    """The docsaccel report of the build that wrote sphinx-gallery's file ``times``, or
    of a later build of its source folder: the report in the output folder that folder
    was last built into (:func:`docsaccel.layout.built_outdir`), written since ``times``
    (:data:`_SAME_BUILD_SLACK_NS`) by a build of that source folder. ``None`` when there
    is none. Its times are no test: sphinx-gallery times an example otherwise."""
    found = layout.built_outdir(times)
    if found is None:
        return None
    srcdir, outdir = found
    # Asked before the report is looked for: a build ending meanwhile has written it by
    # the time its note is gone and its lock is free.
    unended = layout.building_note_path(srcdir).exists()
    holder = _building_in(outdir)
    report = layout.report_path(outdir)
    if _written(report) < _written(times) - _SAME_BUILD_SLACK_NS:
        return _unended_build(times, outdir, holder) if unended else None
    loaded = load_input(report)
    source = loaded.build.get("source_dir")
    # The output folder may since hold the report of another project's build.
    if not isinstance(source, str) or os.path.realpath(source) != str(srcdir):
        return None
    return loaded


def _unended_build(times: Path, outdir: Path, holder: str | None) -> LoadedInput:
    """The journals of the build that wrote ``times`` into ``outdir`` and has not ended
    (its note is left: :func:`docsaccel.layout.note_build_ended`), read as its report: it
    runs now (``holder``, its pid), or was killed outright (``SIGKILL``, the out-of-memory
    killer) before it wrote a report. A gallery it ended before wrote its file, complete,
    saying nothing of it. A build that started after ``times`` was written and did not
    replace it left ``times`` refused as stale before this is asked
    (:meth:`~docsaccel.report.model.LoadedInput.require_current`)."""
    journals = layout.journals(layout.records_dir(outdir))
    if not journals:
        raise IncompleteBuildError(
            f"{times}: the build that wrote it has not ended, and left neither a report nor "
            f"journals in {outdir}: it runs now or was killed outright (SIGKILL, out of memory)"
        )
    plan = layout.records_dir(outdir) / layout.PLAN_FILE
    return journal_input(journals, str(times), holder, plan)


def _report_beside_records(path: Path) -> Path | None:
    """The report of the build whose records folder holds ``path`` (a journal or a record
    given directly), when that build wrote it since ``path``: it says how the build
    ended, which its journals alone cannot (read alone, they are those of a build that
    wrote no report, killed outright). ``None`` for any other file, or when no report of
    that build is there (the journals are all it left)."""
    records = layout.where_written(path).parent
    if records.name != layout.records_dir("").name or records.parent.name != layout.FOLDER_NAME:
        return None
    report = layout.report_path(records.parent.parent)
    # At least as new as the file: every build removes the last report before it runs.
    if not report.is_file() or _written(report) < _written(path):
        return None
    return report


def _refuse_missing_report(path: Path) -> None:
    """A report the build never wrote: in an output folder a build holds now, that the
    build is running (as given the folder); beside the journals it left (it was killed
    outright), say so, and that its output folder is the input to give, which reads them."""
    if path.name != layout.report_path("").name:
        return
    real = layout.where_written(path)
    outdir = real.parent.parent if real.parent.name == layout.FOLDER_NAME else real.parent
    # Asked before the report is looked for: a build ending meanwhile has written it by
    # the time its lock is free.
    holder = _building_in(outdir)
    if path.exists():
        return
    if holder is not None:
        # Said as given the folder: the build has not written its report yet.
        raise IncompleteBuildError(running_text(path, holder, "check after it ends"))
    if not layout.journals(real.parent / layout.records_dir("").name):
        return
    raise InputError(
        f"{path}: no report: the build wrote none (killed outright: SIGKILL, out of memory; "
        f"or still running), but left its journals; give its output folder {outdir} instead "
        "to read them"
    )


def load_timings(path: str | Path) -> list[Timing]:
    """One :class:`~.model.Timing` per example listed in ``path`` (any supported format)."""
    return load_input(path).timings
