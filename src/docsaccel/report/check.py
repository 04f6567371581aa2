"""``docsaccel check``: is any example over its budget? Exit 1 if so, 0 if not.

Budgets come from up to three places; :func:`apply_budgets` resolves them, in this
order, and nowhere else:

1. ``--budgets FILE`` (the budget file, :mod:`docsaccel.budgets`), for every example the
   file configures: a matching ``[examples]`` pattern or its ``default``;
2. ``--budget SECONDS``, a flat budget, for the examples the file (if any) leaves without
   one;
3. the budget the input itself carries (a docsaccel report JSON records the budget each
   example ran with); other inputs carry none, so their examples are unbounded.

Options given now beat what was recorded at build time, and the more specific option
(per-example file) beats the flat one.

Example::

    timings = apply_budgets(load_timings("report.json"), flat_seconds=300)
    result = check_timings(timings)
    print(format_check(result)); raise SystemExit(result.exit_code)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from docsaccel.budgets import BudgetTable, format_seconds
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
    resolved = []
    for timing in timings:
        # A report says whether it was a fast build; sphinx-gallery's files do not.
        fast = bool(timing.fast)
        budget = table.resolve(timing.name, fast=fast) if table is not None else None
        if budget is not None and budget.source != "builtin":
            timing = timing.with_budget(budget.seconds, budget.source, budget.detail)
        elif flat_seconds is not None:
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
        state = " (interrupted)" if timing.status == "interrupted" else ""
        lines.append(
            f"  {timing.id}: {format_seconds(round(timing.seconds, 3))}{state} "
            f"> budget {_budget_text(timing)} from {source}"
        )
    return "\n".join(lines)
