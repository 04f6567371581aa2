"""Read one journal line by line, stopping at the first line that is not a whole record.

A journal is the only account a build killed outright leaves: a damaged one (cut short
in a line, garbage, bytes that are not UTF-8, a line of another kind) still says what
ran before the damage, so its readers use those lines and name the damage, in one line
with the file and the line number (:attr:`JournalRead.damage`), rather than refusing the
whole file or taking the examples it no longer shows for ones never reached.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from docsaccel.contract import InputError, parse_json, read_bytes
from docsaccel.schema import RECORD_SCHEMA, validate_record

__all__ = ["JournalRead", "damage_text", "read_journal"]


@dataclasses.dataclass(frozen=True)
class JournalRead:
    """The records of one journal read up to its first damaged line."""

    #: The records of the lines before the damage, in order.
    records: list[dict[str, Any]]
    #: ``"<path>:<line>: <what is wrong>"``, ``None`` when every line is a record.
    damage: str | None = None


def damage_text(damages: list[str]) -> str:
    """What every view of a build says of its damaged journals, in one line."""
    return "its journal is damaged, read up to the damage: " + "; ".join(damages)


def read_journal(path: Path, running: bool = False) -> JournalRead:
    """The records of the journal at ``path``, up to its first line that is not one.

    ``running``: its build writes it now, so a last line without its end is one being
    written, left out and not said. An empty file, or one that cannot be read at all, is
    an :class:`InputError` naming it."""
    data = read_bytes(path, "journal")
    if not data.strip():
        raise InputError(f"{path}: the file is empty")
    lines = data.split(b"\n")
    ends_whole = lines[-1] == b""
    if ends_whole:
        lines.pop()
    records: list[dict[str, Any]] = []
    for number, raw in enumerate(lines, start=1):
        where = f"{path}:{number}"
        last_unended = number == len(lines) and not ends_whole
        why = _line_problem(raw, where, records)
        if why is None:
            continue
        if last_unended and running:
            break
        if last_unended:
            why = f"the last line is cut short ({why})"
        return JournalRead(records, f"{where}: {why}")
    return JournalRead(records)


def _line_problem(raw: bytes, where: str, records: list[dict[str, Any]]) -> str | None:
    """Why ``raw`` (one line) is not a record, else ``None`` with it appended to ``records``."""
    try:
        line = raw.decode("utf-8-sig" if not records else "utf-8")
    except UnicodeDecodeError as exc:
        return f"not UTF-8 text (byte {raw[exc.start]:#04x} at column {exc.start + 1})"
    try:
        data = parse_json(line, where, "record")
        schema = data.get("schema") if isinstance(data, dict) else None
        if schema is not None and schema != RECORD_SCHEMA:
            return f"a line of another kind (schema {schema!r}), not a record"
        records.append(validate_record(data, where))
    except InputError as exc:
        # The reader's own words, without the place this line already names.
        return str(exc).removeprefix(f"{where}: ").removeprefix(f"{where} ")
    return None
