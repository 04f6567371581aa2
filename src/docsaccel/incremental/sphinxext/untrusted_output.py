"""An output folder no finished build of this context left: only what builds wrote there goes.

A build that failed, was interrupted or was killed wrote pages (an example since deleted,
a page of a document removed) that no record names; so did a build of another context. A
build that restores a state from the cache, or starts from none, into such a folder
would otherwise publish them: Sphinx never deletes a page it did not write, and the
state's record of what to delete names only what its own build wrote. Removing the files
builds wrote there that the restore did not put there (the plugin's folder and the
doctrees aside) leaves what a fresh checkout has, with the user's files. What Sphinx
never writes there is left alone: a hidden entry (a ``.git`` of a site published from
this folder, a ``.nojekyll``) other than its own ``.buildinfo``, and a symbolic link.

What a build wrote is told by the folder's last finished build, of any kind
(:mod:`.output_record`): the files it recorded, and those older than its end (no page a
build wrote is newer than the build; a restored file bears the epoch), but for those it
found there and did not write (the user's, which stay however many builds they
outlive); and, after it, what is newer than the start of a build that did not finish. A
file written between is recorded by no build: the user's, and it stays, as a clean build
into that folder leaves it. Where no build is known to have finished there
(:meth:`FinishedBuild.none`: a folder a plain Sphinx build or the user filled before
docsaccel came), nothing older than the first build's start is known to be a build's: it
stays, as Sphinx leaves it, and only what builds wrote since goes.

The same rule says what a build saves of the folder as its Sphinx state
(:func:`written_by_builds`): a file the user put there is no build's, and a fresh
checkout restoring the state would otherwise publish it where a clean build has none.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from docsaccel import layout
from docsaccel.incremental.last_build import LastBuild

__all__ = [
    "FOREIGN",
    "NONE_ENDED_NS",
    "FinishedBuild",
    "foreign_files",
    "keep_only_restored",
    "own_folders",
    "recorded_files",
    "written_by_builds",
]


#: The list, in the output folder's record (:mod:`.output_record`), of the files its last
#: finished build found there and no build wrote (a user's file outlives the build that
#: found it, so its time no longer tells).
FOREIGN = "foreign"
#: The end of the last finished build of a folder where none finished: no file is older
#: but one a restore wrote (a restored file bears the epoch).
NONE_ENDED_NS = 0
#: The one hidden file Sphinx writes in an HTML folder; every other one is the user's.
_SPHINX_HIDDEN = ".buildinfo"


def own_folders(outdir: Path, doctreedir: Path) -> list[Path]:
    """The folders of the output folder no page of the site comes from, which a state
    never saves and a restore never deletes in: docsaccel's own (report, records, lock),
    written anew by every build, and the doctrees (Sphinx's working files). The cache is
    never among them: a build refuses a cache folder inside its output folder."""
    return [Path(outdir) / layout.FOLDER_NAME, Path(doctreedir)]


def recorded_files(record: LastBuild) -> frozenset[str]:
    """The files of the output folder (relative to it, posix) a build's record names."""
    wrote = {f for files in record.outputs.values() for f in files}
    wrote |= {*record.builder_pages.values(), *record.sphinx_files, *record.site_files}
    return frozenset(wrote)


@dataclass(frozen=True)
class FinishedBuild:
    """The last build that finished in an output folder, as its record tells: when it
    ended, the files (relative to the folder, posix) its record names, those it found
    there that no build wrote (:data:`FOREIGN`: older than its end, yet the user's), and
    when the first build since that did not finish started (``None``: none did)."""

    ended_ns: int
    wrote: frozenset[str]
    foreign: frozenset[str] = frozenset()
    unfinished_since_ns: int | None = None

    @classmethod
    def of(cls, ended_ns: int, record: LastBuild | None) -> FinishedBuild:
        """The build that ended at ``ended_ns`` leaving ``record`` (``None``: one this
        docsaccel cannot read, told by its time alone)."""
        wrote = frozenset() if record is None else recorded_files(record)
        return cls(ended_ns, wrote)

    @classmethod
    def none(cls, unfinished_since_ns: int | None = None) -> FinishedBuild:
        """No build finished in the folder; the first that did not finish started at
        ``unfinished_since_ns`` (``None``: none started). What it holds from before is a
        plain Sphinx build's or the user's, which nothing tells apart: none of it is known
        to be a build's.

        >>> FinishedBuild.none().made("/out", "/out/CNAME")
        False
        """
        return cls(NONE_ENDED_NS, frozenset(), frozenset(), unfinished_since_ns)

    def made(self, outdir: str, path: str) -> bool:
        """Whether ``path`` (under ``outdir``) is a file a build wrote, not the user."""
        relative = os.path.relpath(path, outdir).replace(os.sep, "/")
        if relative in self.wrote:
            return True
        if relative in self.foreign:
            return False
        try:
            modified_ns = os.stat(path, follow_symlinks=False).st_mtime_ns
        except OSError:
            return False
        if modified_ns <= self.ended_ns:
            return True
        # Newer than the end, and written while a build that did not finish ran: that
        # build's (a page of an example since deleted), which no record names.
        return self.unfinished_since_ns is not None and modified_ns >= self.unfinished_since_ns


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
    finished: FinishedBuild,
) -> int:
    """Delete the files under ``outdir`` that are not ``restored`` (absolute paths) and
    that a build made (``finished``: the folder's last finished build, which tells), with
    the folders this empties, outside ``leave_out``; how many files. Nothing is deleted
    when ``outdir`` holds one of ``sources`` (the sources, the cache, the project's root):
    such a folder is no build's alone.

    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp())
    >>> for name in ("page.html", "old/gone.html", "docsaccel/report.json", "CNAME"):
    ...     (out / name).parent.mkdir(exist_ok=True)
    ...     _ = (out / name).write_text("")
    >>> last = FinishedBuild(os.stat(out / "CNAME").st_mtime_ns - 1, frozenset({"old/gone.html"}))
    >>> keep_only_restored(out, [str(out / "page.html")], [out / "docsaccel"], [], last)
    1
    >>> sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))
    ['CNAME', 'docsaccel', 'docsaccel/report.json', 'page.html']
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
            if finished.made(str(outdir), path):
                with contextlib.suppress(OSError):
                    os.unlink(path)
                    removed += 1
    for folder in reversed(walked[1:]):  # the deepest first, the output folder kept
        with contextlib.suppress(OSError):
            os.rmdir(folder)  # only an empty one
    return removed


def _hidden(relative: str) -> bool:
    """Whether ``relative`` (posix, under the output folder) is or lies in a hidden entry
    other than Sphinx's own: another tool's (a ``.git`` of a site published from there)."""
    return relative != _SPHINX_HIDDEN and any(p.startswith(".") for p in relative.split("/"))


def written_by_builds(
    outdir: Path,
    files: Mapping[str, Path],
    started_ns: int,
    recorded: frozenset[str],
    restored: Iterable[str],
    finished: FinishedBuild | None,
) -> dict[str, Path]:
    """The files of ``files`` (``{relative: path}`` under ``outdir``) a build wrote: those
    this build recorded (``recorded``) or wrote (modified since ``started_ns``), and, hidden
    entries aside, those it restored (``restored``: absolute paths) or the folder's last
    finished build made (``finished``). What is left is the user's or another tool's.

    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp())
    >>> for name, at_ns in [("old.html", 10**9), ("user.txt", 3 * 10**9), (".git/HEAD", 10**9)]:
    ...     (out / name).parent.mkdir(exist_ok=True)
    ...     _ = (out / name).write_text("")
    ...     os.utime(out / name, ns=(at_ns, at_ns))
    >>> files = {name: out / name for name in ("old.html", "user.txt", ".git/HEAD")}
    >>> last = FinishedBuild.of(2 * 10**9, None)
    >>> sorted(written_by_builds(out, files, 4 * 10**9, frozenset(), [], last))
    ['old.html']
    """
    outdir = Path(os.path.abspath(outdir))
    restored_paths = {os.path.abspath(p) for p in restored}
    found = {}
    for relative, path in files.items():
        absolute = os.path.abspath(path)
        if relative in recorded or _modified_since(absolute, started_ns):
            found[relative] = path
        elif _hidden(relative):
            continue
        elif absolute in restored_paths or (
            finished is not None and finished.made(str(outdir), absolute)
        ):
            found[relative] = path
    return found


def foreign_files(files: Iterable[str], written: Iterable[str]) -> list[str]:
    """What a finished build lists as :data:`FOREIGN`: ``files`` (relative, posix) not
    ``written`` (:func:`written_by_builds`), hidden entries aside (never deleted nor saved
    whatever their time, and a ``.git`` holds many)."""
    return sorted(set(files) - set(written) - {f for f in files if _hidden(f)})


def _modified_since(path: str, started_ns: int) -> bool:
    try:
        return os.stat(path, follow_symlinks=False).st_mtime_ns >= started_ns
    except OSError:
        return False
