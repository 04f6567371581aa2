"""Which examples the cache would restore must run instead, because an example that runs
reads (or may read) the state they leave in the project's modules.

The design, in full: the caching guide's *Design* section.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from docsaccel.cache.pieces import Facts

__all__ = ["Rerun", "leaves_key", "must_run"]


class Rerun(NamedTuple):
    """Why a restored example must run: ``reader`` reads (or may read) the state it
    leaves; ``reason`` says so, with ``cause``, why the reader runs."""

    reader: str
    reason: str
    cause: str = ""


def leaves_key(relative: str, name: str) -> str:
    """The one spelling of a global left in a module: ``mylib/stats.py:_OFFSET``."""
    return f"{relative}:{name}"


def must_run(
    order: Sequence[str],
    missed: Mapping[str, Any],
    restored: Mapping[str, Any],
    changed: Mapping[str, Iterable[Any]],
    facts: Callable[[str], Facts | None],
    parallel: bool,
    why: Mapping[str, str] | None = None,
) -> dict[str, Rerun]:
    """``{example: why it must run}`` of the ``restored`` examples (``{id: entry}``) that
    an example of ``missed`` (``{id: its entry, or None}``) reads or may read the state of
    (see the caching guide's design). ``order``: every example's id in the order they run;
    ``changed``: ``{id: the changes that made it miss}``; ``facts(relative path)``: the
    pieces of a project file as it is now; ``why``: ``{id: why it runs}`` of the missed."""
    position = {example: index for index, example in enumerate(order)}
    found: dict[str, Rerun] = {}
    for reader, entry in missed.items():
        reads = _may_read(entry, changed.get(reader, ()), facts)
        recorded = (entry.deps.get("state") or {}) if entry is not None else {}
        for earlier, earlier_entry in restored.items():
            if earlier in found or position.get(earlier, -1) >= position.get(reader, -1):
                continue
            keys = recorded.get(earlier) or [
                key for key in earlier_entry.deps.get("leaves") or () if _reaches(reads, key)
            ]
            if keys:
                cause = (why or {}).get(reader, "")
                runs = f"and runs: {cause}" if cause else "and runs"
                reason = f"{reader} reads the state it leaves ({keys[0]}) {runs}"
                found[earlier] = Rerun(reader, reason, cause)
    if found and parallel:
        first = next(iter(found.values()))
        every = first._replace(reason=f"a parallel build: {first.reason}; every example runs")
        return dict.fromkeys(restored, every)
    return found


def _reaches(reads: frozenset[str] | None, key: str) -> bool:
    return reads is None or key.rpartition(":")[2] in reads


def _may_read(
    entry: Any, changes: Iterable[Any], facts: Callable[[str], Facts | None]
) -> frozenset[str] | None:
    """The names the example's code may read now (``None``: any): those it read, and
    those the pieces of the files it used, as they are now, read when so named."""
    if entry is None or any(change.key == "source" for change in changes):
        return None
    recorded = entry.deps.get("names")
    if recorded is None:  # any name, or a ``module`` entry: its files count whole
        return None
    if any(relative.endswith(".py") for relative in entry.deps.get("files") or {}):
        return None  # project code counted whole: what it reads is not followed
    files = [facts(relative) for relative in entry.deps.get("code") or {}]
    if any(now is None for now in files):
        return None
    named: dict[str, list[tuple[Facts, str]]] = {}
    for now in files:
        for piece, short in now.short.items():  # type: ignore[union-attr]
            named.setdefault(short, []).append((now, piece))  # type: ignore[arg-type]
    seen = set(recorded)
    todo = list(seen)
    while todo:
        for now, piece in named.get(todo.pop(), ()):
            if piece in now.dynamic:
                return None
            fresh = now.reads.get(piece, frozenset()) - seen
            seen |= fresh
            todo.extend(fresh)
    return frozenset(seen)
