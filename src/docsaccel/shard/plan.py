"""Split a sphinx-gallery over CI workers by measured durations: the shard plan.

The design, in full: the sharding guide's *Design* section.

Example:

>>> plan = plan_shards({"plot_a.py": 120.0, "plot_b.py": 30.0, "plot_c.py": 95.0}, shards=2)
>>> plan.shards[0].examples
('plot_a.py',)
>>> plan.shards[1].examples
('plot_b.py', 'plot_c.py')
>>> plan.makespan, plan.lower_bound
(125.0, 122.5)
"""

from __future__ import annotations

import math
import statistics
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from docsaccel.budgets import format_seconds
from docsaccel.contract import NOT_EXECUTED, InputError, shown_path
from docsaccel.report.inputs import load_budget_file

__all__ = [
    "DEFAULT_RUNS",
    "MAX_SHARDS",
    "Plan",
    "Shard",
    "ShardError",
    "budget_estimator",
    "build_gallery_plan",
    "build_plan",
    "check_index",
    "describe",
    "discover_examples",
    "load_durations",
    "load_inputs",
    "match_gallery",
    "plan_shards",
]

#: The predicted time of an example is the median of its last ``DEFAULT_RUNS`` runs.
DEFAULT_RUNS = 5
#: The estimate of every example when nothing at all was measured or budgeted: the plan
#: then balances example counts.
FALLBACK_SECONDS = 1.0
#: The most shards a plan has: CI matrices stop far below (GitHub Actions: 256 jobs), and
#: a plan holds a list per shard, so a mistyped count must not exhaust memory.
MAX_SHARDS = 1024
_MS_PER_SECOND = 1000

Estimator = Callable[[str], "float | None"]


class ShardError(InputError):
    """Bad shard arguments or inputs; the message names the file, line, key or argument.

    An :class:`~docsaccel.contract.InputError`, like every other reader's error.
    """


@dataclass(frozen=True)
class Shard:
    """The examples one worker executes, sorted by name, and their predicted seconds."""

    index: int
    examples: tuple[str, ...]
    predicted_seconds: float
    estimated: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "examples": list(self.examples),
            "predicted_seconds": self.predicted_seconds,
            "estimated": list(self.estimated),
        }


@dataclass(frozen=True)
class Plan:
    """A whole shard plan.

    ``estimates`` maps each example without a measurement to the seconds it was given;
    ``ignored`` lists measured examples that are not on disk any more.
    """

    shards: tuple[Shard, ...]
    lower_bound: float
    makespan: float
    estimates: Mapping[str, float] = field(default_factory=dict)
    ignored: tuple[str, ...] = ()

    @property
    def ratio(self) -> float:
        """``makespan / lower_bound``: 1.0 is a perfect plan."""
        return self.makespan / self.lower_bound if self.lower_bound else 1.0

    def examples_of(self, index: int) -> tuple[str, ...]:
        check_index(index, len(self.shards))
        return self.shards[index].examples

    def to_json(self) -> dict[str, Any]:
        return {
            "shards": [shard.to_json() for shard in self.shards],
            "lower_bound": self.lower_bound,
            "makespan": self.makespan,
            "ratio": round(self.ratio, 6),
            "estimates": dict(sorted(self.estimates.items())),
            "ignored": list(self.ignored),
        }


def check_index(index: int, shards: int) -> None:
    """Raise :class:`ShardError` unless ``shards >= 1`` and ``0 <= index < shards``."""
    _check_shards(shards)
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < shards:
        raise ShardError(
            f"shard index {index!r} is out of range for {shards} shards; use 0 to {shards - 1}"
        )


def _check_shards(shards: int) -> None:
    if isinstance(shards, bool) or not isinstance(shards, int) or not 1 <= shards <= MAX_SHARDS:
        raise ShardError(
            f"the number of shards must be an integer from 1 to {MAX_SHARDS}, got {shards!r:.40}"
        )


def _check_seconds(value: Any, where: str) -> float:
    is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not is_number or not math.isfinite(value) or value < 0:
        raise ShardError(f"{where} is {value!r}; expected seconds (a number >= 0)")
    return float(value)


def plan_shards(
    durations: Mapping[str, float],
    shards: int,
    examples_on_disk: Iterable[str] | None = None,
    estimate: Estimator | None = None,
) -> Plan:
    """Assign every example to one of ``shards`` shards, balancing predicted seconds.

    ``durations`` maps example names to measured seconds. With ``examples_on_disk`` the
    plan covers exactly those names (measured names not among them are ``ignored``);
    without it, the names of ``durations``. ``estimate(name)`` gives the seconds of an
    unmeasured example (e.g. :func:`budget_estimator`); when it is absent or returns
    ``None``, the median of the measured examples is used.
    """
    _check_shards(shards)
    for name, seconds in durations.items():
        _check_seconds(seconds, f"the duration of {name!r}")
    names = sorted(set(durations if examples_on_disk is None else examples_on_disk))
    if not names:
        raise ShardError("nothing to plan: no example was measured or found on disk")
    present = set(names)
    ignored = tuple(sorted(name for name in durations if name not in present))
    measured = {name: float(durations[name]) for name in names if name in durations}
    estimates = _estimates([n for n in names if n not in durations], measured, estimate)
    millis = {
        name: round(seconds * _MS_PER_SECOND) for name, seconds in (measured | estimates).items()
    }
    bins = _assign(names, millis, set(estimates), shards)
    loads = [sum(millis[name] for name in members) for members in bins]
    total = sum(loads)
    lower_bound = max(max(millis.values()), total / shards) / _MS_PER_SECOND
    planned = tuple(
        Shard(
            index,
            tuple(sorted(members)),
            loads[index] / _MS_PER_SECOND,
            tuple(sorted(name for name in members if name in estimates)),
        )
        for index, members in enumerate(bins)
    )
    return Plan(planned, lower_bound, max(loads) / _MS_PER_SECOND, estimates, ignored)


def _estimates(
    missing: Sequence[str], measured: Mapping[str, float], estimate: Estimator | None
) -> dict[str, float]:
    given: dict[str, float] = {}
    for name in missing:
        value = estimate(name) if estimate is not None else None
        if value is not None:
            given[name] = _check_seconds(value, f"the estimate of {name!r}")
    known = list(measured.values()) or list(given.values())
    fallback = statistics.median(known) if known else FALLBACK_SECONDS
    return {name: given.get(name, fallback) for name in missing}


class _Bins:
    """Shard contents during planning: members, integer loads, estimated counts."""

    def __init__(self, shards: int, millis: Mapping[str, int], estimated: set[str]) -> None:
        self.members: list[list[str]] = [[] for _ in range(shards)]
        self.loads = [0] * shards
        self.estimated_counts = [0] * shards
        self.millis = millis
        self.estimated = estimated
        # At most ceil(k / N) of the k estimated examples per shard: guesses are spread.
        self.cap = -(-len(estimated) // shards)

    def add(self, index: int, name: str) -> None:
        self.members[index].append(name)
        self.loads[index] += self.millis[name]
        self.estimated_counts[index] += name in self.estimated

    def remove(self, index: int, name: str) -> None:
        self.members[index].remove(name)
        self.loads[index] -= self.millis[name]
        self.estimated_counts[index] -= name in self.estimated

    def can_take_estimate(self, index: int) -> bool:
        return self.estimated_counts[index] < self.cap


def _assign(
    names: list[str], millis: Mapping[str, int], estimated: set[str], shards: int
) -> list[list[str]]:
    bins = _Bins(shards, millis, estimated)
    # Longest first; the least loaded shard takes it (fewest examples, then lowest index on
    # ties, so zero-second examples are spread too).
    for name in sorted(names, key=lambda name: (-millis[name], name)):
        allowed = [
            index
            for index in range(shards)
            if name not in estimated or bins.can_take_estimate(index)
        ]
        target = min(allowed, key=lambda i: (bins.loads[i], len(bins.members[i]), i))
        bins.add(target, name)
    _improve(bins, max_steps=4 * len(names) + shards)
    return bins.members


def _improve(bins: _Bins, max_steps: int) -> None:
    """Move or swap examples between the most loaded shard and another while that helps.

    Each step lowers the loads of the two shards involved below the old maximum, so the
    sorted load vector decreases strictly and the search ends; ``max_steps`` bounds it.
    """
    shards = len(bins.loads)
    for _ in range(max_steps):
        top = min(range(shards), key=lambda i: (-bins.loads[i], i))
        best = None
        for other in range(shards):
            gap = bins.loads[top] - bins.loads[other]
            if other == top or gap <= 1:
                continue
            found = _best_exchange(bins, top, other, gap)
            if found is not None and (best is None or (found[0], other) < best[:2]):
                best = (found[0], other, found[1], found[2])
        if best is None:
            return
        _, other, give, take = best
        bins.remove(top, give)
        bins.add(other, give)
        if take is not None:
            bins.remove(other, take)
            bins.add(top, take)


def _best_exchange(
    bins: _Bins, top: int, other: int, gap: int
) -> tuple[int, str, str | None] | None:
    """The move (``take`` is None) or swap from ``top`` to ``other`` that best halves ``gap``.

    Returns ``(distance, give, take)`` where distance ``|2 * delta - gap|`` is minimal and
    ``delta`` (seconds moved) is strictly between 0 and ``gap``; ``None`` when none helps.
    """
    millis = bins.millis
    # Candidates to take back, by kind: a plain move takes back "nothing" (0 ms, measured).
    kinds: dict[bool, list[tuple[int, str]]] = {False: [(0, "")], True: []}
    for name in bins.members[other]:
        kinds[name in bins.estimated].append((millis[name], name))
    for candidates in kinds.values():
        candidates.sort()
    doubled = {kind: [2 * value for value, _ in kinds[kind]] for kind in kinds}
    best = None
    for give in sorted(bins.members[top]):
        give_estimated = give in bins.estimated
        for take_estimated, candidates in kinds.items():
            if give_estimated > take_estimated and not bins.can_take_estimate(other):
                continue
            if take_estimated > give_estimated and not bins.can_take_estimate(top):
                continue
            # The ideal take is millis[give] - gap / 2; check its nearest neighbours.
            at = bisect_left(doubled[take_estimated], 2 * millis[give] - gap)
            for value, name in candidates[max(at - 1, 0) : at + 1]:
                delta = millis[give] - value
                if 0 < delta < gap:
                    key = (abs(2 * delta - gap), give, name)
                    if best is None or key < best:
                        best = key
    if best is None:
        return None
    distance, give, take = best
    return distance, give, take or None


def describe(plan: Plan) -> str:
    """The plan as text: one line per shard, then the bound, for people reading CI logs."""
    lines = [
        f"shard {shard.index}: {len(shard.examples)} examples, "
        f"{format_seconds(shard.predicted_seconds)} predicted"
        + (f" ({len(shard.estimated)} estimated)" if shard.estimated else "")
        for shard in plan.shards
    ]
    lines.append(
        f"makespan {format_seconds(plan.makespan)}, lower bound "
        f"{format_seconds(plan.lower_bound)}, ratio {plan.ratio:.3f}"
    )
    if plan.ignored:
        lines.append(f"ignored (measured, not on disk): {', '.join(plan.ignored)}")
    return "\n".join(lines)


# Inputs ---------------------------------------------------------------------------------


def load_durations(paths: Iterable[str | Path], runs: int = DEFAULT_RUNS) -> dict[str, float]:
    """Predicted seconds per example id from earlier builds.

    Each path is a history JSONL (``docsaccel history append``: one run per line, oldest
    first) or one run in any format ``docsaccel check`` reads: a docsaccel report
    (``wall_seconds`` of every record except ``not-executed`` ones; ``cached`` records
    carry their last known time, when one was kept), a ``sg_execution_times.rst``, a
    JUnit XML. Runs are taken in the order given and an example's prediction is the
    median of its last ``runs`` runs. A file that is none of these raises
    :class:`ShardError` naming the file (and the line).
    """
    return load_inputs(paths, runs)[0]


def load_inputs(
    paths: Iterable[str | Path], runs: int = DEFAULT_RUNS
) -> tuple[dict[str, float], list[str]]:
    """:func:`load_durations`, and every example id the inputs name, sorted: those with a
    prediction and those without one (in a history, an example with no whole run in the
    builds read: restored from a cache, stopped or failed in each; in a report, one not
    run), which a plan must not leave out."""
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise ShardError(f"the number of runs must be an integer >= 1, got {runs!r}")
    from docsaccel.report.history import recent_history

    read = [_read_runs(Path(path)) for path in paths]
    history = recent_history((run for found, _ in read for run in found), runs)
    names = sorted({name for _, named in read for name in named} | history.keys())
    return {example: history[example].median_seconds for example in sorted(history)}, names


def _read_runs(path: Path) -> tuple[list[dict[str, float]], set[str]]:
    """The runs of one input (see :func:`load_durations`) and the ids of every example it
    names."""
    # One parser per format, shared with ``docsaccel check``/``compare``/``history``; their
    # errors are InputError already.
    from docsaccel.report.history import is_history, read_builds, same_kind
    from docsaccel.report.inputs import judged_input

    if is_history(path):
        builds = read_builds(path)
        named = {name for build in builds for name in (*build.durations, *build.not_whole)}
        # An expected failure's run is its cost, as a report gives it (below).
        runs = [
            {**build.expected_failure_seconds, **build.durations} for build in same_kind(builds)
        ]
        return runs, named
    timings = judged_input(path).timings
    # A record whose time is none (never run, reused from a run that kept none) predicts
    # nothing.
    runs = {
        timing.id: timing.seconds
        for timing in timings
        if timing.status != NOT_EXECUTED and not timing.no_time
    }
    return [runs], {timing.id for timing in timings}


# Examples on disk -----------------------------------------------------------------------


def discover_examples(
    gallery_dir: str | Path, gallery_conf: Mapping[str, Any] | None = None
) -> list[str]:
    """The example files of a gallery folder, as sorted posix paths inside it.

    sphinx-gallery's own walk (:func:`docsaccel.sg_compat.example_files`) with the
    project's ``sphinx_gallery_conf`` (its ``ignore_pattern``, ``example_extensions``...),
    else sphinx-gallery's defaults, for a folder planned without its ``conf.py``: the
    folder's files, then
    those of each sub-gallery (a sub-folder with a ``README.txt``/``GALLERY_HEADER.rst``,
    or any sub-folder when the folder has its own ``index.rst``), one level deep; every
    ``*.py`` but ``__init__.py``.
    """
    # Imported here: sphinx-gallery is a large import a plan from inputs alone never needs.
    from docsaccel import sg_compat

    root = Path(gallery_dir)
    if not root.is_dir():
        raise ShardError(f"gallery folder {str(root)!r} does not exist or is not a folder")
    files = sg_compat.example_files(root, sg_compat.with_defaults(dict(gallery_conf or {})))
    found = [path.relative_to(root).as_posix() for path in files]
    if not found:
        raise ShardError(f"gallery folder {str(root)!r} has no example (*.py) file")
    return found


def match_gallery(
    durations: Mapping[str, float], gallery_dir: str | Path, names: Iterable[str]
) -> tuple[dict[str, float], tuple[str, ...]]:
    """Re-key ``durations`` by path inside ``gallery_dir``; also return the ids left over.

    A report id is ``"<gallery>/<path inside it>"`` where ``<gallery>`` is the examples
    folder relative to the Sphinx source folder (``tutorials``, ``../examples``): it matches
    a file on disk when its folder part names the end of ``gallery_dir``. A bare path
    inside the gallery matches too.
    """
    names = set(names)
    folder = Path(gallery_dir).resolve().parts
    matched: dict[str, float] = {}
    origin: dict[str, str] = {}
    unmatched = []
    for example_id, seconds in sorted(durations.items()):
        name = _name_in_gallery(example_id, folder, names)
        if name is None:
            unmatched.append(example_id)
            continue
        if name in origin:
            raise ShardError(
                f"inputs give two times for {name!r} in {str(gallery_dir)!r}: as "
                f"{origin[name]!r} and as {example_id!r}"
            )
        matched[name], origin[name] = seconds, example_id
    return matched, tuple(unmatched)


def _name_in_gallery(example_id: str, folder: tuple[str, ...], names: set[str]) -> str | None:
    if example_id in names:
        return example_id
    parts = PurePosixPath(example_id).parts
    for cut in range(1, len(parts)):
        prefix = tuple(part for part in parts[:cut] if part not in (".", ".."))
        rest = "/".join(parts[cut:])
        if rest in names and prefix and folder[-len(prefix) :] == prefix:
            return rest
    return None


def budget_estimator(
    budgets_path: str | Path,
    gallery_dir: str | Path,
    names: Iterable[str],
    gallery: str | None = None,
) -> Estimator:
    """An ``estimate`` for :func:`plan_shards`: each example's budget, ``None`` if unbounded.

    The budget is resolved with its inline override and without the CI factor, so the plan
    does not depend on the ``CI`` variable of the machine that computes it. ``gallery``:
    the gallery's id, so budget patterns naming an example by its id match it.
    """

    def example_id(name: str) -> str | None:
        return None if gallery is None else f"{gallery}/{name}"

    names = list(names)
    examples = names if gallery is None else [(name, f"{gallery}/{name}") for name in names]
    table = load_budget_file(budgets_path, examples=examples)
    root = Path(gallery_dir)

    def estimate(name: str) -> float | None:
        # Named as the build's planner names the example, whichever folder the CLI was given.
        shown = shown_path(root / name)
        try:
            source = (root / name).read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            raise ShardError(f"{shown}: cannot read the example: {exc}") from None
        return table.resolve(
            name, source_text=source, ci=False, example_id=example_id(name), source_path=shown
        ).seconds

    return estimate


def build_plan(
    inputs: Sequence[str | Path],
    shards: int,
    gallery_dir: str | Path | None = None,
    budgets: str | Path | None = None,
    runs: int = DEFAULT_RUNS,
    gallery_conf: Mapping[str, Any] | None = None,
) -> Plan:
    """What ``docsaccel shard`` plans: inputs read, matched to the gallery, estimated.
    ``gallery_conf``: the project's ``sphinx_gallery_conf``, which says which files of
    the gallery are examples (:func:`discover_examples`)."""
    _check_shards(shards)
    if budgets is not None and gallery_dir is None:
        raise ShardError("--budgets needs --gallery-dir: budgets estimate examples on disk")
    durations, named = load_inputs(inputs, runs=runs)
    if gallery_dir is None:
        if not named:
            raise ShardError("nothing to plan: give a report or history, or --gallery-dir")
        # Every example the inputs name: one without a prediction is estimated.
        return plan_shards(durations, shards, examples_on_disk=named)
    names = discover_examples(gallery_dir, gallery_conf)
    matched, ignored = match_gallery(durations, gallery_dir, names)
    estimate = None if budgets is None else budget_estimator(budgets, gallery_dir, names)
    plan = plan_shards(matched, shards, examples_on_disk=names, estimate=estimate)
    return Plan(plan.shards, plan.lower_bound, plan.makespan, plan.estimates, ignored)


def build_gallery_plan(
    inputs: Sequence[str | Path],
    shards: int,
    galleries: Mapping[str, str | Path],
    budgets: str | Path | None = None,
    runs: int = DEFAULT_RUNS,
    list_examples: Callable[[Path], list[str]] | None = None,
) -> Plan:
    """The plan of every example of several gallery folders, named by example id.

    ``galleries`` maps each gallery's id (its examples folder relative to the Sphinx source
    folder, as in records: ``tutorials``) to that folder. Examples are planned together
    and named ``<gallery id>/<path inside it>``, as the gallery plugin names them, so one
    shard's list works with ``DOCSACCEL_SHARD_EXAMPLES``. ``list_examples(folder)`` gives
    a folder's examples; pass sphinx-gallery's own rule when the project's config is known
    (:meth:`docsaccel.shard.build.DocsProject.example_names`), so the plan covers exactly
    the examples the build runs; the default is :func:`discover_examples`.

    Example: two examples measured in the history, a new one estimated.

    >>> import json
    >>> import tempfile
    >>> from docsaccel.report.history import HISTORY
    >>> docs = tempfile.TemporaryDirectory()
    >>> tutorials = Path(docs.name, "tutorials")
    >>> tutorials.mkdir()
    >>> for name in ("README.txt", "plot_a.py", "plot_b.py", "plot_new.py"):
    ...     _ = Path(tutorials, name).write_text("'''Title\\n=====\\n'''\\n")
    >>> seconds = {"tutorials/plot_a.py": 120.0, "tutorials/plot_b.py": 30.0}
    >>> build = {k: {"seconds": v, "status": "ok"} for k, v in seconds.items()}
    >>> history = Path(docs.name, "history.jsonl")
    >>> _ = history.write_text(json.dumps({**HISTORY.header(), "examples": build}))
    >>> plan = build_gallery_plan([history], 2, {"tutorials": tutorials})
    >>> plan.examples_of(0), plan.examples_of(1)
    (('tutorials/plot_a.py',), ('tutorials/plot_b.py', 'tutorials/plot_new.py'))
    >>> plan.estimates  # the median of the measured examples
    {'tutorials/plot_new.py': 75.0}
    >>> docs.cleanup()
    """
    _check_shards(shards)
    if not galleries:
        raise ShardError("nothing to plan: no gallery folder was given")
    durations = load_durations(inputs, runs=runs)
    measured: dict[str, float] = {}
    estimators: dict[str, tuple[Estimator | None, str]] = {}
    unmatched = set(durations)
    for gallery, folder in galleries.items():
        names = (list_examples or discover_examples)(Path(folder))
        matched, left = match_gallery(durations, folder, names)
        unmatched &= set(left)
        measured |= {f"{gallery}/{name}": seconds for name, seconds in matched.items()}
        estimate = None if budgets is None else budget_estimator(budgets, folder, names, gallery)
        estimators |= {f"{gallery}/{name}": (estimate, name) for name in names}

    def estimate_by_id(example_id: str) -> float | None:
        estimate, name = estimators[example_id]
        return None if estimate is None else estimate(name)

    plan = plan_shards(measured, shards, examples_on_disk=estimators, estimate=estimate_by_id)
    ignored = tuple(sorted(unmatched))
    return Plan(plan.shards, plan.lower_bound, plan.makespan, plan.estimates, ignored)
