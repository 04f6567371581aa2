"""``docsaccel compare BASE HEAD``: what got slower, faster, added or removed.

An example has *regressed* when HEAD is slower than BASE by more than both thresholds:
the relative one (default 20 %) and the absolute one (default 5 s). Requiring both keeps
a 0.1 s example that doubles, and a 10-minute one that wobbles by 3 s, out of the list.
Examples are matched on their id, so compare two inputs of the same kind (two report
JSONs, two root ``sg_execution_times.rst``...).

Only like is compared with like: a fast-path build (smaller knobs) against a full one
would report every knob as a regression or a gain, so :func:`check_same_kind` refuses
such a pair unless told otherwise (``--allow-mixed``).

Example:

>>> from docsaccel.report.model import LoadedInput, Timing
>>> base = [Timing("plot_a.py", "plot_a.py", 20.0), Timing("plot_b.py", "plot_b.py", 3.0)]
>>> head = [Timing("plot_a.py", "plot_a.py", 42.0), Timing("plot_b.py", "plot_b.py", 3.5)]
>>> print(format_comparison(compare_timings(base, head)), end="")
Execution time: 45.5s (+22.5s vs base 23.0s); 1 regression(s) (slower by > 20% and > 5s)
<BLANKLINE>
  plot_a.py: 20.0s -> 42.0s (+22.0s, +110%)  REGRESSED
  plot_b.py: 3.0s -> 3.5s (+0.5s, +17%)
>>> full_build = LoadedInput("main.json", "docsaccel-report", base, build={"fast": False})
>>> fast_build = LoadedInput("pr.json", "docsaccel-report", head, build={"fast": True})
>>> check_same_kind(full_build, fast_build)
Traceback (most recent call last):
...
docsaccel.report.compare.MixedBuildsError: main.json is a full build and pr.json a fast build ...
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from docsaccel.report.markdown import escape_md
from docsaccel.report.model import LoadedInput, Timing

__all__ = [
    "DEFAULT_ABSOLUTE_SECONDS",
    "DEFAULT_RELATIVE",
    "Comparison",
    "Delta",
    "MixedBuildsError",
    "check_same_kind",
    "compare_timings",
    "format_comparison",
]

DEFAULT_RELATIVE = 0.20
DEFAULT_ABSOLUTE_SECONDS = 5.0


@dataclass(frozen=True)
class Delta:
    """One example present in both inputs."""

    id: str
    base_seconds: float
    head_seconds: float
    regressed: bool

    @property
    def seconds(self) -> float:
        return self.head_seconds - self.base_seconds

    @property
    def relative(self) -> float | None:
        """Change as a fraction of BASE (``0.5`` = 50 % slower); ``None`` if BASE is 0."""
        return self.seconds / self.base_seconds if self.base_seconds > 0 else None


@dataclass(frozen=True)
class Comparison:
    """Per-example deltas (largest slow-down first), new and removed examples, totals."""

    deltas: list[Delta]
    added: list[Timing]
    removed: list[Timing]
    base_total: float
    head_total: float
    relative_threshold: float
    absolute_threshold: float

    @property
    def regressions(self) -> list[Delta]:
        return [delta for delta in self.deltas if delta.regressed]

    @property
    def total_delta(self) -> float:
        return self.head_total - self.base_total


class MixedBuildsError(ValueError):
    """BASE and HEAD are builds of different kinds (fast path on in one, off in the other)."""


def _kind(fast: object) -> str:
    return "fast" if fast else "full"


def check_same_kind(base: LoadedInput, head: LoadedInput) -> None:
    """Raise :class:`MixedBuildsError` when one input is a fast build and the other a full one.

    Inputs that do not say (sphinx-gallery's files) are taken as they are.
    """
    fast_base, fast_head = base.build.get("fast"), head.build.get("fast")
    if isinstance(fast_base, bool) and isinstance(fast_head, bool) and fast_base != fast_head:
        raise MixedBuildsError(
            f"{base.path} is a {_kind(fast_base)} build and {head.path} a {_kind(fast_head)} "
            "build (fast path on in one only): their times are not comparable. Compare builds "
            "of one kind, or pass --allow-mixed to compare them anyway"
        )


def _check_threshold(name: str, value: float) -> None:
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a number of 0 or more, got {value!r}")


def compare_timings(
    base: Sequence[Timing],
    head: Sequence[Timing],
    relative: float = DEFAULT_RELATIVE,
    absolute_seconds: float = DEFAULT_ABSOLUTE_SECONDS,
) -> Comparison:
    """Compare HEAD against BASE with the regression thresholds described above."""
    _check_threshold("the relative threshold", relative)
    _check_threshold("the absolute threshold", absolute_seconds)
    base_by_id = {timing.id: timing for timing in base}
    head_by_id = {timing.id: timing for timing in head}
    deltas = []
    for example_id in sorted(base_by_id.keys() & head_by_id.keys()):
        before, after = base_by_id[example_id].seconds, head_by_id[example_id].seconds
        slower = after - before
        regressed = slower > absolute_seconds and slower > relative * before
        deltas.append(Delta(example_id, before, after, regressed))
    deltas.sort(key=lambda delta: (-delta.seconds, delta.id))
    return Comparison(
        deltas=deltas,
        added=[head_by_id[i] for i in sorted(head_by_id.keys() - base_by_id.keys())],
        removed=[base_by_id[i] for i in sorted(base_by_id.keys() - head_by_id.keys())],
        base_total=sum(t.seconds for t in base),
        head_total=sum(t.seconds for t in head),
        relative_threshold=relative,
        absolute_threshold=absolute_seconds,
    )


def _signed(seconds: float) -> str:
    return f"{seconds:+.1f}s"


def _percent(delta: Delta) -> str:
    return "n/a" if delta.relative is None else f"{delta.relative * 100:+.0f}%"


def format_comparison(comparison: Comparison, markdown: bool = False) -> str:
    """Text (or Markdown for a PR comment) listing regressions, changes and totals."""
    quote = escape_md if markdown else str
    c = comparison
    head = "### " if markdown else ""
    lines = [
        f"{head}Execution time: {c.head_total:.1f}s ({_signed(c.total_delta)} vs base "
        f"{c.base_total:.1f}s); {len(c.regressions)} regression(s) "
        f"(slower by > {c.relative_threshold * 100:g}% and > {c.absolute_threshold:g}s)",
        "",
    ]
    changed = [d for d in c.deltas if d.seconds != 0]
    if markdown and changed:
        lines += ["| example | base | head | change | |", "| --- | ---: | ---: | ---: | --- |"]
        for d in changed:
            flag = "**regressed**" if d.regressed else ""
            lines.append(
                f"| {quote(d.id)} | {d.base_seconds:.1f}s | {d.head_seconds:.1f}s | "
                f"{_signed(d.seconds)} ({_percent(d)}) | {flag} |"
            )
    else:
        for d in changed:
            flag = "  REGRESSED" if d.regressed else ""
            lines.append(
                f"  {d.id}: {d.base_seconds:.1f}s -> {d.head_seconds:.1f}s "
                f"({_signed(d.seconds)}, {_percent(d)}){flag}"
            )
    bullet = "- " if markdown else "  "
    for title, items in (("New examples", c.added), ("Removed examples", c.removed)):
        if items:
            lines += ["", f"{title}:"]
            lines += [f"{bullet}{quote(t.id)}: {t.seconds:.1f}s" for t in items]
    return "\n".join(lines).rstrip() + "\n"
