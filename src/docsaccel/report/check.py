"""``docsaccel check``: is any example over its budget? Exit 1 if so, 0 if not.

Each example's budget comes from :func:`apply_budgets`, which resolves it with the build's
own precedence (:meth:`docsaccel.budgets.BudgetTable.resolve`) and only then falls back:

1. an inline ``# docsaccel_budget`` the input recorded (a report record whose
   ``budget_source`` is ``"inline"``): the example's own source says so, and a budget
   file never overrides it, in the build or here;
2. ``--budgets FILE``: its most specific matching pattern, then its ``default`` (fast
   budgets for reports of fast builds, the ``ci_factor`` under ``CI=true``);
3. ``--budget SECONDS``, a flat budget, for the examples still without one;
4. the budget the input recorded (a report's ``pattern`` or ``default`` budget of the
   build); sphinx-gallery's files carry none, so their examples are otherwise unbounded.

Example: two timings of a sphinx-gallery file (no budgets), checked with ``--budget 30``.

>>> from docsaccel.report.model import Timing
>>> timings = [Timing("plot_a.py", "plot_a.py", 42.0), Timing("plot_b.py", "plot_b.py", 3.0)]
>>> result = check_timings(apply_budgets(timings, flat_seconds=30))
>>> print(format_check(result))
FAIL: 1 of 2 examples over budget:
  plot_a.py: 42s > budget 30s from --budget 30s
>>> result.exit_code
1
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from docsaccel.budgets import Budget, BudgetTable, format_seconds
from docsaccel.contract import INTERRUPTED
from docsaccel.report.model import Timing

__all__ = ["CheckResult", "apply_budgets", "check_timings", "format_check"]


def apply_budgets(
    timings: Sequence[Timing],
    flat_seconds: float | None = None,
    table: BudgetTable | None = None,
) -> list[Timing]:
    """The timings with the budget the precedence above gives each of them."""
    if flat_seconds is not None and (not math.isfinite(flat_seconds) or flat_seconds <= 0):
        raise ValueError(f"--budget must be a number of seconds above 0, got {flat_seconds!r}")
    table = table if table is not None else BudgetTable()
    resolved = []
    for timing in timings:
        recorded = None
        if timing.budget_source is not None:
            detail = timing.budget_detail or timing.budget_source
            recorded = Budget(timing.budget_seconds, timing.budget_source, detail)
        # A report says whether it was a fast build; sphinx-gallery's files do not.
        budget = table.resolve(timing.name, fast=bool(timing.fast), recorded=recorded)
        # ``budget is recorded``: an inline budget, the example's own word; kept as it is.
        if budget is not recorded and budget.source != "builtin":
            timing = timing.with_budget(budget.seconds, budget.source, budget.detail)
        elif budget.source == "builtin" and flat_seconds is not None:
            detail = f"--budget {format_seconds(flat_seconds)}"
            timing = timing.with_budget(flat_seconds, "flat", detail)
        resolved.append(timing)
    return resolved


@dataclass(frozen=True)
class CheckResult:
    """The examples over budget (slowest first) among ``checked`` examples."""

    over: list[Timing]
    checked: int
    bounded: int

    @property
    def exit_code(self) -> int:
        return 1 if self.over else 0


def check_timings(timings: Sequence[Timing]) -> CheckResult:
    """Which of ``timings`` are over budget."""
    over = sorted((t for t in timings if t.over_budget), key=lambda t: (-t.seconds, t.id))
    bounded = sum(1 for t in timings if t.budget_seconds is not None)
    return CheckResult(over, len(timings), bounded)


def _budget_text(timing: Timing) -> str:
    if timing.budget_seconds is None:
        return "unbounded"
    return format_seconds(timing.budget_seconds)


def format_check(result: CheckResult) -> str:
    """Text for the terminal: the verdict, then one line per example over budget."""
    if not result.over:
        return (
            f"OK: {result.checked} examples checked, {result.bounded} with a budget, "
            "none over budget."
        )
    lines = [f"FAIL: {len(result.over)} of {result.checked} examples over budget:"]
    for timing in result.over:
        source = timing.budget_detail or timing.budget_source or "the input"
        state = " (interrupted)" if timing.status == INTERRUPTED else ""
        lines.append(
            f"  {one_line(timing.id)}: {format_seconds(round(timing.seconds, 3))}{state} "
            f"> budget {_budget_text(timing)} from {one_line(source)}"
        )
    return "\n".join(lines)


def one_line(text: str) -> str:
    """``text`` on one line: a name with a line break must not start a line of its own,
    which a CI runner would read as a command (``::error ...`` in GitHub Actions)."""
    if text.isprintable():
        return text
    return repr(text)[1:-1]
