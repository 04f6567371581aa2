"""The work behind ``docsaccel report``, ``check``, ``compare`` and ``history append``.

Each function takes already-parsed arguments, returns ``(text, exit_code)`` and turns
an unreadable input into exit code 2 with the message naming the file, so the command
line stays argument parsing only and the behaviour is testable without a subprocess.

Exit codes: 0 fine; 1 an example over budget (``check``) or a regression with
``--fail-on-regression`` (``compare``); 2 an input that cannot be read or understood, a
missing extra, or (``check``, ``compare``) the report of a build that did not finish,
unless ``allow_incomplete``: a gate never passes, nor fails as "over budget", on a
partial build.

Example::

    text, code = run_check(["docs/sg_execution_times.rst"], flat_budget="5m")
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

from docsaccel.budgets import load_budgets, parse_bounded_duration
from docsaccel.contract import InputError
from docsaccel.report.check import apply_budgets, check_timings, format_check
from docsaccel.report.compare import (
    DEFAULT_ABSOLUTE_SECONDS,
    DEFAULT_RELATIVE,
    compare_timings,
    format_comparison,
)
from docsaccel.report.history import append_history, read_history
from docsaccel.report.html import render_html
from docsaccel.report.inputs import load_input, load_timings
from docsaccel.report.markdown import render_markdown
from docsaccel.report.model import LoadedInput, Timing
from docsaccel.report.summary import summarize

__all__ = ["REPORT_FORMATS", "run_check", "run_compare", "run_history_append", "run_report"]

EXIT_UNREADABLE = 2
# InputError covers every reader (reports, budget files, histories) and a missing extra;
# ValueError the argument checks of the views (--top 0, a negative threshold).
_INPUT_ERRORS = (InputError, ValueError)


def _guarded(work: Callable[[], tuple[str, int]]) -> tuple[str, int]:
    try:
        return work()
    except _INPUT_ERRORS as exc:
        return f"error: {exc}\n", EXIT_UNREADABLE


def _report(
    report: str, baseline: str | None, history: str | None, last: int, fmt: str, top: int
) -> tuple[str, int]:
    summary = summarize(
        load_input(report),
        baseline=load_timings(baseline) if baseline else None,
        history=read_history(history, last=last) if history else None,
    )
    return REPORT_FORMATS[fmt](summary, top), 0


REPORT_FORMATS = {
    "md": lambda summary, top: render_markdown(summary, top=top),
    "html": lambda summary, top: render_html(summary),
    "json": lambda summary, top: json.dumps(summary.to_json(), indent=2, allow_nan=False) + "\n",
}


def run_report(
    report: str,
    baseline: str | None = None,
    history: str | None = None,
    last: int = 10,
    fmt: str = "md",
    top: int = 10,
) -> tuple[str, int]:
    """The report view of ``report`` in ``fmt`` (``md``, ``html`` or ``json``)."""
    return _guarded(lambda: _report(report, baseline, history, last, fmt, top))


def _gate_timings(path: str, allow_incomplete: bool) -> list[Timing]:
    """The timings of ``path`` for a gate: refused when the build did not finish."""
    loaded: LoadedInput = load_input(path)
    if not allow_incomplete:
        loaded.require_complete()
    return loaded.timings


def _check(
    inputs: Sequence[str], flat_budget: str | None, budgets: str | None, allow_incomplete: bool
) -> tuple[str, int]:
    flat = None
    if flat_budget is not None:
        flat = parse_bounded_duration(
            flat_budget, "--budget", '"none" is not a budget; leave the option out instead'
        )
    table = load_budgets(budgets) if budgets else None
    timings = [timing for path in inputs for timing in _gate_timings(path, allow_incomplete)]
    result = check_timings(apply_budgets(timings, flat_seconds=flat, table=table))
    return format_check(result) + "\n", result.exit_code


def run_check(
    inputs: Sequence[str],
    flat_budget: str | None = None,
    budgets: str | None = None,
    allow_incomplete: bool = False,
) -> tuple[str, int]:
    """Check every example of every input against its budget (see :mod:`.check`).

    The report of a build that did not finish is exit 2 unless ``allow_incomplete``.
    """
    if not inputs:
        return "error: no input given\n", EXIT_UNREADABLE
    return _guarded(lambda: _check(inputs, flat_budget, budgets, allow_incomplete))


def _compare(
    base: str,
    head: str,
    relative: float,
    absolute: float,
    fail: bool,
    markdown: bool,
    allow_incomplete: bool,
) -> tuple[str, int]:
    comparison = compare_timings(
        _gate_timings(base, allow_incomplete),
        _gate_timings(head, allow_incomplete),
        relative,
        absolute,
    )
    code = 1 if fail and comparison.regressions else 0
    return format_comparison(comparison, markdown=markdown), code


def run_compare(
    base: str,
    head: str,
    relative: float = DEFAULT_RELATIVE,
    absolute: float = DEFAULT_ABSOLUTE_SECONDS,
    fail_on_regression: bool = False,
    markdown: bool = False,
    allow_incomplete: bool = False,
) -> tuple[str, int]:
    """Compare two inputs; exit 1 on a regression only with ``fail_on_regression``.

    The report of a build that did not finish is exit 2 unless ``allow_incomplete``.
    """
    return _guarded(
        lambda: _compare(
            base, head, relative, absolute, fail_on_regression, markdown, allow_incomplete
        )
    )


def run_history_append(report: str, history: str | Path) -> tuple[str, int]:
    """Append ``report`` (any input ``check`` reads) as one line of ``history``."""

    def work() -> tuple[str, int]:
        count = append_history(report, history)
        return f"appended {count} examples from {report} to {history}\n", 0

    return _guarded(work)
