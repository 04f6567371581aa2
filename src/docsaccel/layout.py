"""Where docsaccel keeps its files in a Sphinx output folder: ``<outdir>/docsaccel/``.

The design, in full: the reports guide's *Design* section.

Example:

>>> from pathlib import Path
>>> report_path(Path("_build/html")).as_posix()
'_build/html/docsaccel/report.json'
>>> records_dir("_build/html").as_posix()
'_build/html/docsaccel/records'
>>> shard_dir("docs", "shard-work").as_posix()
'docs/_build/shard-work'
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = [
    "BUILD_ID_FILE",
    "BUILD_STARTED_FILE",
    "CONF_FOLDER_SETTINGS",
    "COPY_ROOT_MARKER",
    "FOLDER_NAME",
    "JOURNAL_PREFIX",
    "LEFT_PREFIX",
    "PLAN_FILE",
    "PROJECT_MARKERS",
    "SHARD_FOLDERS",
    "VCS_MARKERS",
    "FolderLock",
    "GalleryLock",
    "LockedError",
    "building_note_path",
    "building_since",
    "built_outdir",
    "cache_deps_dir",
    "conf_folders",
    "drop_build_started",
    "example_id_of",
    "find_root",
    "forget_build",
    "forget_report",
    "gallery_lock_holder",
    "gallery_lock_path",
    "generated_dir",
    "holds_outputs",
    "id_slug",
    "in_output_folder",
    "journal_name",
    "journals",
    "left_files",
    "lock_holder",
    "lock_path",
    "marked_root",
    "note_build_ended",
    "note_build_started",
    "note_build_writes_in",
    "note_built_from",
    "outdir_of",
    "output_record_path",
    "records_dir",
    "report_pages_path",
    "report_path",
    "shard_dir",
    "shard_folders",
    "shard_runs",
    "started_after",
    "where_written",
    "write_shard_runs",
]

#: The folder of docsaccel's files inside an output folder.
FOLDER_NAME = "docsaccel"
#: The folders of the sharded builds' defaults, in ``<docs>/_build``. ``shard-doctrees``
#: is the merge build's doctree folder, whatever its site folder: Sphinx's working files,
#: which a serial ``sphinx-build -M html`` keeps out of the site too.
SHARD_FOLDERS = ("shard", "shard-work", "shard-artifacts", "shard-records", "shard-doctrees")

#: How the journal of each process that runs examples is named:
#: ``journal-<build id>-<pid>.jsonl`` (:func:`journal_name`).
JOURNAL_PREFIX = "journal-"
#: The file of a records folder naming the build whose records it holds: only that
#: build's journals are read (:func:`journals`).
BUILD_ID_FILE = "build-id"
#: The file of a records folder listing, one record line each (``not-executed``), every
#: example its build planned, written before any runs: a build killed outright leaves
#: no report, and its journals name only the examples it started.
PLAN_FILE = "plan.jsonl"
#: The file of a merge's records folder naming the shard builds whose records it holds,
#: one build id a line (:func:`write_shard_runs`, :func:`shard_runs`).
SHARD_RUNS_FILE = "shard-runs"
#: The file beside the report saying that a build of the folder started and has not yet
#: removed the report the last one left (:func:`note_build_started`).
BUILD_STARTED_FILE = "build-started"
#: The kind of the note naming the output folder a source folder was last built into
#: (:func:`built_outdir`).
_BUILT_NOTE = "built"
#: How a worker process of a parallel gallery names the file where it tells the build's
#: process which of its examples left threads running: ``left-<pid>.jsonl``
#: (:func:`docsaccel.gallery.process_end.tell_build`).
LEFT_PREFIX = "left-"

#: The Sphinx settings naming folders whose files are never read as documents, and what
#: Sphinx does with them, for messages: copied into the site as they are, or read as
#: templates. A site or a page among them would be copied into the site, or lost.
CONF_FOLDER_SETTINGS = {
    "html_static_path": "copied into the site as static files",
    "html_extra_path": "copied into the site as extra files",
    "templates_path": "read as templates",
}


def conf_folders(config: Any, confdir: str | os.PathLike[str]) -> list[tuple[str, str, Path]]:
    """``(setting, what Sphinx does, folder)`` of every :data:`CONF_FOLDER_SETTINGS` entry
    of ``config`` (a Sphinx config or ``conf.py``'s names), resolved against ``confdir``
    as Sphinx resolves them. An entry that is no path is left to Sphinx, which refuses it
    naming the key.

    >>> from types import SimpleNamespace
    >>> conf_folders(SimpleNamespace(templates_path=["_t"]), "/docs")
    [('templates_path', 'read as templates', PosixPath('/docs/_t'))]
    """
    found = []
    for name, does in CONF_FOLDER_SETTINGS.items():
        entries = getattr(config, name, None) or []
        if isinstance(entries, (str, os.PathLike)):
            entries = [entries]
        for entry in entries:
            if isinstance(entry, (str, os.PathLike)):
                found.append((name, does, (Path(confdir) / entry).resolve()))
    return found


#: What marks a repository's root, the project root of the example cache and the Sphinx
#: state (:func:`find_root`).
VCS_MARKERS = (".git", ".hg")
#: Stands for a :data:`VCS_MARKERS` folder in a shard's copy of the project, which holds
#: none: the copy's root is its own, where the project's is, though the copy sits inside
#: the project's repository.
COPY_ROOT_MARKER = ".docsaccel-root"
_ROOT_MARKERS = (*VCS_MARKERS, COPY_ROOT_MARKER)
#: What marks a project's root when no repository does.
PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg")


def find_root(confdir: str | os.PathLike[str]) -> str:
    """The repository root above ``confdir``: the nearest folder with ``.git`` (or
    ``.hg``, or the :data:`COPY_ROOT_MARKER` of a project's copy), else the nearest with
    ``pyproject.toml``/``setup.py``/``setup.cfg``, else ``confdir``. The project root of
    the example cache and the Sphinx state, and where a cache folder is suggested."""
    return marked_root(confdir) or os.path.abspath(confdir)


def marked_root(confdir: str | os.PathLike[str]) -> str | None:
    """The root :func:`find_root` finds by a marker, or None when no marker is above."""
    start = os.path.abspath(confdir)
    for markers in (_ROOT_MARKERS, PROJECT_MARKERS):
        folder = start
        while True:
            if any(os.path.exists(os.path.join(folder, m)) for m in markers):
                return folder
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
    return None


def id_slug(example_id: str) -> str:
    """An example id as one file name (a record's, a cache entry's): ``/`` as ``__``, so
    ``tutorials/plot_a.py`` is ``tutorials__plot_a.py``. One name per id: when that
    spelling could stand for another id (``g/a__b.py`` and ``g/a/b.py``, or ``_`` beside a
    ``/``), ``%`` and ``_`` are escaped first (``g__a%5F%5Fb.py``), so two examples never
    share a file.

    An id that begins with ``.`` (a gallery beside the source folder,
    ``../examples/plot_a.py``) begins its name with ``%2E``: a name with a leading dot is
    hidden from ``ls`` and file browsers.

    >>> id_slug("tutorials/plot_a.py"), id_slug("g/a__b.py"), id_slug("g/a/b.py")
    ('tutorials__plot_a.py', 'g__a%5F%5Fb.py', 'g__a__b.py')
    >>> id_slug("../examples/plot_a.py")
    '%2E.__examples__plot%5Fa.py'
    """
    if not example_id.startswith(".") and not any(
        part in example_id for part in ("%", "__", "_/", "/_")
    ):
        return example_id.replace("/", "__")
    slug = example_id.replace("%", "%25").replace("_", "%5F").replace("/", "__")
    return "%2E" + slug[1:] if slug.startswith(".") else slug


def example_id_of(slug: str) -> str:
    """The example id :func:`id_slug` made ``slug`` from."""
    return slug.replace("__", "/").replace("%5F", "_").replace("%2E", ".").replace("%25", "%")


def _under(outdir: str | os.PathLike[str], *parts: str) -> Path:
    return Path(outdir, FOLDER_NAME, *parts)


def where_written(path: str | os.PathLike[str]) -> Path:
    """The file or folder ``path`` names, where its build wrote it: absolute, symbolic
    links followed. The folders holding a path given on the command line are taken from
    this, never from the path as given: ``report.json`` run inside its folder has no
    parent folders, and a link's build wrote beside its target, not beside the link.

    >>> where_written("report.json").parents[1] == Path.cwd().parent
    True
    """
    return Path(os.path.realpath(path))


def outdir_of(report: str | os.PathLike[str]) -> Path:
    """The output folder of the build that wrote ``report`` there
    (``<outdir>/docsaccel/report.json``; see :func:`in_output_folder`)."""
    return where_written(report).parents[1]


def write_shard_runs(records: str | os.PathLike[str], build_ids: list[str]) -> None:
    """Name, in a merge's records folder, the shard builds its records come from: the
    merge's report carries them, so a second merge of the same shard builds is known as
    the same runs (a history records them once)."""
    text = "".join(f"{build_id}\n" for build_id in sorted(set(build_ids)))
    Path(records, SHARD_RUNS_FILE).write_text(text, encoding="ascii")


def shard_runs(records: str | os.PathLike[str]) -> list[str]:
    """The shard builds a merge's records folder names (:func:`write_shard_runs`);
    ``[]`` when it names none (artifacts of a release before)."""
    try:
        text = Path(records, SHARD_RUNS_FILE).read_text(encoding="ascii")
    except (OSError, ValueError):
        return []
    return sorted({line.strip() for line in text.splitlines() if line.strip()})


def report_path(outdir: str | os.PathLike[str]) -> Path:
    """The build's report."""
    return _under(outdir, "report.json")


def forget_report(outdir: str | os.PathLike[str]) -> None:
    """Remove the report an earlier build left in ``outdir``, before a build or a shard
    command that may fail before writing its own: a report left in the folder is always
    the last one's, never an earlier verdict for ``docsaccel check`` to pass. The note
    that a build started (:func:`note_build_started`) goes with it: it guarded the report
    until now."""
    report_path(outdir).unlink(missing_ok=True)
    drop_build_started(outdir)


def forget_build(outdir: str | os.PathLike[str]) -> str | None:
    """Remove what an earlier build left in ``outdir`` that a reader would take for the
    build starting there now: its report (:func:`forget_report`), its records and
    journals, and the lock file of a build no longer running. A sharded build writes its
    own report only at its end, so until then these are the last build's, which a gate
    would read as its own (a report the journals of a build killed outright stand for).

    Returns the pid of the build holding ``outdir``'s lock now (:func:`lock_holder`),
    having removed nothing: that build's files are its own."""
    holder = lock_holder(outdir)
    if holder is not None:
        return holder
    forget_report(outdir)
    shutil.rmtree(records_dir(outdir), ignore_errors=True)
    lock_path(outdir).unlink(missing_ok=True)
    return None


def drop_build_started(outdir: str | os.PathLike[str]) -> None:
    """Remove the note that a build of ``outdir`` started (:func:`note_build_started`):
    the build removed the last report with it, or never became the folder's build
    (another build held the folder's lock), so the report there is still the last one."""
    _under(outdir, BUILD_STARTED_FILE).unlink(missing_ok=True)


def note_build_started(
    outdir: str | os.PathLike[str], srcdir: str | os.PathLike[str] | None = None
) -> None:
    """Note beside the report that a build of ``outdir`` started, before anything of it
    can fail: the plugin's ``setup()`` runs before the extensions listed after it are
    loaded and before ``config-inited``, where the build removes the last report
    (:func:`forget_report`, which removes this note with it). A build that fails in
    between (an extension that fails to import) leaves the note beside the earlier
    build's report, and the readers refuse that report (:func:`started_after`).

    The output folder and the source folder ``srcdir`` are also noted as being built
    until the build ends (:func:`note_build_ended`): the other files a gate reads
    (sphinx-gallery's ``sg_execution_times.rst`` in the source folder, its JUnit XML in the
    output folder) have no note beside them, and a build stopped before it rewrote them
    (Ctrl-C, ``SIGTERM``, an error) leaves the last build's (:func:`building_since`).
    The source folder's last output folder is noted once the build holds its gallery
    folders (:func:`note_built_from`).

    Best effort: a folder that cannot be written is refused by the build's lock next.
    """
    folder = _under(outdir)
    text = _stamp()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / BUILD_STARTED_FILE).write_text(text, "utf-8")
    except OSError:
        pass
    _prune_building_notes()
    for built in (outdir, srcdir):
        if built is None:
            continue
        note = building_note_path(built)
        try:
            note.parent.mkdir(parents=True, exist_ok=True)
            # The folder's line lets a later build prune the note once the folder is gone.
            note.write_text(f"{text}{os.path.realpath(built)}\n", "utf-8")
        except OSError:
            pass


def _stamp() -> str:
    """The line a build's notes open with: when it started, and its process."""
    return f"{datetime.now(UTC).strftime('%Y-%m-%d %H:%M:%S UTC')} pid {os.getpid()}\n"


def _started_text(outdir: str | os.PathLike[str]) -> str:
    """The line of the build of ``outdir`` (:func:`note_build_started`), or a new one
    when it could not be written."""
    try:
        return _under(outdir, BUILD_STARTED_FILE).read_text("utf-8", "replace")
    except OSError:
        return _stamp()


def note_built_from(
    outdir: str | os.PathLike[str],
    srcdir: str | os.PathLike[str],
    *others: str | os.PathLike[str],
) -> None:
    """Note, for good, that ``srcdir`` (and the ``others`` folders the build writes
    sphinx-gallery's files in, :func:`note_build_writes_in`) was last built into
    ``outdir``: sphinx-gallery's files there name no output folder, and their readers
    find the build's report through this note (:func:`built_outdir`).

    Once the build holds the gallery folders (it writes those files), not in ``setup()``:
    a build refused because another one generates them would otherwise lead the readers
    of that other build's files to its own report, which says it was refused."""
    text = _started_text(outdir)
    lines = f"{text}{os.path.realpath(srcdir)}\n{os.path.realpath(outdir)}\n"
    for folder in (srcdir, *others):
        note = _machine_file(_BUILT_NOTE, folder)
        with contextlib.suppress(OSError):
            note.parent.mkdir(parents=True, exist_ok=True)
            note.write_text(lines, "utf-8")


def _prune_building_notes() -> None:
    """Remove the notes of builds that never ended (:func:`note_build_started`), and those
    naming a source folder's last output folder (:func:`built_outdir`), whose folder no
    longer exists: nothing is left for them to tell a reader about, and the
    machine's temporary folder would otherwise keep one per folder ever built."""
    machine = _machine_file("building", ".").parent
    try:
        notes = [*machine.glob("building-*"), *machine.glob(f"{_BUILT_NOTE}-*")]
    except OSError:
        return
    for note in notes:
        try:
            lines = note.read_text("utf-8", "replace").splitlines()
            if len(lines) > 1 and os.path.isabs(lines[1]) and not os.path.exists(lines[1]):
                note.unlink()
        except OSError:
            continue


def note_build_writes_in(folder: str | os.PathLike[str], outdir: str | os.PathLike[str]) -> None:
    """Note that the build of ``outdir`` writes a file the gates read in ``folder``,
    outside its output and source folders (sphinx-gallery's JUnit XML, whose path is the
    user's): ``folder`` is noted as being built until the build ends
    (:func:`building_since`: a file there the build did not rewrite is an earlier
    build's), as :func:`note_build_started` notes those folders, and as built from its
    source folder once the build holds its galleries (:func:`note_built_from`). Best
    effort, as :func:`note_build_started`."""
    text = _started_text(outdir)
    note = building_note_path(folder)
    with contextlib.suppress(OSError):
        note.parent.mkdir(parents=True, exist_ok=True)
        note.write_text(f"{text}{os.path.realpath(folder)}\n", "utf-8")


def note_build_ended(
    outdir: str | os.PathLike[str],
    srcdir: str | os.PathLike[str] | None = None,
    *others: str | os.PathLike[str],
) -> None:
    """Remove the notes that a build of ``outdir`` from ``srcdir`` is under way
    (:func:`note_build_started`), and in the ``others`` folders it wrote in
    (:func:`note_build_writes_in`): it reached its end, so what it left in the folders is
    the last finished build's, whether it rewrote a file or left it as it was."""
    for built in (outdir, srcdir, *others):
        if built is not None:
            building_note_path(built).unlink(missing_ok=True)


def building_since(path: str | os.PathLike[str]) -> str | None:
    """When a build of a folder holding ``path`` started without reaching its end, if it
    started after ``path`` was written (``"2026-12-06 19:30:01 UTC pid 4242 (building
    /docs)"``): ``path`` is then an earlier build's file, which that build did not
    replace. ``None`` when no such build is noted (:func:`note_build_started`)."""
    try:
        written = Path(path).stat().st_mtime_ns
    except OSError:
        return None
    for folder in Path(os.path.realpath(path)).parents:
        note = building_note_path(folder)
        try:
            noted = note.stat().st_mtime_ns
            text = note.read_text("utf-8", "replace")
        except OSError:
            continue
        if noted >= written:
            started = (text.splitlines() or ["at an unknown time"])[0].strip()[:80]
            return f"{started} (building {folder})"
    return None


def built_outdir(path: str | os.PathLike[str]) -> tuple[Path, Path] | None:
    """The source folder of the build on this machine that last wrote in a folder holding
    ``path`` (sphinx-gallery's ``sg_execution_times.rst``, at the root of the source
    folder or in a gallery's folder; its JUnit XML, :func:`note_build_writes_in`), and
    that build's output folder (:func:`note_build_started`); the nearest noted folder
    wins. ``None`` when no build of a folder holding ``path`` is noted (a copy kept
    elsewhere, a file built on another machine)."""
    for folder in Path(os.path.realpath(path)).parents:
        try:
            lines = _machine_file(_BUILT_NOTE, folder).read_text("utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        if len(lines) == 3 and os.path.isabs(lines[1]) and os.path.isabs(lines[2]):
            return Path(lines[1]), Path(lines[2])
    return None


def _machine_file(kind: str, folder: str | os.PathLike[str]) -> Path:
    """A file of this machine's about ``folder``, outside it: in the temporary folder,
    named after the folder's real path, where every build of it on this machine finds it."""
    key = hashlib.sha256(os.path.realpath(folder).encode()).hexdigest()[:24]
    return Path(tempfile.gettempdir(), f"docsaccel-locks-{os.getuid()}", f"{kind}-{key}")


def building_note_path(folder: str | os.PathLike[str]) -> Path:
    """The note that a build of ``folder`` (its source or output folder) is under way."""
    return _machine_file("building", folder)


def started_after(
    report: str | os.PathLike[str], beside: str | os.PathLike[str] | None = None
) -> str | None:
    """When a later build of the folder of ``report`` started (its note's first line,
    ``"2026-12-06 19:30:01 UTC pid 4242"``), if one did and did not replace ``report``:
    the note beside it (:func:`note_build_started`) is not older than the report. ``None``
    when no note is there, or the report was written after it.

    ``beside``: the report whose note to read, when ``report`` is another file the build
    writes (a journal of a build that wrote no report)."""
    # Beside the file a symbolic link names, where its build wrote it.
    note = Path(os.path.realpath(beside if beside is not None else report)).with_name(
        BUILD_STARTED_FILE
    )
    try:
        noted = note.stat().st_mtime_ns
        written = Path(report).stat().st_mtime_ns
        text = note.read_text("utf-8", "replace")
    except OSError:
        return None
    if written > noted:
        return None
    return (text.splitlines() or ["at an unknown time"])[0].strip()[:80]


def in_output_folder(report: str | os.PathLike[str]) -> bool:
    """Whether ``report`` is read where its build wrote it: ``<outdir>/docsaccel/report.json``
    beside that build's records or a later build's note that it started
    (:func:`note_build_started`), rather than a copy kept elsewhere (``main-report.json``
    downloaded from the main branch's CI).

    Only a report in its output folder can be one a later build failed to replace (it
    failed before docsaccel ran, see :func:`docsaccel.contract.conf_changed`): an archived
    copy is the build it names, whatever ``conf.py`` became since.

    >>> in_output_folder("ci-state/main-report.json")
    False

    A symbolic link is the file it names, where its build wrote it: no copy.
    """
    path = Path(os.path.realpath(report))
    folder = path.parent
    if path.name != report_path("").name or folder.name != FOLDER_NAME:
        return False
    return (folder / records_dir("").name).is_dir() or (folder / BUILD_STARTED_FILE).exists()


def chart_path(outdir: str | os.PathLike[str]) -> Path:
    """The report page's chart, drawn beside the report (``docsaccel_report_chart``)."""
    return _under(outdir, "chart.svg")


def report_pages_path(outdir: str | os.PathLike[str]) -> Path:
    """The note of the report pages published in ``outdir``
    (:mod:`docsaccel.gallery.page_file`): kept out of Sphinx's stored state, so a build
    of another configuration into the same folder still finds a page published under
    another name."""
    return _under(outdir, "report-pages.txt")


def records_dir(outdir: str | os.PathLike[str]) -> Path:
    """The folder of the build's records, one per example."""
    return _under(outdir, "records")


def cache_deps_dir(outdir: str | os.PathLike[str]) -> Path:
    """The dependencies the example cache recorded for each example the build ran."""
    return _under(outdir, "cache-deps")


def generated_dir(outdir: str | os.PathLike[str]) -> Path:
    """The record of what the builds into ``outdir`` generated in their source folder."""
    return _under(outdir, "generated")


def output_record_path(outdir: str | os.PathLike[str]) -> Path:
    """The record of what builds wrote in ``outdir`` and which of its files are the
    user's (:mod:`docsaccel.incremental.sphinxext.output_record`): kept in the folder, so
    a build finds it whatever its doctree folder."""
    return _under(outdir, "output-folder.json")


def lock_path(outdir: str | os.PathLike[str]) -> Path:
    """The lock a build holds on its output folder."""
    return _under(outdir, "build.lock")


def lock_holder(outdir: str | os.PathLike[str]) -> str | None:
    """The pid of the build holding ``outdir``'s lock now (:func:`lock_path`; ``"unknown"``
    when its file does not say), or ``None`` when no build holds it.

    Asked of the kernel's list of locks (``/proc/locks``), which takes no lock, so a
    reader never makes a build starting at that moment find the folder taken; where
    there is no such list, ``None``: a reader then says what the report says.
    """
    return _flock_holder(lock_path(outdir))


def gallery_lock_holder(gallery_dir: str | os.PathLike[str]) -> str | None:
    """The pid of the process holding the lock of a gallery folder now
    (:class:`GalleryLock`), as :func:`lock_holder` reads an output folder's."""
    return _flock_holder(gallery_lock_path(gallery_dir))


def _flock_holder(path: Path) -> str | None:
    """The pid written in the lock file ``path`` while a process holds its ``flock``."""
    try:
        status = path.stat()
        locks = Path("/proc/locks").read_text("ascii", "replace")
    except OSError:
        return None
    wanted = f"{os.major(status.st_dev):02x}:{os.minor(status.st_dev):02x}:{status.st_ino}"
    for line in locks.splitlines():
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 4242 08:01:1234 0 EOF"; "->" lines are waiters.
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == wanted:
            try:
                return path.read_text("ascii", "replace").strip() or "unknown"
            except OSError:
                return fields[4]
    return None


class LockedError(RuntimeError):
    """Another process holds the folder's lock (:class:`FolderLock`)."""


class FolderLock:
    """An exclusive lock on a folder through the lock file ``path``, held by one process
    at a time: the mechanism of every lock a build or a shard command takes on a folder
    (an output folder's, :func:`lock_path`; a gallery folder's; the shard work folder's),
    which :func:`lock_holder` reads. A ``flock`` lock: the kernel drops it when its
    process ends, so the lock of a process that died is taken over."""

    def __init__(self, folder: str | os.PathLike[str], path: Path) -> None:
        self.folder = Path(folder)
        self.path = path
        self._handle: int | None = None

    def _refusal(self, holder: str) -> str:
        """Why this build cannot go on while process ``holder`` holds the folder."""
        raise NotImplementedError

    def acquire(self) -> None:
        if self._handle is not None or self._take_over():
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

    def keep_until_exit(self) -> None:
        """Keep the lock until this process ends, when the kernel drops it, rather than
        letting it go now: what still runs in the process may change what the holder
        wrote. A lock this process takes on the folder later takes this one over
        (:meth:`acquire`), so a second build in one interpreter is not refused by the
        first."""
        if self._handle is not None and self not in _kept_until_exit:
            _kept_until_exit.append(self)

    def _take_over(self) -> bool:
        """Take the lock this process keeps on the file at the path until it ends
        (:meth:`keep_until_exit`), if it keeps one; return whether it did."""
        for kept in list(_kept_until_exit):
            handle = kept._handle
            if handle is None:  # let go since, or forgotten in a forked child
                _kept_until_exit.remove(kept)
            elif _names(self.path, handle):
                _kept_until_exit.remove(kept)
                kept._handle, self._handle = None, handle
                return True
        return False

    def forget(self) -> None:
        """In a forked child: close this process's copy, leaving the parent's lock held."""
        handle, self._handle = self._handle, None
        if handle is not None:
            with contextlib.suppress(OSError):
                os.close(handle)

    @property
    def held(self) -> bool:
        return self._handle is not None


#: The locks this process keeps until it ends (:meth:`FolderLock.keep_until_exit`).
_kept_until_exit: list[FolderLock] = []


def _names(path: Path, handle: int) -> bool:
    """Whether ``path`` names the open file ``handle``."""
    try:
        named, opened = os.stat(path), os.fstat(handle)
    except OSError:
        return False
    return (named.st_dev, named.st_ino) == (opened.st_dev, opened.st_ino)


class GalleryLock(FolderLock):
    """An exclusive lock on a gallery folder of a source tree (:func:`gallery_lock_path`),
    whatever the output folder: held by a build generating the folder, and by a shard
    merge copying the shards' outputs into it, so neither writes among the other's files."""

    removed_on_release = True

    def __init__(self, gallery_dir: str | os.PathLike[str]) -> None:
        super().__init__(gallery_dir, gallery_lock_path(gallery_dir))

    def _refusal(self, holder: str) -> str:
        return (
            f"another build of this source tree is generating the gallery folder "
            f"{self.folder} (process {holder}, lock {self.path}); wait for it to finish or "
            "build from another copy of the source tree"
        )


def gallery_lock_path(gallery_dir: str | os.PathLike[str]) -> Path:
    """The lock a build holds on a gallery folder of its source tree.

    Outside the source tree, so the lock is never one of the files a build generates
    there (nor one the cache, sharding or a clean-build comparison sees): in the
    machine's temporary folder, named after the folder's real path, where every build of
    that tree on this machine finds it.
    """
    return _machine_file("gallery", gallery_dir).with_suffix(".lock")


def holds_outputs(folder: str | os.PathLike[str]) -> bool:
    """Whether a docsaccel build wrote into ``folder`` as its output folder: it holds the
    build's lock or its records (an interrupted build may have left no report)."""
    return lock_path(folder).is_file() or records_dir(folder).is_dir()


def shard_dir(docs: str | os.PathLike[str], name: str) -> Path:
    """The default folder ``name`` (one of :data:`SHARD_FOLDERS`) of a sharded build of the
    Sphinx source folder ``docs``."""
    if name not in SHARD_FOLDERS:
        raise ValueError(f"{name!r} is not a shard folder: one of {', '.join(SHARD_FOLDERS)}")
    return Path(docs, "_build", name)


def shard_folders(docs: str | os.PathLike[str]) -> list[Path]:
    """Every default folder of the sharded builds of ``docs``: they hold copies of the
    project and of its pages, never documents of its own."""
    return [shard_dir(docs, name) for name in SHARD_FOLDERS]


def left_files(records: str | os.PathLike[str]) -> list[Path]:
    """The files in a records folder where workers said what their examples left, sorted."""
    return sorted(Path(records).glob(f"{LEFT_PREFIX}*.jsonl"))


def journal_name(build_id: str | None, pid: int) -> str:
    """The name of the journal of process ``pid`` in the build ``build_id`` (``None``: a
    writer outside a build, ``journal-<pid>.jsonl``).

    >>> journal_name("3f2a", 12), journal_name(None, 12)
    ('journal-3f2a-12.jsonl', 'journal-12.jsonl')
    """
    return f"{JOURNAL_PREFIX}{'' if build_id is None else build_id + '-'}{pid}.jsonl"


def journals(records: str | os.PathLike[str]) -> list[Path]:
    """The journals in a records folder (one per process that ran examples), sorted: only
    those of the build its :data:`BUILD_ID_FILE` names, when it names one. A process of
    an earlier build still running (a worker of a build killed outright) writes its
    journal again when it finds it gone, into the records of the build after it."""
    try:
        build_id = Path(records, BUILD_ID_FILE).read_text("ascii").strip()
    except (OSError, ValueError):
        build_id = ""
    if not build_id.isalnum():
        return sorted(Path(records).glob(f"{JOURNAL_PREFIX}*.jsonl"))
    return sorted(Path(records).glob(f"{JOURNAL_PREFIX}{build_id}-*.jsonl"))
