"""The example cache in a build: look up before sphinx-gallery runs, record while each
example runs, store after.

The design, in full: the caching guide's *Design* section.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docsaccel import intercept, layout, sg_compat
from docsaccel.cache import example_logs, not_stored
from docsaccel.cache.audit import (
    BETWEEN_RUNS,
    Outputs,
    copy_outputs,
    dependency_labels,
    differences,
    entry_outputs,
    unexplained,
)
from docsaccel.cache.carried import Rerun, must_run
from docsaccel.cache.children import Children, merge_seen, start_recording
from docsaccel.cache.context import (
    build_context,
    code_in_settings,
    context_key,
    describe_difference,
)
from docsaccel.cache.decisions import ExampleDecision, decisions_from_json
from docsaccel.cache.deps import (
    CHILDREN_KEY,
    Change,
    Project,
    changes,
    collect,
    project_roots,
    read_first_files,
    written_files,
)
from docsaccel.cache.early import carry_early_reads
from docsaccel.cache.fingerprint import code_facts, modified_ns, sha256_of
from docsaccel.cache.loaded import python_sources
from docsaccel.cache.not_stored import RUNS_EVERY_BUILD, UNSTORABLE, NotStored
from docsaccel.cache.placement import misplaced, placement
from docsaccel.cache.recorder import NOT_PROJECT, Recorder, Seen
from docsaccel.cache.shown_paths import path_forms, shows
from docsaccel.cache.store import (
    CacheFolderError,
    CacheStore,
    Entry,
    EntryError,
    MissingEntry,
    Stamp,
    remove_created,
)
from docsaccel.contract import (
    AUDIT_REASON,
    AUDIT_STATUSES,
    CACHED,
    FAILED,
    NONDETERMINISTIC,
    OK,
    OVER_BUDGET,
    STALE,
    VERIFIED,
    InputError,
    read_json,
)
from docsaccel.examples import Example
from docsaccel.formats import replace_atomically, write_json
from docsaccel.layout import id_slug
from docsaccel.outputs import missing_references
from docsaccel.records import base_record, run_outputs
from docsaccel.schema import (
    MEASURED_FIELDS,
    CacheField,
    ExampleRecord,
    SchemaError,
    validate_record,
)
from docsaccel.sphinx_logs import Logged

__all__ = ["CacheBuild", "CacheRecording", "lookup"]


def _runs_every_build(unknown: list[str], removed: Iterable[str], project: Project) -> list[str]:
    """Why an example's run can make no entry, though nothing went wrong: what modules
    it uses read is unknown, or it took away files it did not write (a restore puts back
    what a run wrote; it never removes a user's file, so a later example would see the
    file a clean build removed)."""
    why = []
    if unknown:
        files = ", ".join(unknown)
        why.append(f"what {files} read when imported before docsaccel loaded is unknown")
    if removed:
        gone = sorted(project.relative(path) for path in removed)
        more = f" (and {len(gone) - 1} more)" if len(gone) > 1 else ""
        why.append(f"it removed {gone[0]}{more}, which it did not write, and a restore would not")
    return why


def _slug(example_id: str) -> str:
    return id_slug(example_id)


def _not_stored_path(deps_dir: str | Path, example_id: str) -> str:
    """Where the example's run in this build says why it makes no entry, if it makes none."""
    return os.path.join(deps_dir, f"{_slug(example_id)}{not_stored.SUFFIX}")


def _logged_path(deps_dir: str | Path, example_id: str) -> str:
    """Where the warnings of the example's run in this build are kept until it is stored."""
    return os.path.join(deps_dir, f"{_slug(example_id)}{example_logs.LOGGED_SUFFIX}")


@dataclass
class CacheRecording:
    """What the hook needs to record dependencies in any process (pickled to workers)."""

    deps_dir: str
    project: Project
    granularity: str
    #: ``{example id: the record's "cache" value}`` for the examples that missed.
    reasons: dict[str, CacheField] = field(default_factory=dict)
    #: Modules sphinx-gallery runs with every example (:func:`.context.code_in_settings`).
    settings_code: frozenset[str] = frozenset()
    #: When the cache began to record this build, and the running example (``time_ns``).
    started_ns: int = field(default_factory=time.time_ns)
    example_started_ns: int = 0
    #: ``{module file: its modification time when first seen loaded}`` in this process, -1
    #: when it was modified after the build began, before the first example (its module
    #: may hold the code from before): a module's code is what its file held when loaded.
    module_stamps: dict[str, int] = field(default_factory=dict)
    #: What the running example's processing logged (:mod:`.example_logs`), once it ended.
    logged: list[Logged] = field(default_factory=list, repr=False)

    def start(self, example: Example) -> None:
        self._stamp_loaded_modules()
        self.example_started_ns = time.time_ns()
        # The import wrappers and the recorder's loader: not on a page (nor without the
        # cache).
        sg_compat.hide_frames(os.path.abspath(intercept.__file__))
        sg_compat.hide_frames(os.path.dirname(os.path.abspath(__file__)))
        # Its children first: one forked as soon as it starts records for it.
        Children.get().begin(example.id, self.deps_dir, self.project, self.granularity)
        start_recording(self.project, self.granularity, example.id)
        example_logs.start()

    def stop(self) -> Seen:
        seen = Recorder.get().stop()
        Children.get().end()
        self.logged = example_logs.stop()
        return seen

    def watch_prelude(self) -> None:
        """Until the first example: what project modules the build imports read."""
        Recorder.get().carried.count_readers(self.project.owns_module)
        Recorder.get().phases.watch_prelude(self.project.roots, self.project.excluded)

    def end_prelude(self) -> None:
        Recorder.get().phases.end_prelude()

    def save(self, example: Example, seen: Seen) -> None:
        """Write the dependencies of the run that saw ``seen``, with what its child
        processes ran (call it once they were ended), and keep a copy of the files it
        wrote (``<slug>.written/``, their digests in ``<slug>.written.json``). When a
        child may have run more than it recorded, or no entry could restore the run, a
        :class:`~.not_stored.NotStored` record says why in their place. What its
        processing logged goes beside them (``<slug>.logged.json``): an entry restored
        gives it again."""
        path = os.path.join(self.deps_dir, f"{_slug(example.id)}.json")
        declined = _not_stored_path(self.deps_dir, example.id)
        copies = os.path.join(self.deps_dir, f"{_slug(example.id)}.written")
        logged, self.logged = self.logged, []
        # One of the two files holds what this run left: never one of an earlier run.
        for stale in (path, declined):
            with contextlib.suppress(OSError):
                os.unlink(stale)
        try:
            example_logs.write(_logged_path(self.deps_dir, example.id), logged)
            followed = Children.get().collect(example.id, self.deps_dir, seen.modules)
            if followed.problems:
                NotStored(UNSTORABLE, tuple(followed.problems)).write(declined)
                return
            merge_seen(seen, followed.seen)
            seen.modules |= self.settings_code
            found = collect(seen, self.project, example.src_file, self.granularity)
            unknown = sorted(
                {self.project.relative(p) for p in seen.unknown_reads} & set(found.files)
            )
            every_build = _runs_every_build(unknown, seen.removed, self.project)
            if every_build:
                NotStored(RUNS_EVERY_BUILD, tuple(every_build)).write(declined)
                return
            deps = found.to_json()
            edited = self._edited_while_running(example, deps, seen)
            if edited:
                more = f" (and {len(edited) - 1} more)" if len(edited) > 1 else ""
                problem = f"{edited[0]}{more} changed while it ran"
                NotStored(UNSTORABLE, (problem,)).write(declined)
                return
            deps[CHILDREN_KEY] = {
                "followed": followed.count,
                "not_followed": followed.not_followed,
            }
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
            for partial in (path, declined):
                with contextlib.suppress(OSError):
                    os.unlink(partial)

    def _stamp_loaded_modules(self) -> None:
        """Note the modification time of each module file loaded since the last example
        started (one ``stat`` per module, once)."""
        for path in python_sources():
            if path in self.module_stamps:
                continue
            stamp = modified_ns(path)
            if not self.example_started_ns and stamp >= self.started_ns:
                stamp = -1
            self.module_stamps[path] = stamp

    def _edited_while_running(
        self, example: Example, deps: Mapping[str, Any], seen: Seen
    ) -> list[str]:
        """The inputs (relative paths) modified after the run used them, whose digests,
        taken now, may not be what it ran with: a module loaded before the example since
        it was first seen loaded, any other file or the example's source since the example
        started. Files it wrote are left out: their digests are of what it wrote, or of
        what it read before writing them."""
        mine = set(read_first_files(seen, self.project))
        mine |= {self.project.relative(path) for path in seen.written}
        found: list[str] = []
        for relative in sorted({*deps["files"], *deps.get("code", {})} - mine):
            path = os.path.normpath(self.project.absolute(relative))
            stamp = self.module_stamps.get(path)
            if stamp is not None:
                edited = modified_ns(path) != stamp
            else:
                edited = modified_ns(path) >= self.example_started_ns > 0
            if edited:
                found.append(relative)
        if modified_ns(example.src_file) >= self.example_started_ns > 0:
            found.append(self.project.relative(example.src_file))
        return found

    def record_field(self, example_id: str) -> CacheField | None:
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
    hits: dict[str, ExampleRecord] = field(default_factory=dict)
    #: ``{example id: the entry restored}`` of the hits.
    restored: dict[str, Entry] = field(default_factory=dict)
    #: The examples looked up that missed, by id (those run to be audited included).
    missed: dict[str, Example] = field(default_factory=dict)
    warn: Callable[[str], None] = print
    info: Callable[[str], None] = print
    #: The share of the examples the cache would restore that run to be audited instead.
    verify: float = 0.0
    #: ``{example id: the entry it would have restored}`` of the examples audited.
    audits: dict[str, Entry] = field(default_factory=dict)
    #: ``{example id: audit status}`` once :meth:`audit` has compared them.
    audited: dict[str, str] = field(default_factory=dict)
    #: The build's ``sphinx_gallery_conf``: where it writes each example's outputs.
    gallery_conf: dict[str, Any] = field(default_factory=dict)
    #: The files this lookup's restores made where no file was, as they left them: all
    #: that undoing the lookup (:func:`_withdraw`) may delete.
    created: dict[Path, Stamp] = field(default_factory=dict)
    #: A cache folder the build may not write: it restores what the lookup finds and
    #: stores nothing (no entry, no summary).
    read_only: bool = False
    #: ``sys.path`` as the build's ``conf.py`` left it, which resolved the entries'
    #: modules and distributions: ``cache explain`` judges them with it (last-build.json).
    sys_path: list[str] = field(default_factory=list)
    #: ``{example id: its dependencies}`` of the examples stored so far in this build
    #: (each is stored once: as the next one starts, or once the gallery has run).
    stored: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: ``{example id: why}`` of the examples whose dependencies say they make no entry:
    #: said once, not at each call of :meth:`store_executed`, and kept in
    #: ``last-build.json`` so the next build's reason to run them says why.
    declined: dict[str, str] = field(default_factory=dict)
    #: ``{example id: its decision}`` in the last build that wrote the cache's summary
    #: (``last-build.json``): why an example with no entry has none.
    last_decisions: dict[str, ExampleDecision] = field(default_factory=dict)
    #: How many entries this build wrote (an audit that verified an entry writes none).
    entries_written: int = 0
    #: When the build started looking up (``time.time()``), for ``cache stats``.
    started_at: float = field(default_factory=time.time)
    _random: random.Random = field(default_factory=random.Random, repr=False)

    def replay_warnings(self) -> int:
        """Log again what the processing of each restored example logged, in the order
        they run (:mod:`.example_logs`): sphinx-gallery skips them, and a build restoring an
        example must warn as the build that ran it. Returns how many were logged."""
        if self.gallery_conf.get("run_stale_examples"):
            return 0  # sphinx-gallery runs the restored examples again: they warn themselves
        count = 0
        for entry in self.restored.values():
            logged = example_logs.from_entry(entry.meta)  # checked when it was loaded
            example_logs.replay(logged, entry.meta.get("made_in"), self.recording.project.root)
            count += len(logged)
        return count

    def placement(self, example: Example) -> dict[str, Any]:
        """Where this build writes the example's outputs (:mod:`.placement`)."""
        return placement(example.target_file, self.docs, self.gallery_conf)

    def audit_next(self) -> bool:
        """Whether the next example the cache would restore runs to be audited instead."""
        return self.verify >= 1 or (self.verify > 0 and self._random.random() < self.verify)

    def audit(self, records: dict[str, ExampleRecord], failures: Mapping[str, str]) -> list[str]:
        """Compare each audited example's fresh outputs with its entry's (running it a
        second time when they differ, :mod:`.audit`), and put the verdict in its record's
        ``cache`` value (``audit``: status, differences, the entry's dependencies). The
        ids of the records it changed."""
        changed = []
        for example_id, entry in self.audits.items():
            example, record = self.missed[example_id], records.get(example_id)
            if record is None or record.get("pid") is None:
                continue  # not run (the build stopped first): nothing to compare
            verdict = self._audit_one(example, entry, record, failures)
            cache = dict(record.get("cache") or {"hit": False, "reason": AUDIT_REASON})
            records[example_id] = {**record, "cache": {**cache, "audit": verdict}}
            self.audited[example_id] = verdict["status"]
            changed.append(example_id)
        return changed

    def _audit_one(
        self,
        example: Example,
        entry: Entry,
        record: dict[str, Any],
        failures: Mapping[str, str],
    ) -> dict[str, Any]:
        cached = entry_outputs(entry)
        first = self._fresh_outputs(example)
        failed = _failed(record, example, failures)
        found = [f"the fresh run failed: {failed}"] if failed else differences(cached, first)
        verdict: dict[str, Any] = {"entry": entry.name}
        if not found:
            verdict["status"] = VERIFIED
            return verdict
        kept = copy_outputs(first, Path(self.recording.deps_dir) / "audit" / _slug(example.id))
        deps_dir = self.recording.deps_dir
        left = (
            Path(deps_dir, f"{_slug(example.id)}.json"),
            Path(_not_stored_path(deps_dir, example.id)),
        )
        in_order = {path: path.read_bytes() if path.is_file() else None for path in left}
        started = time.perf_counter()
        passed = sg_compat.run_again(example.src_file, example.target_file, self.gallery_conf)
        verdict["second_run_seconds"] = round(time.perf_counter() - started, 3)
        # The entry keeps the dependencies of the run in the build's order: run again after
        # every example, it met the state the examples after it left, which no build shows
        # it (an entry naming them would never be restored, or be wrong).
        for path, content in in_order.items():
            if content is None:
                path.unlink(missing_ok=True)
            else:
                replace_atomically(path, content)
        second = self._fresh_outputs(example)
        if not passed:
            varied = [] if failed else ["the second run failed"]
        elif failed:
            varied = [f"the first run failed ({failed}), the second did not"]
        else:
            varied = differences(kept, second, BETWEEN_RUNS)
        # Runs that vary explain only what varies: what both runs agree on and the entry
        # has otherwise is stale all the same.
        beyond = unexplained(cached, kept, second) if varied and passed and not failed else []
        if beyond:
            found, varied = beyond, []
        if varied:
            verdict.update(status=NONDETERMINISTIC, differences=varied)
            self.info(
                f"docsaccel cache: audit: {example.id} is not reproducible: two runs differ: "
                f"{varied[0]}; seed what varies (see the caching guide)"
            )
        else:
            labels = dependency_labels(entry.deps)
            verdict.update(status=STALE, differences=found, dependencies=labels)
            self.warn(
                f"docsaccel cache: audit: the entry {entry.name} of {example.id} is stale: "
                f"a fresh run differs from it ({found[0]}); its dependencies: "
                f"{', '.join(labels)}"
            )
        return verdict

    def _fresh_outputs(self, example: Example) -> Outputs:
        """The outputs of the example's latest run in this build."""
        listed = run_outputs(example.target_file) or []
        files = {relative: self.docs / relative for relative in listed}
        copies = Path(self.recording.deps_dir) / f"{_slug(example.id)}.written"
        try:
            digests = read_json(f"{copies}.json", "list of written files")
        except InputError:
            digests = {}
        written = {relative: copies / relative for relative in digests}
        return Outputs(files={k: v for k, v in files.items() if v.is_file()}, written=written)

    def store_executed(
        self,
        records: Mapping[str, ExampleRecord],
        failures: Mapping[str, str],
        on_overrun: str,
        *,
        before_end: bool = False,
    ) -> int:
        """Store an entry for each example that missed and ran successfully; return how
        many. Also writes the cache's ``last-build.json``.

        ``before_end``: called before the gallery's end, as each example starts (the
        examples before it have finished) or as the build stops (Ctrl-C, ``SIGTERM``, an
        error): the examples that finished are stored then, so a build stopped, or killed
        outright, leaves them for the next build to restore rather than run again; those
        run for an audit wait for it (they keep the entry they are compared with). Each
        example is stored once. Returns how many this call stored.
        """
        if self.read_only:
            return 0
        stored = 0
        stored_deps = self.stored
        for example_id, example in self.missed.items():
            record = records.get(example_id)
            if example_id in stored_deps or example_id in self.declined:
                continue
            if example.src_file in failures:
                continue
            if not _storable(record, on_overrun):
                continue
            if before_end and example_id in self.audits:
                continue
            if self.audited.get(example_id) == VERIFIED:
                self.store.touch(self.audits[example_id])  # it holds what the run made
                stored_deps[example_id] = self.audits[example_id].deps
                continue
            if not sg_compat.is_unchanged(example.src_file, example.target_file):
                continue  # sphinx-gallery kept no md5: it would run the example again
            deps_path = Path(self.recording.deps_dir) / f"{_slug(example_id)}.json"
            copies = deps_path.with_name(f"{_slug(example_id)}.written")
            why_not = not_stored.read(_not_stored_path(self.recording.deps_dir, example_id))
            if why_not is not None:
                self.declined[example_id] = why_not.why
                say = self.info if why_not.quiet else self.warn
                say(why_not.message(example_id))
                continue
            try:
                deps = read_json(deps_path, "dependency list")
                digests = read_json(f"{copies}.json", "list of written files")
                logged = example_logs.read(_logged_path(self.recording.deps_dir, example_id))
            except (InputError, ValueError):
                continue  # no entry without what its run said
            written = {relative: copies / relative for relative in digests}
            outputs = run_outputs(example.target_file)
            if outputs is None:
                self.warn(
                    f"docsaccel cache: not storing {example_id}: the files its run wrote "
                    "are not known"
                )
                continue
            files = {relative: self.docs / relative for relative in outputs}
            meta = {
                "id": example_id,
                "context": self.context,
                "deps": deps,
                "record": {k: v for k, v in record.items() if k != "cache"},
                # Given again by a build that restores it (:mod:`.example_logs`).
                "warnings": [w.to_json() for w in logged],
                "granularity": self.recording.granularity,
                # For ``cache explain``, which sees the source dir but not the settings.
                "root": _root_from_docs(self),
                # Where it ran: an output showing that folder is wrong in another one.
                "made_in": self.recording.project.root,
                **self.placement(example),
            }
            try:
                name = self.store.entry_name(example_id, self.key)
                self.store.store(name, meta, files, written)
                stored_deps[example_id] = deps
                stored += 1
                self.entries_written += 1
            except (OSError, EntryError, CacheFolderError) as exc:
                self.warn(
                    f"docsaccel cache: cannot store {example_id} in {self.store.folder}: {exc}"
                )
        if before_end and not stored:
            return 0  # nothing new: the summary written last still holds
        self._write_summary(records, log_hint=not before_end, finished=not before_end)
        return stored

    def note_started(self) -> None:
        """Write ``last-build.json`` as this build's, not finished, once its lookups are
        done and before any example runs: a build stopped hard or killed later (which
        may store nothing) leaves ``cache stats`` its own hits, saying it did not
        finish, never the previous build's."""
        if not self.read_only:
            self._write_summary({}, log_hint=False, finished=False)

    def _write_summary(
        self, records: Mapping[str, dict[str, Any]], log_hint: bool, finished: bool
    ) -> None:
        """Write ``last-build.json``: hits, misses, what was stored, and the decision of
        each example of ``records`` (the build's records as they stand); ``log_hint``:
        also say the granularity hint in the build log (once, at the gallery's end);
        ``finished``: the build's examples are all done (the gallery's end)."""
        # Of the examples restored too: the hint is a property of what an example depends
        # on, so a build restoring it says it as the build that ran it did. A suggestion,
        # not a warning: under ``-W`` the cache must not fail a build that passes without.
        kept = {example_id: entry.deps for example_id, entry in self.restored.items()}
        hint = self._granularity_hint({**kept, **self.stored})
        summary = {
            "finished": finished,
            "started_at": self.started_at,
            "hits": len(self.hits),
            "misses": len(self.missed),
            "stored": self.entries_written,
            "saved_seconds": round(sum(r["cache"]["saved_seconds"] for r in self.hits.values()), 3),
            "audited": {
                s: sorted(i for i, v in self.audited.items() if v == s) for s in AUDIT_STATUSES
            },
            # For ``cache explain``: the build's own view of the project, and what it
            # decided for each example (its reason to run, its failure).
            "root": self.recording.project.root,
            "sys_path": self.sys_path,
            # An unfinished build keeps what the last one decided for the examples it
            # has not reached, so the next build still says why they have no entry.
            "examples": {
                i: d.to_json()
                for i, d in {
                    **({} if finished else self.last_decisions),
                    **_decisions(records, self.declined),
                }.items()
            },
        }
        if hint:
            summary["suggestion"] = hint
            if log_hint:
                self.info(f"docsaccel cache: {hint}")
        try:
            self.store.write_last_build(summary)
        except OSError as exc:  # the summary is for `cache stats`: never worth the build
            self.warn(f"docsaccel cache: cannot write its summary in {self.store.folder}: {exc}")

    def withdraw(
        self, example_ids: Iterable[str], records: Mapping[str, ExampleRecord]
    ) -> list[str]:
        """Take back the entries this build stored of ``example_ids``, whose runs turned
        out not to pass after they were stored (what one left kept the build's process
        from ending): the next build runs them again, as any failed example. Writes
        ``last-build.json`` again from ``records``, the build's final records, so
        ``cache stats`` and ``cache explain`` say what the report says. Returns the ids
        withdrawn."""
        withdrawn = []
        for example_id in sorted(set(example_ids)):
            if self.stored.pop(example_id, None) is None:
                continue
            try:
                self.store.remove(self.store.entry_name(example_id, self.key))
            except OSError as exc:
                self.warn(f"docsaccel cache: cannot withdraw {example_id}: {exc}")
                continue
            self.entries_written -= 1
            withdrawn.append(example_id)
        self._write_summary(records, log_hint=False, finished=True)
        return withdrawn

    def _granularity_hint(self, stored: Mapping[str, dict[str, Any]]) -> str | None:
        """At ``module`` granularity, a suggestion when an example depends on most of
        the project's Python files (a package whose import loads everything): any edit
        of the library then re-runs it, and ``function`` would count what ran."""
        if self.recording.granularity != "module" or not stored:
            return None
        example, deps = max(
            sorted(stored.items()),
            key=lambda item: sum(p.endswith(".py") for p in item[1]["files"]),
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


def _decisions(
    records: Mapping[str, dict[str, Any]], declined: Mapping[str, str]
) -> dict[str, ExampleDecision]:
    """``{example id: decision}`` of the build's records: what ``cache explain`` says the
    last build did with an example, and why the next build runs it."""
    found = {}
    for example_id, record in records.items():
        cache = record.get("cache")
        reason = cache.get("reason") if isinstance(cache, dict) else None
        error = str(record["error"]).strip().splitlines()[-1] if record.get("error") else None
        found[example_id] = ExampleDecision(
            status=record.get("status"),
            reason=reason if isinstance(reason, str) else None,
            error=error,
            not_stored=declined.get(example_id),
        )
    return found


def _never_stored(last: ExampleDecision | None) -> str:
    """Why an example has no entry, from what the last build did with it."""
    if last is not None and last.not_stored is not None:
        return f"no entry: the last build did not store it ({last.not_stored})"
    if last is not None and last.status == FAILED:
        return "no entry: it failed in the last build (a failed example is never stored)"
    return "new example"


def _root_from_docs(build: CacheBuild) -> str:
    """The project root relative to the Sphinx source dir, as an entry keeps it."""
    return Path(os.path.relpath(build.recording.project.root, build.docs)).as_posix()


def _shows_where_it_ran(store: CacheStore, entry: Entry, root: str) -> str | None:
    """Why an entry made in another checkout is not restored into this one: a file of it
    shows the folder it ran in (a warning printed with the example's path), where this
    checkout's run shows this one's (``None``: same folder, or no file shows it). When in
    doubt (no folder recorded), the example runs again; a file that cannot be read is left
    to the restore, which warns naming it and runs the example."""
    made_in = entry.meta.get("made_in")
    if made_in == root:
        return None
    if not isinstance(made_in, str):
        return "the folder it ran in is unknown"
    forms = path_forms(made_in)
    for part in ("files", "written"):
        for relative in sorted(entry.meta.get(part) or {}):
            try:
                data = store.file_of(entry, part, relative).read_bytes()
            except OSError:
                continue  # the restore that follows names the file and runs the example
            if shows(data, forms):
                return f"its {relative} shows the folder it ran in: {made_in}"
    return None


def _failed(record: dict[str, Any], example: Example, failures: Mapping[str, str]) -> str:
    """Why the example's run did not pass (its error), ``""`` when it did."""
    if record["status"] in (OK, OVER_BUDGET) and example.src_file not in failures:
        return ""
    return str(record.get("error") or record["status"]).strip().splitlines()[-1]


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
    info: Callable[[str], None] = print,
    verify: float = 0.0,
    read_only: bool = False,
) -> CacheBuild:
    """Look every example the build will execute up in the cache (see the caching guide's design);
    ``verify``: the share of those it would restore that run to be audited instead;
    ``read_only``: restore, never store (a folder the build may not write)."""
    root, chosen, note = project_roots(confdir, roots)
    if note is not None:
        info(f"docsaccel cache: {note}")
    excluded = [str(outdir), str(cache_dir.resolve())]
    excluded += [str(srcdir / gallery) for _, gallery in sg_compat.gallery_dirs(gallery_conf)]
    project = Project(
        root=root,
        roots=chosen,
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
        info=info,
        verify=verify,
        gallery_conf=gallery_conf,
        sys_path=list(sys.path),
        read_only=read_only,
    )
    last = build.store.read_last_build() or {}
    build.last_decisions = decisions_from_json(last.get("examples"))
    # In the order they run: an example reads what those before it wrote.
    examples = list(examples)
    order = {
        src: index
        for index, src in enumerate(
            sg_compat.run_order([e.src_file for e in examples], gallery_conf)
        )
    }
    ordered = [
        e for e in sorted(examples, key=lambda e: order.get(e.src_file, len(order))) if e.executable
    ]
    # When in doubt, run it: a restored example would be missing from the API pages.
    unknown = carry_early_reads(project, str(confdir))
    if unknown is not None:
        info(f"docsaccel: {unknown}")
    lost = sg_compat.restoring_loses_backreferences(gallery_conf)
    if lost is not None:
        info(f"docsaccel cache: {lost}")
    #: ``{example id: why it runs}`` of the examples that run without being looked up:
    #: all of them when restoring loses something, else those run for the state they leave.
    forced: dict[str, str] = dict.fromkeys((e.id for e in ordered), lost) if lost else {}
    #: ``{example id: why}`` of those run for the state they leave.
    readers: dict[str, Rerun] = {}
    while True:
        changed = _look_up_all(build, ordered, project, forced, readers)
        if not build.restored:
            return build
        more = must_run(
            [e.id for e in ordered],
            missed={i: _own_entry(build, i) for i in build.missed},
            restored=build.restored,
            changed=changed,
            facts=lambda relative: code_facts(project.absolute(relative)),
            parallel=bool(gallery_conf.get("parallel")),
            why={i: build.recording.reasons[i]["reason"] for i in build.missed},
        )
        if not more:
            return build
        # Those restored run before the example reading their state: look every example
        # up again, as after any example that runs again.
        forced.update((example, rerun.reason) for example, rerun in more.items())
        readers.update(more)
        _withdraw(build)


def _look_up_all(
    build: CacheBuild,
    ordered: list[Example],
    project: Project,
    forced: Mapping[str, str],
    readers: Mapping[str, Rerun],
) -> dict[str, list[Change]]:
    """Look the examples up in the order they run (``forced``: those that run, with why;
    ``readers``: of those run for the state they leave, why);
    ``{example id: what changed}`` of the misses."""
    #: ``{absolute path: id}`` of the files the examples that run again wrote last time.
    rewritten: dict[str, str] = {}
    changed: dict[str, list[Change]] = {}
    for example in ordered:
        reason = forced.get(example.id)
        if reason is None:
            reason = _look_up_one(build, example, project, rewritten, changed, readers)
            if reason is None:
                continue
        for relative in _known_writes(build, example):
            rewritten.setdefault(project.absolute(relative), example.id)
        build.missed[example.id] = example
        build.recording.reasons[example.id] = {"hit": False, "reason": reason}
        # Local outputs from an earlier build may be stale: make sphinx-gallery run it.
        sg_compat.forget_cached_run(Path(example.target_file))
    return changed


def _own_entry(build: CacheBuild, example_id: str) -> Entry | None:
    """The example's entry for this build's context, ``None`` when there is none."""
    try:
        return build.store.load(build.store.entry_name(example_id, build.key))
    except EntryError:
        return None


def _withdraw(build: CacheBuild) -> None:
    """Undo a lookup: the files its restores made are taken away (an example that runs
    may make fewer files) and every example is looked up afresh. Only those: a file that
    was there before a restore replaced it, or that changed since, is left in place (the
    cache never deletes a file it did not write)."""
    remove_created(build.created)
    build.created.clear()
    build.hits.clear()
    build.restored.clear()
    build.missed.clear()
    build.audits.clear()
    build.recording.reasons.clear()


def _known_writes(build: CacheBuild, example: Example) -> list[str]:
    """What the example wrote (relative to the root) in the run that made its entry for this
    context, else in its newest entry of another context."""
    name = build.store.entry_name(example.id, build.key)
    try:
        return list(build.store.load(name).meta["written"])
    except EntryError:
        others = build.store.others(example.id, but=name)
        return list(others[0].meta["written"]) if others else []


def _rewritten_input(
    entry: Entry,
    project: Project,
    rewritten: dict[str, str],
    why: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, str]:
    """Why the entry cannot be trusted when it used a file an example running again wrote:
    it would read what that run writes, not known yet. ``{writer: why}``, first found
    first; empty when no such file. ``why``: ``{id: its record's cache value}`` of the
    examples that run, so each reason ends with why the writer runs (the root cause, or
    the chain back to it)."""
    found: dict[str, str] = {}
    if not rewritten:
        return found

    def runs(writer: str) -> str:
        cause = ((why or {}).get(writer) or {}).get("reason")
        return f"which runs again: {cause}" if cause else "which runs again"

    for relative in entry.deps["files"]:
        writer = rewritten.get(project.absolute(relative))
        if writer is not None:
            found.setdefault(writer, f"{relative} is written by {writer}, {runs(writer)}")
    for relative in entry.meta["written"]:
        # Put back now, it would be overwritten by the earlier example running later.
        writer = rewritten.get(project.absolute(relative))
        if writer is not None:
            found.setdefault(writer, f"{relative} is also written by {writer}, {runs(writer)}")
    for relative in entry.deps["listings"]:
        prefix = os.path.join(project.absolute(relative), "")
        for path, writer in rewritten.items():
            if path.startswith(prefix):
                found.setdefault(
                    writer, f"{relative}/ holds a file {writer} writes, {runs(writer)}"
                )
    return found


def _written_by(
    key: str, writers: Mapping[str, Entry], project: Project, rewritten: dict[str, str]
) -> bool:
    """Whether a changed dependency (its key) is a file, or a folder holding a file, that
    one of ``writers`` writes (``rewritten``: ``{absolute path: writer}``)."""
    kind, _, relative = key.partition(":")
    if kind == "file":
        return rewritten.get(project.absolute(relative)) in writers
    if kind == "listing":
        prefix = os.path.join(project.absolute(relative), "")
        return any(path.startswith(prefix) and w in writers for path, w in rewritten.items())
    return False


def _state_from_a_rerun(
    entry: Entry, example_id: str, build: CacheBuild, readers: Mapping[str, Rerun]
) -> dict[str, str]:
    """Why the entry cannot be trusted when it read state an earlier example left in a
    project module (a global, a filled cache) and that example is not restored: its run
    may leave something else. ``{earlier example: why}``, empty when none; each names
    why that example runs. One that runs only because this example reads its state is no
    cause of this one's run (that would be a circle): then why this one ran for it, last."""
    found, circles = {}, {}
    for earlier, keys in entry.deps.get("state", {}).items():
        if earlier in build.hits:
            continue
        rerun = readers.get(earlier)
        if rerun is not None and rerun.reader == example_id:
            circles[earlier] = rerun.cause or f"reads state {earlier} leaves ({keys[0]})"
            continue
        cause = (build.recording.reasons.get(earlier) or {}).get("reason")
        runs = f"which runs again: {cause}" if cause else "which runs again"
        found[earlier] = f"reads state {earlier} leaves ({keys[0]}), {runs}"
    return {**found, **circles}


def _look_up_one(
    build: CacheBuild,
    example: Example,
    project: Project,
    rewritten: dict[str, str],
    changed: dict[str, list[Change]],
    readers: Mapping[str, Rerun],
) -> str | None:
    """Restore the example's entry and return ``None`` on a hit; else say why it missed
    (what changed of its dependencies in ``changed``; ``readers``: see
    :func:`_state_from_a_rerun`)."""
    store = build.store
    name = store.entry_name(example.id, build.key)
    try:
        entry = store.load(name)
    except MissingEntry:
        others = store.others(example.id, but=name)
        if not others:
            return _never_stored(build.last_decisions.get(example.id))
        return describe_difference(others[0].context, build.context)
    except EntryError as exc:
        build.warn(f"docsaccel cache: entry of {example.id} is unusable, it runs again: {exc}")
        return "entry corrupt"
    made_root, root = entry.meta.get("root"), _root_from_docs(build)
    if made_root is not None and made_root != root:
        # Its paths are relative to another folder: a file it wrote would land elsewhere.
        return f"project root changed: {made_root} → {root}"
    shown = _shows_where_it_ran(store, entry, project.root)
    if shown is not None:
        return shown
    # Its files are paths inside the source dir: put back only where sphinx-gallery now
    # writes the example's outputs, never into a gallery folder this build does not use.
    elsewhere = misplaced(entry.meta, entry.meta["files"], build.placement(example))
    if elsewhere is not None:
        return elsewhere
    if build.recording.granularity == "module" and entry.deps["code"]:
        # A project switches to ``module`` when recording functions misses what its code
        # does (a JIT given a function without the decorator syntax): an entry that kept
        # only the functions that ran cannot promise that any edit of the file re-runs it.
        return "granularity changed: function → module"
    try:
        found = changes(entry.deps, project, example.src_file)
        waits_for = _rewritten_input(entry, project, rewritten, build.recording.reasons)
    except (KeyError, TypeError, AttributeError) as exc:
        build.warn(f"docsaccel cache: entry {entry.path} is malformed ({exc!r}), it runs again")
        return "entry corrupt"
    changed[example.id] = found
    state_waits = _state_from_a_rerun(entry, example.id, build, readers)
    file_waits = dict(waits_for)
    waits_for.update(state_waits)
    # Waiting only for examples that run to be audited, it would have been restored with
    # them: audited too, against what they write now.
    audit = bool(waits_for) and set(waits_for) <= set(build.audits)
    if file_waits and not audit and (not found or found[0].key != "source"):
        return next(iter(file_waits.values()))
    if state_waits and not audit and not found:
        # What changed of its own is the root cause; else the state of one that runs
        # (of one that runs for another reason first).
        return next(iter(state_waits.values()))
    if audit:
        # What those write is not put back (they run): its absence changes nothing.
        found = [c for c in found if not _written_by(c.key, build.audits, project, rewritten)]
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
    if audit or build.audit_next():
        build.audits[example.id] = entry  # it runs; its outputs are compared with these
        return AUDIT_REASON
    try:
        store.restore_written(entry, Path(project.root), build.created)
    except EntryError as exc:
        build.warn(f"docsaccel cache: entry of {example.id} is unusable, it runs again: {exc}")
        return "written file not restored"
    try:
        store.restore(entry, build.docs, build.created)
    except EntryError as exc:
        build.warn(f"docsaccel cache: entry of {example.id} is unusable, it runs again: {exc}")
        return "entry corrupt"
    # Before Sphinx reads the page: one naming a file that is not there is never served.
    missing = missing_references(sg_compat.page_file(example.target_file), build.docs)
    if missing:
        build.warn(
            f"docsaccel cache: the restored page of {example.id} names {missing[0]}, which "
            f"is not there (entry {entry.path}); it runs again"
        )
        return "restored page incomplete"
    build.hits[example.id] = record
    build.restored[example.id] = entry
    return None


_KEPT = (*MEASURED_FIELDS, "knobs", "render", "started_at", "finished_at")


def _hit_record(example: Example, original: dict[str, Any], fast: bool) -> dict[str, Any]:
    fields = {k: original[k] for k in _KEPT if k in original}
    saved = float(original.get("wall_seconds") or 0.0)
    return base_record(
        example, CACHED, fast, **fields, cache={"hit": True, "saved_seconds": round(saved, 3)}
    )
