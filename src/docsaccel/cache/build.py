"""The example cache in a build: look up before sphinx-gallery runs, record while each
example runs, store after.

The gallery plugin makes three calls (:mod:`docsaccel.gallery`):

1. :func:`lookup`, before sphinx-gallery runs: for each example the build will execute,
   in gallery order, find its entry for this build's context; if every dependency it
   recorded still holds, put back the files it wrote under the project root (a later
   example may read them: they are in place before that one is looked up), then its
   outputs (sphinx-gallery then skips the example as unchanged) and prepare its
   ``cached`` record; otherwise remove any local outputs' md5, so the example runs, and
   note why. An example that reads (or lists the folder of) a file an earlier example
   wrote, when that one runs again, runs again too: what it will read is not known yet.
2. :class:`CacheRecording` travels with the hook to whichever process runs each example:
   ``start`` before it, ``stop`` and ``save`` after it (dependencies written to
   :func:`docsaccel.layout.cache_deps_dir`, with a copy of the files it wrote, taken right
   after it ran so a later example changing them does not change its entry), and
   ``record_field`` for its record (why it ran).
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
import shutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docsaccel import layout, sg_compat
from docsaccel.cache.context import (
    build_context,
    code_in_settings,
    context_key,
    describe_difference,
)
from docsaccel.cache.deps import Project, changes, collect, find_root, written_files
from docsaccel.cache.fingerprint import sha256_of
from docsaccel.cache.recorder import NOT_PROJECT, Recorder, Seen
from docsaccel.cache.store import CacheStore, Entry, EntryError, MissingEntry, entry_slug
from docsaccel.contract import CACHED, OK, OVER_BUDGET, InputError, read_json
from docsaccel.examples import Example
from docsaccel.formats import write_json
from docsaccel.records import base_record
from docsaccel.schema import SchemaError, validate_record

__all__ = ["CacheBuild", "CacheRecording", "lookup"]


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
        # The recorder's import wrapper and loader: not on a page (nor without the cache).
        sg_compat.hide_frames(os.path.dirname(os.path.abspath(__file__)))
        Recorder.get().start(
            self.project.roots, self.project.excluded, code=watch_code, label=example.id
        )

    def stop(self) -> Seen:
        return Recorder.get().stop()

    def save(self, example: Example, seen: Seen) -> None:
        """Write the dependencies of the run that saw ``seen``, and keep a copy of the
        files it wrote (``<slug>.written/``, their digests in ``<slug>.written.json``)."""
        path = os.path.join(self.deps_dir, f"{_slug(example.id)}.json")
        copies = os.path.join(self.deps_dir, f"{_slug(example.id)}.written")
        try:
            seen.modules |= self.settings_code
            deps = collect(seen, self.project, example.src_file, self.granularity)
            shutil.rmtree(copies, ignore_errors=True)
            digests = {}
            for relative, source in written_files(seen, self.project).items():
                copy = os.path.join(copies, *relative.split("/"))
                os.makedirs(os.path.dirname(copy), exist_ok=True)
                shutil.copyfile(source, copy)
                digests[relative] = sha256_of(copy)
            write_json(f"{copies}.json", digests, indent=None)
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
        stored_deps: dict[str, dict[str, Any]] = {}
        for example_id, example in self.missed.items():
            record = records.get(example_id)
            if not _storable(record, on_overrun) or example.src_file in failures:
                continue
            if not sg_compat.is_unchanged(example.src_file, example.target_file):
                continue  # sphinx-gallery kept no md5: it would run the example again
            deps_path = Path(self.recording.deps_dir) / f"{_slug(example_id)}.json"
            copies = deps_path.with_name(f"{_slug(example_id)}.written")
            try:
                deps = read_json(deps_path, "dependency list")
                digests = read_json(f"{copies}.json", "list of written files")
            except InputError:
                continue
            written = {relative: copies / relative for relative in digests}
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
                # For ``cache explain``, which sees the source dir but not the settings.
                "root": _root_from_docs(self),
            }
            stored_deps[example_id] = deps
            try:
                name = self.store.entry_name(example_id, self.key)
                self.store.store(name, meta, files, written)
                stored += 1
            except (OSError, EntryError) as exc:
                self.warn(
                    f"docsaccel cache: cannot store {example_id} in {self.store.folder}: {exc}"
                )
        hint = self._granularity_hint(stored_deps)
        summary = {
            "hits": len(self.hits),
            "misses": len(self.missed),
            "stored": stored,
            "saved_seconds": round(sum(r["cache"]["saved_seconds"] for r in self.hits.values()), 3),
        }
        if hint:
            summary["suggestion"] = hint
            self.warn(f"docsaccel cache: {hint}")
        try:
            self.store.write_last_build(summary)
        except OSError as exc:  # the summary is for `cache stats`: never worth the build
            self.warn(f"docsaccel cache: cannot write its summary in {self.store.folder}: {exc}")
        return stored

    def _granularity_hint(self, stored: Mapping[str, dict[str, Any]]) -> str | None:
        """At ``module`` granularity, a suggestion when an example depends on most of
        the project's Python files (a package whose import loads everything): any edit
        of the library then re-runs it, and ``function`` would count what ran."""
        if self.recording.granularity != "module" or not stored:
            return None
        example, deps = max(
            stored.items(), key=lambda item: sum(p.endswith(".py") for p in item[1]["files"])
        )
        used = sum(p.endswith(".py") for p in deps["files"])
        total = _project_python_files(self.recording.project)
        if used < _HINT_FILES or used * 2 < total:
            return None
        return (
            f"{example} depends on {used} of the project's {total} Python files (its imports "
            "load most of them), so any edit of them runs it again; "
            'docsaccel_cache_granularity = "function" counts only the code it ran'
        )


#: ``module`` granularity is suggested only for an example using at least this many files.
_HINT_FILES = 5


def _project_python_files(project: Project) -> int:
    """How many Python files under the roots the project counts."""
    total = 0
    for root in project.roots:
        for folder, dirs, files in os.walk(root):
            dirs[:] = [
                d
                for d in dirs
                if d not in NOT_PROJECT
                and d != "__pycache__"
                and project.wants(os.path.join(folder, d))
            ]
            total += sum(
                name.endswith(".py") and project.wants(os.path.join(folder, name)) for name in files
            )
    return total


def _root_from_docs(build: CacheBuild) -> str:
    """The project root relative to the Sphinx source dir, as an entry keeps it."""
    return Path(os.path.relpath(build.recording.project.root, build.docs)).as_posix()


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
    chosen = tuple(os.path.normpath(os.path.abspath(r)) for r in roots or ())
    if chosen:
        # Paths are stored relative to the root, and a stored path never leaves it: roots
        # above the repository root found by its markers (a project without ``.git`` or
        # ``pyproject.toml``) move it up.
        root = os.path.commonpath([root, *chosen])
    excluded = [str(outdir), str(cache_dir.resolve())]
    excluded += [str(srcdir / gallery) for _, gallery in sg_compat.gallery_dirs(gallery_conf)]
    project = Project(
        root=root,
        roots=chosen or (root,),
        excluded=tuple(os.path.normpath(os.path.abspath(e)) for e in excluded),
    )
    deps_dir = layout.cache_deps_dir(outdir)
    shutil.rmtree(deps_dir, ignore_errors=True)
    deps_dir.mkdir(parents=True, exist_ok=True)
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
    #: ``{absolute path: id}`` of the files the examples that run again wrote last time.
    rewritten: dict[str, str] = {}
    # In the order they run: an example reads what those before it wrote.
    examples = list(examples)
    order = {
        src: index
        for index, src in enumerate(
            sg_compat.run_order([e.src_file for e in examples], gallery_conf)
        )
    }
    for example in sorted(examples, key=lambda e: order.get(e.src_file, len(order))):
        if not example.executable:
            continue
        reason = _look_up_one(build, example, project, rewritten)
        if reason is None:
            continue
        for relative in _known_writes(build, example):
            rewritten.setdefault(project.absolute(relative), example.id)
        build.missed[example.id] = example
        build.recording.reasons[example.id] = {"hit": False, "reason": reason}
        # Local outputs from an earlier build may be stale: make sphinx-gallery run it.
        sg_compat.forget_cached_run(Path(example.target_file))
    return build


def _known_writes(build: CacheBuild, example: Example) -> list[str]:
    """What the example wrote (relative to the root) in the run that made its entry for this
    context, else in its newest entry of another context."""
    name = build.store.entry_name(example.id, build.key)
    try:
        return list(build.store.load(name).meta["written"])
    except EntryError:
        others = build.store.others(example.id, but=name)
        return list(others[0].meta["written"]) if others else []


def _rewritten_input(entry: Entry, project: Project, rewritten: dict[str, str]) -> str | None:
    """Why the entry cannot be trusted when it used a file an example running again wrote:
    it would read what that run writes, not known yet."""
    if not rewritten:
        return None
    for relative in entry.deps["files"]:
        writer = rewritten.get(project.absolute(relative))
        if writer is not None:
            return f"{relative} is written by {writer}, which runs again"
    for relative in entry.meta["written"]:
        # Put back now, it would be overwritten by the earlier example running later.
        writer = rewritten.get(project.absolute(relative))
        if writer is not None:
            return f"{relative} is also written by {writer}, which runs again"
    for relative in entry.deps["listings"]:
        prefix = os.path.join(project.absolute(relative), "")
        for path, writer in rewritten.items():
            if path.startswith(prefix):
                return f"{relative}/ holds a file {writer} writes, which runs again"
    return None


def _state_from_a_rerun(entry: Entry, build: CacheBuild) -> str | None:
    """Why the entry cannot be trusted when it read state an earlier example left in a
    project module (a global, a filled cache) and that example is not restored: its run
    may leave something else."""
    for earlier, keys in entry.deps.get("state", {}).items():
        if earlier not in build.hits:
            return f"reads state {earlier} leaves ({keys[0]}), which runs again"
    return None


def _look_up_one(
    build: CacheBuild, example: Example, project: Project, rewritten: dict[str, str]
) -> str | None:
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
    made_root, root = entry.meta.get("root"), _root_from_docs(build)
    if made_root is not None and made_root != root:
        # Its paths are relative to another folder: a file it wrote would land elsewhere.
        return f"project root changed: {made_root} → {root}"
    if build.recording.granularity == "module" and entry.deps["code"]:
        # A project switches to ``module`` when recording functions misses what its code
        # does (a JIT given a function without the decorator syntax): an entry that kept
        # only the functions that ran cannot promise that any edit of the file re-runs it.
        return "granularity changed: function → module"
    try:
        found = changes(entry.deps, project, example.src_file)
        waits_for = _rewritten_input(entry, project, rewritten)
    except (KeyError, TypeError, AttributeError) as exc:
        build.warn(f"docsaccel cache: entry {entry.path} is malformed ({exc!r}), it runs again")
        return "entry corrupt"
    waits_for = waits_for or _state_from_a_rerun(entry, build)
    if waits_for is not None and (not found or found[0].key != "source"):
        return waits_for
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        return f"{found[0].reason}{more}"
    try:
        record = validate_record(_hit_record(example, entry.record, build.context["fast"]))
    except (SchemaError, TypeError, ValueError) as exc:
        build.warn(f"docsaccel cache: entry {entry.path} has a bad record ({exc}), it runs again")
        return "entry corrupt"
    foreign = [r for r in entry.meta["written"] if not project.wants(project.absolute(r))]
    if foreign:
        # Never recorded so (build output, .git, an environment): not this project's file.
        build.warn(
            f"docsaccel cache: entry {entry.path} would write {foreign[0]}, outside the "
            "project's files; it runs again"
        )
        return "entry corrupt"
    try:
        store.restore_written(entry, Path(project.root))
    except EntryError as exc:
        build.warn(f"docsaccel cache: entry of {example.id} is unusable, it runs again: {exc}")
        return "written file not restored"
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
