"""Per-example records on disk and the report combined from them.

Each record is one JSON file under ``<outdir>/docsaccel/records/``, replaced atomically
(written to a temporary file, then renamed), so a crash or a stopped build never leaves
half a record, and parallel workers never write the same file. :func:`build_report` turns
the records of a build into the report dict; it reads only files, so it can be called on
its own, after the build or after a crash. Formats: :mod:`docsaccel.schema`.

Example::

    write_record(records_dir, record)
    report = build_report(records_dir, examples, build={"wall_seconds": 80.0, ...})
    write_json(outdir / "docsaccel" / "report.json", report)
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from docsaccel import schema
from docsaccel.gallery.plan import Example

__all__ = [
    "base_record",
    "build_report",
    "now_iso",
    "read_records",
    "record_file",
    "write_json",
    "write_record",
]


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def record_file(records_dir: Path, example_id: str) -> Path:
    """``tutorials/sub/plot_a.py`` -> ``<records_dir>/tutorials__sub__plot_a.py.json``."""
    return Path(records_dir) / (example_id.replace("/", "__") + ".json")


def write_json(path: Path, data: Any, indent: int | None = 2) -> None:
    """Write ``data`` as JSON to ``path`` atomically (temporary file + rename).

    ``indent=None`` writes one line with the C encoder (records, written twice per
    example); the report keeps its indentation for readers.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(json.dumps(data, indent=indent, sort_keys=True, allow_nan=False))
            stream.write("\n")
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def base_record(example: Example, status: str, fast: bool, **fields: Any) -> dict[str, Any]:
    """A complete record of ``example``; ``fields`` override or add keys."""
    record: dict[str, Any] = {
        "schema": schema.RECORD_SCHEMA,
        "version": schema.VERSION,
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


def write_record(records_dir: Path, record: dict[str, Any]) -> Path:
    """Validate ``record`` and write it atomically; return its path."""
    path = record_file(records_dir, record.get("id", "?"))
    schema.validate_record(record, path)
    write_json(path, record, indent=None)
    return path


def read_records(records_dir: Path) -> dict[str, dict[str, Any]]:
    """Every valid record under ``records_dir`` by id; unreadable files are skipped."""
    found = (_read(path) for path in sorted(Path(records_dir).glob("*.json")))
    return {record["id"]: record for record in found if record is not None}


def _read(path: Path) -> dict[str, Any] | None:
    try:
        return schema.validate_record(json.loads(path.read_text(encoding="utf-8")), path)
    except (OSError, ValueError):
        return None


def build_report(
    records_dir: Path, examples: Iterable[Example], build: dict[str, Any]
) -> dict[str, Any]:
    """The report of a build: its records, plus ``not-executed`` for examples without one."""
    records = read_records(records_dir)
    for example in examples:
        if example.id not in records:
            fast = bool(build.get("fast", False))
            records[example.id] = base_record(example, "not-executed", fast)
    report = {
        "schema": schema.REPORT_SCHEMA,
        "version": schema.VERSION,
        "generated_at": now_iso(),
        "build": dict(build),
        "examples": [records[key] for key in sorted(records)],
    }
    return schema.validate_report(report)
