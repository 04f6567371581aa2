"""Per-example records on disk and the report combined from them.

The design, in full: the reports guide's *Design* section.

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
>>> build = {"wall_seconds": 80.0, "complete": True}
>>> report = build_report(records_dir.name, [quick, slow], build=build)
>>> [(record["id"], record["status"]) for record in report["examples"]]
[('tutorials/plot_quick.py', 'ok'), ('tutorials/plot_slow.py', 'not-executed')]
>>> records_dir.cleanup()
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Container, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from docsaccel import layout, schema, sg_compat
from docsaccel.contract import NOT_EXECUTED, InputError, parse_json, read_json
from docsaccel.examples import Example
from docsaccel.formats import encode_json, replace_atomically, write_all

__all__ = [
    "RecordJournal",
    "base_record",
    "build_report",
    "forget_written",
    "journal_again",
    "now_iso",
    "read_records",
    "read_run_marker",
    "record_file",
    "restored_unverified",
    "run_outputs",
    "write_plan",
    "write_record",
    "write_run_marker",
    "written_here",
]

#: What this process wrote, by records folder then id: journal lines, and record files.
_journalled: dict[str, dict[str, dict[str, Any]]] = {}
_filed: dict[str, dict[str, dict[str, Any]]] = {}


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def record_file(records_dir: Path | str, example_id: str) -> Path:
    """``tutorials/sub/plot_a.py`` -> ``<records_dir>/tutorials__sub__plot_a.py.json``."""
    return Path(_record_path(records_dir, example_id))


def _record_path(records_dir: Path | str, example_id: str) -> str:
    # One file per id, even where "/" as "__" would give two ids one name.
    return os.path.join(records_dir, layout.id_slug(example_id) + ".json")


def base_record(example: Example, status: str, fast: bool, **fields: Any) -> dict[str, Any]:
    """A complete record of ``example``; ``fields`` override or add keys."""
    record: dict[str, Any] = {
        **schema.RECORD.header(),
        "id": example.id,
        "gallery": example.gallery,
        "name": example.name,
        "ref": example.ref,
        "status": status,
        "wall_seconds": 0.0,
        "cpu_seconds": None,
        "peak_rss_bytes": None,
        "budget_seconds": example.budget.seconds,
        "budget_source": example.budget.source,
        "budget_detail": example.budget.detail,
        "budget_reason": example.budget.reason,
        "memory_budget": example.budget.memory.to_record(),
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
    _filed.setdefault(_key(records_dir), {})[record["id"]] = record
    return Path(path)


def write_plan(records_dir: Path | str, examples: Iterable[Example], fast: bool) -> None:
    """Write the build's plan (:data:`~docsaccel.layout.PLAN_FILE`): the record of each of
    ``examples`` as the report gives an example it never reached, so a reader of the
    journals of a build killed outright lists them as its report would have."""
    lines = [encode_json(base_record(example, NOT_EXECUTED, fast), None) for example in examples]
    replace_atomically(os.path.join(records_dir, layout.PLAN_FILE), b"".join(lines))


def _key(records_dir: Path | str) -> str:
    return os.path.abspath(records_dir)


def written_here(records_dir: Path | str) -> dict[str, dict[str, Any]]:
    """The records this process wrote under ``records_dir`` (since :func:`forget_written`),
    by id, as :func:`read_records` would read them back had nothing touched the files: a
    record file wins over journal lines, the last line of an example wins."""
    key = _key(records_dir)
    return {**_journalled.get(key, {}), **_filed.get(key, {})}


def forget_written(records_dir: Path | str) -> None:
    """Forget what this process wrote under ``records_dir`` (a build starts it afresh,
    its journal files included)."""
    key = _key(records_dir)
    _journalled.pop(key, None)
    _filed.pop(key, None)
    for path in [p for p in _journals if os.path.dirname(p) == key]:
        with contextlib.suppress(OSError):
            os.close(_journals.pop(path).handle)


class RecordJournal:
    """The records of the examples one process runs, appended one line each.

    Opened on first use in each process (the hook that holds it travels to
    sphinx-gallery's workers by pickle, once per example: every copy in one process
    appends to the same file), appended with ``O_APPEND`` in one ``write`` per line, so
    parallel writers and crashes never interleave or split a line.
    """

    PREFIX = layout.JOURNAL_PREFIX

    def __init__(self, records_dir: Path | str, build_id: str | None = None) -> None:
        self.records_dir = os.fspath(records_dir)
        #: The build whose journal this is (``None``: a writer outside a build).
        self.build_id = build_id

    @property
    def path(self) -> str:
        return os.path.join(self.records_dir, layout.journal_name(self.build_id, os.getpid()))

    def append(self, record: dict[str, Any]) -> None:
        """Validate ``record`` and append it as one line (writing the journal again first
        if its file is gone, replaced, or holds other bytes than this process wrote)."""
        schema.validate_record(record, self.records_dir)
        line = encode_json(record, None)
        path = os.path.abspath(self.path)  # its pid's: a forked copy gets a journal of its own
        journal = _journals.get(path)
        if journal is None:
            journal = _journals[path] = _JournalFile(path)
        elif not journal.intact():
            journal.write_again()
        journal.append(line)
        _journalled.setdefault(_key(self.records_dir), {})[record["id"]] = record


def journal_again(
    records_dir: Path | str, record: dict[str, Any], build_id: str | None = None
) -> None:
    """Append ``record`` to the journal of the process that ran its example (its ``pid``;
    this process's when it has none, or is this one), for a status decided after that
    process wrote its last line of it (the build's process could not end): the last line
    of the example is then the journal's word too, whichever journal a reader reads last.
    """
    schema.validate_record(record, records_dir)
    pid = record.get("pid")
    if not isinstance(pid, int) or pid == os.getpid():
        RecordJournal(records_dir, build_id).append(record)
        return
    path = os.path.join(records_dir, layout.journal_name(build_id, pid))
    # That process writes no more lines of the example: one appended write, as it does.
    with contextlib.suppress(OSError):
        handle = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
        try:
            write_all(handle, encode_json(record, None))
        finally:
            os.close(handle)


class _JournalFile:
    """One process's journal file: its descriptor, and every line written to it."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.lines: list[bytes] = []
        self.size = 0
        self.handle = self._open()

    def _open(self) -> int:
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC
        return os.open(self.path, flags, 0o666)

    def append(self, line: bytes) -> None:
        write_all(self.handle, line)
        self.lines.append(line)
        self.size += len(line)

    def intact(self) -> bool:
        """Whether the path still names the file appended to, holding exactly the lines
        written to it."""
        try:
            named, opened = os.stat(self.path), os.fstat(self.handle)
        except OSError:
            return False
        same = (named.st_dev, named.st_ino) == (opened.st_dev, opened.st_ino)
        return same and opened.st_size == self.size

    def write_again(self) -> None:
        """Put the journal back as this process wrote it, and append to that file."""
        with contextlib.suppress(OSError):
            os.close(self.handle)
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        replace_atomically(self.path, b"".join(self.lines))
        self.handle = self._open()


#: This process's journal files, by path.
_journals: dict[str, _JournalFile] = {}


def read_records(
    records_dir: Path | str, files: bool = True, superseded: Container[str] = ()
) -> dict[str, dict[str, Any]]:
    """Every valid record under ``records_dir`` by id; unreadable ones are skipped.

    A record file wins over journal lines; of the journal lines of one example, the last
    one read wins. ``files=False``: the journals only. ``superseded``: ids whose journal
    lines the caller replaces with records of its own: they are left out unchecked.
    """
    records_dir = Path(records_dir)
    records: dict[str, dict[str, Any]] = {}
    for path in layout.journals(records_dir):
        for record in _read_lines(path, superseded):
            records[record["id"]] = record
    for path in sorted(records_dir.glob("*.json")) if files else ():
        record = _read(path)
        if record is not None:
            records[record["id"]] = record
    return records


def _read(path: Path) -> dict[str, Any] | None:
    try:
        return schema.validate_record(read_json(path, "record"), path)
    except InputError:
        return None


def _read_lines(path: Path, superseded: Container[str] = ()) -> list[dict[str, Any]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, ValueError):
        return []
    found = []
    for line in lines:
        try:
            data = parse_json(line, str(path), "record")
            found_id = data.get("id") if isinstance(data, dict) else None
            if isinstance(found_id, str) and found_id in superseded:
                continue  # replaced by the caller's own: checking it would be wasted
            found.append(schema.validate_record(data, path))
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


def write_run_marker(
    target_file: Path | str,
    fast: bool,
    knobs: dict[str, Any],
    outputs: list[str] | None = None,
    cache: bool = False,
) -> None:
    """Note beside an example's outputs whether a fast or a full run made them, its knobs,
    and which files that run wrote (``outputs``: paths inside the source dir, see
    :func:`docsaccel.outputs.collect`).

    sphinx-gallery keeps the outputs (and the ``.md5`` that makes it skip the example) in
    the source tree: a later build into any output folder finds the note there, runs the
    example again when the other path made its outputs, and shows the fast-path note of
    outputs it keeps; the example cache and sharding move exactly the files it lists.
    ``cache``: the run was in a build with the example cache, whose lookups, not the
    ``.md5``, decide whether the example is up to date (:func:`restored_unverified`).
    Written only when it changes.
    """
    path = os.fspath(sg_compat.run_marker_file(target_file))
    note: dict[str, Any] = {"fast": bool(fast), "knobs": knobs}
    if outputs is not None:
        note["outputs"] = sorted(outputs)
    if cache:
        note["cache"] = True
    payload = encode_json(note, None)
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


def restored_unverified(target_file: Path | str) -> bool:
    """Whether an example's outputs were made, or restored, by a build with the example
    cache: a build without it must run the example again rather than keep them.

    With the cache on, sphinx-gallery's ``.md5`` (the example's file unchanged) is not
    what decides an example is up to date: the cache's lookup of everything it read is,
    and removes the ``.md5`` of a miss. A build without the cache has only the ``.md5``,
    which a library edit since leaves matching: the page would stay, unverified.
    """
    try:
        data = read_json(sg_compat.run_marker_file(target_file), "note of the outputs' run")
    except InputError:
        return False
    return isinstance(data, dict) and data.get("cache") is True


def run_outputs(target_file: Path | str) -> list[str] | None:
    """The files the run that made an example's outputs wrote (paths inside the source dir,
    ``/``-separated), from its note; ``None`` when the note does not list them (outputs
    of an older docsaccel, or a note that cannot be read) or lists a path that leaves the
    source dir."""
    try:
        data = read_json(sg_compat.run_marker_file(target_file), "note of the outputs' run")
    except InputError:
        return None
    listed = data.get("outputs") if isinstance(data, dict) else None
    if not isinstance(listed, list) or not all(_inside(item) for item in listed):
        return None
    return list(listed)


def _inside(relative: Any) -> bool:
    """Whether ``relative`` is a ``/``-separated path that stays inside its folder."""
    if not isinstance(relative, str) or not relative or "\\" in relative:
        return False
    parts = relative.split("/")
    return not relative.startswith("/") and ".." not in parts and "" not in parts
