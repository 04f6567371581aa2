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
docsaccel.layout.LockedError: another build is writing into ... (process ..., lock ...
>>> build.release()
>>> other_build.acquire()
>>> other_build.held
True
>>> other_build.release()
>>> outdir.cleanup()
"""

from __future__ import annotations

import os

from docsaccel import layout

# The gallery folders' lock is the layout's: shard merges take it too.
from docsaccel.layout import FolderLock, GalleryLock, LockedError

__all__ = ["GalleryLock", "LockedError", "OutdirLock"]


class OutdirLock(FolderLock):
    """An exclusive lock on an output folder (:func:`docsaccel.layout.lock_path`)."""

    def __init__(self, outdir: str | os.PathLike[str]) -> None:
        super().__init__(outdir, layout.lock_path(outdir))
        self.outdir = self.folder

    def _refusal(self, holder: str) -> str:
        return (
            f"another build is writing into {self.outdir} (process {holder}, lock "
            f"{self.path}); wait for it to finish or build into another output folder"
        )
