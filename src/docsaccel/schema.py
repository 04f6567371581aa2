"""The data docsaccel's parts hand to each other: example records and the build report.

The design, in full: the reports guide's *Design* section.
"""

from __future__ import annotations

from pathlib import Path
from types import UnionType
from typing import Any, Required, TypedDict, get_args, get_origin, get_type_hints, is_typeddict

from docsaccel.contract import (
    AUDIT_STATUSES,
    BUILD_FAILURES,
    INTERRUPTED_BY,
    STATUSES,
    InputError,
    is_finite_number,
    read_json,
)
from docsaccel.formats import Format

__all__ = [
    "BUILD_FAILURES",
    "MEASURED_FIELDS",
    "RECORD_SCHEMA",
    "REPORT_SCHEMA",
    "STATUSES",
    "TIME_UNKNOWN",
    "VERSION",
    "AuditVerdict",
    "CacheField",
    "ExampleRecord",
    "MemoryBudgetField",
    "SchemaError",
    "ended_phase",
    "load_report",
    "peak_bytes",
    "validate_record",
    "validate_report",
]

#: The two formats (:class:`docsaccel.formats.Format`), at the same version.
RECORD = Format("docsaccel.record", 2, "record")
REPORT = Format("docsaccel.report", 2, "report")
RECORD_SCHEMA = RECORD.schema
REPORT_SCHEMA = REPORT.schema
VERSION = REPORT.version


def ended_phase(build: Any) -> str | None:
    """In which phase a build that ran its examples ended without finishing, from its
    report's ``build`` flags: ``"while Sphinx read the documents"`` (``reading``, set until
    every document is read), ``"while its pages were written"`` (``writing`` alone), or
    None (it finished, or ended before its examples were done). The one reading of those
    flags: the gates' words and the next build's log line are made from it.

    >>> ended_phase({"complete": False, "writing": True, "reading": True})
    'while Sphinx read the documents'
    >>> ended_phase({"complete": False, "writing": True}), ended_phase({"complete": True})
    ('while its pages were written', None)
    """
    if not isinstance(build, dict) or build.get("complete") is not False:
        return None
    if build.get("reading") is True:
        return "while Sphinx read the documents"
    if build.get("writing") is True:
        return "while its pages were written"
    return None


class AuditVerdict(TypedDict, total=False):
    """The ``audit`` of a record's ``cache`` value: what an audit run found."""

    status: Required[str]  # one of contract.AUDIT_STATUSES
    entry: str
    differences: list[str]
    dependencies: list[str]
    second_run_seconds: float


class CacheField(TypedDict, total=False):
    """A record's ``cache`` value: whether the example was restored, or why it ran."""

    hit: Required[bool]
    reason: str
    saved_seconds: float
    audit: AuditVerdict


class MemoryBudgetField(TypedDict):
    """A record's ``memory_budget``: its bytes (None: no memory budget) and their source."""

    bytes: int | None
    source: str
    detail: str | None
    reason: str | None


class ExampleRecord(TypedDict, total=False):
    """One example's record, as every part reads and writes it (the record format, in the
    reports guide's *Design* section): the one declaration of its keys, their types and
    which are required, which :func:`validate_record` checks."""

    schema: Required[str]
    version: Required[int]
    id: Required[str]
    gallery: Required[str]
    name: Required[str]
    #: sphinx-gallery's label of its page; absent from records written before it was kept.
    ref: str | None
    status: Required[str]
    wall_seconds: Required[float]
    cpu_seconds: float | None
    peak_rss_bytes: int | None
    children_peak_bytes: int | None
    retained_bytes: int | None
    gpu_peak_bytes: int | None
    gpu_retained_bytes: int | None
    overhead_seconds: float | None
    budget_seconds: Required[float | None]
    budget_source: Required[str]
    budget_detail: str | None
    budget_reason: str | None
    memory_budget: MemoryBudgetField | None
    interrupted_by: str | None
    fast: Required[bool]
    knobs: dict[str, Any]
    render: dict[str, Any]
    error: str | None
    expected_failure: bool
    started_at: str | None
    finished_at: str | None
    pid: int | None
    cache: CacheField | None
    #: Its outputs were reused from a run whose time no file kept (sphinx-gallery's own
    #: skip of an example built before docsaccel, with a release that stores no time):
    #: its ``wall_seconds`` is ``0`` and no time at all.
    time_unknown: bool


def _accepted(hint: Any) -> tuple[type, ...]:
    """The Python types a JSON value of the type ``hint`` may have: a ``float`` may be
    written as an integer, a record or mapping is a ``dict``."""
    accepted: list[type] = []
    for part in get_args(hint) if isinstance(hint, UnionType) else (hint,):
        if part is float:
            accepted += [int, float]
        elif is_typeddict(part) or get_origin(part) is dict:
            accepted.append(dict)
        else:
            accepted.append(part)
    return tuple(accepted)


def _fields(record: type) -> dict[str, tuple[tuple[type, ...], bool]]:
    """``{key: (accepted types, required)}`` of a record type, in its order."""
    # Read from the annotations: with postponed annotations, ``__required_keys__`` does
    # not see ``Required``.
    fields = {}
    for key, hint in get_type_hints(record, include_extras=True).items():
        required = get_origin(hint) is Required
        fields[key] = (_accepted(get_args(hint)[0] if required else hint), required)
    return fields


_RECORD_FIELDS = _fields(ExampleRecord)


class SchemaError(InputError):
    """A record or report that does not follow the documented format."""


# Numbers that must be finite and not negative; ``budget_seconds`` must be above 0.
_DURATIONS = ("wall_seconds", "cpu_seconds", "budget_seconds")
_MEMORY = (
    "peak_rss_bytes",
    "children_peak_bytes",
    "retained_bytes",
    "gpu_peak_bytes",
    "gpu_retained_bytes",
)
_COUNTS = (*_MEMORY, "pid")
#: What a record of an example whose outputs were reused keeps from the run that made
#: them: what that run measured.
MEASURED_FIELDS = ("wall_seconds", "cpu_seconds", *_MEMORY)
#: The record key saying its time is none (``ExampleRecord.time_unknown``).
TIME_UNKNOWN = "time_unknown"
_MEMORY_BUDGET_KEYS = {key: types for key, (types, _) in _fields(MemoryBudgetField).items()}


def peak_bytes(record: dict[str, Any]) -> int | None:
    """The example's peak memory: its process's and its child processes' (``None``: not
    measured). What its memory budget bounds.

    >>> peak_bytes({"peak_rss_bytes": 300, "children_peak_bytes": 200}), peak_bytes({})
    (500, None)
    """
    own = record.get("peak_rss_bytes")
    if own is None:
        return None
    return own + (record.get("children_peak_bytes") or 0)


def _where(source: str | Path | None, key: str) -> str:
    return f"{source}: {key}" if source else key


def validate_record(record: Any, source: str | Path | None = None, where: str = "") -> dict:
    """Check one record; return it unchanged or raise :class:`SchemaError`."""
    prefix = where or "record"
    if not isinstance(record, dict):
        raise SchemaError(f"{_where(source, prefix)} must be an object, got {record!r:.80}")
    for key, (types, required) in _RECORD_FIELDS.items():
        if key not in record:
            if required:
                raise SchemaError(f"{_where(source, prefix)} has no key {key!r}")
            continue
        value = record[key]
        # bool is an int in Python; a bool is only accepted where the format says so.
        is_bool_misuse = isinstance(value, bool) and bool not in types
        if is_bool_misuse or not isinstance(value, types):
            raise SchemaError(
                f"{_where(source, f'{prefix}.{key}')} has the wrong type: {value!r:.80}"
            )
    RECORD.check(record, source or "record", error=SchemaError, key_prefix=f"{prefix}.")
    if record["status"] not in STATUSES:
        raise SchemaError(
            f"{_where(source, f'{prefix}.status')} is {record['status']!r}, "
            f"expected one of {', '.join(STATUSES)}"
        )
    for key in (*_DURATIONS, *_COUNTS):
        value = record.get(key)
        if value is None:
            continue
        # One check and one message per key, stating its whole rule.
        above_zero = key == "budget_seconds"
        if not is_finite_number(value) or value < 0 or (above_zero and value == 0):
            rule = "above 0, or null for an unbounded example" if above_zero else "of 0 or more"
            raise SchemaError(
                f"{_where(source, f'{prefix}.{key}')} is {value!r:.80}; expected a finite "
                f"number {rule}"
            )
    _check_audit(record.get("cache"), source, f"{prefix}.cache.audit")
    if record.get("interrupted_by") not in (None, *INTERRUPTED_BY):
        raise SchemaError(
            f"{_where(source, f'{prefix}.interrupted_by')} is {record['interrupted_by']!r:.40}, "
            f"expected one of {', '.join(INTERRUPTED_BY)}"
        )
    if record.get("memory_budget") is not None:
        _validate_memory_budget(record["memory_budget"], _where(source, f"{prefix}.memory_budget"))
    return record


def _validate_memory_budget(budget: dict[str, Any], where: str) -> None:
    for key, types in _MEMORY_BUDGET_KEYS.items():
        value = budget.get(key)
        if (key == "source" and key not in budget) or isinstance(value, bool):
            raise SchemaError(f"{where}.{key} is {value!r:.60}; expected {types[0].__name__}")
        if not isinstance(value, types):
            raise SchemaError(f"{where}.{key} has the wrong type: {value!r:.60}")
    size = budget.get("bytes")
    if size is not None and size <= 0:
        raise SchemaError(
            f"{where}.bytes is {size!r}; a memory budget is above 0 bytes, or null for none"
        )


def _check_audit(cache: Any, source: str | Path | None, where: str) -> None:
    """The ``audit`` of a record's ``cache`` value, when it has one (see the format)."""
    audit = cache.get("audit") if isinstance(cache, dict) else None
    if audit is None:
        return
    if not isinstance(audit, dict) or audit.get("status") not in AUDIT_STATUSES:
        raise SchemaError(
            f"{_where(source, where)} must be an object whose status is one of "
            f"{', '.join(AUDIT_STATUSES)}, got {audit!r:.80}"
        )
    for key in ("differences", "dependencies"):
        value = audit.get(key, [])
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise SchemaError(f"{_where(source, f'{where}.{key}')} must be a list of strings")
    seconds = audit.get("second_run_seconds", 0)
    if not is_finite_number(seconds) or seconds < 0:
        raise SchemaError(
            f"{_where(source, f'{where}.second_run_seconds')} is {seconds!r:.40}; expected a "
            "finite number of 0 or more"
        )


def validate_report(report: Any, source: str | Path | None = None) -> dict:
    """Check a whole report; return it unchanged or raise :class:`SchemaError`."""
    REPORT.check(report, source or "report", error=SchemaError)
    build = report.get("build")
    if not isinstance(build, dict):
        raise SchemaError(f"{_where(source, 'build')} must be an object")
    if "complete" not in build:
        # Whether the build finished is never assumed: a report without it passes no gate.
        raise SchemaError(
            f"{_where(source, 'build.complete')} is missing; expected true or false (whether "
            "the build finished)"
        )
    for flag in ("complete", "writing", "reading"):
        if not isinstance(build.get(flag, False), bool):
            raise SchemaError(
                f"{_where(source, f'build.{flag}')} is {build[flag]!r:.40}; expected true or false"
            )
    stopped = build.get("stopped_before_examples")
    if stopped is not None and (not isinstance(stopped, str) or build.get("complete") is not False):
        raise SchemaError(
            f"{_where(source, 'build.stopped_before_examples')} is {stopped!r:.40}; expected "
            'why the build stopped (a string), in a report that says "complete": false'
        )
    generating = build.get("stopped_while_generating")
    if generating is not None and (
        not isinstance(generating, str) or build.get("complete") is not False
    ):
        raise SchemaError(
            f"{_where(source, 'build.stopped_while_generating')} is {generating!r:.40}; "
            'expected why the build stopped (a string), in a report that says "complete": false'
        )
    for key in BUILD_FAILURES:
        failed = build.get(key)
        if failed is not None and not isinstance(failed, str):
            raise SchemaError(
                f"{_where(source, f'build.{key}')} is {failed!r:.40}; expected why the build "
                "failed (a string)"
            )
    build_id = build.get("id")
    if build_id is not None and not isinstance(build_id, str):
        raise SchemaError(
            f"{_where(source, 'build.id')} is {build_id!r:.40}; expected the build's id (a string)"
        )
    ended = build.get("ended_because")
    if ended is not None and not isinstance(ended, str):
        raise SchemaError(
            f"{_where(source, 'build.ended_because')} is {ended!r:.40}; expected why the "
            "build's process ended early (a string)"
        )
    conf = build.get("conf")
    if conf is not None and not (
        isinstance(conf, dict) and all(isinstance(conf.get(k), str) for k in ("path", "sha256"))
    ):
        raise SchemaError(
            f"{_where(source, 'build.conf')} is {conf!r:.60}; expected the conf.py the build "
            'read: {"path": ..., "sha256": ...}'
        )
    modules = (conf or {}).get("modules", [])
    if not isinstance(modules, list) or not all(isinstance(item, str) for item in modules):
        raise SchemaError(
            f"{_where(source, 'build.conf.modules')} is {modules!r:.60}; expected the files of "
            "the project's modules the build loaded before docsaccel (a list of paths)"
        )
    stamps = (conf or {}).get("module_stamps", {})
    if not isinstance(stamps, dict) or not all(isinstance(v, dict) for v in stamps.values()):
        raise SchemaError(
            f"{_where(source, 'build.conf.module_stamps')} is {stamps!r:.60}; expected "
            '{path: {"size": ..., "sha256": ...}} of the modules it lists'
        )
    versions = (conf or {}).get("distributions", {})
    if not isinstance(versions, dict) or not all(isinstance(v, str) for v in versions.values()):
        raise SchemaError(
            f"{_where(source, 'build.conf.distributions')} is {versions!r:.60}; expected "
            "{distribution: version} of the build's Sphinx extensions"
        )
    lost = build.get("records_lost", [])
    if not isinstance(lost, list) or not all(isinstance(item, str) for item in lost):
        raise SchemaError(f"{_where(source, 'build.records_lost')} must be a list of example ids")
    wall = build.get("wall_seconds")
    if wall is not None and (not is_finite_number(wall) or wall < 0):
        raise SchemaError(
            f"{_where(source, 'build.wall_seconds')} is {wall!r:.40}; expected a finite "
            "number of 0 or more"
        )
    examples = report.get("examples")
    if not isinstance(examples, list):
        raise SchemaError(f"{_where(source, 'examples')} must be a list")
    seen: dict[str, int] = {}
    for index, record in enumerate(examples):
        validate_record(record, source, where=f"examples[{index}]")
        if record["id"] in seen:
            raise SchemaError(
                f"{_where(source, f'examples[{index}].id')} is {record['id']!r}, the id of "
                f"examples[{seen[record['id']]}] too; each example is listed once"
            )
        seen[record["id"]] = index
    return report


def load_report(path: str | Path) -> dict:
    """Read and validate a report JSON file; :class:`~docsaccel.contract.InputError` if not."""
    return validate_report(read_json(path, "report"), Path(path))
