"""The Sphinx state of the last build per build context, under the cache folder's ``sphinx/``.

The design, in full: the caching guide's *Design* section.

Example: save a build's one output page, restore it into another output folder.

>>> import tempfile
>>> from pathlib import Path
>>> folder = tempfile.TemporaryDirectory()
>>> page = Path(folder.name, "index.html")
>>> _ = page.write_text("<p>Hello</p>")
>>> store = StateStore(Path(folder.name, "cache"))
>>> meta = {"context": {}, "root": folder.name, "build": {}}
>>> _ = store.save("5f0c1e0a9b3d2c11", meta, {"output": {"index.html": page}})
>>> state = store.load("5f0c1e0a9b3d2c11")
>>> out = Path(folder.name, "out")
>>> folders = {"doctrees": Path(folder.name, "doctrees"), "output": out}
>>> [Path(path).relative_to(out).as_posix() for path in store.restore(state, folders)]
['index.html']
>>> store.load("0000000000000000")
Traceback (most recent call last):
...
docsaccel.incremental.state_store.StateError: .../sphinx/states/0000000000000000.json: no such state
>>> folder.cleanup()
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from docsaccel.cache.fingerprint import sha256_of
from docsaccel.cache.folder_tag import make_cache_subfolder
from docsaccel.contract import InputError, read_json
from docsaccel.formats import ABANDONED_SECONDS, Format, write_json

__all__ = [
    "STATE",
    "State",
    "StateError",
    "StateStore",
    "files_under",
    "remove_partials",
    "untouched",
]

#: The state file. Its version is bumped whenever a state written by an older docsaccel
#: could be wrong for a newer one, and a build uses only states of its own version.
#: 3: page records list the modules an import did not find (``absent``).
STATE = Format("docsaccel.sphinx-state", 3, "Sphinx state")
FOLDER = "sphinx"
_PARTS = ("doctrees", "output")

Known = dict[str, tuple[tuple[int, int, int], str]]


class StateError(Exception):
    """A state that cannot be used; the message says which file and why."""


@dataclass(frozen=True)
class State:
    """One state as read from ``states/<key>.json``."""

    path: Path
    meta: dict[str, Any]

    @property
    def key(self) -> str:
        return self.path.stem

    def files(self, part: str) -> dict[str, str]:
        return self.meta[part]


def _safe(relative: str) -> bool:
    pure = PurePosixPath(relative)
    return bool(relative) and not pure.is_absolute() and ".." not in pure.parts


def _stat(path: str | os.PathLike[str]) -> tuple[int, int, int]:
    info = os.stat(path)
    return (info.st_ino, info.st_size, info.st_mtime_ns)


def untouched(path: str | os.PathLike[str], known: Known) -> bool:
    """Whether ``path`` is a file of ``known`` as it was then (the same inode, size and
    modification time): nothing wrote it since."""
    remembered = known.get(str(path))
    try:
        return remembered is not None and remembered[0] == _stat(path)
    except OSError:
        return False


def _partial(target: Path) -> Path:
    """Where a restore writes ``target`` before renaming it into place (:data:`PARTIAL`)."""
    return target.with_name(f".{target.name}.{uuid.uuid4().hex}.tmp")


#: The name of a file :func:`_partial` makes: one a restore killed meanwhile leaves.
PARTIAL = re.compile(r"\..+\.[0-9a-f]{32}\.tmp")


def remove_partials(folders: Iterable[Path]) -> int:
    """Delete what restores killed while copying left in ``folders`` (half-copied files
    under a name of their own, :data:`PARTIAL`, which no build would publish); how many.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / f".page.html.{'0' * 32}.tmp").write_text("half")
    >>> _ = (folder / ".page.html.mine.tmp").write_text("not a restore's")
    >>> remove_partials([folder]), sorted(p.name for p in folder.iterdir())
    (1, ['.page.html.mine.tmp'])
    """
    removed = 0
    for folder in folders:
        for current, _dirs, names in os.walk(folder):
            for name in names:
                if PARTIAL.fullmatch(name):
                    with contextlib.suppress(OSError):
                        os.unlink(os.path.join(current, name))
                        removed += 1
    return removed


def files_under(folder: Path, leave_out: Iterable[Path] = ()) -> dict[str, Path]:
    """``{path relative to folder (posix): path}`` of the regular files under ``folder``,
    not following links, without the folders ``leave_out``."""
    skipped = {os.path.normpath(p) for p in leave_out}
    found: dict[str, Path] = {}
    for current, dirs, names in os.walk(folder):
        dirs[:] = sorted(
            d for d in dirs if os.path.normpath(os.path.join(current, d)) not in skipped
        )
        for name in sorted(names):
            path = os.path.join(current, name)
            if os.path.isfile(path) and not os.path.islink(path):
                found[os.path.relpath(path, folder).replace(os.sep, "/")] = Path(path)
    return found


class StateStore:
    """The ``sphinx/`` part of a cache folder (see the caching guide's design)."""

    def __init__(self, cache_dir: str | os.PathLike[str]) -> None:
        self.folder = Path(cache_dir) / FOLDER
        #: Digests of the objects this store has found whole (restoring or saving them).
        self._whole: set[str] = set()
        #: Digests of the objects this store has read to check them.
        self._checked: set[str] = set()

    @property
    def states(self) -> Path:
        return self.folder / "states"

    def _object(self, digest: str) -> Path:
        return self.folder / "objects" / digest[:2] / digest

    def load(self, key: str) -> State:
        """The state of context ``key``; :class:`StateError` when there is none or it is
        not a state this docsaccel wrote (its files are checked when restored)."""
        path = self.states / f"{key}.json"
        if not path.exists():
            raise StateError(f"{path}: no such state")
        try:
            meta = read_json(path, "Sphinx state")
        except InputError as exc:
            raise StateError(str(exc)) from None
        if STATE.check(meta, path, StateError) != STATE.version:
            raise StateError(f"{path}: written by an older docsaccel (version {meta['version']})")
        for part in _PARTS:
            files = meta.get(part)
            if not isinstance(files, dict) or not all(
                isinstance(k, str) and _safe(k) and isinstance(v, str) and len(v) == 64
                for k, v in files.items()
            ):
                raise StateError(f"{path}: {part!r} is not a map of safe paths to digests")
        for key_name, kind in (("context", dict), ("root", str), ("build", dict)):
            if not isinstance(meta.get(key_name), kind):
                raise StateError(f"{path}: {key_name!r} is missing or has the wrong type")
        return State(path, meta)

    def restore(self, state: State, folders: Mapping[str, Path]) -> Known:
        """Copy the state's files into ``folders`` (``{"doctrees": ..., "output": ...}``),
        each checked against its digest and renamed into place, with the time of Unix's
        start as its modification time (so anything that compares modification times
        regenerates it). Returns ``{path: (stat, digest)}`` of what it wrote; on any
        failure removes what it wrote and raises :class:`StateError`."""
        written: Known = {}
        try:
            for part in _PARTS:
                folder = folders[part]
                for relative, digest in sorted(state.files(part).items()):
                    target = folder / relative
                    target.parent.mkdir(parents=True, exist_ok=True)
                    partial = _partial(target)
                    try:
                        shutil.copyfile(self._object(digest), partial)
                        if sha256_of(partial) != digest:
                            raise StateError(self._remove_damaged(state, digest))
                        self._whole.add(digest)
                        os.utime(partial, ns=(0, 0))
                        os.replace(partial, target)
                    finally:
                        partial.unlink(missing_ok=True)
                    written[str(target)] = (_stat(target), digest)
        except (OSError, StateError) as exc:
            for path in written:
                with contextlib.suppress(OSError):
                    os.unlink(path)
            if isinstance(exc, StateError):
                raise
            raise StateError(f"{state.path}: cannot restore it: {exc}") from None
        with contextlib.suppress(OSError):
            os.utime(state.path)  # when a build last used it, for prune
        return written

    def save(
        self,
        key: str,
        meta: Mapping[str, Any],
        parts: Mapping[str, Mapping[str, Path]],
        known: Known | None = None,
    ) -> Path:
        """Store the files of ``parts`` (``{"doctrees": {relative: path}, "output": ...}``)
        and the state file of context ``key`` with ``meta``. ``known``: digests of files
        whose stat has not changed since (what :meth:`restore` wrote), not read again."""
        with self._saving():
            return self._save(key, meta, parts, known or {})

    def _save(
        self,
        key: str,
        meta: Mapping[str, Any],
        parts: Mapping[str, Mapping[str, Path]],
        known: Known,
    ) -> Path:
        tmp = make_cache_subfolder(self.folder.parent, self.folder / "tmp")
        listing: dict[str, dict[str, str]] = {}
        for part in _PARTS:
            digests = listing[part] = {}
            for relative, path in sorted(parts.get(part, {}).items()):
                if not _safe(relative):
                    raise StateError(f"{path}: {relative!r} is not a safe relative path")
                digests[relative] = self._store_object(Path(path), known, tmp)
        payload = {**meta, **STATE.header(), **listing, "made_at": time.time()}
        make_cache_subfolder(self.folder.parent, self.states)
        final = self.states / f"{key}.json"
        write_json(final, payload, indent=None)
        return final

    def _store_object(self, path: Path, known: Known, tmp: Path) -> str:
        digest = known[str(path)][1] if untouched(path, known) else sha256_of(path)
        target = self._object(digest)
        if target.exists():
            return digest
        make_cache_subfolder(self.folder.parent, target.parent)
        partial = tmp / f"{digest}.{uuid.uuid4().hex}"
        try:
            shutil.copyfile(path, partial)
            if sha256_of(partial) != digest:
                raise StateError(f"{path} changed while it was saved")
            os.replace(partial, target)  # a damaged object of that name is replaced
        finally:
            partial.unlink(missing_ok=True)
        self._whole.add(digest)
        return digest

    def _remove_damaged(self, state: State, found: str) -> str:
        """Remove ``found`` and every other object of ``state`` that does not match its
        name (named by its content, a damaged object would never be written again);
        return the error naming them."""
        damaged = [found] + [d for d in self.damaged(state.meta) if d != found]
        for digest in damaged:
            self._object(digest).unlink(missing_ok=True)
        more = f" (and {len(damaged) - 1} more damaged or missing, removed)" if damaged[1:] else ""
        return f"{self._object(found)}: content does not match{more}"

    def _is_whole(self, digest: str) -> bool:
        """Whether the object ``digest`` exists and its content matches its name."""
        if digest in self._whole:
            return True
        self._checked.add(digest)
        try:
            whole = sha256_of(self._object(digest)) == digest
        except OSError:
            return False
        if whole:
            self._whole.add(digest)
        return whole

    def damaged(self, meta: Mapping[str, Any]) -> list[str]:
        """The digests a state names whose object is missing or does not match its name
        (each object is read once per store)."""
        named = sorted({d for part in _PARTS for d in meta[part].values()})
        return [digest for digest in named if not self._is_whole(digest)]

    def all_states(self, check_objects: bool = False) -> list[tuple[Path, dict[str, Any] | None]]:
        """Every state file, with its content (``None``: unreadable, or with
        ``check_objects``, naming an object that is missing or damaged)."""
        found = []
        for path in sorted(self.states.glob("*.json")) if self.states.is_dir() else ():
            try:
                meta: dict[str, Any] | None = self.load(path.stem).meta
            except StateError:
                meta = None
            if check_objects and meta is not None and self.damaged(meta):
                meta = None
            found.append((path, meta))
        return found

    def prune(self, limit: int) -> tuple[int, int, int]:
        """Remove unusable states (unreadable, or naming a missing or damaged object),
        then the least recently used ones until the objects the rest name take at most
        ``limit`` bytes, then the objects no state names and leftovers in ``tmp/`` (left by
        a killed build or a state since replaced; while a build saves, which holds
        ``saving.lock``, only those older than
        :data:`docsaccel.formats.ABANDONED_SECONDS`), and every damaged object.
        Returns ``(states removed, bytes freed, bytes left)``."""
        removed, freed = 0, 0
        kept = []
        for path, meta in self.all_states(check_objects=True):
            if meta is None:
                path.unlink(missing_ok=True)
                removed += 1
            else:
                kept.append((path, meta))
        kept.sort(key=lambda item: _mtime(item[0]), reverse=True)
        while kept and self._size(m for _, m in kept) > limit:
            path, _ = kept.pop()
            path.unlink(missing_ok=True)
            removed += 1
        named = {d for _, meta in kept for part in _PARTS for d in meta[part].values()}
        now = time.time()
        with self._saving(exclusive=True) as alone:
            for folder in (self.folder / "objects", self.folder / "tmp"):
                for path in folder.rglob("*") if folder.is_dir() else ():
                    # A build saving now may own a young file no state names yet.
                    old = alone or now - _mtime(path) > ABANDONED_SECONDS
                    damaged = folder.name == "objects" and self._found_damaged(path)
                    if path.is_file() and (damaged or (path.name not in named and old)):
                        freed += path.stat().st_size
                        path.unlink(missing_ok=True)
        return removed, freed, self._size(m for _, m in kept)

    def _found_damaged(self, path: Path) -> bool:
        """Whether ``path`` is an object this store read and found not matching its name
        (one no kept state names is not read: it goes, or stays, by its age)."""
        return path.name in self._checked and path.name not in self._whole

    @contextlib.contextmanager
    def _saving(self, exclusive: bool = False) -> Iterator[bool]:
        """A lock on ``sphinx/saving.lock``: shared while a build saves, exclusive (without
        waiting) while prune deletes. Yields whether it was had (prune: no build saves)."""
        make_cache_subfolder(self.folder.parent, self.folder)
        handle = os.open(self.folder / "saving.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB if exclusive else fcntl.LOCK_SH)
                had = True
            except OSError:
                had = False
            yield had
        finally:
            os.close(handle)  # releases the lock

    def size_on_disk(self) -> int:
        """Bytes of every file under ``sphinx/``."""
        return sum(p.stat().st_size for p in self.folder.rglob("*") if p.is_file())

    def _size(self, metas: Iterable[dict[str, Any]]) -> int:
        digests = {d for meta in metas for part in _PARTS for d in meta[part].values()}
        total = 0
        for digest in digests:
            with contextlib.suppress(OSError):
                total += self._object(digest).stat().st_size
        return total


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
