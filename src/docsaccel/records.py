"""Per-example records on disk and the report combined from them.

Records live in :func:`docsaccel.layout.records_dir`, in two forms:

- a *journal* per process that runs examples (``journal-<pid>.jsonl``): the hook appends
  an example's provisional record when it starts ("failed: did not finish", so an example
  that takes its process down is still recorded) and its record when it finishes, each as
  one line in one ``O_APPEND`` write, so a line is written whole or not at all and
  parallel workers never share a file. Of the lines of one example, the last one counts;
- a *file* per record (``<example id with / as __>.json``), replaced atomically
  (temporary file, then rename): what the plugin records after the gallery has run
  (cached, not executed, failed as sphinx-gallery saw it) and shard artifacts. A file
  wins over journal lines.

Appending to an open file costs a few microseconds; creating a file, most of a
millisecond on a busy disk, more than a trivial example takes to run: examples are
journalled so that recording them costs the build next to nothing.

:func:`read_records` reads both; :func:`build_report` turns the records of a build into
the report dict. Both read only files, so they work after the build or after a crash.
Formats: :mod:`docsaccel.schema`.

Example: one example recorded (the hook appends to a :class:`RecordJournal` the same
way), one never run; the report lists both.

>>> import tempfile
>>> from docsaccel.budgets import Budget
>>> from docsaccel.examples import Example
>>> records_dir = tempfile.TemporaryDirectory()
>>> budget = Budget(30.0, "default", "budgets.toml default")
>>> quick, slow = (
...     Example("tutorials", name, f"docs/tutorials/{name}", f"docs/auto_tutorials/{name}",
...             f"auto_tutorials/{name[:-3]}", True, budget)
...     for name in ("plot_quick.py", "plot_slow.py")
... )
>>> _ = write_record(records_dir.name, base_record(quick, "ok", fast=False, wall_seconds=1.2))
>>> report = build_report(records_dir.name, [quick, slow], build={"wall_seconds": 80.0})
>>> [(record["id"], record["status"]) for record in report["examples"]]
[('tutorials/plot_quick.py', 'ok'), ('tutorials/plot_slow.py', 'not-executed')]
>>> records_dir.cleanup()
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from docsaccel import schema, sg_compat
from docsaccel.contract import NOT_EXECUTED, InputError, parse_json, read_json
from docsaccel.examples import Example
from docsaccel.formats import encode_json, replace_atomically, write_all

__all__ = [
    "RecordJournal",
    "base_record",
    "build_report",
    "now_iso",
    "read_records",
    "read_run_marker",
    "record_file",
    "write_record",
    "write_run_marker",
]


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def record_file(records_dir: Path | str, example_id: str) -> Path:
    """``tutorials/sub/plot_a.py`` -> ``<records_dir>/tutorials__sub__plot_a.py.json``."""
    return Path(_record_path(records_dir, example_id))


def _record_path(records_dir: Path | str, example_id: str) -> str:
    return os.path.join(records_dir, example_id.replace("/", "__") + ".json")


def base_record(example: Example, status: str, fast: bool, **fields: Any) -> dict[str, Any]:
    """A complete record of ``example``; ``fields`` override or add keys."""
    record: dict[str, Any] = {
        **schema.RECORD.header(),
        "id": example.id,
        "gallery": example.gallery,
        "name": example.name,
        "status": status,
        "wall_seconds": 0.0,
        "cpu_seconds": None,
        "peak_rss_bytes": None,
        "budget_seconds": example.budget.seconds,
        "budget_source": example.budget.source,
        "budget_detail": example.budget.detail,
        "budget_reason": example.budget.reason,
        "fast": fast,
        "knobs": {},
        "render": {},
        "error": None,
        "started_at": None,
        "finished_at": None,
        "pid": None,
    }
    record.update(fields)
    return record


def write_record(records_dir: Path | str, record: dict[str, Any]) -> Path:
    """Validate ``record`` and write it atomically; return its path."""
    path = _record_path(records_dir, record.get("id", "?"))
    schema.validate_record(record, path)
    replace_atomically(path, encode_json(record, None))
    return Path(path)


class RecordJournal:
    """The records of the examples one process runs, appended one line each.

    Opened on first use in each process (the hook that holds it travels to
    sphinx-gallery's workers by pickle), appended with ``O_APPEND`` in one ``write`` per
    line, so parallel writers and crashes never interleave or split a line.
    """

    PREFIX = "journal-"

    def __init__(self, records_dir: Path | str) -> None:
        self.records_dir = os.fspath(records_dir)
        self._handle: int | None = None
        self._pid: int | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"records_dir": self.records_dir, "_handle": None, "_pid": None}

    def append(self, record: dict[str, Any]) -> None:
        """Validate ``record`` and append it as one line."""
        schema.validate_record(record, self.records_dir)
        if self._pid != os.getpid():
            path = os.path.join(self.records_dir, f"{self.PREFIX}{os.getpid()}.jsonl")
            flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC
            self._handle, self._pid = os.open(path, flags, 0o666), os.getpid()
        assert self._handle is not None
        write_all(self._handle, encode_json(record, None))


def read_records(records_dir: Path | str) -> dict[str, dict[str, Any]]:
    """Every valid record under ``records_dir`` by id; unreadable ones are skipped.

    A record file wins over journal lines; of the journal lines of one example, the last
    one read wins.
    """
    records_dir = Path(records_dir)
    records: dict[str, dict[str, Any]] = {}
    for path in sorted(records_dir.glob(f"{RecordJournal.PREFIX}*.jsonl")):
        for record in _read_lines(path):
            records[record["id"]] = record
    for path in sorted(records_dir.glob("*.json")):
        record = _read(path)
        if record is not None:
            records[record["id"]] = record
    return records


def _read(path: Path) -> dict[str, Any] | None:
    try:
        return schema.validate_record(read_json(path, "record"), path)
    except InputError:
        return None


def _read_lines(path: Path) -> list[dict[str, Any]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, ValueError):
        return []
    found = []
    for line in lines:
        try:
            found.append(schema.validate_record(parse_json(line, str(path), "record"), path))
        except InputError:
            continue  # a line cut short by a crash
    return found


def build_report(
    records_dir: Path | str,
    examples: Iterable[Example],
    build: dict[str, Any],
    records: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The report of a build: its records, plus ``not-executed`` for examples without one.

    ``records``: the records by id, when the caller has just read them
    (default: :func:`read_records` of ``records_dir``).
    """
    records = dict(read_records(records_dir) if records is None else records)
    for example in examples:
        if example.id not in records:
            fast = bool(build.get("fast", False))
            records[example.id] = base_record(example, NOT_EXECUTED, fast)
    report = {
        **schema.REPORT.header(),
        "generated_at": now_iso(),
        "build": dict(build),
        "examples": [records[key] for key in sorted(records)],
    }
    return schema.validate_report(report)


def write_run_marker(target_file: Path | str, fast: bool, knobs: dict[str, Any]) -> None:
    """Note beside an example's outputs whether a fast or a full run made them, and its knobs.

    sphinx-gallery keeps the outputs (and the ``.md5`` that makes it skip the example) in
    the source tree: a later build into any output folder finds the note there, runs the
    example again when the other path made its outputs, and shows the fast-path note of
    outputs it keeps. Written only when it changes.
    """
    path = os.fspath(sg_compat.run_marker_file(target_file))
    payload = encode_json({"fast": bool(fast), "knobs": knobs}, None)
    try:
        with open(path, "rb") as stream:
            if stream.read() == payload:
                return
    except OSError:
        pass
    with contextlib.suppress(OSError):  # a read-only source tree: the outputs stay unmarked
        replace_atomically(path, payload)


def read_run_marker(target_file: Path | str) -> dict[str, Any] | None:
    """``{"fast": bool, "knobs": {...}}`` of the run that made an example's outputs, or None.

    None when there is no note or it cannot be read (outputs of another tool or version).
    """
    try:
        data = read_json(sg_compat.run_marker_file(target_file), "note of the outputs' run")
    except InputError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("fast"), bool):
        return None
    knobs = data.get("knobs")
    return {"fast": data["fast"], "knobs": knobs if isinstance(knobs, dict) else {}}
