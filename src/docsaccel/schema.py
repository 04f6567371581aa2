"""The data docsaccel's parts hand to each other: example records and the build report.

Data flows one way: the gallery plugin writes one *record* per example (JSON, written
atomically under ``<outdir>/docsaccel/records/``: a line of a per-process journal, or a
file; see :mod:`docsaccel.records`), combines them into the *report*
(``<outdir>/docsaccel/report.json``), and the views (``docsaccel report``, ``check``,
``compare``, ``shard``) read the report. Views never re-measure. This module is the one
definition of both formats, and validates them with messages that name the file, the key
and the value.

Record (schema ``docsaccel.record``, version 2)::

    {
      "schema": "docsaccel.record", "version": 2,
      "id": "tutorials/plot_quick.py",       # gallery folder / path inside it (posix)
      "gallery": "tutorials",                 # examples dir, relative to the source dir
      "name": "plot_quick.py",                # path inside the gallery folder
      "status": "ok",                         # one of contract.STATUSES
      "wall_seconds": 1.25, "cpu_seconds": 1.1, "peak_rss_bytes": 123456789,
      "children_peak_bytes": 0,               # optional from version 2: memory (below)
      "retained_bytes": 1048576,
      "gpu_peak_bytes": 2147483648, "gpu_retained_bytes": 0,
                                              # only when the example used CUDA (torch)
      "overhead_seconds": 0.07,               # optional: around the execution (see below)
      "budget_seconds": 30.0,                 # > 0, or null: unbounded ("none" + reason)
      "budget_source": "inline",              # "inline" | "pattern" | "default" | "builtin"
      "budget_detail": "conf/budgets.toml [examples] 'plot_*.py'",
      "budget_reason": null,
      "memory_budget": {"bytes": 2147483648, "source": "default",
                        "detail": "conf/budgets.toml memory_default", "reason": null},
                                              # optional from version 2; bytes null:
                                              # no memory budget
      "interrupted_by": "memory",             # optional from version 2, for interrupted
                                              # examples: "time" | "memory" | "ceiling"
      "fast": true,                           # built with the fast path on
      "knobs": {"rollouts": {"value": 1, "fast": 1, "full": 4}},
      "render": {"HalfCheetah-v5#0": {"fresh_renders": 7, "reused_frames": 105,
                  "render_seconds": 0.3, "saved_seconds": 4.5}},
      "error": null,                          # message for failed / interrupted examples
      "expected_failure": true,               # optional: a failed example sphinx-gallery
                                              # was told to expect (expected_failing_examples)
      "started_at": "2026-11-29T17:00:00+00:00", "finished_at": "...",
      "pid": 1234,
      "cache": {"hit": false, "reason": "src/mylib/alpha.py changed"}
                                              # optional, builds with the example cache:
                                              # a hit has "saved_seconds" (the original
                                              # run's time), a miss says why it ran; an
                                              # example run to audit its entry (reason
                                              # "audit") has "audit": {"status": one of
                                              # contract.AUDIT_STATUSES, "entry": name,
                                              # "differences": [...], for "stale" the
                                              # entry's "dependencies": [...], and the
                                              # "second_run_seconds" of a second run}
    }

``wall_seconds`` is the example's execution time as sphinx-gallery measures it (the time
``sg_execution_times.rst`` shows), so the two compare like with like; what the plugin
measured around it (sphinx-gallery writing the page, thumbnail and notebook, the
resetters, docsaccel itself) is ``overhead_seconds``, absent or null when unknown (an
example that failed or was interrupted is timed by the plugin alone).

Memory, in bytes (see :mod:`docsaccel.gallery.memory` for how it is measured):
``peak_rss_bytes`` is the resident high-water mark of the process that ran the example,
while it ran; ``children_peak_bytes`` that of the processes it started; the example's
peak, which its memory budget bounds, is their sum (:func:`peak_bytes`).
``retained_bytes`` is what its process held more after the example than before it, after
a garbage collection. ``gpu_*`` are torch's CUDA allocator's peak and retained bytes,
present only when the example used CUDA. ``interrupted_by`` says which limit interrupted
it; a record without it (version 1) was interrupted by its time budget.

Report (schema ``docsaccel.report``, version 2)::

    {
      "schema": "docsaccel.report", "version": 2,
      "generated_at": "...",
      "build": {"wall_seconds": 80.0, "fast": true, "on_overrun": "fail",
                "complete": true, "sphinx_gallery": "0.22.1", "docsaccel": "0.1.0",
                "shard": null,                 # or {"role": "shard"|"merge", "examples": 12}
                "memory_limit": 6979321856},   # the build's memory ceiling, or null
      "examples": [ <record>, ... ]            # sorted by id, each id once
    }

Version 2 added the memory keys above, and an interrupted example may have been
interrupted by memory. Readers read versions 1 and 2.

``build.lock_lost`` (present only then) says why the output folder stopped being the
build's alone (its lock removed while it ran, and another build locked it): the report is
``"complete": false``. ``build.records_lost`` (present only when not empty) lists the
examples that ran but
whose record the build could not read back (a file of the records folder was removed or
replaced while it ran): each has status ``failed`` and the error
:data:`docsaccel.contract.RECORD_LOST_ERROR`, and the report is ``"complete": false``.

``build.writing`` (present only then, ``true``) marks the report written once the
examples ran, while Sphinx still wrote the pages: ``"complete": false`` until the build's
end writes it again, so a build killed meanwhile (``SIGKILL``, the kernel's out-of-memory
killer) leaves a report that says it did not finish.
``build.reading`` (present only then, ``true``, with ``build.writing``) marks a build
that had not yet read all its documents, so had written no page, when the report was
last written.

``build.stopped_before_examples`` (present only then) says why the build stopped before
any example ran (a refused setting, an error): the report is ``"complete": false`` and
lists no example (or only ``not-executed`` ones, once the examples were planned), so a
gate reading it fails, saying why, even with ``--allow-incomplete``.

``build.id`` (absent from reports of earlier releases) is the build's id, a string that
names its journals (``records/journal-<id>-<pid>.jsonl``): the report holds only the
records of this build, never those a process of another build wrote into the folder.

``build.conf`` (absent from reports of builds without a ``conf.py``) names the
``conf.py`` the build read and its bytes' SHA-256 (``{"path": "/abs/docs/conf.py",
"sha256": "..."}``): when that file has changed since, a later build never reached
docsaccel (it failed first) and the readers refuse the report
(:func:`docsaccel.contract.conf_changed`). Its optional ``modules`` lists the files of
the project's modules the build had loaded when docsaccel started its work (what
``conf.py`` imported, local extensions): one modified after the report was written makes
the readers refuse it too (:func:`docsaccel.contract.modules_changed`); its optional
``module_stamps`` (``{path: {"size": ..., "sha256": ...}}``) tells a change by the
bytes, also one within the filesystem's timestamp resolution. Its optional
``distributions`` (``{"sphinx-gallery": "0.22.1", ...}``) names the installed versions
of the distributions of the build's Sphinx extensions: another version installed since
makes the readers refuse it (:func:`docsaccel.contract.distributions_changed`).

``build.ended_because`` (present only then) says what ended the build's process before
the build's end when no example was running (``"it was terminated (SIGTERM)"``); with
``build.writing``, the process ended as the pages were written, after the examples ran.

``build.sphinx_failed`` (present only then) says why Sphinx failed a build whose
examples all ran (``"Sphinx gave 2 warnings, treated as errors (-W)"``): the build failed,
and ``docsaccel check`` says so.

``build.exit_blocked`` (present only then) says what kept the build's process from
ending once the build was done (a thread an example left running, an exit handler that
never returned), until the exit bound ended it, failing: the build failed, and
``docsaccel check`` says so. The example known to hold it has status ``failed``, with
what it left as its error.

``build.verdict_pending`` (present only then) says that the build ended without its
verdict reaching the report (:data:`docsaccel.contract.VERDICT_PENDING`): the report
written at the build's end carries it until the plugin's last ``build-finished`` handler
ran, so a build that a later handler failed on every emission of the event fails. These
three keys are :data:`docsaccel.contract.BUILD_FAILURES`.

``build.complete`` is required (``true`` or ``false``): a report that does not say
whether its build finished is refused, never read as finished.
``"complete": false`` marks the report of a build that stopped early; the record of the
example that was running then has status ``failed``, ``finished_at`` null and the error
:data:`docsaccel.contract.UNFINISHED_ERROR`; that of an example the hard stop ended has
status ``interrupted`` and an error that starts with its id and
:data:`docsaccel.contract.HARD_STOP` (:func:`docsaccel.contract.is_stopped_hard`).

Times and budgets are finite numbers (a budget above 0), versions 1 or more; a report or
record that breaks a rule raises :class:`SchemaError`, an :class:`~docsaccel.contract.InputError`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

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
    "VERSION",
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


# key -> (accepted types, required)
_NUMBER = (int, float)
_RECORD_FIELDS: dict[str, tuple[tuple[type, ...], bool]] = {
    "schema": ((str,), True),
    "version": ((int,), True),
    "id": ((str,), True),
    "gallery": ((str,), True),
    "name": ((str,), True),
    "status": ((str,), True),
    "wall_seconds": (_NUMBER, True),
    "cpu_seconds": ((*_NUMBER, type(None)), False),
    "peak_rss_bytes": ((int, type(None)), False),
    "children_peak_bytes": ((int, type(None)), False),
    "retained_bytes": ((int, type(None)), False),
    "gpu_peak_bytes": ((int, type(None)), False),
    "gpu_retained_bytes": ((int, type(None)), False),
    "overhead_seconds": ((*_NUMBER, type(None)), False),
    "budget_seconds": ((*_NUMBER, type(None)), True),
    "budget_source": ((str,), True),
    "budget_detail": ((str, type(None)), False),
    "budget_reason": ((str, type(None)), False),
    "memory_budget": ((dict, type(None)), False),
    "interrupted_by": ((str, type(None)), False),
    "fast": ((bool,), True),
    "knobs": ((dict,), False),
    "render": ((dict,), False),
    "error": ((str, type(None)), False),
    "expected_failure": ((bool,), False),
    "started_at": ((str, type(None)), False),
    "finished_at": ((str, type(None)), False),
    "pid": ((int, type(None)), False),
    "cache": ((dict, type(None)), False),
}


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
_MEMORY_BUDGET_KEYS: dict[str, tuple[type, ...]] = {
    "bytes": (int, type(None)),
    "source": (str,),
    "detail": (str, type(None)),
    "reason": (str, type(None)),
}


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
