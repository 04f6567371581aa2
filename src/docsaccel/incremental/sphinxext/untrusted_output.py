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
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from pathlib import Path

__all__ = ["keep_only_restored"]


#: The one hidden file Sphinx writes in an HTML folder; every other one is the user's.
_SPHINX_HIDDEN = ".buildinfo"


def _holds(folder: Path, path: str) -> bool:
    return os.path.commonpath([folder, path]) == str(folder)


def _not_sphinx_output(path: str, name: str) -> bool:
    """Whether ``path`` (named ``name``) is nothing Sphinx writes: never deleted."""
    return (name.startswith(".") and name != _SPHINX_HIDDEN) or os.path.islink(path)


def keep_only_restored(
    outdir: Path, restored: Iterable[str], leave_out: Iterable[Path], sources: Iterable[str]
) -> int:
    """Delete the files under ``outdir`` that are not ``restored`` (absolute paths), with
    the folders this empties, outside ``leave_out``; how many files. Nothing is deleted
    when ``outdir`` holds one of ``sources`` (the sources, the cache, the project's root):
    such a folder is no build's alone.

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
            if path not in kept and not _not_sphinx_output(path, name):
                with contextlib.suppress(OSError):
                    os.unlink(path)
                    removed += 1
    for folder in reversed(walked[1:]):  # the deepest first, the output folder kept
        with contextlib.suppress(OSError):
            os.rmdir(folder)  # only an empty one
    return removed
