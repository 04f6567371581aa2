"""What an example's run wrote into its gallery, and the files its page names.

The design, in full: the adopting guide's *Design* section.
"""

from __future__ import annotations

import os
import re
import stat
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from docsaccel import sg_compat
from docsaccel.contract import fork_safe_lock, opens_for_writing
from docsaccel.intercept import listen

__all__ = [
    "OutputWatch",
    "collect",
    "file_clock",
    "folder_status",
    "missing_references",
    "page_references",
]

# Events whose second argument is a path the call creates or replaces.
_TARGET_EVENTS = frozenset({"os.rename", "os.link", "os.symlink", "shutil.copyfile"})
_WATCHED_EVENTS = _TARGET_EVENTS | {"open"}

Status = tuple[int, int, int, int]


class OutputWatch:
    """The process's watch of the files written into some folders (see the adopting guide's
    *Design* section)."""

    _instance: OutputWatch | None = None
    _lock = fork_safe_lock()

    def __init__(self) -> None:
        self.active = False
        self._folders: tuple[str, ...] = ()
        self._written: set[str] = set()

    @classmethod
    def get(cls) -> OutputWatch:
        """The process's watch, listening to the events that write a file the first time
        (never at import), for the life of the process."""
        with cls._lock:
            if cls._instance is None:
                watch = cls()
                listen(_WATCHED_EVENTS, watch._audit)
                cls._instance = watch
            return cls._instance

    def start(self, folders: Iterable[str | os.PathLike[str]]) -> None:
        """Note from now on what this process writes under ``folders`` (a watch in
        progress is dropped)."""
        self._folders = tuple(os.path.join(os.path.abspath(f), "") for f in folders)
        self._written = set()
        self.active = True

    def stop(self) -> set[str]:
        """Stop watching; the absolute paths written since :meth:`start`."""
        self.active = False
        written, self._written = self._written, set()
        return written

    def _audit(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.active:
            return
        if event == "open":
            path, mode, flags = args
            if path is None or isinstance(path, int):
                return
            if opens_for_writing(mode, flags):
                self._note(path)
        elif event in _TARGET_EVENTS and len(args) > 1:
            self._note(args[1])

    def _note(self, path: Any) -> None:
        try:
            absolute = os.path.abspath(os.fsdecode(path))
        except (TypeError, ValueError):
            return
        if absolute.startswith(self._folders):
            self._written.add(absolute)


def folder_status(folders: Iterable[str | os.PathLike[str]], prefix: str = "") -> dict[str, Status]:
    """``{path: (inode, size, mtime, ctime)}`` of the files directly in ``folders`` whose
    names start with ``prefix``: compared before and after a run, what changed (a new
    file, or one rewritten in place) was written in between, by whatever process."""
    found: dict[str, Status] = {}
    for folder in folders:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            # The name first: an image folder holds every example's files.
            if not entry.name.startswith(prefix):
                continue
            try:
                if not entry.is_file(follow_symlinks=False):
                    continue
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            found[entry.path] = (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    return found


def collect(
    target_file: str | os.PathLike[str],
    srcdir: str | os.PathLike[str],
    written: Iterable[str],
    before: dict[str, Status],
    stems: Iterable[str],
    galleries: Iterable[str | os.PathLike[str]] | None = None,
    since: int | None = None,
) -> list[str]:
    """The example's outputs, as sorted paths relative to ``srcdir`` (``/``-separated):
    the files this process wrote (``written``, from :meth:`OutputWatch.stop`), the files
    of its image folders it owns that changed since ``before`` (:func:`folder_status`;
    ``stems``: those of every example in its gallery folder), its thumbnail, the copy of
    its source and every file of the source tree its page names, but those sphinx-gallery
    writes once the gallery ran (:func:`~docsaccel.sg_compat.written_after_the_gallery`:
    whether the previous build left them decides nothing). Only files that exist, inside
    ``srcdir``.

    A file outside the ``galleries`` (the gallery folders; by default the example's own)
    counts only when its status changed after ``since`` (:func:`file_clock` when the run
    started; a change in the same tick of the file system's clock is not counted: a file
    missed makes the example run again, a file wrongly counted would be overwritten):
    a page showing ``/_static/img/logo.gif`` depends on that file, it did not write it,
    and an entry holding it would put an old copy back over the user's file (and take
    it away when the restore is undone)."""
    # Plain strings throughout: this runs after every example, and every path object
    # made and compared costs more than the string operations it wraps.
    target = os.fspath(target_file)
    # Real paths by folder: the source dir's is resolved once, and every folder below it
    # from its parent's (see _real_folder).
    folders: dict[str, str] = {}
    root = _real_folder(os.path.abspath(srcdir), folders)
    stem = os.path.splitext(os.path.basename(target))[0]
    stems = set(stems) | {stem}
    found: set[str] = {target}
    for path in written:
        found.add(path)
        found.add(sg_compat.final_name(path))
    # Only a file named with the example's prefix can be one it owns.
    changed = folder_status(sg_compat.image_folders(target), sg_compat.image_prefix(stem))
    for path, status in changed.items():
        owner = sg_compat.image_owner(os.path.basename(path), stems)
        if before.get(path) != status and owner == stem:
            found.add(path)
    found.update(map(str, sg_compat.thumbnail_files(target)))
    page = str(sg_compat.page_file(target))
    found.add(page)
    found.update(_page_files(page, root))
    inside = os.path.join(root, "")
    # The note that will list these files is written next: one of them.
    marker = str(sg_compat.run_marker_file(_real_path(target, folders)))
    if not marker.startswith(inside):
        raise ValueError(f"{marker!r} is not in the subpath of {root!r}")
    relative = {_posix(marker[len(inside) :])}
    gallery_files = {
        _real_path(str(p), folders) for p in sg_compat.written_after_the_gallery(target)
    }
    generated = tuple(
        os.path.join(_real_folder(os.path.abspath(g), folders), "")
        for g in (galleries if galleries is not None else [os.path.dirname(target)])
    )
    for path in found:
        real, status = _real_file(path, folders)
        if (
            status is not None
            and stat.S_ISREG(status.st_mode)
            and real.startswith(inside)
            and real not in gallery_files
            and (real.startswith(generated) or (since is not None and status.st_ctime_ns > since))
        ):
            relative.add(_posix(real[len(inside) :]))
    return sorted(relative)


def file_clock(folder: str | os.PathLike[str]) -> int:
    """The time now as the file system stamps a file's status change (``st_ctime_ns``),
    from a nameless file made in ``folder``: its clock may lag ``time.time_ns()`` by a
    tick, and a file written right after would seem older than a time taken so. Where
    no file can be made, ``time.time_ns()``: a file missed makes the example run again,
    never a wrong restore."""
    try:
        with tempfile.TemporaryFile(dir=folder) as probe:
            return os.fstat(probe.fileno()).st_ctime_ns
    except OSError:
        return time.time_ns()


def _real_file(path: str, folders: dict[str, str]) -> tuple[str, os.stat_result | None]:
    """:func:`_real_path` of ``path`` and the status of the file it names (``None``:
    none), from one status of the file: a file that is no link is its own real path."""
    joined = _in_real_folder(path, folders)
    try:
        status = os.lstat(joined)
    except (OSError, ValueError):
        return joined, None
    if not stat.S_ISLNK(status.st_mode):
        return joined, status
    real = os.path.realpath(joined)
    try:
        return real, os.stat(real)
    except (OSError, ValueError):
        return real, None


def _posix(relative: str) -> str:
    return relative if os.sep == "/" else relative.replace(os.sep, "/")


def _real_path(path: str, folders: dict[str, str]) -> str:
    """``os.path.realpath(path)``, each folder resolved once (``folders``: their real
    paths so far, by absolute path): an example's outputs share a few folders, and
    resolving every file's whole path costs a system call per component."""
    joined = _in_real_folder(path, folders)
    return os.path.realpath(joined) if os.path.islink(joined) else joined


def _in_real_folder(path: str, folders: dict[str, str]) -> str:
    """``path``'s name in the real path of its folder (the name itself may be a link)."""
    folder, name = os.path.split(os.path.abspath(path))
    return os.path.join(_real_folder(folder, folders), name)


def _real_folder(folder: str, folders: dict[str, str]) -> str:
    """The real path of the absolute, normalised ``folder``: the real path of its parent
    (found in ``folders``, else resolved so and kept there) joined with its name, which
    only a link makes another path."""
    real = folders.get(folder)
    if real is None:
        parent, name = os.path.split(folder)
        if not name:  # the file system's root
            real = folder
        else:
            joined = os.path.join(_real_folder(parent, folders), name)
            real = os.path.realpath(joined) if os.path.islink(joined) else joined
        folders[folder] = real
    return real


# Directives whose argument is a file, and options whose value is (``:srcset:`` a list of
# ``path [descriptor]``), in the pages sphinx-gallery, its scrapers and docsaccel write.
_FILE_DIRECTIVES = frozenset(
    {"image", "figure", "image-sg", "video", "docsaccel-video", "include", "literalinclude"}
)
_FILE_OPTIONS = frozenset({"file", "poster", "srcset"})
# Directives whose content is text to show, never reST: an example's printed output
# (``code-block:: none``), its code, raw HTML.
_LITERAL_DIRECTIVES = frozenset({"code-block", "code", "sourcecode", "parsed-literal", "raw"})
_DIRECTIVE = re.compile(r"^(\s*)\.\.\s+([\w:-]+)::(?:\s+(.*))?$")
_OPTION = re.compile(r"^(\s+):([\w-]+):(?:\s+(.*))?$")
_DOWNLOAD = re.compile(r":download:`(?:[^`<]*<([^`>]+)>|([^`<>]+))`")
_DESCRIPTOR = re.compile(r"\s+\d+(?:\.\d+)?[wx]$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _skip_block(lines: list[str], start: int, indent: int) -> int:
    """The index of the first line after the block of lines indented more than ``indent``
    (blank lines inside it included) that starts at ``start``."""
    end = start
    while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > indent):
        end += 1
    return end


def _file_names(lines: list[str]) -> list[str]:
    """The names a page gives of files (see :func:`page_references`), as written."""
    names: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        # Each pattern needs its literal text: most lines of a page have neither, and
        # a comment (``.. text``) has no ``::``.
        directive = _DIRECTIVE.match(line) if ".." in line and "::" in line else None
        if directive is None:
            if ":download:" in line:
                names += [a or b for a, b in _DOWNLOAD.findall(line)]
            index += 1
            if line.rstrip().endswith("::"):  # a literal block follows
                index = _skip_block(lines, index, _indent(line))
            continue
        indent, name = len(directive.group(1)), directive.group(2)
        argument = (directive.group(3) or "").strip()
        if name in _FILE_DIRECTIVES and argument:
            names.append(argument)
        index += 1
        while index < len(lines):  # its options: the field lines right below it
            # An option line holds a ":" (a blank line below, the most common, does not).
            option = _OPTION.match(lines[index]) if ":" in lines[index] else None
            if option is None or len(option.group(1)) <= indent:
                break
            key, value = option.group(2), (option.group(3) or "").strip()
            if key == "srcset":
                names += [_DESCRIPTOR.sub("", item.strip()) for item in value.split(",")]
            elif key in _FILE_OPTIONS and value:
                names.append(value)
            index += 1
        if name in _LITERAL_DIRECTIVES:
            index = _skip_block(lines, index, indent)
    return [name.strip() for name in names if name.strip()]


def page_references(page: Path, srcdir: Path) -> list[Path]:
    """The files of the source tree a reST page names (see the adopting guide's *Design*
    section), absolute: ``/x`` is ``srcdir/x``, another path is relative to the page's
    folder. What the page shows as text (an example's printed output, code, raw HTML) names
    nothing; URLs and paths that leave ``srcdir`` are not files of the source tree. A page
    that cannot be read names nothing."""
    return [Path(path) for path in _page_files(os.fspath(page), os.path.realpath(srcdir))]


def _page_files(page: str, root: str) -> list[str]:
    """:func:`page_references` as strings; ``root``: the source dir, resolved."""
    try:
        with open(page, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError):
        return []
    folder = os.path.dirname(os.path.abspath(page))
    found = []
    for name in _file_names(text.splitlines()):
        path = _source_path(name, folder, root)
        if path is not None and path not in found:
            found.append(path)
    return found


def _source_path(name: str, folder: str, root: str) -> str | None:
    if not name or "://" in name or name.startswith(("data:", "#")):
        return None
    path = (
        os.path.join(root, name.lstrip("/")) if name.startswith("/") else os.path.join(folder, name)
    )
    resolved = os.path.abspath(path)
    inside = resolved == root or resolved.startswith(os.path.join(root, ""))
    return resolved if inside else None


def missing_references(page: Path, srcdir: Path) -> list[str]:
    """The files a page names that are not there (paths relative to ``srcdir``), but
    those sphinx-gallery writes once the gallery ran, before Sphinx reads the page
    (:func:`~docsaccel.sg_compat.written_after_the_gallery`)."""
    root = os.path.realpath(srcdir)
    later = {os.path.abspath(p) for p in sg_compat.written_after_the_gallery(page)}
    return [
        _posix(os.path.relpath(path, root))
        for path in _page_files(os.fspath(page), root)
        if os.path.abspath(path) not in later and not os.path.isfile(path)
    ]
