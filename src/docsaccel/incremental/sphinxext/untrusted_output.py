"""An output folder no finished build of this context left: only the restored state's files stay.

A build that failed, was interrupted or was killed wrote pages (an example since deleted,
a page of a document removed) that no record names; so did a build of another context. A
build that restores a state from the cache, or starts from none, into such a folder
would otherwise publish them: Sphinx never deletes a page it did not write, and the
state's record of what to delete names only what its own build wrote. Removing every
file the restore did not put there (the plugin's folder and the doctrees aside) leaves
what a fresh checkout has. What Sphinx never writes there is left alone: a hidden entry
(a ``.git`` of a site published from this folder, a ``.nojekyll``) other than its own
``.buildinfo``, and a symbolic link.

Where the folder's last build finished (of another context), only what a build wrote
goes: the files that build recorded, and those older than its end (no page a build wrote
is newer than the build; a restored file bears the epoch). A file written since and
recorded by no build is the user's, and stays, as a clean build into that folder leaves
it. Where no build finished (one killed), what a build wrote cannot be told from what a
user added: every file the restore did not put there goes.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from docsaccel.incremental.last_build import LastBuild

__all__ = ["FinishedBuild", "keep_only_restored"]


#: The one hidden file Sphinx writes in an HTML folder; every other one is the user's.
_SPHINX_HIDDEN = ".buildinfo"


@dataclass(frozen=True)
class FinishedBuild:
    """The last build that finished in an output folder, as its marker tells: when it
    ended, and the files (relative to the folder, posix) its record names."""

    ended_ns: int
    wrote: frozenset[str]

    @classmethod
    def of(cls, ended_ns: int, record: LastBuild | None) -> FinishedBuild:
        """The build that ended at ``ended_ns`` (its marker's time) leaving ``record``
        (``None``: one this docsaccel cannot read, told by its time alone)."""
        if record is None:
            return cls(ended_ns, frozenset())
        wrote = {f for files in record.outputs.values() for f in files}
        wrote |= {*record.builder_pages.values(), *record.sphinx_files, *record.site_files}
        return cls(ended_ns, frozenset(wrote))

    def made(self, outdir: str, path: str) -> bool:
        """Whether ``path`` (under ``outdir``) is a file a build wrote, not the user."""
        if os.path.relpath(path, outdir).replace(os.sep, "/") in self.wrote:
            return True
        try:
            return os.stat(path, follow_symlinks=False).st_mtime_ns <= self.ended_ns
        except OSError:
            return False


def _holds(folder: Path, path: str) -> bool:
    return os.path.commonpath([folder, path]) == str(folder)


def _not_sphinx_output(path: str, name: str) -> bool:
    """Whether ``path`` (named ``name``) is nothing Sphinx writes: never deleted."""
    return (name.startswith(".") and name != _SPHINX_HIDDEN) or os.path.islink(path)


def keep_only_restored(
    outdir: Path,
    restored: Iterable[str],
    leave_out: Iterable[Path],
    sources: Iterable[str],
    finished: FinishedBuild | None = None,
) -> int:
    """Delete the files under ``outdir`` that are not ``restored`` (absolute paths), with
    the folders this empties, outside ``leave_out``; how many files. Nothing is deleted
    when ``outdir`` holds one of ``sources`` (the sources, the cache, the project's root):
    such a folder is no build's alone. With ``finished`` (the folder's last build
    finished), only the files a build made go.

    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp())
    >>> for name in ("page.html", "old/gone.html", "docsaccel/report.json"):
    ...     (out / name).parent.mkdir(exist_ok=True)
    ...     _ = (out / name).write_text("")
    >>> keep_only_restored(out, [str(out / "page.html")], [out / "docsaccel"], [])
    1
    >>> sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))
    ['docsaccel', 'docsaccel/report.json', 'page.html']
    """
    outdir = Path(os.path.abspath(outdir))
    if any(_holds(outdir, os.path.abspath(s)) for s in sources):
        return 0
    skipped = {os.path.abspath(p) for p in leave_out}
    kept = {os.path.abspath(p) for p in restored}
    removed = 0
    walked: list[str] = []
    for current, dirs, names in os.walk(outdir):
        # Pruned in place, so a hidden folder (a ``.git``) is never walked into.
        dirs[:] = [d for d in dirs if not _not_sphinx_output(os.path.join(current, d), d)]
        if any(_holds(Path(s), current) for s in skipped):
            continue
        walked.append(current)
        for name in names:
            path = os.path.join(current, name)
            if path in kept or _not_sphinx_output(path, name):
                continue
            if finished is None or finished.made(str(outdir), path):
                with contextlib.suppress(OSError):
                    os.unlink(path)
                    removed += 1
    for folder in reversed(walked[1:]):  # the deepest first, the output folder kept
        with contextlib.suppress(OSError):
            os.rmdir(folder)  # only an empty one
    return removed
