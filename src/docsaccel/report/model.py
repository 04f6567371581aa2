"""One normalized timing per example, whatever file it was read from.

Every input ``docsaccel check``, ``compare``, ``report`` and ``history`` accept (a
docsaccel report JSON, any ``sg_execution_times.rst`` sphinx-gallery has written, its
JUnit XML) is turned into a list of :class:`Timing`, so the commands never care which
format they were given.

Example:

>>> timing = Timing(id="tutorials/plot_quick.py", name="plot_quick.py", seconds=42.0,
...                 budget_seconds=30.0, budget_source="default")
>>> timing.over_budget, timing.budget_use
(True, 1.4)
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from docsaccel.contract import OK, InputError, is_over_budget

# InputError is the contract's one class of unreadable inputs, importable from here too.
__all__ = ["IncompleteBuildError", "InputError", "LoadedInput", "Timing"]


class IncompleteBuildError(InputError):
    """A gate was given the report of a build that stopped before its end."""


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
    status: str = OK
    budget_seconds: float | None = None
    budget_source: str | None = None
    budget_detail: str | None = None
    memory_bytes: int | None = None
    fast: bool | None = None
    knobs: dict[str, Any] = field(default_factory=dict)
    render: dict[str, Any] = field(default_factory=dict)
    #: It was running when the build stopped (:func:`docsaccel.contract.is_unfinished`).
    unfinished: bool = False
    #: The hard stop ended it, and the build with it
    #: (:func:`docsaccel.contract.is_stopped_hard`).
    stopped_hard: bool = False
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
        if not self.budget_seconds:  # None; a zero budget never passes validation
            return None
        return self.seconds / self.budget_seconds


@dataclass(frozen=True)
class LoadedInput:
    """The timings read from one file, its detected format and build facts (if any)."""

    path: str
    format: str
    timings: list[Timing]
    build: dict[str, Any] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        """False for the report of a build that stopped early (``"complete": false``).

        Inputs that do not say (sphinx-gallery's files) count as complete.
        """
        return self.build.get("complete", True) is not False

    @property
    def running(self) -> list[str]:
        """The ids of the examples that were running when the build stopped."""
        return [timing.id for timing in self.timings if timing.unfinished]

    @property
    def stopped_hard(self) -> list[str]:
        """The ids of the examples the hard stop ended (it stopped the build)."""
        return [timing.id for timing in self.timings if timing.stopped_hard]

    def incomplete_text(self) -> str:
        """``""`` for a finished build, else why not, naming the examples it stopped at.

        ``"the build did not finish (tutorials/plot_a.py was running)"``,
        ``"the build did not finish (tutorials/plot_x.py was stopped hard after its
        budget)"``, or ``"the build did not finish"`` when no record says.
        """
        if self.complete:
            return ""
        why = []
        if self.stopped_hard:
            why.append(
                _state(
                    self.stopped_hard,
                    "was stopped hard after its budget",
                    "were stopped hard after their budgets",
                )
            )
        if self.running:
            why.append(_state(self.running, "was running", "were running"))
        if not why:
            return "the build did not finish"
        return f"the build did not finish ({'; '.join(why)})"

    def require_complete(self) -> None:
        """Raise :class:`IncompleteBuildError` naming the file if the build did not finish."""
        if not self.complete:
            raise IncompleteBuildError(
                f'{self.path}: {self.incomplete_text()}: the report says "complete": false, '
                "so its examples are not all measured; rebuild, or pass --allow-incomplete "
                "to judge the examples it holds"
            )


def _state(ids: list[str], one: str, many: str) -> str:
    """``"a.py was running"``, ``"a.py, b.py were running"``."""
    return f"{', '.join(ids)} {one if len(ids) == 1 else many}"
