"""Per-example time budgets: the TOML budget file, inline overrides, one precedence.

A budget file sets a default and overrides by glob pattern on the example's path inside
its gallery folder::

    default = "7m"        # budget of every example without an override
    ci_factor = 1.5       # optional: budgets are multiplied by this when CI=true

    [examples]
    "plot_quick.py" = "30s"
    "mujoco_*.py" = { budget = "3m", fast = "20s", reason = "renders a 480x360 video" }
    "train_*.py"  = { budget = "none", reason = "unbounded on purpose: trains a model" }

A rule may also give a ``fast`` budget (and the file a ``fast_default``): the budget of
that rule in builds with the CI fast path on (:mod:`docsaccel.fast`), where a tutorial
runs on smaller knobs and a regression would hide under its full-build budget. A rule
without one keeps its budget in fast builds too.

An example can override it in its own source, in sphinx-gallery's config-comment style::

    # docsaccel_budget = "30s"

Precedence, resolved in :meth:`BudgetTable.resolve` and nowhere else (the build, ``docsaccel
check --budgets``, ``docsaccel shard --budgets`` and the shard builds all call it):

1. the inline ``# docsaccel_budget`` comment of the example (where only a report is at
   hand, the budget it recorded from that comment: ``budget_source`` ``"inline"``);
2. the most specific ``[examples]`` pattern that matches: an exact path beats any glob,
   then the pattern with more literal (non-wildcard) characters wins; two matching
   patterns of equal specificity are ambiguous, an error when the file is loaded;
3. ``default``; without a file (or without ``default``), examples are unbounded.

The fast budget comes from the rule that wins, never from a weaker one.

Durations are a number of seconds (``90``, ``2.5``) or a string of hours, minutes and
seconds (``"90s"``, ``"7m"``, ``"1h30m"``, ``"1m30.5s"``), above 0 and at most 7 days
(:data:`~docsaccel.contract.MAX_BUDGET_SECONDS`). ``"none"`` means unbounded and
needs a ``reason``. ``ci_factor`` multiplies every budget, inline ones included, when the
environment variable ``CI`` is ``true`` (as GitHub Actions, GitLab CI and most runners set).

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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from docsaccel.contract import CI_ENV, MAX_BUDGET_SECONDS, InputError, parse_switch, read_text

__all__ = [
    "INLINE_COMMENT",
    "Budget",
    "BudgetError",
    "BudgetTable",
    "Rule",
    "format_seconds",
    "is_ci",
    "load_budgets",
    "parse_bounded_duration",
    "parse_budgets",
    "parse_duration",
    "read_inline_budget",
]

_TOP_KEYS = ("default", "fast_default", "ci_factor", "examples")
_ENTRY_KEYS = ("budget", "fast", "reason")
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


@dataclass(frozen=True)
class Budget:
    """The budget of one example and where it came from.

    ``seconds`` is ``None`` for an unbounded example. ``source`` is one of ``"inline"``,
    ``"pattern"``, ``"default"``, ``"builtin"`` (no budget configured); ``detail`` says
    exactly where (file and key), for messages.
    """

    seconds: float | None
    source: str
    detail: str
    reason: str | None = None

    def describe(self) -> str:
        """``"3m from conf/budgets.toml [examples] 'mujoco_*.py'"``-style text for messages."""
        amount = "unbounded" if self.seconds is None else format_seconds(self.seconds)
        return f"{amount} from {self.detail}"


@dataclass(frozen=True)
class Rule:
    """One budget rule as written: its budget, its fast-path budget (if any), its reason."""

    seconds: float | None
    fast_seconds: float | None = None
    reason: str | None = None

    def pick(self, fast: bool) -> tuple[float | None, str]:
        """The seconds that apply, and a suffix for the budget's detail."""
        if fast and self.fast_seconds is not None:
            return self.fast_seconds, " (fast path)"
        return self.seconds, ""


@dataclass(frozen=True)
class _Entry:
    pattern: str
    rule: Rule

    @property
    def specificity(self) -> tuple[int, int]:
        literal = sum(1 for char in self.pattern if char not in _WILDCARDS)
        exact = not any(char in _WILDCARDS for char in self.pattern)
        return (int(exact), literal)


@dataclass(frozen=True)
class BudgetTable:
    """A loaded budget file; :meth:`resolve` applies the one precedence."""

    path: str = "(no budget file)"
    default: float | None = None
    ci_factor: float = 1.0
    fast_default: float | None = None
    entries: tuple[_Entry, ...] = field(default_factory=tuple)

    @property
    def patterns(self) -> tuple[str, ...]:
        return tuple(entry.pattern for entry in self.entries)

    def _factor(self, ci: bool | None) -> float:
        return self.ci_factor if (is_ci() if ci is None else ci) else 1.0

    def _scaled(self, seconds: float | None, ci: bool | None) -> float | None:
        return None if seconds is None else seconds * self._factor(ci)

    def matching(self, example: str) -> list[_Entry]:
        """The entries whose pattern matches ``example``, most specific first."""
        found = [entry for entry in self.entries if fnmatchcase(example, entry.pattern)]
        return sorted(found, key=lambda entry: entry.specificity, reverse=True)

    def resolve(
        self,
        example: str,
        source_text: str | None = None,
        ci: bool | None = None,
        fast: bool = False,
        recorded: Budget | None = None,
    ) -> Budget:
        """Budget of ``example`` (its posix path inside its gallery folder).

        ``source_text`` is the example's source, searched for an inline override;
        ``ci`` forces the CI factor on or off (default: read the ``CI`` variable);
        ``fast``: the build runs with the fast path, so the winning rule's fast budget
        applies when it has one. ``recorded``: the budget a build recorded for the example,
        for callers without its source (``docsaccel check`` on a report): when it came from
        an inline override it wins, as the comment would, and is returned unchanged.
        """
        if source_text is None and recorded is not None and recorded.source == "inline":
            return recorded
        source, detail, rule = self._winning_rule(example, source_text)
        if rule is None:
            return Budget(None, "builtin", "no budget configured")
        seconds, suffix = rule.pick(fast)
        return Budget(self._scaled(seconds, ci), source, detail + suffix, rule.reason)

    def _winning_rule(self, example: str, source_text: str | None) -> tuple[str, str, Rule | None]:
        if source_text is not None:
            inline = read_inline_budget(source_text, where=example)
            if inline is not None:
                return "inline", f"{example} (# docsaccel_budget)", inline
        candidates = self.matching(example)
        if candidates:
            self._refuse_tie(example, candidates)
            best = candidates[0]
            return "pattern", f"{self.path} [examples] {best.pattern!r}", best.rule
        if self.default is not None:
            return "default", f"{self.path} default", Rule(self.default, self.fast_default)
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

    def check_examples(self, examples: Iterable[str]) -> list[str]:
        """Raise on ambiguous ties among ``examples``; return warnings for unused patterns."""
        used: set[str] = set()
        for example in examples:
            candidates = self.matching(example)
            self._refuse_tie(example, candidates)
            used.update(candidate.pattern for candidate in candidates)
        return [
            f"{self.path}: [examples] pattern {entry.pattern!r} matches no example"
            for entry in self.entries
            if entry.pattern not in used
        ]


def is_ci(env: Mapping[str, str] | None = None) -> bool:
    """Whether the ``CI`` environment variable says this is a CI run (a true switch).

    A value that is not a switch (``CI=maybe``) counts as not CI: the variable belongs to
    the CI service, and docsaccel must not refuse to build over it.
    """
    value = (os.environ if env is None else env).get(CI_ENV, "")
    try:
        return parse_switch(value, CI_ENV)
    except ValueError:
        return False


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


def parse_duration(value: Any, where: str) -> float | None:
    """Seconds from a number or a duration string; ``None`` for ``"none"``.

    ``where`` names the file and key for the error message.
    """
    if isinstance(value, bool):
        raise BudgetError(f"{where}: a duration must be a number or a string, got {value!r}")
    if isinstance(value, (int, float)):
        seconds = float(value) if abs(value) < MAX_BUDGET_SECONDS * 2 else math.inf
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
                    f"such as '90s', '7m' or '1h30m'"
                ) from None
            hours, minutes, secs = (float(match.group(unit) or 0) for unit in "hms")
            seconds = hours * 3600 + minutes * 60 + secs
            if text.startswith("-"):
                seconds = -seconds
    else:
        raise BudgetError(f"{where}: a duration must be a number or a string, got {value!r}")
    if not math.isfinite(seconds) or seconds <= 0:
        raise BudgetError(f"{where}: a budget must be more than 0 seconds, got {value!r}")
    if seconds > MAX_BUDGET_SECONDS:
        raise BudgetError(
            f"{where}: {value!r} is more than {format_seconds(MAX_BUDGET_SECONDS)} (7 days); "
            'an example allowed to run longer is unbounded: { budget = "none", reason = "..." }'
        )
    return seconds


def read_inline_budget(source_text: str, where: str) -> Rule | None:
    """The ``# docsaccel_budget = ...`` override in an example's source, if any.

    The value is TOML (``"30s"``, ``90``, ``{ budget = "2m", fast = "20s" }`` or
    ``{ budget = "none", reason = "..." }``). Returns the :class:`Rule`, or ``None`` when
    there is no override.
    """
    found = _INLINE.findall(source_text)
    if not found:
        return None
    if len(found) > 1:
        raise BudgetError(f"{where}: docsaccel_budget is set {len(found)} times: {found!r}")
    key = f"{where}: docsaccel_budget"
    try:
        value = tomllib.loads(f"value = {found[0]}")["value"]
    except (ValueError, RecursionError):  # TOMLDecodeError, or an int with too many digits
        raise BudgetError(
            f'{key}: {found[0]!r} is not a TOML value; write e.g. # docsaccel_budget = "30s"'
        ) from None
    return _parse_entry_value(value, key)


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


def _parse_entry_value(value: Any, where: str) -> Rule:
    reason = fast = None
    if isinstance(value, dict):
        _check_keys(value, _ENTRY_KEYS, where)
        if "budget" not in value:
            raise BudgetError(f"{where}: the table {value!r} has no 'budget' key")
        reason = value.get("reason")
        if reason is not None and (not isinstance(reason, str) or not reason.strip()):
            raise BudgetError(f"{where}.reason: must be a non-empty string, got {reason!r}")
        if "fast" in value:
            fast = parse_bounded_duration(
                value["fast"],
                f"{where}.fast",
                '"none" is not a fast-path budget; leave the key out to keep the budget '
                "in fast builds",
            )
        value = value["budget"]
    seconds = parse_duration(value, where)
    if seconds is None and not reason:
        raise BudgetError(
            f'{where}: "none" (unbounded) needs a reason: '
            f'{{ budget = "none", reason = "why this example may run unbounded" }}'
        )
    return Rule(seconds, fast, reason)


def parse_budgets(data: Mapping[str, Any], path: str) -> BudgetTable:
    """Build a :class:`BudgetTable` from already-parsed TOML ``data`` read from ``path``."""
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
        entries.append(
            _Entry(pattern, _parse_entry_value(value, f"{path}: [examples] {pattern!r}"))
        )
    return BudgetTable(str(path), default, float(ci_factor), fast_default, tuple(entries))


def load_budgets(path: str | Path, examples: Iterable[str] | None = None) -> BudgetTable:
    """Read and validate a budget file.

    With ``examples`` (posix paths inside the gallery folder), ambiguous ties among them
    raise :class:`BudgetError` now rather than when the example runs.
    """
    path = Path(path)
    try:
        # A byte-order mark (editors on Windows write one) is dropped by read_text.
        text = read_text(path, "budget file")
    except InputError as exc:
        raise BudgetError(str(exc)) from None
    try:
        data = tomllib.loads(text)
    except ValueError as exc:  # TOMLDecodeError, or an int with too many digits
        raise BudgetError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        raise BudgetError(f"{path}: not valid TOML: nested too deeply") from None
    table = parse_budgets(data, str(path))
    if examples is not None:
        table.check_examples(examples)
    return table
