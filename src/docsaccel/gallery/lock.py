"""One build per output folder, and per gallery folder of a source tree, at a time.

The design, in full: the budgets guide's *Design* section.

Example: a second build into the same folder is refused until the first lets go.

>>> import tempfile
>>> outdir = tempfile.TemporaryDirectory()
>>> build, other_build = OutdirLock(outdir.name), OutdirLock(outdir.name)
>>> build.acquire()
>>> other_build.acquire()
Traceback (most recent call last):
...
docsaccel.gallery.lock.LockedError: another build is writing into ... (process ..., lock ...
>>> build.release()
>>> other_build.acquire()
>>> other_build.held
True
>>> other_build.release()
>>> outdir.cleanup()
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from docsaccel import layout

__all__ = ["GalleryLock", "LockedError", "OutdirLock"]


class LockedError(RuntimeError):
    """Another build holds the output folder."""


class _FolderLock:
    """An exclusive lock on a folder through the lock file ``path``."""

    def __init__(self, folder: str | os.PathLike[str], path: Path) -> None:
        self.folder = Path(folder)
        self.path = path
        self._handle: int | None = None

    def _refusal(self, holder: str) -> str:
        """Why this build cannot go on while process ``holder`` holds the folder."""
        raise NotImplementedError

    def acquire(self) -> None:
        if self._handle is not None:
            return
        for _ in range(5):
            handle = self._lock_file()
            if _names(self.path, handle):
                self._handle = handle
                return
            os.close(handle)  # removed or replaced between open and lock: lock the new one
        raise OSError(f"{self.path} keeps being removed or replaced")

    def _lock_file(self) -> int:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # O_CLOEXEC: a process the build starts must not keep the lock after the build.
        handle = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(handle, 64).decode("ascii", "replace").strip() or "unknown"
            os.close(handle)
            raise LockedError(self._refusal(holder)) from None
        except OSError:
            os.close(handle)
            raise
        os.ftruncate(handle, 0)
        os.pwrite(handle, f"{os.getpid()}\n".encode(), 0)
        return handle

    def keep(self) -> str | None:
        """Lock the file at the path again if it is not the one this build locked (an
        example removed or replaced it); return ``None``, or why the folder is no longer
        this build's alone (another build locked the new file first)."""
        held = self._handle
        if held is None or _names(self.path, held):
            return None
        self._handle = None
        try:
            self.acquire()
        except (LockedError, OSError) as exc:
            self._handle = held
            return str(exc)
        os.close(held)
        return None

    #: Whether the lock file goes when the lock is let go: a gallery's is the machine's,
    #: kept in the temporary folder, and serves nothing once no build holds it; an output
    #: folder's stays, telling that a docsaccel build wrote there.
    removed_on_release = False

    def release(self) -> None:
        handle, self._handle = self._handle, None
        if handle is None:
            return
        # Unlinked while still locked: a build that opened the file meanwhile finds the
        # path no longer names it, and locks a new one (:meth:`acquire`).
        if self.removed_on_release and _names(self.path, handle):
            with contextlib.suppress(OSError):
                self.path.unlink()
        with contextlib.suppress(OSError):
            os.close(handle)

    def forget(self) -> None:
        """In a forked child: close this process's copy, leaving the parent's lock held."""
        handle, self._handle = self._handle, None
        if handle is not None:
            with contextlib.suppress(OSError):
                os.close(handle)

    @property
    def held(self) -> bool:
        return self._handle is not None


class OutdirLock(_FolderLock):
    """An exclusive lock on an output folder (:func:`docsaccel.layout.lock_path`)."""

    def __init__(self, outdir: str | os.PathLike[str]) -> None:
        super().__init__(outdir, layout.lock_path(outdir))
        self.outdir = self.folder

    def _refusal(self, holder: str) -> str:
        return (
            f"another build is writing into {self.outdir} (process {holder}, lock "
            f"{self.path}); wait for it to finish or build into another output folder"
        )


class GalleryLock(_FolderLock):
    """An exclusive lock on a gallery folder of a source tree
    (:func:`docsaccel.layout.gallery_lock_path`), whatever the output folder."""

    removed_on_release = True

    def __init__(self, gallery_dir: str | os.PathLike[str]) -> None:
        super().__init__(gallery_dir, layout.gallery_lock_path(gallery_dir))

    def _refusal(self, holder: str) -> str:
        return (
            f"another build of this source tree is generating the gallery folder "
            f"{self.folder} (process {holder}, lock {self.path}); wait for it to finish or "
            "build from another copy of the source tree"
        )


def _names(path: Path, handle: int) -> bool:
    """Whether ``path`` names the open file ``handle``."""
    try:
        named, opened = os.stat(path), os.fstat(handle)
    except OSError:
        return False
    return (named.st_dev, named.st_ino) == (opened.st_dev, opened.st_ino)
