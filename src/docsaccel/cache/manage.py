"""``docsaccel cache explain / stats / prune``: look into a cache folder and keep it small.

Each function returns ``(text, exit code)``: 0 when it worked, 2 for bad input (a
missing cache folder, an unknown example, a bad size), with a one-line message naming the
argument; the CLI only prints.

Example (``explain("tutorials/plot_a.py", cache, docs="docs")`` answers the same way):

>>> import tempfile
>>> cache = tempfile.TemporaryDirectory()
>>> stats(cache.name)
('cache ...: 0 entries, 0 B\\nlast build: none recorded\\n', 0)
>>> prune(cache.name, max_size="500M")
('cache ...: removed 0 entries (0 B); 0 B left (limit 500.0 MiB)\\n', 0)
>>> prune(cache.name, max_size="lots")
("--max-size: 'lots' is not a size; write e.g. '500M', '2G' or '6.5G'\\n", 2)
>>> cache.cleanup()
"""

from __future__ import annotations

import contextlib
import importlib
import os
import posixpath
import shutil
import sys
import time
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from difflib import get_close_matches
from pathlib import Path
from typing import Any

from docsaccel import memory_sizes
from docsaccel.cache.decisions import ExampleDecision, decisions_from_json
from docsaccel.cache.deps import CHILDREN_KEY, Project, changes, dependency_rows, find_root
from docsaccel.cache.store import CacheStore, EntryError
from docsaccel.contract import (
    AUDIT_STATUSES,
    CACHED,
    FAILED,
    INTERRUPTED,
    NONDETERMINISTIC,
    STALE,
)
from docsaccel.counts import counted
from docsaccel.formats import ABANDONED_SECONDS
from docsaccel.layout import example_id_of

__all__ = ["READ_ONLY_UNRECORDED", "explain", "human_size", "parse_size", "prune", "stats"]


class _BadInput(ValueError):
    pass


def parse_size(text: str) -> int:
    """``"500M"`` -> bytes (:func:`docsaccel.memory_sizes.parse_size`); ``0`` empties the cache.

    A number without a unit is refused, as in a memory budget: ``12`` meant as gigabytes
    would prune the cache to 12 bytes.
    """
    if text.strip() in ("0", "0.0"):
        return 0
    return memory_sizes.parse_size(text, "--max-size", _BadInput, allow_zero=True)


def human_size(size: float) -> str:
    """``1536`` -> ``1.5 KiB``."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TiB"


def _open(cache: str | Path) -> CacheStore:
    folder = Path(cache)
    if folder.exists() and not folder.is_dir():
        raise _BadInput(f"--cache {str(cache)!r}: a file, not a cache folder")
    if not folder.is_dir():
        raise _BadInput(f"--cache {str(cache)!r}: no such cache folder")
    return CacheStore(folder)


def _when(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="seconds")


def explain(example: str, cache: str | Path, docs: str | Path = "docs") -> tuple[str, int]:
    """Every entry of ``example`` (as a user names it, see :func:`_example_id`): its
    context, its dependencies, and which of them changed."""
    try:
        store = _open(cache)
        docs_dir = Path(docs).resolve()
        if not (docs_dir / "conf.py").is_file():
            raise _BadInput(
                f"--docs {str(docs)!r}: no conf.py there; give --docs, the folder of conf.py"
            )
        last = store.read_last_build() or {}
        decisions = decisions_from_json(last.get("examples"))
        example_id = _example_id(example, store, docs_dir, cache, decisions)
        source = docs_dir / example_id
        entries, corrupt = store.scan(example_id)
    except _BadInput as exc:
        return f"{exc}\n", 2
    found_root = find_root(docs_dir)
    writers = _writers(store, example_id)
    count = len(entries) + len(corrupt)
    lines = [f"{example_id}: {count} entr{'y' if count == 1 else 'ies'} in {cache}"]
    lines += _last_decision(decisions.get(example_id), stored=bool(count))
    build_path = _build_sys_path(last, found_root)
    if build_path is None and any(e.deps.get("dists") or e.deps.get("absent") for e in entries):
        lines.append(
            "  note: the last build recorded no sys.path: installed versions and importable "
            "modules are judged with this command's sys.path, which may not be the build's"
        )
    for name, error in corrupt:
        lines += ["", f"entry {name}", f"  unusable: {error}; a build runs the example"]
    for entry in entries:
        context, record = entry.context, entry.record
        lines.append("")
        lines.append(f"entry {entry.name}")
        lines.append(
            f"  context: fast path {'on' if context.get('fast') else 'off'}, Python "
            f"{context.get('python')}, {context.get('platform')}, sphinx-gallery "
            f"{context.get('sphinx_gallery')}"
        )
        lines.append(
            f"  made by a run of {record.get('wall_seconds', 0):.2f} s "
            f"(status {record.get('status')}, {record.get('finished_at') or 'unknown time'})"
        )
        # Where the build that made it stored paths from (its roots may lie above the
        # folder find_root finds); an entry that does not say used that folder.
        stored = entry.meta.get("root")
        root = os.path.normpath(docs_dir / stored) if isinstance(stored, str) else found_root
        # The cache folder may appear at the root after the entry's run: not a change there.
        project = Project(root=root, roots=(root,), excluded=(str(Path(cache).resolve()),))
        try:
            with _sys_path(build_path):
                found = changes(entry.deps, project, str(source))
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            lines.append(f"  unusable: its dependency list is malformed ({exc!r}); a build runs it")
            continue
        # A file an earlier example writes is put back (or written by its run) before
        # the build looks this one up: absent or different here, it is judged then.
        waits = {
            c.key: ", ".join(sorted(set(writers[c.key.partition(":")[2]].values())))
            for c in found
            if _written_later(c.key, writers)
        }
        found = [c for c in found if c.key not in waits]
        changed = {change.key for change in found}
        deps = entry.deps
        rows = dependency_rows(deps, str(source.relative_to(docs_dir)))
        lines.append(f"  dependencies ({len(rows)}):")
        for row in rows:
            status = "CHANGED" if row.key in changed else "LATER" if row.key in waits else "same"
            why = f"  ({row.why})" if row.why else ""
            lines.append(f"    {status:<7} {row.kind:<7} {row.label}{why}")
        children = deps.get(CHILDREN_KEY)
        if isinstance(children, dict):
            lines.append(f"  child processes followed: {children.get('followed', 0)}")
            not_followed = children.get("not_followed") or []
            if not_followed:
                lines.append(
                    "  not followed (what they read is not seen): "
                    + "; ".join(map(str, not_followed))
                )
        written = entry.meta["written"]
        if written:
            lines.append(f"  writes ({len(written)}), put back with its outputs:")
            lines += [f"    {name}" for name in written]
        # Where the outputs go is the build's to decide (its sphinx_gallery_conf): said as
        # the condition the build checks (.placement), not guessed from here.
        target = entry.meta.get("target")
        if isinstance(target, str):
            galleries = ", ".join(entry.meta.get("gallery_dirs") or ()) or "unknown"
            lines.append(f"  made for: {target} (gallery folders: {galleries})")
            where = f" that puts the example's copy at {target}"
        else:
            where = ""
        for key, writer in waits.items():
            lines.append(
                f"  LATER: {key.partition(':')[2]} is written by {writer}: judged by a build "
                "once that example is restored or has run"
            )
        if found:
            lines.append(f"  stale: {counted(len(found), 'change')}:")
            lines += [f"    - {change.reason}" for change in found]
        elif not where:
            lines.append("  not restored: its gallery folder is not known; a build runs it")
        elif deps["code"]:
            lines.append(
                f"  up to date: a build in this context{where} restores it at function "
                "granularity; at module granularity it runs"
            )
        else:
            lines.append(f"  up to date: a build in this context{where} restores it")
        if not found and where:
            with _sys_path(build_path):
                upstream = _upstream(store, entry, project, docs_dir, writers, {})
            if upstream:
                lines.append(f"  but a build runs it: {upstream}")
            lines.append(f"  {_OWN_ONLY}")
    return "\n".join(lines) + "\n", 0


#: What an "up to date" verdict leaves out: what the build decides from the other examples.
_OWN_ONLY = (
    "judged by its own dependencies only: a build also runs it when an earlier example "
    "whose state or written files it reads runs again, when a later example that runs "
    "may read state it leaves, or to audit it (see last build)"
)


def _upstream(
    store: CacheStore,
    entry: Any,
    project: Project,
    docs_dir: Path,
    writers: Mapping[str, Mapping[str, str]],
    seen: dict[str, str],
) -> str:
    """Why a build runs an example whose own dependencies hold, as far as the entries of
    the same context tell: an earlier example whose state it read, or that writes a file
    it reads, runs (its entry is gone or stale, or so for one it depends on in turn); the
    reason names the chain back to the root cause, as the build's does. ``""``: none."""
    key = entry.name.rsplit("--", 1)[-1]
    earlier = [(e, f"reads state {e} leaves") for e in entry.deps.get("state") or {}]
    # The example that wrote what it read: the one whose entry wrote those bytes.
    for relative, digest in (entry.deps.get("files") or {}).items():
        writer = writers.get(relative, {}).get(digest)
        if writer is not None:
            earlier.append((writer, f"{relative} is written by {writer}"))
    for other, link in earlier:
        if other not in seen:
            seen[other] = ""  # a cycle stops here
            seen[other] = _runs(store, other, key, project, docs_dir, writers, seen)
        if seen[other]:
            return f"{link}, which runs again: {seen[other]}"
    return ""


def _runs(
    store: CacheStore,
    example_id: str,
    key: str,
    project: Project,
    docs_dir: Path,
    writers: Mapping[str, Mapping[str, str]],
    seen: dict[str, str],
) -> str:
    """Why a build runs ``example_id`` in the context ``key``, ``""`` when its entry holds."""
    try:
        entry = store.load(store.entry_name(example_id, key))
    except EntryError:
        return "no entry for this context"
    try:
        found = changes(entry.deps, project, str(docs_dir / example_id))
    except (KeyError, TypeError, AttributeError, ValueError):
        return "entry corrupt"
    found = [c for c in found if not _written_later(c.key, writers)]
    if found:
        return found[0].reason
    return _upstream(store, entry, project, docs_dir, writers, seen)


def _written_later(key: str, writers: Mapping[str, Mapping[str, str]]) -> bool:
    """Whether a changed dependency (its key) is a file an example's entry writes."""
    kind, _, relative = key.partition(":")
    return kind == "file" and relative in writers


def _writers(store: CacheStore, example_id: str) -> dict[str, dict[str, str]]:
    """``{path relative to the root: {digest: example id}}`` of the files the other
    examples' entries write (and put back when restored)."""
    found: dict[str, dict[str, str]] = {}
    for info in store.list():
        try:
            entry = store.load(info.path.name)
        except EntryError:
            continue
        other = entry.meta.get("id")
        if isinstance(other, str) and other != example_id:
            for relative, digest in (entry.meta.get("written") or {}).items():
                found.setdefault(relative, {}).setdefault(str(digest), other)
    return found


def _last_decision(decision: ExampleDecision | None, stored: bool) -> list[str]:
    """What the last build that used the cache did with the example, as its records say
    (``last-build.json``): the build's verdict, which may rest on other examples."""
    if decision is None:
        return ["last build: did not build it (or recorded no decisions)"]
    status, reason = decision.status, decision.reason
    if status == CACHED:
        return ["last build: restored it"]
    ran = f"ran it ({reason})" if reason else "ran it"
    if status in (FAILED, INTERRUPTED):
        error = decision.error or status
        never = "a failed or interrupted example is never stored, so every build runs it"
        lines = [f"last build: {ran}; its run {status}: {error}", f"  {never}"]
        if stored:
            lines[1] += " (the entries below are from earlier runs)"
        return lines
    return [f"last build: {ran}, status {status}"]


def _build_sys_path(last: dict[str, Any], root: str) -> list[str] | None:
    """The ``sys.path`` the last build ran with (after its ``conf.py``), its folders under
    the build's project root moved under ``root`` (the same checkout elsewhere); ``None``
    when it recorded none."""
    recorded, built_at = last.get("sys_path"), last.get("root")
    if not isinstance(recorded, list) or not all(isinstance(p, str) for p in recorded):
        return None
    if not isinstance(built_at, str) or built_at == root:
        return list(recorded)
    moved = []
    for folder in recorded:
        inside = folder == built_at or folder.startswith(os.path.join(built_at, ""))
        moved.append(os.path.join(root, os.path.relpath(folder, built_at)) if inside else folder)
    return [os.path.normpath(p) if p else p for p in moved]


@contextlib.contextmanager
def _sys_path(path: list[str] | None) -> Iterator[None]:
    """Within: ``sys.path`` is ``path`` (unchanged when ``None``), so distributions and
    modules resolve as in the build that made the entries."""
    if path is None:
        yield
        return
    saved = sys.path[:]
    sys.path[:] = path
    importlib.invalidate_caches()
    try:
        yield
    finally:
        sys.path[:] = saved
        importlib.invalidate_caches()


def _example_id(
    example: str,
    store: CacheStore,
    docs_dir: Path,
    cache: str | Path,
    decisions: Mapping[str, ExampleDecision] | None = None,
) -> str:
    """The id of the example a user names: its id (``../examples/drawing/plot_x.py``
    for a gallery outside the conf folder), its path from the current folder or from
    the conf folder, or its path inside its gallery (``drawing/plot_x.py``), the end of
    exactly one id. Raises :class:`_BadInput` naming the closest ids when none fits."""
    known = {example_id_of(p.name.rsplit("--", 1)[0]) for p in store.entries.glob("*")}
    # Those the last build ran without storing (a failed run): named, with why not.
    known = sorted(known | set(decisions or ()))
    typed = Path(example)
    tail = posixpath.normpath(typed.as_posix()) if not typed.is_absolute() else ""
    candidates = [example, tail]
    if typed.exists() or typed.is_absolute():
        candidates.append(Path(os.path.relpath(typed.resolve(), docs_dir)).as_posix())
    for candidate in candidates:
        if candidate in known:
            return candidate
    ends = [k for k in known if tail and tail != "." and k.endswith(f"/{tail}")]
    if len(ends) == 1:
        return ends[0]
    if ends:
        raise _BadInput(f"{example!r} is the end of several examples' ids: {', '.join(ends)}")
    if not known:
        raise _BadInput(f"{example!r}: no entry in {cache} (it holds no entries)")
    # Each id compared by as many of its last parts as the name has: what was typed.
    name = tail or typed.as_posix()
    depth = len(name.split("/"))
    ends_of = {"/".join(k.split("/")[-depth:]): k for k in reversed(known)}
    close = [ends_of[e] for e in get_close_matches(name, list(ends_of), n=3, cutoff=0.8)]
    hint = f"closest: {', '.join(close)}" if close else f"none is close among {len(known)}"
    raise _BadInput(f"{example!r}: no entry in {cache} ({hint}; a failed example is never stored)")


#: What ``stats`` says of builds that used the cache read-only: such a build writes
#: nothing into the folder (it may not), and the folder is all ``stats`` reads.
READ_ONLY_UNRECORDED = (
    "builds that used this cache read-only are not recorded: these figures are of the last "
    "build that wrote it"
)


def stats(cache: str | Path) -> tuple[str, int]:
    """How many entries, their size, and the last build's hits and misses."""
    try:
        store = _open(cache)
    except _BadInput as exc:
        return f"{exc}\n", 2
    infos = store.list()
    size = sum(info.size for info in infos)
    unusable = sum(1 for info in infos if not _readable(store, info.path.name))
    lines = [f"cache {cache}: {len(infos) - unusable} entries, {human_size(size)}"]
    if unusable:
        # A build treats these as misses; counting them as entries would overstate the
        # cache. prune deletes them whatever the size limit.
        lines[0] += f" (and {unusable} unusable, which prune removes)"
    last = store.read_last_build()
    if last and isinstance(last.get("hits"), int) and isinstance(last.get("misses"), int):
        total = last["hits"] + last["misses"]
        rate = f"{100 * last['hits'] / total:.0f}%" if total else "n/a"
        lines.append(
            f"{_last_writer(last)}: {counted(last['hits'], 'hit')}, "
            f"{counted(last['misses'], 'miss', 'misses')} "
            f"(hit rate {rate}), {last.get('saved_seconds', 0):.1f} s saved, "
            f"{last.get('stored', 0)} stored"
        )
        if isinstance(last.get("suggestion"), str):
            lines.append(f"suggestion: {last['suggestion']}")
        lines.append(READ_ONLY_UNRECORDED)
    else:
        lines.append("last build: none recorded")
    audited = last.get("audited") if last else None
    if isinstance(audited, dict) and any(isinstance(v, list) and v for v in audited.values()):
        counts = [f"{len(audited.get(s) or [])} {s}" for s in AUDIT_STATUSES]
        lines.append(f"its audit: {', '.join(counts)}")
        for status in (STALE, NONDETERMINISTIC):
            for example_id in audited.get(status) or []:
                lines.append(f"  {status}: {example_id}")
    return "\n".join(lines) + "\n", 0


def _last_writer(last: dict[str, Any]) -> str:
    """Whose the summary is: the last build that could write the cache, and when. A
    build using the cache read-only (a fork's pull request, a read-only restore) writes
    no summary, so its hits are never here: the line says whose they are.

    >>> _last_writer({"finished_at": 0})
    'last build that wrote the cache (at 1970-01-01T00:00:00+00:00)'
    """
    unfinished = _unfinished(last)
    finished = last.get("finished_at")
    if not unfinished and isinstance(finished, (int, float)):
        unfinished = f" (at {_when(finished)})"
    return f"last build that wrote the cache{unfinished}"


def _unfinished(last: dict[str, Any]) -> str:
    """`` (did not finish, started <when>)`` for the summary of a build that wrote it
    before its examples were all done and never again (stopped hard, killed), else ``""``
    (a summary from before the key counts as finished).

    >>> _unfinished({"finished": False, "started_at": 0})
    ' (did not finish; started 1970-01-01T00:00:00+00:00)'
    """
    if last.get("finished", True) is not False:
        return ""
    started = last.get("started_at")
    when = f"; started {_when(started)}" if isinstance(started, (int, float)) else ""
    return f" (did not finish{when})"


def _readable(store: CacheStore, name: str) -> bool:
    try:
        store.load(name)
    except EntryError:
        return False
    return True


def prune(cache: str | Path, max_size: str, reserved: int = 0) -> tuple[str, int]:
    """Delete the least recently hit entries until the cache is at most ``max_size``.

    Also removes entries that cannot be read and what killed builds left in ``tmp/``.
    Safe while a build uses the cache: an entry is renamed away before it is deleted, and
    a build reading it then has a miss. ``reserved``: bytes of the limit other parts of
    the cache folder keep (the Sphinx states, pruned first by the CLI).
    """
    try:
        store = _open(cache)
        limit = parse_size(max_size)
    except _BadInput as exc:
        return f"{exc}\n", 2
    removed, freed = 0, 0
    kept = []
    for info in store.list():
        if _readable(store, info.path.name):
            kept.append(info)
        else:
            store.remove(info.path.name)
            removed, freed = removed + 1, freed + info.size
    total = sum(info.size for info in kept)
    for info in sorted(kept, key=lambda i: i.last_used):
        if total <= max(limit - reserved, 0):
            break
        store.remove(info.path.name)
        total -= info.size
        removed, freed = removed + 1, freed + info.size
    tmp = store.folder / "tmp"
    for leftover in tmp.iterdir() if tmp.is_dir() else ():
        if time.time() - leftover.stat().st_mtime > ABANDONED_SECONDS:
            shutil.rmtree(leftover, ignore_errors=True)
    text = (
        f"cache {cache}: removed {removed} entr{'y' if removed == 1 else 'ies'} "
        f"({human_size(freed)}); {human_size(total)} left (limit {human_size(limit)})\n"
    )
    return text, 0
