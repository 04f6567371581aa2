"""Per-example time and memory budgets: the TOML budget file, inline overrides, one precedence.

The design, in full: the budgets guide's *Design* section.

Example:

>>> import tempfile
>>> from pathlib import Path
>>> folder = tempfile.TemporaryDirectory()
>>> path = Path(folder.name, "budgets.toml")
>>> _ = path.write_text('''
... default = "7m"
... [examples]
... "plot_quick.py" = "30s"
... "mujoco_*.py" = "3m"
... ''')
>>> table = load_budgets(path, examples=["plot_quick.py", "mujoco_cheetah.py"])
>>> budget = table.resolve("mujoco_cheetah.py", ci=False)
>>> budget.seconds, budget.source, budget.describe()
(180.0, 'pattern', "3m from .../budgets.toml [examples] 'mujoco_*.py'")
>>> table.resolve("plot_quick.py", source_text='# docsaccel_budget = "90s"', ci=False).describe()
'1m30s from plot_quick.py (# docsaccel_budget)'
>>> folder.cleanup()
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple

from docsaccel.contract import CI_ENV, MAX_BUDGET_SECONDS, InputError, parse_switch, read_text
from docsaccel.memory_sizes import format_size, machine_bytes, parse_size
from docsaccel.patterns import MATCHED_AGAINST, closest, matches

__all__ = [
    "INLINE_COMMENT",
    "NO_MEMORY_BUDGET",
    "Budget",
    "BudgetError",
    "BudgetTable",
    "ExampleFileError",
    "MemoryBudget",
    "Rule",
    "ci_problem",
    "format_headroom",
    "format_measured",
    "format_over",
    "format_seconds",
    "is_ci",
    "load_budgets",
    "parse_bounded_duration",
    "parse_budgets",
    "parse_duration",
    "parse_memory",
    "read_inline_budget",
]

_TOP_KEYS = ("default", "fast_default", "ci_factor", "memory_default", "fast_memory_default")
_TOP_KEYS += ("examples",)
_ENTRY_KEYS = ("budget", "fast", "memory", "fast_memory", "reason")
_DURATION = re.compile(
    r"^\s*(?:(?P<h>\d+(?:\.\d+)?)\s*h)?\s*(?:(?P<m>\d+(?:\.\d+)?)\s*m)?"
    r"\s*(?:(?P<s>\d+(?:\.\d+)?)\s*s)?\s*$"
)
# One line each: a value is never read from, or a removal never reaches into, the next line.
_INLINE = re.compile(
    r"^[ \t]*#[ \t]*docsaccel_budget[ \t]*=[ \t]*(?P<value>.*?)[ \t]*$", re.MULTILINE
)
#: An inline budget comment, as a whole line with its end, for removal (the page and
#: notebook of sphinx-gallery's ``remove_config_comments``).
INLINE_COMMENT = re.compile(_INLINE.pattern[:-1] + r"(?:\n|$)", re.MULTILINE)
_WILDCARDS = set("*?[")
#: ``ci_factor`` is at most this: a factor beyond it is a typo, and would push budgets past
#: what timers can wait for.
MAX_CI_FACTOR = 100.0


class BudgetError(InputError):
    """A budget that cannot be understood; the message names the file, the key and the value."""


class ExampleFileError(BudgetError):
    """A mistake in an example's own file (it cannot be read, or its inline budget is bad),
    not in the budget file: the message starts with the example's path (and line), so no
    caller puts the budget file's setting (``docsaccel_budgets``) before it."""


@dataclass(frozen=True)
class MemoryBudget:
    """The memory budget of one example and where it came from (as :class:`Budget`).

    ``bytes`` is ``None`` for an example without one.
    """

    bytes: int | None
    source: str
    detail: str
    reason: str | None = None

    def describe(self) -> str:
        """``"2G from conf/budgets.toml memory_default"``-style text for messages."""
        amount = "unbounded" if self.bytes is None else format_size(self.bytes)
        return f"{amount} from {self.detail}"

    def to_record(self) -> dict[str, Any]:
        """The record's ``memory_budget`` (:mod:`docsaccel.schema`)."""
        return {
            "bytes": self.bytes,
            "source": self.source,
            "detail": self.detail,
            "reason": self.reason,
        }

    @classmethod
    def from_record(cls, value: Any) -> MemoryBudget | None:
        """The budget a record's ``memory_budget`` holds (None: the record has none)."""
        if not isinstance(value, dict):
            return None
        detail = value.get("detail") or value["source"]
        return cls(value.get("bytes"), value["source"], detail, value.get("reason"))


#: The memory budget of an example no rule gives one.
NO_MEMORY_BUDGET = MemoryBudget(None, "builtin", "no memory budget configured")


@dataclass(frozen=True)
class Budget:
    """The budgets of one example and where they came from.

    ``seconds`` is ``None`` for an unbounded example. ``source`` is one of ``"inline"``,
    ``"pattern"``, ``"default"``, ``"builtin"`` (no budget configured); ``detail`` says
    exactly where (file and key), for messages. ``memory``: its memory budget, resolved on
    its own with the same precedence.
    """

    seconds: float | None
    source: str
    detail: str
    reason: str | None = None
    memory: MemoryBudget = NO_MEMORY_BUDGET

    def describe(self) -> str:
        """``"3m from conf/budgets.toml [examples] 'mujoco_*.py'"``-style text for messages."""
        amount = "unbounded" if self.seconds is None else format_seconds(self.seconds)
        return f"{amount} from {self.detail}"


@dataclass(frozen=True)
class Rule:
    """One budget rule as written: its budgets, their fast-path budgets (if any), its reason.

    A rule sets a time budget, a memory budget, or both (``sets_time``, ``sets_memory``).
    """

    seconds: float | None
    fast_seconds: float | None = None
    reason: str | None = None
    memory: int | None = None
    fast_memory: int | None = None
    sets_time: bool = True
    sets_memory: bool = False

    def pick(self, fast: bool) -> tuple[float | None, str]:
        """The seconds that apply, and a suffix for the budget's detail."""
        if fast and self.fast_seconds is not None:
            return self.fast_seconds, " (fast path)"
        return self.seconds, ""

    def pick_memory(self, fast: bool) -> tuple[int | None, str]:
        """The memory budget that applies, and a suffix for the budget's detail."""
        if fast and self.fast_memory is not None:
            return self.fast_memory, " (fast path)"
        return self.memory, ""

    def fast_above_full(self, where: str, key: str = "") -> list[str]:
        """Warnings for each fast-path budget of this rule larger than its full build's
        budget, one line each: ``where`` (the file, or the example and its line) and
        ``key`` (the rule's key in the file, before ``.fast``), then the values. The same
        rule for a budget file's rules and an example's inline one."""
        prefix = f"{key}." if key else ""
        return _fast_above_full(
            where,
            [
                (f"{prefix}fast", self.fast_seconds, "budget", self.seconds, format_seconds),
                (f"{prefix}fast_memory", self.fast_memory, "memory", self.memory, format_size),
            ],
        )


def _fast_above_full(where: str, pairs: list[tuple[str, Any, str, Any, Any]]) -> list[str]:
    """One warning per ``(fast_key, fast, full_key, full, show)`` whose fast value is above
    its full one: the fast path runs less, so such a pair is most likely swapped."""
    return [
        f"{where}: {fast_key} = {show(fast)} is larger than {full_key} = {show(full)}: "
        "a fast-path budget above the full build's (the two swapped?)"
        for fast_key, fast, full_key, full, show in pairs
        if fast is not None and full is not None and fast > full
    ]


class _Entry(NamedTuple):
    """One ``[examples]`` pattern and its rule (a named tuple: cheap to define at import)."""

    pattern: str
    rule: Rule

    @property
    def specificity(self) -> tuple[int, int]:
        literal = sum(1 for char in self.pattern if char not in _WILDCARDS)
        exact = not any(char in _WILDCARDS for char in self.pattern)
        return (int(exact), literal)


#: The path of a :class:`BudgetTable` read from no file.
NO_BUDGET_FILE = "(no budget file)"


@dataclass(frozen=True)
class BudgetTable:
    """A loaded budget file; :meth:`resolve` applies the one precedence."""

    path: str = NO_BUDGET_FILE
    default: float | None = None
    ci_factor: float = 1.0
    fast_default: float | None = None
    entries: tuple[_Entry, ...] = field(default_factory=tuple)
    memory_default: int | None = None
    fast_memory_default: int | None = None
    #: The machine's memory: an inline memory budget above it is an error too.
    memory_at_most: int | None = None

    @property
    def patterns(self) -> tuple[str, ...]:
        return tuple(entry.pattern for entry in self.entries)

    def _factor(self, ci: bool | None) -> float:
        return self.ci_factor if (is_ci() if ci is None else ci) else 1.0

    def _scaled(self, seconds: float | None, ci: bool | None) -> float | None:
        return None if seconds is None else seconds * self._factor(ci)

    def matching(self, example: str, example_id: str | None = None) -> list[_Entry]:
        """The entries whose pattern matches the example (:func:`docsaccel.patterns.matches`:
        ``example``, its path inside its gallery, or ``example_id``, ``<gallery>/<path>``),
        most specific first: the id picks one of two examples of one name in two galleries."""
        found = [e for e in self.entries if matches(e.pattern, example, example_id)]
        return sorted(found, key=lambda entry: entry.specificity, reverse=True)

    def resolve(
        self,
        example: str,
        source_text: str | None = None,
        ci: bool | None = None,
        fast: bool = False,
        recorded: Budget | None = None,
        example_id: str | None = None,
        source_path: str | None = None,
        warn: Callable[[str], None] | None = None,
    ) -> Budget:
        """Budgets of ``example`` (its posix path inside its gallery folder; ``example_id``,
        its id, when the caller knows it: :func:`docsaccel.patterns.matches` says which
        patterns apply).

        ``source_text`` is the example's source, searched for an inline override, read
        from ``source_path`` (the path its errors name, :class:`ExampleFileError`;
        default: ``example``);
        ``ci`` forces the CI factor on or off (default: read the ``CI`` variable);
        ``fast``: the build runs with the fast path, so the winning rule's fast budget
        applies when it has one. ``recorded``: the budgets a build recorded for the
        example, for callers without its source (``docsaccel check`` on a report): a
        budget that came from an inline override wins, as the comment would, unchanged
        (the time budget: ``recorded`` itself; the memory budget: ``recorded.memory``).
        ``warn`` is given each warning about the inline budget (:func:`read_inline_budget`).
        """
        inline = None
        if source_text is not None:
            where = source_path or example
            inline = read_inline_budget(source_text, where, self.memory_at_most, warn)
        candidates = self.matching(example, example_id)
        if candidates:
            self._refuse_tie(example_id or example, candidates)
        memory = self._memory(example, inline, candidates, fast)
        if source_text is None and recorded is not None:
            if recorded.memory.source == "inline":
                memory = recorded.memory
            if recorded.source == "inline":
                return recorded if memory is recorded.memory else replace(recorded, memory=memory)
        source, detail, rule = self._winning(example, inline, candidates, "sets_time")
        if rule is None:
            return Budget(None, "builtin", "no budget configured", memory=memory)
        seconds, suffix = rule.pick(fast)
        return Budget(self._scaled(seconds, ci), source, detail + suffix, rule.reason, memory)

    def _memory(
        self, example: str, inline: Rule | None, candidates: list[_Entry], fast: bool
    ) -> MemoryBudget:
        source, detail, rule = self._winning(example, inline, candidates, "sets_memory")
        if rule is None:
            return NO_MEMORY_BUDGET
        size, suffix = rule.pick_memory(fast)
        return MemoryBudget(size, source, detail + suffix, rule.reason)

    def _winning(
        self, example: str, inline: Rule | None, candidates: list[_Entry], sets: str
    ) -> tuple[str, str, Rule | None]:
        """The rule that gives the budget ``sets`` names (``"sets_time"``, ``"sets_memory"``)."""
        if inline is not None and getattr(inline, sets):
            return "inline", f"{example} (# docsaccel_budget)", inline
        for entry in candidates:
            if getattr(entry.rule, sets):
                return "pattern", f"{self.path} [examples] {entry.pattern!r}", entry.rule
        if sets == "sets_time" and self.default is not None:
            return "default", f"{self.path} default", Rule(self.default, self.fast_default)
        if sets == "sets_memory" and self.memory_default is not None:
            rule = Rule(None, memory=self.memory_default, fast_memory=self.fast_memory_default)
            return "default", f"{self.path} memory_default", rule
        return "builtin", "no budget configured", None

    def _refuse_tie(self, example: str, candidates: list[_Entry]) -> None:
        """Raise when the most specific of ``candidates`` (from :meth:`matching`) is tied."""
        if len(candidates) < 2 or candidates[1].specificity != candidates[0].specificity:
            return
        tied = [c.pattern for c in candidates if c.specificity == candidates[0].specificity]
        raise BudgetError(
            f"{self.path}: [examples] patterns {', '.join(map(repr, tied))} all match "
            f"{example!r} and are equally specific; make one of them more specific"
        )

    def check_examples(self, examples: Iterable[str | tuple[str, str]]) -> list[str]:
        """Raise on ambiguous ties among ``examples`` (paths inside their gallery, or
        ``(path, id)`` pairs); return warnings for unused patterns, for fast-path
        budgets above their full ones (:meth:`fast_above_full`) and for a file that sets
        no budget (:meth:`sets_nothing`)."""
        used: set[str] = set()
        pairs = [(e, None) if isinstance(e, str) else e for e in examples]
        for name, example_id in pairs:
            candidates = self.matching(name, example_id)
            self._refuse_tie(example_id or name, candidates)
            used.update(candidate.pattern for candidate in candidates)
        return (
            [
                self._matches_nothing(entry.pattern, pairs)
                for entry in self.entries
                if entry.pattern not in used
            ]
            + self.fast_above_full()
            + self.sets_nothing()
        )

    def _matches_nothing(self, pattern: str, examples: list[tuple[str, str | None]]) -> str:
        near = closest(pattern, examples)
        hint = f"; did you mean {' or '.join(map(repr, near))}?" if near else ""
        return (
            f"{self.path}: [examples] pattern {pattern!r} matches no example{hint} "
            f"({MATCHED_AGAINST})"
        )

    def fast_above_full(self) -> list[str]:
        """Warnings for each fast-path budget larger than the full build's budget it goes
        with (``{ budget = "1m", fast = "2m" }``): the fast path runs less, so such a rule
        is most likely the two values swapped. One line each, naming file, key and values.
        """
        defaults = _fast_above_full(
            self.path,
            [
                ("fast_default", self.fast_default, "default", self.default, format_seconds),
                (
                    "fast_memory_default",
                    self.fast_memory_default,
                    "memory_default",
                    self.memory_default,
                    format_size,
                ),
            ],
        )
        return defaults + [
            line
            for entry in self.entries
            for line in entry.rule.fast_above_full(self.path, f"[examples] {entry.pattern!r}")
        ]

    def sets_nothing(self) -> list[str]:
        """A warning when this budget file sets no budget at all (an empty file, or one
        with a ``ci_factor`` only): every example then runs unbounded, as with no file,
        which the file's author cannot have meant."""
        if self.path == NO_BUDGET_FILE or self.default is not None or self.entries:
            return []
        if self.memory_default is not None:
            return []
        return [
            f"{self.path}: sets no budget (no default, memory_default or [examples] rule); "
            "every example runs unbounded"
        ]


def is_ci(env: Mapping[str, str] | None = None) -> bool:
    """Whether the ``CI`` environment variable says this is a CI run (a true switch).

    A value that is not a switch (``CI=maybe``) counts as not CI: the variable belongs to
    the CI service, and docsaccel must not refuse to build over it; the build says so in
    one warning (:func:`ci_problem`).
    """
    return ci_problem(env) is None and parse_switch(_ci_value(env), CI_ENV)


def ci_problem(env: Mapping[str, str] | None = None) -> str | None:
    """Why the ``CI`` variable is read as "not CI" although it is set, for one warning of
    the build's (the budgets are then not multiplied by ``ci_factor``); None when its
    value is a true or false spelling, or it is unset.

    >>> ci_problem({"CI": "maybe"}).split(";")[0]
    "CI='maybe' is not a switch"
    """
    try:
        parse_switch(_ci_value(env), CI_ENV)
    except ValueError as exc:
        return str(exc)
    return None


def _ci_value(env: Mapping[str, str] | None) -> str:
    return (os.environ if env is None else env).get(CI_ENV, "")


def format_seconds(seconds: float) -> str:
    """Seconds as the budget file writes them.

    >>> format_seconds(95.0), format_seconds(0.5), format_seconds(3600)
    ('1m35s', '0.5s', '1h')
    """
    if seconds < 60:
        return f"{seconds:g}s"
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{int(hours)}h" if hours else "", f"{int(minutes)}m" if minutes else ""]
    if secs:
        parts.append(f"{round(secs, 1):g}s")
    return "".join(parts)


def format_measured(seconds: float, signed: bool = False) -> str:
    """A measured time in the units of :func:`format_seconds`, rounded as a reader wants it:
    tenths under a minute, whole seconds above. The build log and every report view write
    times with it, so ``7m`` in the log is ``7m`` in the report. ``signed``: a change,
    with its sign (``"+22s"``).

    >>> format_measured(41.234), format_measured(144.6), format_measured(0.04)
    ('41.2s', '2m25s', '0s')
    >>> format_measured(-90.0), format_measured(22.0, signed=True)  # an overrun, a change
    ('-1m30s', '+22s')
    >>> format_measured(-0.03), format_measured(-0.0, signed=True)  # no negative zero
    ('0s', '+0s')
    """
    size = abs(seconds)
    text = format_seconds(round(size, 1) if size < 60 else float(round(size)))
    if seconds < 0 and text != format_seconds(0.0):
        return "-" + text
    return "+" + text if signed else text


def format_change(seconds: float) -> str:
    """A change of time, signed, as :func:`format_measured` writes it, but with the digits
    that keep a change it would round to ``+0s`` from reading as none: a regression judged
    on it is never shown beside a zero.

    >>> format_change(22.0), format_change(0.004), format_change(-0.03), format_change(0.0)
    ('+22s', '+0.004s', '-0.03s', '+0s')
    """
    text = format_measured(seconds, signed=True)
    if seconds and text == "+" + format_seconds(0.0):
        return shown_nonzero(seconds, "s")
    return text


def shown_nonzero(value: float, unit: str) -> str:
    """``value`` (not 0) signed, with the decimals that reach its first significant digit:
    how a change too small for its usual rounding is written, so it reads as a change.

    >>> shown_nonzero(0.004, "s"), shown_nonzero(-0.13, "%"), shown_nonzero(0.0496, "%")
    ('+0.004s', '-0.1%', '+0.05%')
    """
    decimals = max(0, -math.floor(math.log10(abs(value))))
    return f"{value:+.{decimals}f}{unit}"


def format_headroom(seconds: float) -> str:
    """What is left of a budget (the budget less the time), as every view writes it: a
    negative one (the time went over) keeps its minus, with the digits that keep a small
    overrun from rounding to ``0s``, which would read as a time just within its budget.

    >>> format_headroom(12.34), format_headroom(-0.03), format_headroom(-90.0)
    ('12.3s', '-0.03s', '-1m30s')
    """
    text = format_measured(seconds)
    if seconds < 0 and text == format_seconds(0.0):
        return f"-{-seconds:.1g}s"
    return text


def format_over(seconds: float, budget: float) -> str:
    """A measured time said to be over ``budget``: :func:`format_measured`, unless its
    rounding would read as within the budget (``took 0s, over its budget of 0.0001s``);
    then with as many significant digits as make the comparison read true. Every
    "over its budget" text writes its time with it.

    >>> format_over(41.234, 30.0), format_over(0.004, 0.0001), format_over(60.4, 60.0)
    ('41.2s', '0.004s', '60.4s')
    """
    text = format_measured(seconds)
    shown = round(seconds, 1) if seconds < 60 else float(round(seconds))
    if seconds <= budget or shown > budget:
        return text
    for digits in range(1, 18):
        candidate = f"{seconds:.{digits}g}"
        if float(candidate) > budget:
            return f"{candidate}s"
    return f"{seconds!r}s"


def parse_duration(value: Any, where: str) -> float | None:
    """Seconds from a number or a duration string; ``None`` for ``"none"``.

    ``where`` names the file and key for the error message.
    """
    if isinstance(value, bool):
        raise BudgetError(f"{where}: a duration must be a number or a string, got {value!r}")
    if isinstance(value, (int, float)):
        # An int too large for a float is still a duration too long (or negative) to use;
        # TOML's nan is none at all (compared, it is neither, and read as too long).
        if (isinstance(value, float) and math.isnan(value)) or abs(value) < MAX_BUDGET_SECONDS * 2:
            seconds = float(value)
        else:
            seconds = -math.inf if value < 0 else math.inf
    elif isinstance(value, str):
        text = value.strip().lower()
        if text == "none":
            return None
        try:
            seconds = float(text)
        except ValueError:
            # "-1s": a negative duration, refused as one (the sign is outside the grammar).
            match = _DURATION.match(text[1:] if text.startswith("-") else text)
            if not text or not match or not any(match.group(unit) for unit in "hms"):
                raise BudgetError(
                    f"{where}: {value!r} is not a duration; use seconds (90) or a string "
                    f"of hours, minutes and seconds (units h, m, s) such as '90s', '7m' or "
                    f"'1h30m'"
                ) from None
            hours, minutes, secs = (float(match.group(unit) or 0) for unit in "hms")
            seconds = hours * 3600 + minutes * 60 + secs
            if text.startswith("-"):
                seconds = -seconds
    else:
        raise BudgetError(f"{where}: a duration must be a number or a string, got {value!r}")
    if math.isnan(seconds):
        raise BudgetError(f"{where}: {value!r} is not a number of seconds")
    if seconds <= 0:
        raise BudgetError(f"{where}: a budget must be more than 0 seconds, got {value!r}")
    if seconds > MAX_BUDGET_SECONDS:
        raise BudgetError(
            f"{where}: {value!r} is more than {format_seconds(MAX_BUDGET_SECONDS)} (7 days); "
            'an example allowed to run longer is unbounded: { budget = "none", reason = "..." }'
        )
    return seconds


def parse_memory(value: Any, where: str, at_most: int | None = None) -> int | None:
    """Bytes of a memory budget (``"500M"``, ``"2G"``); ``None`` for ``"none"``.

    ``where`` names the file and key for the error message; ``at_most``: the machine's
    memory, which a budget may not exceed.
    """
    if isinstance(value, str) and value.strip().lower() == "none":
        return None
    size = parse_size(value, where, BudgetError)
    if at_most is not None and size > at_most:
        raise BudgetError(
            f"{where}: {value!r} is more than the memory of this machine "
            f"({format_size(at_most)}); no example can use it"
        )
    return size


def read_inline_budget(
    source_text: str,
    where: str,
    memory_at_most: int | None = None,
    warn: Callable[[str], None] | None = None,
) -> Rule | None:
    """The ``# docsaccel_budget = ...`` override in an example's source, if any.

    The value is TOML (``"30s"``, ``90``, ``{ budget = "2m", fast = "20s" }``,
    ``{ memory = "2G" }`` or ``{ budget = "none", reason = "..." }``). Returns the
    :class:`Rule`, or ``None`` when there is no override. A bad one raises
    :class:`ExampleFileError` on one line: ``where`` (the example's path), the line of the
    comment, the key and the value. ``warn`` is given each warning a budget file's rule
    would get too (:meth:`Rule.fast_above_full`).

    >>> read_inline_budget("import time\\n# docsaccel_budget = 9x\\n", "examples/plot_a.py")
    Traceback (most recent call last):
    ...
    docsaccel.budgets.ExampleFileError: examples/plot_a.py:2: docsaccel_budget: '9x' is not ...
    """
    matches = list(_INLINE.finditer(source_text))
    if not matches:
        return None
    lines = [source_text.count("\n", 0, match.start()) + 1 for match in matches]
    found = [match.group("value") for match in matches]
    if len(found) > 1:
        raise ExampleFileError(
            f"{where}:{lines[1]}: docsaccel_budget is set {len(found)} times (lines "
            f"{', '.join(map(str, lines))}): {found!r}"
        )
    # The example's path and line first, as a compiler says it: where the user edits it.
    key = f"{where}:{lines[0]}: docsaccel_budget"
    try:
        value = _load_toml(f"value = {found[0]}")["value"]
    except (ValueError, RecursionError):  # TOMLDecodeError, or an int with too many digits
        raise ExampleFileError(
            f'{key}: {found[0]!r} is not a TOML value; write e.g. # docsaccel_budget = "30s"'
        ) from None
    try:
        rule = _parse_entry_value(value, key, memory_at_most)
    except BudgetError as exc:
        raise ExampleFileError(str(exc)) from None
    for message in rule.fast_above_full(key) if warn is not None else ():
        warn(message)
    return rule


class _WrittenFloat(float):
    """A TOML float that shows itself as written: ``1e400`` is read as ``inf``, and a
    message about it must name what the user wrote."""

    written: str

    def __new__(cls, text: str) -> _WrittenFloat:
        number = super().__new__(cls, text)
        number.written = text
        return number

    def __repr__(self) -> str:
        return self.written


def _load_toml(text: str) -> dict[str, Any]:
    """TOML ``text`` parsed, its floats shown as written (:class:`_WrittenFloat`)."""
    return tomllib.loads(text, parse_float=_WrittenFloat)


def _check_keys(table: Mapping[str, Any], allowed: tuple[str, ...], where: str) -> None:
    unknown = sorted(set(table) - set(allowed))
    if unknown:
        raise BudgetError(
            f"{where}: unknown key {unknown[0]!r} (value {table[unknown[0]]!r}); "
            f"allowed: {', '.join(allowed)}"
        )


def parse_bounded_duration(value: Any, where: str, if_none: str) -> float:
    """A duration where "none" makes no sense; ``if_none`` says why, in the error."""
    seconds = parse_duration(value, where)
    if seconds is None:
        raise BudgetError(f"{where}: {if_none}")
    return seconds


def _bounded_memory(value: Any, where: str, at_most: int | None, if_none: str) -> int:
    size = parse_memory(value, where, at_most)
    if size is None:
        raise BudgetError(f"{where}: {if_none}")
    return size


_FAST_NONE = '"none" is not a fast-path budget; leave the key out to keep the budget in fast builds'


def _parse_entry_value(value: Any, where: str, memory_at_most: int | None = None) -> Rule:
    if not isinstance(value, dict):
        return _unbounded_needs_reason(Rule(parse_duration(value, where)), where)
    _check_keys(value, _ENTRY_KEYS, where)
    if "budget" not in value and "memory" not in value:
        raise BudgetError(f"{where}: the table {value!r} has neither a 'budget' nor a 'memory' key")
    for fast, of in (("fast", "budget"), ("fast_memory", "memory")):
        if fast in value and of not in value:
            raise BudgetError(
                f"{where}.{fast}: {value[fast]!r} is the fast-path {of}; give {of!r} too"
            )
    reason = value.get("reason")
    if reason is not None and (not isinstance(reason, str) or not reason.strip()):
        raise BudgetError(f"{where}.reason: must be a non-empty string, got {reason!r}")
    rule = Rule(None, reason=reason, sets_time="budget" in value, sets_memory="memory" in value)
    if rule.sets_time:
        fast = value.get("fast")
        rule = replace(
            rule,
            seconds=parse_duration(value["budget"], where),
            fast_seconds=None
            if fast is None
            else parse_bounded_duration(fast, f"{where}.fast", _FAST_NONE),
        )
    if rule.sets_memory:
        fast = value.get("fast_memory")
        rule = replace(
            rule,
            memory=parse_memory(value["memory"], f"{where}.memory", memory_at_most),
            fast_memory=None
            if fast is None
            else _bounded_memory(fast, f"{where}.fast_memory", memory_at_most, _FAST_NONE),
        )
    return _unbounded_needs_reason(rule, where)


def _unbounded_needs_reason(rule: Rule, where: str) -> Rule:
    unbounded = (rule.sets_time and rule.seconds is None) or (
        rule.sets_memory and rule.memory is None
    )
    if unbounded and not rule.reason:
        raise BudgetError(
            f'{where}: "none" (unbounded) needs a reason: '
            f'{{ budget = "none", reason = "why this example may run unbounded" }}'
        )
    return rule


def parse_budgets(
    data: Mapping[str, Any], path: str, memory_at_most: int | None = None
) -> BudgetTable:
    """Build a :class:`BudgetTable` from already-parsed TOML ``data`` read from ``path``.

    ``memory_at_most``: the machine's memory; a memory budget above it is an error.
    """
    _check_keys(data, _TOP_KEYS, path)
    default = None
    if "default" in data:
        default = parse_bounded_duration(
            data["default"],
            f"{path}: default",
            '"none" would leave every example unbounded; remove the key instead, or give '
            "unbounded examples a reason in [examples]",
        )
    fast_default = None
    if "fast_default" in data:
        if default is None:
            raise BudgetError(
                f"{path}: fast_default = {data['fast_default']!r} needs a default for full builds"
            )
        fast_default = parse_bounded_duration(
            data["fast_default"], f"{path}: fast_default", '"none" is not a budget; remove the key'
        )
    memory_default = fast_memory_default = None
    if "memory_default" in data:
        memory_default = _bounded_memory(
            data["memory_default"],
            f"{path}: memory_default",
            memory_at_most,
            '"none" would leave every example unbounded; remove the key instead',
        )
    if "fast_memory_default" in data:
        if memory_default is None:
            raise BudgetError(
                f"{path}: fast_memory_default = {data['fast_memory_default']!r} needs a "
                "memory_default for full builds"
            )
        fast_memory_default = _bounded_memory(
            data["fast_memory_default"],
            f"{path}: fast_memory_default",
            memory_at_most,
            '"none" is not a budget; remove the key',
        )
    ci_factor = data.get("ci_factor", 1.0)
    is_number = isinstance(ci_factor, (int, float)) and not isinstance(ci_factor, bool)
    if not is_number or not 0 < ci_factor <= MAX_CI_FACTOR:
        raise BudgetError(
            f"{path}: ci_factor must be a number above 0 and at most {MAX_CI_FACTOR:g}, "
            f"got {ci_factor!r}"
        )
    examples = data.get("examples", {})
    if not isinstance(examples, dict):
        raise BudgetError(f"{path}: [examples] must be a table, got {examples!r}")
    entries = []
    for pattern, value in examples.items():
        if not pattern.strip():
            raise BudgetError(f"{path}: [examples] has an empty pattern")
        where = f"{path}: [examples] {pattern!r}"
        entries.append(_Entry(pattern, _parse_entry_value(value, where, memory_at_most)))
    return BudgetTable(
        str(path),
        default,
        float(ci_factor),
        fast_default,
        tuple(entries),
        memory_default,
        fast_memory_default,
        memory_at_most,
    )


def load_budgets(
    path: str | Path,
    examples: Iterable[str | tuple[str, str]] | None = None,
    memory_at_most: int | None = None,
) -> BudgetTable:
    """Read and validate a budget file.

    With ``examples`` (posix paths inside the gallery folder, or ``(path, id)`` pairs),
    ambiguous ties among them
    raise :class:`BudgetError` now rather than when the example runs. ``memory_at_most``
    (default: this machine's memory, so the build, ``check`` and ``doctor`` read a file by
    one rule): a memory budget above it is an error.
    """
    if memory_at_most is None:
        memory_at_most = machine_bytes()
    path = Path(path)
    try:
        # A byte-order mark (editors on Windows write one) is dropped by read_text.
        text = read_text(path, "budget file")
    except InputError as exc:
        raise BudgetError(str(exc)) from None
    try:
        data = _load_toml(text)
    except ValueError as exc:  # TOMLDecodeError, or an int with too many digits
        raise BudgetError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        raise BudgetError(f"{path}: not valid TOML: nested too deeply") from None
    table = parse_budgets(data, str(path), memory_at_most)
    if examples is not None:
        table.check_examples(examples)
    return table
