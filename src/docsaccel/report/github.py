"""Findings as GitHub Actions workflow commands, so a pull request shows them on its files.

The design, in full: the reports guide's *Design* section.

Example:

>>> from docsaccel.report.model import Timing
>>> timings = [Timing("tutorials/plot_a.py", "plot_a.py", 42.0, budget_seconds=30.0,
...                   budget_source="default", budget_detail="conf/budgets.toml default")]
>>> print(check_annotations(timings, {"tutorials/plot_a.py": "docs"}), end="")
::error file=docs/tutorials/plot_a.py,title=Over budget::tutorials/plot_a.py took 42s, ...
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping, Sequence
from pathlib import Path

from docsaccel.budgets import format_change, format_measured, format_over, format_seconds
from docsaccel.contract import (
    DID_NOT_FINISH,
    HARD_STOP,
    INTERRUPTED,
    NEAR_BUDGET,
    NONDETERMINISTIC,
    STALE,
    InputError,
    unfinished_why,
)
from docsaccel.memory_sizes import format_size
from docsaccel.report.check import audit_text, memory_over_text, one_line
from docsaccel.report.compare import Comparison, percent_text
from docsaccel.report.model import LoadedInput, Timing
from docsaccel.settings import not_a_folder

__all__ = [
    "annotation",
    "check_annotations",
    "comparison_annotations",
    "escape_data",
    "escape_property",
    "given_source_dir",
    "source_prefix",
]


def escape_data(text: str) -> str:
    """A workflow command's message: ``%``, CR and LF escaped."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value: as :func:`escape_data`, plus ``:`` and ``,``."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(level: str, message: str, file: str | None = None, title: str = "") -> str:
    """One workflow command line: ``::level file=...,title=...::message``."""
    properties = []
    if file:
        properties.append(f"file={escape_property(file)}")
    if title:
        properties.append(f"title={escape_property(title)}")
    joined = " " + ",".join(properties) if properties else ""
    return f"::{level}{joined}::{escape_data(message)}"


def source_prefix(loaded: LoadedInput, source_dir: str | None = None) -> str:
    """The Sphinx source folder of ``loaded``'s examples, from the repository root (posix).

    ``source_dir`` when given (:func:`given_source_dir`: checked to hold the examples);
    else the folder the report recorded, relative to the working directory when inside
    it; else ``""`` (paths as the input names them).
    """
    if source_dir is not None:
        return given_source_dir(source_dir, loaded)
    recorded = loaded.build.get("source_dir")
    if not isinstance(recorded, str) or not recorded:
        return ""
    relative = os.path.relpath(recorded, os.getcwd())
    if relative == "." or relative.startswith(".."):
        return ""
    prefix = Path(relative).as_posix()
    _refuse_climbing(prefix, loaded, f"the source folder {recorded} the report recorded")
    return prefix


def given_source_dir(source_dir: str, loaded: LoadedInput) -> str:
    """``--source-dir`` from the repository root (the working directory), posix; ``""``
    for the working directory itself.

    Raises :class:`~docsaccel.contract.InputError` on one line when the folder is not
    there, lies outside the working directory (GitHub matches no such path), or does not
    hold an example of ``loaded`` (its first one missing named): every annotation would
    point at a file the pull request does not have.
    """
    option = f"--source-dir {source_dir}"
    folder = Path(source_dir or ".")
    problem = not_a_folder(folder)
    if problem is not None:
        raise InputError(f"{option}: {problem} (from {os.getcwd()})")
    relative = os.path.relpath(folder.resolve(), Path.cwd().resolve())
    if relative == ".." or relative.startswith("../"):
        raise InputError(
            f"{option}: the folder is outside the working directory {os.getcwd()}; "
            "annotations name files from the repository root: run from it"
        )
    missing = [t.id for t in loaded.timings if not (folder / t.id).is_file()]
    if missing:
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        raise InputError(
            f"{option}: {one_line(missing[0])} from {loaded.path} is not in that folder"
            f"{more}; give the Sphinx source folder of its examples, from the repository root"
        )
    prefix = "" if relative == "." else Path(relative).as_posix()
    _refuse_climbing(prefix, loaded, option)
    return prefix


def _refuse_climbing(prefix: str, loaded: LoadedInput, option: str) -> None:
    """Raise when an example's file, from ``prefix``, lies above the working directory (a
    gallery beside the docs, the command run from the docs folder): GitHub matches no such
    path, so every annotation on it would be lost."""
    for timing in loaded.timings:
        if _file(prefix, timing.id).startswith("../"):
            raise InputError(
                f"{option}: {one_line(timing.id)} from {loaded.path} lies outside the working "
                f"directory {os.getcwd()}; annotations name files from the repository root: "
                "run from it"
            )


def _file(prefix: str, example_id: str) -> str:
    # An example beside the docs (``examples_dirs = "../examples"``) has an id that climbs
    # out of the source folder: GitHub matches only a path without ``..`` in it.
    return posixpath.normpath(posixpath.join(prefix, example_id)) if prefix else example_id


def _budget_of(timing: Timing) -> str:
    if timing.budget_seconds is None:
        return "unbounded"
    source = timing.budget_detail or timing.budget_source or "the input"
    return f"{format_seconds(timing.budget_seconds)} (from {source})"


def _failed_annotation(timing: Timing, file: str) -> str:
    """The error command of an example no gate passes, in the words of ``check``'s FAIL
    line (:func:`~docsaccel.report.check.failed_text`): one the build stopped while it ran
    did not fail by its own doing, so it is said by its status, never "failed"."""
    error = timing.error
    if not timing.unfinished:
        why = f": {error}" if error else ""
        return annotation("error", f"{timing.id} failed{why}", file, "Example failed")
    # Its error was written as it started when it is started_only: it says nothing more.
    why = f": {unfinished_why(error)}" if error and not timing.started_only else ""
    said = timing.status_label
    title = "Example did not finish" if said == DID_NOT_FINISH else "Example unfinished"
    return annotation("error", f"{timing.id} {said}{why}", file, title)


def check_annotations(timings: Sequence[Timing], prefixes: Mapping[str, str]) -> str:
    """Commands for the examples over and near their budget, then for the cache entries an
    audit found stale or not reproducible; ``prefixes``: by example id."""
    lines = []
    ranked = sorted(timings, key=lambda t: (-t.seconds, t.id))
    for timing in ranked:
        file = _file(prefixes.get(timing.id, ""), timing.id)
        took = timing.labelled_seconds()
        if timing.judged_failed:
            lines.append(_failed_annotation(timing, file))
        lines += _memory_annotations(timing, file)
        if timing.over_time_budget:
            over = took
            if timing.budget_seconds is not None:
                over = format_over(timing.seconds, timing.budget_seconds)
            if timing.stopped_hard:
                state = HARD_STOP
            elif timing.status == INTERRUPTED:
                state = "was interrupted after"
            elif timing.time_origin():  # restored: judged by the run that stored it
                state = f"took, in its {timing.time_origin()},"
            else:
                state = "took"
            lines.append(
                annotation(
                    "error",
                    f"{timing.id} {state} {over}, over its budget of {_budget_of(timing)}",
                    file,
                    "Over budget",
                )
            )
        elif timing.near_time_budget:
            use = timing.seconds / timing.budget_seconds  # type: ignore[operator]
            lines.append(
                annotation(
                    "warning",
                    f"{timing.id} took {took}, {use:.0%} of its budget of {_budget_of(timing)} "
                    f"(near: above {NEAR_BUDGET:.0%})",
                    file,
                    "Near budget",
                )
            )
    for timing in sorted(timings, key=lambda t: t.id):
        status = timing.audit.get("status")
        file = _file(prefixes.get(timing.id, ""), timing.id)
        if status == STALE:
            lines.append(annotation("error", audit_text(timing), file, "Stale cache entry"))
        elif status == NONDETERMINISTIC:
            lines.append(annotation("warning", audit_text(timing), file, "Not reproducible"))
    return "".join(line + "\n" for line in lines)


def _memory_annotations(timing: Timing, file: str) -> list[str]:
    if timing.over_memory_budget:
        return [
            annotation(
                "error", f"{timing.id}: {memory_over_text(timing)}", file, "Over memory budget"
            )
        ]
    if timing.near_memory_budget:
        peak, budget = timing.memory_bytes or 0, timing.memory_budget_bytes or 1
        source = timing.memory_budget_detail or timing.memory_budget_source or "the input"
        message = (
            f"{timing.id} peaked at {format_size(peak)}, {peak / budget:.0%} of its memory "
            f"budget of {format_size(budget)} (from {source}) (near: above {NEAR_BUDGET:.0%})"
        )
        return [annotation("warning", message, file, "Near memory budget")]
    return []


def comparison_annotations(comparison: Comparison, prefix: str, fail_on_regression: bool) -> str:
    """A command per regressed example: an error when regressions fail the gate."""
    level = "error" if fail_on_regression else "warning"
    # What the text says first: a comparison never reads as the verdict of a failed or
    # unfinished build.
    lines = [
        annotation("error", f"the head build failed: {why}", title="Build failed")
        for why in comparison.head_failed
    ]
    lines += [
        annotation("warning", f"the base build failed: {why}", title="Base build failed")
        for why in comparison.base_failed
    ]
    if comparison.mixed is not None:
        why = f"{comparison.mixed}; times compared anyway"
        lines.append(annotation("warning", why, title="Builds of different kinds"))
    lines += [
        annotation("notice", text, title="Failures not known") for text in comparison.statusless
    ]
    for delta in comparison.time_regressions:
        percent = "" if delta.relative is None else f", {percent_text(delta.relative)}"
        lines.append(
            annotation(
                level,
                f"{delta.id} got slower: {format_measured(delta.base_seconds)} -> "
                f"{format_measured(delta.head_seconds)} "
                f"({format_change(delta.seconds)}{percent}; "
                "regression: slower by more than "
                f"{comparison.relative_threshold * 100:g}% and "
                f"{comparison.absolute_threshold:g}s)",
                _file(prefix, delta.id),
                "Docs build regression",
            )
        )
    for delta in comparison.memory_regressions:
        lines.append(
            annotation(
                level,
                f"{delta.id} needs more memory: peak {delta.memory_text()}; regression: "
                f"larger by more than {comparison.relative_threshold * 100:g}% and "
                f"{format_size(comparison.absolute_bytes_threshold)}",
                _file(prefix, delta.id),
                "Docs build memory regression",
            )
        )
    return "".join(line + "\n" for line in lines)
