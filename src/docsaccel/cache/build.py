"""The example cache in a build: look up before sphinx-gallery runs, record while each
example runs, store after.

The gallery plugin makes three calls (:mod:`docsaccel.gallery`):

1. :func:`lookup`, before sphinx-gallery runs: for each example the build will execute,
   find its entry for this build's context; if every dependency it recorded still holds,
   put its outputs in place (sphinx-gallery then skips the example as unchanged) and
   prepare its ``cached`` record; otherwise remove any local outputs' md5, so the example
   runs, and note why.
2. :class:`CacheRecording` travels with the hook to whichever process runs each example:
   ``start`` before it, ``stop`` and ``save`` after it (dependencies written to
   ``<outdir>/docsaccel/cache-deps/``), and ``record_field`` for its record (why it ran).
3. :meth:`CacheBuild.store_executed`, once the gallery has run: every example that ran and
   succeeded (``ok``, or ``over-budget`` in warn mode) and whose outputs sphinx-gallery
   kept gets an entry; failed and interrupted examples never do.

Example (what the plugin does)::

    cache = lookup(settings, examples, gallery_conf, srcdir, outdir, warn=logger.warning)
    hook = ExampleHook.for_examples(..., cache=cache.recording)
    ...  # sphinx-gallery runs
    cache.store_executed(records, failures, stale, on_overrun)
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docsaccel.cache.context import (
    build_context,
    code_in_settings,
    context_key,
    describe_difference,
)
from docsaccel.cache.deps import Project, changes, collect, find_root
from docsaccel.cache.recorder import Recorder, Seen
from docsaccel.cache.store import CacheStore, EntryError, MissingEntry, entry_slug
from docsaccel.contract import CACHED, OK, OVER_BUDGET, InputError, read_json
from docsaccel.gallery import sg_compat
from docsaccel.gallery.plan import Example
from docsaccel.gallery.records import base_record, write_json
from docsaccel.schema import SchemaError, validate_record

__all__ = ["CacheBuild", "CacheRecording", "lookup"]

_DEPS_DIR = "cache-deps"


def _slug(example_id: str) -> str:
    return entry_slug(example_id)


@dataclass
class CacheRecording:
    """What the hook needs to record dependencies in any process (pickled to workers)."""

    deps_dir: str
    project: Project
    granularity: str
    #: ``{example id: the record's "cache" value}`` for the examples that missed.
    reasons: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Modules sphinx-gallery runs with every example (:func:`.context.code_in_settings`).
    settings_code: frozenset[str] = frozenset()

    def start(self, example: Example) -> None:
        watch_code = self.project.wants if self.granularity == "function" else None
        Recorder.get().start(self.project.roots, self.project.excluded, code=watch_code)

    def stop(self) -> Seen:
        return Recorder.get().stop()

    def save(self, example: Example, seen: Seen) -> None:
        """Write the dependencies of the run that saw ``seen``."""
        path = os.path.join(self.deps_dir, f"{_slug(example.id)}.json")
        try:
            seen.modules |= self.settings_code
            deps = collect(seen, self.project, example.src_file, self.granularity)
            write_json(path, deps, indent=None)
        except Exception:  # no dependencies means no entry: a miss, never a broken build
            with contextlib.suppress(OSError):
                os.unlink(path)

    def record_field(self, example_id: str) -> dict[str, Any] | None:
        return self.reasons.get(example_id)


@dataclass
class CacheBuild:
    """The cache's state in one build (main process)."""

    store: CacheStore
    context: dict[str, Any]
    key: str
    docs: Path
    recording: CacheRecording
    #: ``{example id: cached record}`` of the hits.
    hits: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: The examples looked up that missed, by id.
    missed: dict[str, Example] = field(default_factory=dict)
    warn: Callable[[str], None] = print

    def store_executed(
        self,
        records: Mapping[str, dict[str, Any]],
        failures: Mapping[str, str],
        on_overrun: str,
    ) -> int:
        """Store an entry for each example that missed and ran successfully; return how
        many. Also writes the cache's ``last-build.json``."""
        stored = 0
        for example_id, example in self.missed.items():
            record = records.get(example_id)
            if not _storable(record, on_overrun) or example.src_file in failures:
                continue
            if not sg_compat.is_unchanged(example.src_file, example.target_file):
                continue  # sphinx-gallery kept no md5: it would run the example again
            deps_path = Path(self.recording.deps_dir) / f"{_slug(example_id)}.json"
            try:
                deps = read_json(deps_path, "dependency list")
            except InputError:
                continue
            files = {
                path.relative_to(self.docs).as_posix(): path
                for path in sg_compat.output_files(Path(example.target_file))
            }
            meta = {
                "id": example_id,
                "context": self.context,
                "deps": deps,
                "record": {k: v for k, v in record.items() if k != "cache"},
                "granularity": self.recording.granularity,
            }
            try:
                self.store.store(self.store.entry_name(example_id, self.key), meta, files)
                stored += 1
            except (OSError, EntryError) as exc:
                self.warn(
                    f"docsaccel cache: cannot store {example_id} in {self.store.folder}: {exc}"
                )
        summary = {
            "hits": len(self.hits),
            "misses": len(self.missed),
            "stored": stored,
            "saved_seconds": round(sum(r["cache"]["saved_seconds"] for r in self.hits.values()), 3),
        }
        try:
            self.store.write_last_build(summary)
        except OSError as exc:  # the summary is for `cache stats`: never worth the build
            self.warn(f"docsaccel cache: cannot write its summary in {self.store.folder}: {exc}")
        return stored


def _storable(record: dict[str, Any] | None, on_overrun: str) -> bool:
    if record is None or record.get("pid") is None:
        return False
    return record["status"] == OK or (record["status"] == OVER_BUDGET and on_overrun == "warn")


def lookup(
    *,
    cache_dir: Path,
    granularity: str,
    roots: Iterable[Path] | None,
    env_names: Iterable[str],
    fast: bool,
    examples: Iterable[Example],
    gallery_conf: dict[str, Any],
    confdir: Path,
    srcdir: Path,
    outdir: Path,
    warn: Callable[[str], None],
) -> CacheBuild:
    """Look every example the build will execute up in the cache (see the module doc)."""
    root = find_root(confdir)
    excluded = [str(outdir), str(cache_dir.resolve())]
    excluded += [str(srcdir / gallery) for _, gallery in sg_compat.gallery_dirs(gallery_conf)]
    project = Project(
        root=root,
        roots=tuple(os.path.normpath(os.path.abspath(r)) for r in roots) if roots else (root,),
        excluded=tuple(os.path.normpath(os.path.abspath(e)) for e in excluded),
    )
    deps_dir = outdir / "docsaccel" / _DEPS_DIR
    deps_dir.mkdir(parents=True, exist_ok=True)
    for stale in deps_dir.glob("*.json"):
        stale.unlink(missing_ok=True)
    context = build_context(fast, gallery_conf, env_names)
    key = context_key(context)
    build = CacheBuild(
        store=CacheStore(cache_dir),
        context=context,
        key=key,
        docs=Path(srcdir),
        recording=CacheRecording(
            str(deps_dir), project, granularity, settings_code=code_in_settings(gallery_conf)
        ),
        warn=warn,
    )
    for example in examples:
        if not example.executable:
            continue
        reason = _look_up_one(build, example, project)
        if reason is None:
            continue
        build.missed[example.id] = example
        build.recording.reasons[example.id] = {"hit": False, "reason": reason}
        # Local outputs from an earlier build may be stale: make sphinx-gallery run it.
        sg_compat.forget_cached_run(Path(example.target_file))
    return build


def _look_up_one(build: CacheBuild, example: Example, project: Project) -> str | None:
    """Restore the example's entry and return ``None`` on a hit; else say why it missed."""
    store = build.store
    name = store.entry_name(example.id, build.key)
    try:
        entry = store.load(name)
    except MissingEntry:
        others = store.others(example.id, but=name)
        if not others:
            return "new example"
        return describe_difference(others[0].context, build.context)
    except EntryError as exc:
        build.warn(f"docsaccel cache: entry of {example.id} is unusable, it runs again: {exc}")
        return "entry corrupt"
    try:
        found = changes(entry.deps, project, example.src_file)
    except (KeyError, TypeError, AttributeError) as exc:
        build.warn(f"docsaccel cache: entry {entry.path} is malformed ({exc!r}), it runs again")
        return "entry corrupt"
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        return f"{found[0].reason}{more}"
    try:
        record = validate_record(_hit_record(example, entry.record, build.context["fast"]))
    except (SchemaError, TypeError, ValueError) as exc:
        build.warn(f"docsaccel cache: entry {entry.path} has a bad record ({exc}), it runs again")
        return "entry corrupt"
    try:
        store.restore(entry, build.docs)
    except EntryError as exc:
        build.warn(f"docsaccel cache: entry of {example.id} is unusable, it runs again: {exc}")
        return "entry corrupt"
    build.hits[example.id] = record
    return None


_KEPT = ("wall_seconds", "cpu_seconds", "peak_rss_bytes", "knobs", "render", "started_at")
_KEPT += ("finished_at",)


def _hit_record(example: Example, original: dict[str, Any], fast: bool) -> dict[str, Any]:
    fields = {k: original[k] for k in _KEPT if k in original}
    saved = float(original.get("wall_seconds") or 0.0)
    return base_record(
        example, CACHED, fast, **fields, cache={"hit": True, "saved_seconds": round(saved, 3)}
    )
