"""The example cache: one entry per example and build context, written atomically.

An entry is written in ``tmp/`` and renamed into ``entries/`` once complete, and renamed
into ``trash/`` before it is deleted; a reader checks every file it copies out against its
digest, so an entry replaced or pruned meanwhile is a miss, never a broken page. The
folder's layout, and how this store differs from the Sphinx state's: the caching guide's
"Design" section (``docs/guide/caching.rst``).

Example: store an example's page, restore it into another source folder.

>>> import tempfile
>>> from pathlib import Path
>>> folder = tempfile.TemporaryDirectory()
>>> page, docs = Path(folder.name, "plot_a.rst"), Path(folder.name, "docs")
>>> _ = page.write_text("Plot A\\n======\\n")
>>> store = CacheStore(Path(folder.name, "cache"))
>>> name = store.entry_name("tutorials/plot_a.py", "5f0c1e0a9b3d2c11")
>>> name
'tutorials__plot_a.py--5f0c1e0a9b3d2c11'
>>> deps = {"source": "9f2c...", "files": {}, "code": {}, "dists": {}}
>>> meta = {"id": "tutorials/plot_a.py", "context": {}, "deps": deps, "record": {}}
>>> _ = store.store(name, meta, {"auto_tutorials/plot_a.rst": page})
>>> entry = store.load(name)
>>> [path.relative_to(docs).as_posix() for path in store.restore(entry, docs)]
['auto_tutorials/plot_a.rst']
>>> store.load(store.entry_name("tutorials/plot_b.py", "5f0c1e0a9b3d2c11"))
Traceback (most recent call last):
...
docsaccel.cache.store.MissingEntry: .../tutorials__plot_b.py--5f0c1e0a9b3d2c11: no such entry
>>> folder.cleanup()
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import tempfile
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from docsaccel.cache import example_logs
from docsaccel.cache.deps import Listing, is_under
from docsaccel.cache.fingerprint import sha256_of
from docsaccel.cache.folder_tag import (
    LAST_BUILD,
    TAG_FILE,
    CacheFolderError,
    is_cache_folder,
    make_cache_subfolder,
    tag_cache_folder,
)
from docsaccel.contract import InputError, read_json
from docsaccel.formats import Format, write_json
from docsaccel.layout import id_slug

__all__ = [
    "ENTRY_FORMAT",
    "TAG_FILE",
    "CacheFolderError",
    "CacheStore",
    "Entry",
    "EntryError",
    "MissingEntry",
    "Stamp",
    "is_cache_folder",
    "make_cache_subfolder",
    "remove_created",
    "stamp",
    "tag_cache_folder",
]

#: The entry format. Its version is part of every entry's context (:mod:`.context`), so
#: entries of another version are never looked up: bumped whenever an entry made by an
#: older docsaccel could be wrong for a newer one.
#: 2: entries keep the files an example wrote and the folders it listed.
#: 3: what child processes wrote, editable installs by their files, the project root.
#: 4: function entries count pieces (bindings, classes, docstrings apart), the names the
#:    example reads, and the earlier examples whose state it read.
#: 5: function entries name the pieces the example's code reaches by qualified name (a
#:    method added in another class of the MRO), and a class whose definition runs code
#:    keeps its methods' signatures in the module body.
#: 6: entries list the globals the example leaves in the project's modules, and (at
#:    ``module`` granularity too) the earlier examples whose state it read.
#: 7: entries keep where the example's outputs went and the build's gallery folders
#:    (:mod:`.placement`).
#: 8: entries list the modules an import did not find (``absent``).
#: 9: an entry's files are only what the run wrote: no longer a file of the source tree
#:    its page only shows (``/_static/img/logo.gif``), which a restore would overwrite.
#: 10: entries keep the folder the example ran in (``made_in``): one whose outputs show
#:    it is not restored into a checkout elsewhere.
#: 11: entries keep the warnings the example's processing logged (``warnings``), which a
#:    build restoring it gives again (:mod:`.example_logs`).
#: 12: function entries count the code that filled a lazily built cache the example reads,
#:     when an earlier example filled it (an entry of 11 misses that code's edits).
ENTRY_FORMAT = Format("docsaccel.cache-entry", 12, "cache entry")
ENTRY_FILE = "entry.json"
LAST_HIT = "last-hit"
#: What the store keeps at the top of its folder: entries, the work and trash folders of
#: writes and removals, the last build's summary.
FOLDER_NAMES = ("entries", "tmp", "trash", LAST_BUILD)
_ENTRY_KEYS: dict[str, type | tuple[type, ...]] = {
    "schema": str,
    "id": str,
    "context": dict,
    "deps": dict,
    "record": dict,
    "files": dict,
}
_DEPS_KEYS: dict[str, type] = {"source": str, "files": dict, "code": dict, "dists": dict}


class EntryError(Exception):
    """An entry that cannot be used; the message names its folder and what is wrong."""


class MissingEntry(EntryError):
    """No entry of that name."""


@dataclass(frozen=True)
class Entry:
    """One entry as read from disk."""

    path: Path
    meta: dict[str, Any]

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def deps(self) -> dict[str, Any]:
        return self.meta["deps"]

    @property
    def record(self) -> dict[str, Any]:
        return self.meta["record"]

    @property
    def context(self) -> dict[str, Any]:
        return self.meta["context"]


@dataclass(frozen=True)
class EntryInfo:
    """An entry's folder, its size in bytes and when it was last hit (or stored)."""

    path: Path
    size: int
    last_used: float


def _safe_relative(relative: str) -> bool:
    pure = PurePosixPath(relative)
    return (
        bool(relative)
        and not pure.is_absolute()
        and ".." not in pure.parts
        and "\\" not in relative
    )


class CacheStore:
    """A cache folder (see the caching guide's design)."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)

    @property
    def entries(self) -> Path:
        return self.folder / FOLDER_NAMES[0]

    @staticmethod
    def entry_name(example_id: str, context_key: str) -> str:
        return f"{id_slug(example_id)}--{context_key}"

    def load(self, name: str) -> Entry:
        """The entry called ``name``; raises :class:`MissingEntry` or :class:`EntryError`."""
        path = self.entries / name
        meta_path = path / ENTRY_FILE
        if os.path.lexists(path) and not path.is_dir():
            raise EntryError(f"{path}: not an entry folder")
        if not meta_path.exists():
            raise MissingEntry(f"{path}: no such entry")
        try:
            meta = read_json(meta_path, "cache entry")
        except InputError as exc:
            raise EntryError(str(exc)) from None
        if not isinstance(meta, dict):
            raise EntryError(f"{meta_path}: the cache entry is not a JSON object")
        for key, kind in _ENTRY_KEYS.items():
            if not isinstance(meta.get(key), kind):
                raise EntryError(f"{meta_path}: key {key!r} is missing or has the wrong type")
        # Entries written before they carried a version have the format of their context.
        made_as = meta["context"].get("format")
        ENTRY_FORMAT.check(meta, meta_path, error=EntryError, missing_version=made_as)
        for key, kind in _DEPS_KEYS.items():
            if not isinstance(meta["deps"].get(key), kind):
                raise EntryError(f"{meta_path}: deps.{key} is missing or has the wrong type")
        written = meta.setdefault("written", {})
        if not isinstance(written, dict):
            raise EntryError(f"{meta_path}: key 'written' has the wrong type")
        for part in ("files", "written"):
            for relative, digest in meta[part].items():
                if not _safe_relative(relative) or not isinstance(digest, str):
                    raise EntryError(
                        f"{meta_path}: {part}: {relative!r} is not a safe relative path"
                    )
        try:
            example_logs.from_entry(meta)
        except ValueError as exc:
            raise EntryError(f"{meta_path}: {exc}") from None
        absent = meta["deps"].setdefault("absent", [])
        if not isinstance(absent, list) or not all(isinstance(n, str) for n in absent):
            raise EntryError(f"{meta_path}: deps.absent is not a list of module names")
        listings = meta["deps"].setdefault("listings", {})
        if not isinstance(listings, dict):
            raise EntryError(f"{meta_path}: deps.listings has the wrong type")
        for relative, listing in listings.items():
            if not (relative == "." or _safe_relative(relative)) or not _is_listing(listing):
                raise EntryError(f"{meta_path}: deps.listings: {relative!r} is malformed")
        return Entry(path, meta)

    def others(self, example_id: str, but: str) -> list[Entry]:
        """The readable entries of the same example in other contexts, newest first."""
        return self.scan(example_id, but)[0]

    def scan(self, example_id: str, but: str = "") -> tuple[list[Entry], list[tuple[str, str]]]:
        """The entries of ``example_id`` except the one called ``but``: the readable ones,
        newest first, and ``(name, why)`` of those a build cannot read."""
        prefix = f"{id_slug(example_id)}--"
        found, broken = [], []
        paths = sorted(self.entries.iterdir()) if self.entries.is_dir() else ()
        for path in paths:  # not a glob: an id may hold glob characters ("plot_[a].py")
            if not path.name.startswith(prefix) or path.name == but:
                continue
            try:
                found.append(self.load(path.name))
            except (EntryError, OSError) as exc:
                broken.append((path.name, str(exc)))
        found.sort(key=lambda e: _mtime(e.path / ENTRY_FILE), reverse=True)
        return found, broken

    def store(
        self,
        name: str,
        meta: Mapping[str, Any],
        files: Mapping[str, Path],
        written: Mapping[str, Path] | None = None,
    ) -> Path:
        """Write an entry atomically: ``files`` maps paths inside the source dir to files,
        ``written`` paths relative to the project root to files (see the caching guide's design)."""
        make_cache_subfolder(self.folder, self.folder / "tmp")
        make_cache_subfolder(self.folder, self.entries)
        work = Path(tempfile.mkdtemp(prefix=f"{name}.", dir=self.folder / "tmp"))
        try:
            parts = {}
            for part, sources in (("files", files), ("written", written or {})):
                digests = parts[part] = {}
                for relative, source in sorted(sources.items()):
                    if not _safe_relative(relative):
                        raise EntryError(f"{name}: {relative!r} is not a safe relative path")
                    target = work / part / relative
                    make_cache_subfolder(self.folder, target.parent)
                    shutil.copyfile(source, target)
                    digests[relative] = sha256_of(target)
            write_json(work / ENTRY_FILE, {**meta, **ENTRY_FORMAT.header(), **parts})
            (work / LAST_HIT).touch()
            final = self.entries / name
            if final.exists():
                self._discard(final)
            try:
                os.rename(work, final)
            except OSError:
                # Another build stored the same entry meanwhile: keep theirs.
                shutil.rmtree(work, ignore_errors=True)
            return final
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise

    @staticmethod
    def file_of(entry: Entry, part: str, relative: str) -> Path:
        """Where the entry keeps its file ``relative`` of ``part`` (``"files"``: its
        outputs, ``"written"``: what it wrote under the project's roots)."""
        return entry.path / part / relative

    def restore(
        self, entry: Entry, docs: Path, created: dict[Path, Stamp] | None = None
    ) -> list[Path]:
        """Copy the entry's files under ``docs``; ``*.md5`` files last, so an interrupted
        restore leaves an example that runs again. Raises :class:`EntryError`.
        ``created``: gets each file it made where there was none, with its
        :func:`stamp` (what :func:`remove_created` may take away)."""
        ordered = sorted(entry.meta["files"].items(), key=lambda item: item[0].endswith(".md5"))
        written: list[Path] = []
        try:
            for relative, digest in ordered:
                source = self.file_of(entry, "files", relative)
                if not source.is_file():
                    raise EntryError(f"{entry.path}: its file {relative} is missing")
                target = docs / relative
                target.parent.mkdir(parents=True, exist_ok=True)
                partial = target.with_name(f".{target.name}.{uuid.uuid4().hex}.tmp")
                existed = os.path.lexists(target)
                try:
                    shutil.copyfile(source, partial)
                    if sha256_of(partial) != digest:
                        raise EntryError(f"{source}: its content does not match its digest")
                    os.replace(partial, target)
                finally:
                    partial.unlink(missing_ok=True)
                _note_created(created, target, existed)
                written.append(target)
        except OSError as exc:
            self._undo(written)
            raise EntryError(f"{entry.path}: cannot restore it: {exc}") from None
        except EntryError:
            self._undo(written)
            raise
        self.touch(entry)
        return written

    @staticmethod
    def touch(entry: Entry) -> None:
        """Note that a build used the entry now (``prune`` keeps the most recently used)."""
        with contextlib.suppress(OSError):
            os.utime(entry.path / LAST_HIT)

    def restore_written(
        self, entry: Entry, root: Path, created: dict[Path, Stamp] | None = None
    ) -> list[Path]:
        """Put the files the example wrote back under the project ``root`` (each replaced
        atomically, digest checked). Raises :class:`EntryError` naming the file that cannot
        be put back, or whose place is a link out of ``root``. ``created``: as for
        :meth:`restore`."""
        real_root = os.path.realpath(root)
        restored: list[Path] = []
        for relative, digest in sorted(entry.meta["written"].items()):
            source = self.file_of(entry, "written", relative)
            target = Path(root) / relative
            try:
                if not is_under(_nearest_real(target.parent), real_root):
                    raise EntryError(
                        f"{entry.path}: cannot put back {relative}: its folder leads out of {root}"
                    )
                target.parent.mkdir(parents=True, exist_ok=True)
                partial = target.with_name(f".{target.name}.{uuid.uuid4().hex}.tmp")
                existed = os.path.lexists(target)
                try:
                    shutil.copyfile(source, partial)
                    if sha256_of(partial) != digest:
                        raise EntryError(
                            f"{entry.path}: cannot put back {relative}: "
                            "its content does not match its digest"
                        )
                    os.replace(partial, target)
                finally:
                    partial.unlink(missing_ok=True)
                _note_created(created, target, existed)
            except OSError as exc:
                raise EntryError(f"{entry.path}: cannot put back {relative}: {exc}") from None
            restored.append(target)
        return restored

    @staticmethod
    def _undo(written: list[Path]) -> None:
        for path in written:
            if path.name.endswith(".md5"):
                path.unlink(missing_ok=True)

    def _discard(self, path: Path) -> None:
        """Rename ``path`` into ``trash/`` (atomic), then delete it."""
        trash = make_cache_subfolder(self.folder, self.folder / "trash")
        doomed = trash / f"{path.name}.{uuid.uuid4().hex}"
        try:
            os.rename(path, doomed)
        except FileNotFoundError:
            return
        if doomed.is_dir() and not doomed.is_symlink():
            shutil.rmtree(doomed, ignore_errors=True)
        else:
            doomed.unlink(missing_ok=True)

    def remove(self, name: str) -> None:
        self._discard(self.entries / name)

    def list(self) -> list[EntryInfo]:
        """Every entry, whether readable or not (what is not a folder is not)."""
        if not self.entries.is_dir():
            return []
        infos = []
        for path in sorted(self.entries.iterdir()):
            if not path.is_dir():
                infos.append(EntryInfo(path, path.lstat().st_size, _mtime(path)))
                continue
            size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
            last = max(_mtime(path / LAST_HIT), _mtime(path / ENTRY_FILE))
            infos.append(EntryInfo(path, size, last))
        return infos

    def write_last_build(self, summary: Mapping[str, Any]) -> None:
        # The folder itself only (:func:`tag_cache_folder`): its parents are the user's.
        self.folder.mkdir(exist_ok=True)
        write_json(self.folder / LAST_BUILD, {**summary, "finished_at": time.time()})

    def read_last_build(self) -> dict[str, Any] | None:
        try:
            data = read_json(self.folder / LAST_BUILD, "cache summary")
        except InputError:
            return None
        return data if isinstance(data, dict) else None


def _is_listing(listing: Any) -> bool:
    try:
        Listing.from_json(listing)
    except ValueError:
        return False
    return True


#: What tells a file apart from what replaced or changed it: inode, size, modification time.
Stamp = tuple[int, int, int]


def stamp(path: Path) -> Stamp | None:
    """The :data:`Stamp` of the regular file at ``path`` (a link is not followed);
    ``None`` when there is none."""
    try:
        status = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(status.st_mode):
        return None
    return (status.st_ino, status.st_size, status.st_mtime_ns)


def _note_created(created: dict[Path, Stamp] | None, target: Path, existed: bool) -> None:
    """Note in ``created`` that a restore made ``target`` where no file was."""
    if created is None or existed:
        return
    made = stamp(target)
    if made is not None:
        created[target] = made


def remove_created(created: Mapping[Path, Stamp]) -> list[Path]:
    """Undo restores: delete each file of ``created`` (what :meth:`CacheStore.restore`
    and :meth:`CacheStore.restore_written` made where no file was) that is as they left
    it. A file that was there before, or that something changed or replaced since, is
    not the cache's to delete: it stays. The files deleted."""
    removed = []
    for path, made in created.items():
        if stamp(path) == made:
            with contextlib.suppress(OSError):
                path.unlink()
                removed.append(path)
    return removed


def _nearest_real(folder: Path) -> str:
    """The real path of ``folder``, or of its nearest existing parent."""
    while not folder.exists() and folder.parent != folder:
        folder = folder.parent
    return os.path.realpath(folder)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def unwritable(folder: Path) -> str | None:
    """Why a build cannot write into the cache folder ``folder`` (made if missing), or
    ``None`` when it can.

    A cache restored read-only, or on a read-only mount (a fork's pull request that may
    not save), is found before any handler tries to lock or write in it.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as free:
    ...     unwritable(Path(free, "new", "cache")) is None
    True
    """
    existing = Path(os.path.abspath(folder))
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        return f"cannot be made: {existing} is a file"
    # access() answers for a read-only mount (EROFS) as for permissions, as open() would.
    if not os.access(existing, os.W_OK | os.X_OK):
        where = "is" if existing == Path(os.path.abspath(folder)) else f"is in {existing}, which is"
        return f"{where} read-only"
    if existing != Path(os.path.abspath(folder)):
        # Some folders refuse a new folder whatever access() says (``/proc``, ``/sys``):
        # making one and taking it back is the only sure answer.
        try:
            os.rmdir(tempfile.mkdtemp(prefix=".docsaccel-probe-", dir=existing))
        except OSError as exc:
            return f"cannot be made in {existing}: {_refused_why(exc)}"
    return None


def _refused_why(exc: OSError) -> str:
    """Why a folder refused a new folder, plainly: a kernel file system (``/proc``,
    ``/sys``) answers "No such file or directory" of the very folder it lists."""
    if exc.errno == errno.ENOENT:
        return (
            "the system does not let a folder be made there (a kernel file system such as "
            "/proc or /sys); choose a folder of the project or the home folder"
        )
    return exc.strerror or str(exc)
