"""The files a build generates in its source folder, removed before the next build in the
same folders, so that every build generates its sources from what a fresh checkout has.

The design, in full: the caching guide's *Design* section.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from docsaccel.contract import InputError, opens_for_writing, read_json
from docsaccel.formats import Format, write_all, write_json
from docsaccel.intercept import Listener, listen

__all__ = ["RECORD", "GeneratedFiles"]

#: The record of what a finished build generated.
RECORD = Format("docsaccel.generated-sources", 1, "record of generated sources")
#: How long after the log's last line a listed file may have been modified and still be
#: the killed build's: the line comes before the write, which may take a moment to finish.
SETTLE_NS = 2_000_000_000
#: The events that create a file or folder, and the index of the created path's argument;
#: and the removal of one that was there before (made again, it is not this build's).
_CREATING = {"open": 0, "os.mkdir": 0, "os.rename": 1, "os.symlink": 1, "os.link": 1}
_EVENTS = {**_CREATING, "os.remove": 0}
_FOLDER, _FILE = "d", "f"
#: How long a build waits for another one of the folder to finish removing (it holds the
#: lock alone for that long), before it goes on without the lock.
_LOCK_WAIT_S, _LOCK_TRIES = 0.05, 200

#: The watch the process's audit listener reports to (``None``: off), and that listener
#: (registered while a watch runs here, inherited by the processes it forks).
_watching: GeneratedFiles | None = None
_listener: Listener | None = None


def _hook(event: str, args: tuple[Any, ...]) -> None:
    watch = _watching
    if watch is not None:
        watch._event(event, args)


class GeneratedFiles:
    """The generated files of one source folder (see the caching guide's design)."""

    def __init__(
        self,
        records: Path,
        srcdir: Path,
        leave_out: Iterable[Path] = (),
        *,
        copies: Iterable[Path] = (),
        seen: Iterable[Path] = (),
    ) -> None:
        """``records``: the folder of the log, the lock and the record; ``copies``: folders
        that also keep the record; ``seen``: folders whose record and log are read only."""
        self.root = os.path.abspath(srcdir)
        self._prefix = os.path.join(self.root, "")
        copies, seen = list(copies), list(seen)
        # The records' own folders too: the log's writes are not the build's.
        kept = (*leave_out, records, *copies, *seen)
        self._leave_out = tuple(os.path.join(os.path.abspath(p), "") for p in kept)
        self._key = hashlib.sha256(os.path.realpath(self.root).encode()).hexdigest()[:20]
        self.record = records / f"{self._key}.json"
        self.log = records / f"{self._key}.log"
        self.lock = records / f"{self._key}.lock"
        self._copies = [folder / f"{self._key}.json" for folder in copies]
        #: Every folder whose record and log tell what earlier builds generated.
        self._sources = [records, *copies, *seen]
        self._noted: set[str] = set()
        self._lock: int | None = None
        self._alone = True  # no other build of this folder was watching when this one began
        self._started_ns = 0
        #: The process of the build that made the watch: only its children join it.
        self._maker = os.getpid()
        #: Why the record of the last build in this folder could not be read, if so.
        self.unreadable: str | None = None

    # -- before the generators run -------------------------------------------------------

    def remove_earlier(self) -> list[str]:
        """Remove what earlier builds in this folder generated and left as they made it;
        the relative paths of the files removed, sorted. Nothing while another build of
        this folder runs: what it generated is in use."""
        if not self._take_lock():
            return []
        files: set[str] = set()
        folders: set[str] = set()
        for folder in self._sources:
            self._add_recorded(folder / f"{self._key}.json", files, folders)
            self._add_logged(folder / f"{self._key}.log", files, folders)
        removed = []
        for rel in sorted(files):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(self.root, rel))
                removed.append(rel)
        for rel in sorted(folders, key=lambda r: r.count("/"), reverse=True):
            path = self._listed(rel)
            if path is not None and not os.path.islink(path):
                with contextlib.suppress(OSError):  # not empty: something else is in it
                    os.rmdir(path)
        return removed

    def _add_recorded(self, record: Path, files: set[str], folders: set[str]) -> None:
        """Add what the record ``record`` names and is still as recorded."""
        recorded = self._read_record(record)
        if recorded is None:
            return
        for rel, (size, mtime_ns) in recorded["files"].items():
            info = self._lstat(rel)
            if info is not None and (info.st_size, info.st_mtime_ns) == (size, mtime_ns):
                files.add(rel)
        folders.update(recorded["folders"])

    def _add_logged(self, log: Path, files: set[str], folders: set[str]) -> None:
        """Add what the log ``log`` of a build that did not finish names and that build
        may have written (modified while it ran)."""
        logged = self._read_log(log)
        if logged is None:
            return
        started_ns, last_ns, listed = logged
        for kind, rel in listed:
            if kind == _FOLDER:
                folders.add(rel)
                continue
            info = self._lstat(rel)
            if info is not None and started_ns <= info.st_mtime_ns <= last_ns + SETTLE_NS:
                files.add(rel)

    def _take_lock(self) -> bool:
        """Lock the folder's files (once); whether this build is the only one watching it.
        Alone, it holds the lock exclusively until :meth:`watch` has begun the log."""
        if self._lock is not None:
            return self._alone
        if _watching is not None and _watching is not self:
            _watching._release()  # a watch this process never finished is over
        self.lock.parent.mkdir(parents=True, exist_ok=True)
        # O_CLOEXEC: a program the build starts must not hold the lock past the build.
        handle = os.open(self.lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        self._lock = handle
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._alone = False
        else:
            self._alone = True
            return True
        for _ in range(_LOCK_TRIES):  # the other build may be removing: it is quick
            try:
                fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
                break
            except OSError:
                time.sleep(_LOCK_WAIT_S)
        return False

    def _release(self) -> None:
        handle, self._lock = self._lock, None
        if handle is not None:
            with contextlib.suppress(OSError):
                os.close(handle)  # lets go of the lock

    def _last(self) -> bool:
        """Whether no other build of this folder is watching it (this one's lock becomes
        exclusive; when it cannot, this one's is gone, and the last build's will be)."""
        if self._lock is None:
            return True
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False
        return True

    def _relative(self, path: str) -> str | None:
        """``path`` (absolute, normalised) relative to the root, if it is watched."""
        if not path.startswith(self._prefix) or path.startswith(self._leave_out):
            return None
        rel = path[len(self._prefix) :]
        return rel.replace(os.sep, "/") if "__pycache__" not in rel else None

    def _listed(self, rel: str) -> str | None:
        """The path of a listed name, if it is one under the root that is watched (a name
        that leaves the root is refused: the lists are read from the cache folder)."""
        path = os.path.normpath(os.path.join(self.root, rel))
        return path if not rel.startswith("/") and self._relative(path) == rel else None

    def _lstat(self, rel: str) -> os.stat_result | None:
        """The status of a listed file, if :meth:`_listed` accepts its name and it is a
        file or a link."""
        path = self._listed(rel)
        if path is None:
            return None
        try:
            info = os.lstat(path)
        except OSError:
            return None
        mode = info.st_mode & 0o170000
        return info if mode in (0o100000, 0o120000) else None

    def _read_record(self, record: Path) -> dict[str, Any] | None:
        if not os.path.lexists(record):
            return None  # no build of this folder recorded any: nothing to remove
        try:
            data = read_json(record, RECORD.what)
            RECORD.check(data, record)
            files = {str(k): (int(v[0]), int(v[1])) for k, v in data["files"].items()}
            folders = [str(f) for f in data["folders"]]
        except FileNotFoundError:
            return None
        except (InputError, KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
            # Unreadable: nothing of it is trusted, so nothing is removed; said once.
            self.unreadable = self.unreadable or f"{record} is unreadable ({exc})"
            return None
        return {"files": files, "folders": folders}

    def _read_log(self, log: Path) -> tuple[int, int, list[tuple[str, str]]] | None:
        try:
            text = log.read_text("utf-8", errors="replace")
            last_ns = log.stat().st_mtime_ns
        except OSError:
            return None
        lines = text.split("\n")
        head = lines[0].split("\t")
        if len(head) != 2 or head[0] != RECORD.schema:
            return None
        try:
            started_ns = int(head[1])
        except ValueError:
            return None
        listed = []
        for line in lines[1:]:
            kind, _, rel = line.partition("\t")
            if kind in (_FILE, _FOLDER) and rel:  # the last line may be cut short
                listed.append((kind, rel))
        return started_ns, last_ns, listed

    # -- while the build runs ------------------------------------------------------------

    def watch(self) -> None:
        """From now on, note what this process creates under the root (one watch at a
        time: a new one replaces the last). Another build of this folder watching: in its
        log."""
        alone = self._take_lock()
        self.log.parent.mkdir(parents=True, exist_ok=True)
        # A second before now: file times come from a clock that may lag this one.
        self._started_ns = time.time_ns() - 1_000_000_000
        head = f"{RECORD.schema}\t{self._started_ns}\n"
        if alone:
            with open(self.log, "w", encoding="utf-8") as handle:
                handle.write(head)
            with contextlib.suppress(FileNotFoundError):
                self.record.unlink()  # the log stands for it until finish
            if self._lock is not None:
                fcntl.flock(self._lock, fcntl.LOCK_SH)  # others may watch from here on
        else:
            with contextlib.suppress(FileExistsError), open(self.log, "x", encoding="utf-8") as f:
                f.write(head)  # the other build finished meanwhile and wrote the record
        self._noted.clear()
        self._attach()

    def join(self) -> None:
        """In a process the watch was handed to, pickled (sphinx-gallery's ``parallel``
        workers): note what this one creates too, in the same log.

        Only a child of the build that made the watch joins it, and only when it has no
        watch of its own. The watch travels in sphinx-gallery's settings, which Sphinx
        pickles with the environment: a later build loading that environment (restored
        from the cache into another checkout, or the last one in these folders) would
        otherwise hand its events to the old build's log, and record nothing of its own.
        """
        if _watching is not None or os.getppid() != self._maker:
            return
        self._attach()

    def _attach(self) -> None:
        """Make this the watch the process's audit listener reports to."""
        global _watching, _listener
        _watching = self
        if _listener is None or not _listener.listening:
            _listener = listen(_EVENTS, _hook)

    def __getstate__(self) -> dict[str, Any]:
        # What this process noted stays here: sphinx-gallery pickles its settings, and the
        # watch in them, for every example it hands a worker (a name noted twice is one).
        return {**self.__dict__, "_noted": set(), "_lock": None}

    def _event(self, event: str, args: tuple[Any, ...]) -> None:
        if event == "open":
            path, mode, flags = args
            if isinstance(path, int) or path is None or not opens_for_writing(mode, flags):
                return
        else:
            path = args[_EVENTS[event]]
            if isinstance(path, int):
                return
        try:
            full = os.path.abspath(os.fsdecode(path))
        except (TypeError, ValueError):
            return
        rel = self._relative(full)
        if rel is None or rel in self._noted:
            return  # not watched, or noted already (this build's, or there before)
        if os.path.lexists(full):
            if event == "os.remove":
                self._noted.add(rel)  # there before: what takes its place is not new
            return
        if event == "os.rename" and self._moves_in_older(args[0]):
            self._noted.add(rel)  # a file moved here holds what was there before the build
            return
        self._noted.add(rel)
        kind = _FOLDER if event == "os.mkdir" else _FILE
        try:
            # Opened for each line: a process this one forks appends to the same log.
            handle = os.open(self.log, os.O_WRONLY | os.O_APPEND)
            try:
                write_all(handle, f"{kind}\t{rel}\n".encode("utf-8", "surrogateescape"))
            finally:
                os.close(handle)
        except OSError:
            pass  # the log is gone (another build in this folder started its own)

    def _moves_in_older(self, source: Any) -> bool:
        """Whether the file ``source`` names holds what was there before the build: one
        in the watched folder this build did not make, or one last modified before."""
        try:
            full = os.path.abspath(os.fsdecode(source))
            info = os.lstat(full)
        except (OSError, TypeError, ValueError):
            return False
        rel = self._relative(full)
        return (rel is not None and rel not in self._noted) or info.st_mtime_ns < self._started_ns

    def finish(self) -> list[str]:
        """Stop watching; record what was created and is still there (the last build of
        this folder to finish, for all of them). Returns the relative paths of the files
        the log names."""
        global _watching, _listener
        if _watching is self:
            _watching = None
            if _listener is not None:
                _listener.close()
                _listener = None
        logged = self._read_log(self.log)
        files: dict[str, list[int]] = {}
        folders: set[str] = set()
        for kind, rel in logged[2] if logged is not None else ():
            if kind == _FOLDER:
                folders.add(rel)
                continue
            info = self._lstat(rel)
            if info is not None:
                files[rel] = [info.st_size, info.st_mtime_ns]
        made = sorted(files)
        if logged is not None and self._last():
            # What a build that finished while this one ran recorded, and is still so.
            earlier = self._read_record(self.record) or {"files": {}, "folders": []}
            for rel, (size, mtime_ns) in earlier["files"].items():
                info = self._lstat(rel)
                if info is not None and (info.st_size, info.st_mtime_ns) == (size, mtime_ns):
                    files.setdefault(rel, [size, mtime_ns])
            folders.update(earlier["folders"])
            record = {"root": self.root, "files": files, "folders": sorted(folders)}
            write_json(self.record, {**RECORD.header(), **record}, indent=None)
            self._write_copies({**RECORD.header(), **record})
            with contextlib.suppress(FileNotFoundError):
                self.log.unlink()
        self._release()
        return made

    def _write_copies(self, record: dict[str, Any]) -> None:
        """Keep the record beside the output too (see the caching guide's design)."""
        for copy in self._copies:
            with contextlib.suppress(OSError):  # the copy helps; the record stands alone
                copy.parent.mkdir(parents=True, exist_ok=True)
                write_json(copy, record, indent=None)
