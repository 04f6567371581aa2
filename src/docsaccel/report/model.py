"""One normalized timing per example, whatever file it was read from.

Every input ``docsaccel check``, ``compare``, ``report`` and ``history`` accept (a
docsaccel report JSON, any ``sg_execution_times.rst`` sphinx-gallery has written, its
JUnit XML) is turned into a list of :class:`Timing`, so the commands never care which
format they were given.

Example::

    Timing(id="tutorials/plot_quick.py", name="plot_quick.py", seconds=1.2)
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from docsaccel.contract import is_over_budget

__all__ = ["InputError", "LoadedInput", "Timing"]


class InputError(ValueError):
    """An input that cannot be read or holds no example; the message names the file."""


@dataclass(frozen=True)
class Timing:
    """What is known about one example's run.

    ``id`` is unique within an input and is what two inputs are matched on; ``name`` is
    the example's path inside its gallery folder (what budget patterns match). Fields
    the input format does not carry are ``None`` (budget, memory) or empty.
    """

    id: str
    name: str
    seconds: float
    status: str = "ok"
    budget_seconds: float | None = None
    budget_source: str | None = None
    budget_detail: str | None = None
    memory_bytes: int | None = None
    fast: bool | None = None
    knobs: dict[str, Any] = field(default_factory=dict)
    render: dict[str, Any] = field(default_factory=dict)
    #: The record's ``cache`` value: ``{"hit": True, "saved_seconds": ...}`` for an example
    #: restored from the example cache, ``{"hit": False, "reason": ...}`` for one it ran.
    cache: dict[str, Any] = field(default_factory=dict)

    def with_budget(self, seconds: float | None, source: str, detail: str) -> Timing:
        """A copy with another budget (used when command-line budgets apply)."""
        return replace(self, budget_seconds=seconds, budget_source=source, budget_detail=detail)

    @property
    def over_budget(self) -> bool:
        """Slower than a finite budget (an interrupted example always is)."""
        return is_over_budget(self.status, self.seconds, self.budget_seconds)

    @property
    def budget_use(self) -> float | None:
        """``seconds / budget`` (1.0 = exactly at budget), ``None`` when unbounded."""
        if self.budget_seconds is None:
            return None
        return self.seconds / self.budget_seconds


@dataclass(frozen=True)
class LoadedInput:
    """The timings read from one file, its detected format and build facts (if any)."""

    path: str
    format: str
    timings: list[Timing]
    build: dict[str, Any] = field(default_factory=dict)
