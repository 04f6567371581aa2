"""Watch a running example: the files it reads (and did not write), the modules it imports, and
(at ``function`` granularity) the code of the project it executes.

The design, in full: the caching guide's *Design* section.
"""

from __future__ import annotations

import contextlib
import dataclasses
import glob
import importlib.util
import os
import pathlib
import shutil
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

from docsaccel.cache.carried_reads import CarriedReads
from docsaccel.cache.fingerprint import sha256_of
from docsaccel.cache.import_notes import BUILT_IN, ImportNotes
from docsaccel.cache.instrument import PACKAGE_DIR, Instrumenter, is_machinery
from docsaccel.cache.loaded import ModulesMemo
from docsaccel.cache.module_state import (
    LeftState,
    Snapshot,
    assigned,
    compare,
    snapshot,
    watch_assignments,
)
from docsaccel.cache.phases import PRELUDE, PhaseWatch
from docsaccel.contract import fork_safe_lock, opens_for_writing, opens_keeping_content
from docsaccel.intercept import (
    ImportsDone,
    Listener,
    ModuleImported,
    ModuleNotFound,
    listen,
    subscribe,
    wrap_imports,
)

# PRELUDE is phases' (re-exported where it was first defined).
__all__ = ["NOT_PROJECT", "PRELUDE", "Recorder", "RootChanges", "Seen", "own_names"]

#: Folder names under the roots that hold no file of the project's own.
NOT_PROJECT = ("site-packages", "dist-packages", ".venv", "venv", ".nox", ".tox", ".git")
# A child process (ffmpeg behind a video writer, a joblib worker) writes files no audit
# event of this process shows.
_SPAWN_EVENTS = frozenset(
    {"subprocess.Popen", "os.system", "os.posix_spawn", "os.exec", "os.spawn", "os.fork"}
)
_LISTING_EVENTS = frozenset({"os.listdir", "os.scandir"})
# What takes a file away (``os.unlink`` and ``Path.unlink`` raise ``os.remove``,
# ``os.replace`` raises ``os.rename``): the first argument is the path that goes.
_REMOVAL_EVENTS = frozenset({"os.remove", "os.rename", "os.rmdir", "shutil.rmtree"})


def _source_files(*modules: Any) -> frozenset[str]:
    """The files holding these modules' code: a package's every module, as pathlib is one
    from Python 3.13 (its code lives in ``pathlib/_local.py`` and ``pathlib/_abc.py``)."""
    found: set[str] = set()
    for module in modules:
        path = os.path.abspath(module.__file__)
        found.add(path)
        if os.path.basename(path) == "__init__.py":
            folder = os.path.dirname(path)
            found.update(os.path.join(folder, n) for n in os.listdir(folder) if n.endswith(".py"))
    return frozenset(found)


# The standard library's ways to list a folder (glob, os.walk, Path.glob, Path.walk,
# shutil.copytree): who called them decides whether the listing is the example's.
_LISTING_HELPERS = frozenset({"<frozen os>"}) | _source_files(os, glob, pathlib, shutil)


def _package_folders(name: str) -> list[str]:
    # Found without importing the package: loading the cache needs no Sphinx.
    spec = importlib.util.find_spec(name)
    locations = spec.submodule_search_locations if spec is not None else None
    return [os.path.abspath(location) + os.sep for location in locations or ()]


# Listings that are not what the example reads: the import system's to find modules (every
# package folder on sys.path), importlib.metadata's to find distributions, and those of the
# machinery running the example (sphinx-gallery, this plugin's scrapers looking for videos).
_NOT_THE_EXAMPLE = (
    "<frozen importlib.",
    os.path.dirname(importlib.util.__file__) + os.sep,
    *_package_folders("sphinx_gallery"),
    PACKAGE_DIR + os.sep,
)


@dataclass
class Seen:
    """What one example used: absolute file paths under the roots, module names (of any
    origin), and at ``function`` granularity ``(file, piece)`` of the project code it ran
    and the project files whose functions are watched (see
    :attr:`.instrument.Instrumenter.instrumented`; any other counts whole); what it left
    behind: the files under the roots it wrote that still exist (``written``, never in
    ``files``; one it read before writing it is in ``read_first``, with its digest from
    before); and the folders under the roots it listed, with their names when it first
    listed each (``listings``: ``{folder: sorted names}``, without the names of what it
    wrote there)."""

    files: set[str] = field(default_factory=set)
    modules: set[str] = field(default_factory=set)
    code: set[tuple[str, str]] = field(default_factory=set)
    instrumented: dict[str, frozenset[str]] = field(default_factory=dict)
    written: set[str] = field(default_factory=set)
    listings: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: Files it read, then wrote (updated in place): an input too, by its digest before.
    read_first: dict[str, str] = field(default_factory=dict)
    #: What earlier examples in the same process left in the project's modules: the files
    #: each module's own code read (``{module file: files}``, this example's reads
    #: included). A module body runs once per process: a later example using that module
    #: may depend on what it read.
    carried_reads: dict[str, frozenset[str]] = field(default_factory=dict)
    #: The same for the folders under the roots each module's own code listed
    #: (``{module file: {folder: sorted names}}``, the names when it first listed each): a
    #: module body that globs a folder when imported depends on a file added there.
    carried_listings: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict)
    #: The module files whose reads are unknown: imported before any recorder watched, and
    #: importing them again to see their reads failed (:mod:`.early`). What uses them
    #: runs (or is read) in every build.
    unknown_reads: frozenset[str] = frozenset()
    #: At ``function`` granularity, ``{module file: (file, piece)}`` of the project code
    #: that ran while each module's body ran, in this process: what made its state.
    import_code: dict[str, frozenset[tuple[str, str]]] = field(default_factory=dict)
    #: ``{(module file, global name): labels}``: the globals
    #: of project modules that earlier examples in this process changed
    #: (:mod:`docsaccel.cache.module_state`), each with the labels of the examples that did.
    carried_state: dict[tuple[str, str], frozenset[str]] = field(default_factory=dict)
    #: The globals this example changed.
    left_state: set[tuple[str, str]] = field(default_factory=set)
    #: ``{(module file, global name, name holding it): {label: code}}``: the caches the
    #: project fills lazily that earlier examples in this process filled (no state:
    #: :mod:`docsaccel.cache.module_state`), each with the code (``(file, qualified name)``) each
    #: example that filled it ran. A later example reading one reads what that code made.
    carried_fills: dict[tuple[str, str, str], dict[str, frozenset[tuple[str, str]]]] = field(
        default_factory=dict
    )
    #: ``{module: file}`` of modules its child processes loaded, which this process may
    #: never load (:mod:`docsaccel.cache.children`): found by name like those it loaded.
    module_files: dict[str, str] = field(default_factory=dict)
    #: The modules an import did not find (``ModuleNotFoundError``): their absence is what
    #: ``try: import optdep`` / ``except ImportError`` code took its other branch on.
    absent: set[str] = field(default_factory=set)
    #: The same for the project's modules' own code, in this process (``{module file:
    #: names}``): a module body runs once, a later user of the module depends on it too.
    carried_absent: dict[str, frozenset[str]] = field(default_factory=dict)
    #: The files and folders under the roots it removed (or renamed away) that it had not
    #: written: a restore cannot take them away again, so the example runs in every build.
    removed: set[str] = field(default_factory=set)


def _initializing(module: Any) -> bool:
    """Whether a module's body is still running (it is in ``sys.modules`` meanwhile)."""
    return bool(getattr(getattr(module, "__spec__", None), "_initializing", False))


#: The audit events :meth:`Recorder._audit` listens to, for the rest of the process's life.
_AUDITED = (
    frozenset({"object.__setattr__", "open", "import"})
    | _SPAWN_EVENTS
    | _LISTING_EVENTS
    | _REMOVAL_EVENTS
)

#: How far up from :meth:`Recorder._audit` the code that raised the event is: above it,
#: the audit hook of :mod:`docsaccel.intercept`, then that code.
_EVENT_FRAME = 2


@dataclass(frozen=True)
class RootChanges:
    """What happened to the files under the roots since the example started its first
    child process, by whatever process: found by comparing them then and now, since a
    child's reads and writes raise no audit event in this one."""

    #: Created or modified: the example's outputs, whichever process wrote them.
    changed: frozenset[str]
    #: There then, gone now, and not written by the example: a child (``rm``) took them
    #: away (:attr:`Seen.removed`).
    removed: frozenset[str]

    @classmethod
    def between(
        cls,
        before: Mapping[str, tuple[int, ...]],
        now: Mapping[str, tuple[int, ...]],
        written: set[str],
    ) -> RootChanges:
        """The changes from ``before`` to ``now`` (``{path: status}``), given the files the
        example was seen writing."""
        changed = frozenset(path for path, status in now.items() if before.get(path) != status)
        return cls(changed=changed, removed=frozenset(set(before) - set(now) - written))


class Recorder:
    """The process's one recorder; see the caching guide's design."""

    _instance: Recorder | None = None
    _lock = fork_safe_lock()

    def __init__(self) -> None:
        self.active = False
        self._roots: tuple[str, ...] = ()
        self._excluded: tuple[str, ...] = ()
        self._seen = Seen()
        self._written: set[str] = set()
        self._started_ns = 0
        self._spawned = False
        #: The files under the roots as the example's first child process started.
        self._before_spawn: dict[str, tuple[int, int, int, int]] = {}
        self._instrumenter: Instrumenter | None = None
        #: Which project files' modules the state left is tracked in (``None``: none).
        self._state: Callable[[str], bool] | None = None
        #: ``{file: whether it is one of those}``, for :attr:`_state_of_tracked`.
        self._tracked: dict[str, bool] = {}
        self._state_of_tracked: Callable[[str], bool] | None = None
        self._loaded = 0
        #: What the project's modules' code read, process-wide, across recordings.
        self.carried = CarriedReads()
        #: The recording's subscription to the import events (``None``: none).
        self._import_events: Listener | None = None
        #: When it records outside the examples (before them, between them).
        self.phases = PhaseWatch(self)
        #: What the examples left in the project's modules, process-wide.
        self._left = LeftState()
        self._label = ""
        self._baseline: Snapshot = {}
        self._last: Snapshot = {}
        #: ``{a module's __file__: its normalised path}``.
        self._normal: dict[str, str] = {}
        self._project_memo: ModulesMemo[list[tuple[str, Any]]] = ModulesMemo()

    @classmethod
    def get(cls) -> Recorder:
        """The process's recorder, installing its hooks the first time."""
        with cls._lock:
            if cls._instance is None:
                recorder = cls()
                # All for the life of the process: never undone.
                listen(_AUDITED, recorder._audit)
                watch_assignments()
                # Now, not at the first recording: a name bound to find_spec from here on
                # is the wrapped one, and the imports in progress are counted.
                wrap_imports()
                cls._instance = recorder
            return cls._instance

    def start(
        self,
        roots: Iterable[str],
        excluded: Iterable[str] = (),
        code: Callable[[str], bool] | None = None,
        label: str = "",
        state: Callable[[str], bool] | None = None,
    ) -> None:
        """Start recording for one example (a recording in progress is dropped). With
        ``code`` (which project files to watch, by absolute path), also record the
        functions of those files the example runs and the state it leaves in their
        modules, under ``label`` (the example's id). With ``state`` alone (``module``
        granularity), record only the state it leaves in the modules of those files."""
        # Off while it sets up: what instrumenting loaded modules reads is not the example's
        # (a recording in progress, the prelude's, would note it).
        self.active = False
        self._stop_import_events()
        self._roots = tuple(os.path.join(os.path.normpath(r), "") for r in roots)
        self._excluded = tuple(os.path.join(os.path.normpath(e), "") for e in excluded)
        self._seen = Seen()
        self._written = set()
        self._started_ns = time.time_ns()
        self._spawned = False
        self._instrumenter = None if code is None else Instrumenter.install(code)
        self._label = label
        if (code or state) != self._state_of_tracked:
            self._tracked.clear()
            self._state_of_tracked = code or state
        self._state = code or state
        if self._state is not None:
            # The state the last example left, when nothing was imported since.
            modules = self._project_modules()
            last, self._last = self._last, {}
            if {path for path, _ in last if path} == {path for path, _ in modules}:
                self._baseline = last
            else:
                self._baseline = snapshot(modules)
            self._loaded = len(sys.modules)
        if self._instrumenter is not None:
            self._instrumenter.after_import = self._note_imported
            self._instrumenter.begin()
        self._start_import_events(ImportNotes(self._seen, self.wants, self.carried))
        self.active = True

    @property
    def label(self) -> str:
        """The label of the recording that runs (or ran last): an example's id, or
        :data:`.phases.PRELUDE`."""
        return self._label

    def stop(self) -> Seen:
        """Stop recording; return what the example used."""
        self.active = False
        self._stop_import_events()
        seen, self._seen = self._seen, Seen()
        written, self._written = self._written, set()
        if self._spawned:
            self._spawned = False
            under = self._changed_under_roots(written)
            written |= under.changed
            seen.removed |= under.removed
            self._before_spawn = {}
        if self._instrumenter is not None:
            seen.code = self._instrumenter.ran.copy()
            seen.instrumented = dict(self._instrumenter.instrumented)
            seen.import_code = {
                module: frozenset(ran) for module, ran in self._instrumenter.import_code.items()
            }
        if self._state is not None:
            self._note_loaded()
            seen.carried_state = self._left.left()
            seen.carried_fills = self._left.fills()
            self._last = snapshot(self._project_modules())
            seen.left_state, filled = compare(self._baseline, self._last)
            self._baseline = {}
            self._left.note(self._label, seen.left_state, filled, frozenset(seen.code))
        if self._instrumenter is not None:
            self._instrumenter.after_import = None
            self._instrumenter = None
        self._state = None
        used = self._used(seen, written)
        self.phases.stopped()
        return used

    def peek(self) -> Seen:
        """What :meth:`stop` would return now, the recording going on, but for the state
        left in the project's modules, which only stopping compares (a forked pool
        worker's state stays in its process). ``module`` granularity only: at
        ``function`` granularity, what ran is also only read by stopping."""
        if self._instrumenter is not None:
            raise RuntimeError("a recording of functions cannot be read while it goes on")
        noted = self._seen
        seen = dataclasses.replace(
            noted,
            files=set(noted.files),
            modules=set(noted.modules),
            listings=dict(noted.listings),
            read_first=dict(noted.read_first),
            absent=set(noted.absent),
        )
        seen.removed = set(noted.removed)
        written = set(self._written)
        if self._spawned:
            under = self._changed_under_roots(written)
            written |= under.changed
            seen.removed |= under.removed
        return self._used(seen, written)

    def forked(self, label: str) -> bool:
        """In a process just forked from one recording ``label`` at ``module``
        granularity: go on with that recording, what the parent noted before the fork
        noted still (the parent reports it too: a child that notes nothing more has
        nothing to tell), without the parent's child processes. False, with nothing
        done, when the parent was not recording that (the child starts its own)."""
        if not self.active or self._instrumenter is not None or self._label != label:
            return False
        self._spawned = False
        self._before_spawn = {}
        return True

    def _used(self, seen: Seen, written: set[str]) -> Seen:
        """``seen``, made what the example used, given the files it wrote."""
        carried = self.carried
        seen.carried_reads = carried.reads()
        seen.carried_listings = carried.listings()
        seen.carried_absent = carried.absent()
        seen.unknown_reads = carried.unknown
        # A file the example wrote is its output, not an input, even if it read it back
        # (one it read before writing it is in read_first); so is one modified since it
        # started (written by a child process: ffmpeg).
        seen.files -= written
        seen.files = {path for path in seen.files if not self._modified_since_start(path)}
        seen.read_first = {p: d for p, d in seen.read_first.items() if p in written}
        seen.removed -= written  # made again: its output
        real_roots = tuple(os.path.join(os.path.realpath(r), "") for r in self._roots)
        real_excluded = tuple(os.path.join(os.path.realpath(e), "") for e in self._excluded)
        seen.written = {p for p in written if _kept_output(p, real_roots, real_excluded)}
        listings: dict[str, tuple[str, ...] | None] = dict(seen.listings)
        seen.listings = {}
        for folder, names in listings.items():
            if names is not None:
                own = own_names(folder, written)
                seen.listings[folder] = tuple(n for n in names if n not in own)
        return seen

    def progress(self) -> tuple[int, ...]:
        """A mark of what the recording noted so far: it changes whenever the recording
        notes a file, module, module not found, listing, written file or process, which is
        all :meth:`stop` returns at ``module`` granularity (nothing noted is ever taken
        back)."""
        seen = self._seen
        noted = (seen.files, seen.modules, seen.listings, seen.read_first, self._written)
        noted += (seen.absent,)
        return (*map(len, noted), int(self._spawned), self.carried.count())

    def _project_modules(self) -> list[tuple[str, Any]]:
        """``(file, module)`` of the loaded modules whose functions are watched."""
        instrumenter = self._instrumenter
        # What the answer depends on besides the modules: which files are watched.
        key = (instrumenter, len(instrumenter.instrumented) if instrumenter else 0, self._state)
        return list(self._project_memo.get(key, self._find_project_modules))

    def _find_project_modules(self, loaded: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
        found = []
        instrumenter, tracked, wants = self._instrumenter, self._tracked, self._state
        normal = self._normal
        for _, module in loaded:
            path = (getattr(module, "__dict__", None) or {}).get("__file__")
            if not isinstance(path, str):
                continue
            # Asked before and after every example, of every loaded module.
            known = normal.get(path)
            if known is None:
                known = normal[path] = os.path.normpath(path)
            if instrumenter is not None:
                if known in instrumenter.instrumented:
                    found.append((known, module))
                continue
            wanted = tracked.get(known)
            if wanted is None:
                wanted = tracked[known] = wants is not None and wants(known)
            if wanted:
                found.append((known, module))
        return found

    def _note_loaded(self) -> None:
        """Without an instrumenter (``module`` granularity), the project modules loaded
        since the last look, as their bodies left them: see :meth:`_note_imported`."""
        if self._instrumenter is not None or len(sys.modules) == self._loaded:
            return
        known = {path for path, _ in self._baseline}
        fresh = [(path, m) for path, m in self._project_modules() if path not in known]
        # One whose body still runs (it imports another) is looked at once it is done.
        running = {path for path, m in fresh if _initializing(m)}
        fresh = [(path, m) for path, m in fresh if path not in running]
        if not running:
            self._loaded = len(sys.modules)
        if fresh:
            owned = [m.__name__ for _, m in self._project_modules()]
            self._baseline.update(snapshot(fresh, owned))

    def _note_imported(self, path: str, module: Any) -> None:
        """A project module imported while the example runs: its state as its body left
        it is where the example's changes are measured from."""
        if self.active:
            owned = [m.__name__ for _, m in self._project_modules()]
            self._baseline.update(snapshot([(path, module)], owned))

    def _changed_under_roots(self, written: set[str]) -> RootChanges:
        """The files under the roots created or modified since the example started its
        first child process, by whatever process (what that one wrote is its output too),
        and those there then and gone now, which the example did not write (a child
        took them away), given the files it was seen writing.

        By their status then and now rather than by a modification time compared with a
        clock: Linux stamps a file with a coarse clock up to a tick behind
        ``time.time_ns()``, so a quick child (``os.system("echo 1 > data/x")``) would leave
        a file that looks older than the example."""
        return RootChanges.between(self._before_spawn, self._files_under_roots(), written)

    def _files_under_roots(self) -> dict[str, tuple[int, int, int, int]]:
        """``{path: (inode, size, mtime, ctime)}`` of the files under the roots the
        project counts (not virtual environments, ``.git``, ``__pycache__``)."""
        found: dict[str, tuple[int, int, int, int]] = {}
        for root in self._roots:
            for folder, dirs, files in os.walk(root):
                dirs[:] = [
                    name
                    for name in dirs
                    if name not in NOT_PROJECT
                    and name != "__pycache__"
                    and self.wants(os.path.join(folder, name, ""))
                ]
                for name in files:
                    path = os.path.join(folder, name)
                    with contextlib.suppress(OSError):
                        info = os.lstat(path)
                        if self.wants(path):
                            found[path] = (
                                info.st_ino,
                                info.st_size,
                                info.st_mtime_ns,
                                info.st_ctime_ns,
                            )
        return found

    def _modified_since_start(self, path: str) -> bool:
        try:
            return os.stat(path).st_mtime_ns >= self._started_ns
        except OSError:
            return True  # gone: the example's own temporary file

    def wants(self, path: str) -> bool:
        """Whether a file (absolute, normalised) is under the roots and not excluded."""
        return (
            path.startswith(self._roots)
            and not path.startswith(self._excluded)
            and not is_machinery(path)
        )

    def _audit(self, event: str, args: tuple[Any, ...]) -> None:
        if event == "object.__setattr__":
            assigned(args)  # also between examples: snapshots outlive them
            return
        if not self.active or self.carried.asking():
            return
        if event == "open":
            path, mode, flags = args
            if isinstance(path, int) or path is None:
                return
            writing = opens_for_writing(mode, flags)
            path = os.path.abspath(os.fsdecode(path))
            if "__pycache__" in path or not self.wants(path):
                return
            if writing:
                # "r+", "a": what the file holds after depends on what it held (an update
                # in place, an append): an input too, by its digest before.
                updating = opens_keeping_content(mode, flags)
                if (updating or path in self._seen.files) and path not in self._written:
                    self._note_read_first(path)
                self._written.add(path)
            elif path not in self._written:  # read back after writing it: its own output
                self._seen.files.add(path)
                reader = self._reading_module(sys._getframe(_EVENT_FRAME))
                if reader is not None:
                    self.carried.note_read(reader, path)
        elif event == "import":
            if args[0] not in BUILT_IN:
                self._seen.modules.add(args[0])
        elif event in _SPAWN_EVENTS:
            if not self._spawned:
                self._before_spawn = self._files_under_roots()
            self._spawned = True
        elif event in _LISTING_EVENTS and _listed_by_the_example(sys._getframe(_EVENT_FRAME)):
            self._note_listing(args[0], sys._getframe(_EVENT_FRAME))
        elif event in _REMOVAL_EVENTS:
            self._note_removal(args[0])

    def _note_removal(self, path: Any) -> None:
        """Note a file or folder under the roots the example takes away, which it did not
        write (the event comes before the removal: a path not there is no removal)."""
        if not isinstance(path, (str, bytes, os.PathLike)):
            return  # a file descriptor: removed relative to a folder it opened
        path = os.path.abspath(os.fsdecode(path))
        if path not in self._written and self.wants(path) and os.path.lexists(path):
            self._seen.removed.add(path)

    def _reading_module(self, frame: FrameType | None) -> str | None:
        """The project file whose code opened a file (the nearest on the stack), unless the
        import system did (reading a module's source)."""
        carried = self.carried
        while frame is not None:
            name = frame.f_code.co_filename
            if name.startswith("<frozen importlib."):
                # The import system reading a module's source, unless project code asked
                # a loader for a file (``pkgutil.get_data``: its data, not its code).
                caller = frame.f_back
                if not (
                    frame.f_code.co_name == "get_data"
                    and caller is not None
                    and not caller.f_code.co_filename.startswith("<frozen importlib.")
                ):
                    return None
            if name.endswith(".py"):
                if self.wants(name):
                    return name
                if carried.counting and not is_machinery(name):
                    module = frame.f_globals.get("__name__")
                    if isinstance(module, str) and carried.owned(os.path.normpath(name), module):
                        return os.path.normpath(name)
            frame = frame.f_back
        return None

    def _note_read_first(self, path: str) -> None:
        """The digest of a file the example read and now opens for writing: the event comes
        before the open, so the file still holds what the example read."""
        with contextlib.suppress(OSError):
            self._seen.read_first[path] = sha256_of(path)

    def _note_listing(self, path: Any, frame: FrameType | None) -> None:
        """Note the names of a folder under the roots the first time the example lists it,
        and for the project module whose code listed it (``frame``: the listing's caller),
        as for a file it reads."""
        if isinstance(path, int):
            return  # a listing by file descriptor (os.fwalk): its folder is unknown
        try:
            folder = os.path.abspath(os.fsdecode(os.curdir if path is None else path))
        except (TypeError, ValueError):
            return
        listings: dict[str, Any] = self._seen.listings
        if folder not in listings:
            if not self.wants(os.path.join(folder, "")):
                return
            # Noted before listing it: the listing below raises this same event again.
            listings[folder] = None
            try:
                names = os.listdir(folder)
            except (OSError, ValueError):
                del listings[folder]  # not a folder: the example's own call fails too
                return
            listings[folder] = tuple(sorted(names))
        names = listings[folder]
        if names is None:
            return  # the listing above, raising its event again
        reader = self._reading_module(frame)
        if reader is not None:
            self.carried.note_listing(reader, folder, names)

    def _start_import_events(self, notes: ImportNotes) -> None:
        """Hand the import events to ``notes`` while this recording goes on."""
        self._import_events = subscribe(
            {
                ModuleImported: notes.imported,
                ModuleNotFound: notes.not_found,
                ImportsDone: self._imports_done,
            }
        )

    def _stop_import_events(self) -> None:
        if self._import_events is not None:
            self._import_events.close()
            self._import_events = None

    def _imports_done(self, event: ImportsDone) -> None:
        """The outermost import is done: the modules it loaded are as their bodies left
        them (:meth:`_note_loaded`)."""
        if self.active and self._state is not None:
            self._note_loaded()


def _kept_output(path: str, real_roots: tuple[str, ...], real_excluded: tuple[str, ...]) -> bool:
    """Whether a file the example wrote is still there, and really under the roots (not a
    link out of them; the folders' real paths, ending in a separator): a later example may
    read it, so the cache keeps it."""
    if not os.path.isfile(path):
        return False  # deleted again: the example's temporary file
    real = os.path.realpath(path)
    return real.startswith(real_roots) and not real.startswith(real_excluded)


def own_names(folder: str, written: Iterable[str]) -> set[str]:
    """The names in ``folder`` of the files the example wrote there (or of the folders
    holding them): its outputs, so never part of what it found there."""
    prefix = os.path.join(folder, "")
    return {path[len(prefix) :].split(os.sep)[0] for path in written if path.startswith(prefix)}


def _listed_by_the_example(frame: FrameType | None) -> bool:
    """Whether the code that listed a folder (the first caller outside the standard
    library's listing helpers) is the example's, not the machinery's."""
    while frame is not None and frame.f_code.co_filename in _LISTING_HELPERS:
        frame = frame.f_back
    return frame is None or not frame.f_code.co_filename.startswith(_NOT_THE_EXAMPLE)
