"""The gallery plugin's Sphinx event handlers, and what each does, in event order.

The design, in full: the adopting guide's *Design* section.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import shutil
import sys
import sysconfig
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.errors import ExtensionError, SphinxError
from sphinx.util import logging

from docsaccel import layout, sg_compat
from docsaccel.budgets import (
    BudgetError,
    BudgetTable,
    ExampleFileError,
    ci_problem,
    format_over,
    format_seconds,
    load_budgets,
)
from docsaccel.contract import (
    BY_CEILING,
    BY_TIME,
    CACHED,
    EXIT_BLOCKED_ERROR,
    EXPECTED_FAILURE,
    FAILED,
    INTERRUPTED,
    NOT_EXECUTED,
    RECORD_LOST_ERROR,
    STOPPED_BEFORE_EXAMPLES,
    STOPPED_WHILE_GENERATING,
    UNFINISHED_ERROR,
    VERDICT_PENDING,
    InputError,
    budgets_failed_text,
    build_failures,
    conf_fingerprint,
    is_build_failure,
    is_stopped_hard,
    is_unfinished,
    project_modules,
    read_json,
    started_not_finished,
    verdict_at_process_end,
    warnings_failed_text,
)
from docsaccel.contract import OVERRUNS as _OVERRUNS
from docsaccel.contract import REUSABLE as _REUSABLE
from docsaccel.counts import counted
from docsaccel.examples import Example, Planner
from docsaccel.fast import knob_problems
from docsaccel.gallery import process_end
from docsaccel.gallery.handler_errors import note_errors
from docsaccel.gallery.hook import ExampleHook
from docsaccel.gallery.interrupt import cancel_all
from docsaccel.gallery.lock import GalleryLock, LockedError, OutdirLock
from docsaccel.gallery.memory import build_bytes, rss_bytes
from docsaccel.gallery.note import METADATA_KEY, add_fast_note, fast_note_text
from docsaccel.gallery.page_file import published_pages, remove_unwanted_pages, withhold_source
from docsaccel.gallery.previous_outputs import (
    drop_expected_failure_marks,
    drop_previous_outputs,
)
from docsaccel.gallery.progress import remove_stale_pipes, start_progress
from docsaccel.gallery.state import GalleryBuild
from docsaccel.listed_runs import list_taken_runs
from docsaccel.loaded_code import distribution_versions, module_stamps
from docsaccel.memory_sizes import ceiling_room, format_size, machine_bytes
from docsaccel.records import (
    base_record,
    forget_written,
    journal_again,
    read_records,
    read_run_marker,
    restored_unverified,
    write_plan,
    write_record,
    written_here,
)
from docsaccel.schema import MEASURED_FIELDS, TIME_UNKNOWN, ended_phase, peak_bytes
from docsaccel.settings import (
    ClearOf,
    SettingError,
    Settings,
    cache_collision,
    env_name,
    given_as,
    given_value,
    given_where,
    own_cache_folder,
    project_root,
    read_overrides,
    read_settings,
    resolve,
    spec,
    unknown_settings,
    unknown_variables,
)
from docsaccel.stops import ReportedStop, config_error, reported

__all__ = [
    "REPORT_READY_EVENT",
    "BudgetOverrunError",
    "RecordsLostError",
    "connect",
    "junit_folders",
]

logger = logging.getLogger(__name__)

#: Emitted as ``handler(app, report)`` once every example has run and report.json exists.
REPORT_READY_EVENT = "docsaccel-report-ready"
#: The scraper added to ``image_scrapers`` when ``docsaccel_videos`` is on.
VIDEO_SCRAPER = "docsaccel.video.video_scraper"
_FAST_ENV = env_name("fast")
#: The ``conf.py`` key of the budget file, as its messages name it (:func:`given_where`).
_BUDGETS_KEY = spec("budgets").key or "docsaccel_budgets"
#: The priority of the last handler of ``build-finished``: after any an extension or a
#: project's ``conf.py`` connects (Sphinx's default is 500).
FINAL_PRIORITY = 1_000_000
_unfinished_builds: list[GalleryBuild] = []
#: The finished builds whose process waits, at its end, for threads their examples left
#: (:func:`_held`): those examples pass only once the threads let the process end.
_awaiting_threads: list[GalleryBuild] = []


class BudgetOverrunError(SphinxError, ReportedStop):
    """The build ran examples over their budgets with ``docsaccel_on_overrun = "fail"``
    (run, or restored from the example cache), or an example took it over its memory
    ceiling (in any mode). Its message is logged: ``sphinx-build`` exits with status 2."""

    category = "docsaccel budget overrun"


class ExamplesFailedError(ExtensionError, ReportedStop):
    """Examples failed unexpectedly, or expected failures passed: sphinx-gallery's summary
    of them in one logged line (their tracebacks were logged as they failed), where
    sphinx-gallery raises them all again. An ``ExtensionError`` as sphinx-gallery's is,
    for code that catches it; ``sphinx-build`` exits with status 2."""

    category = "sphinx-gallery examples failed"


class RecordsLostError(SphinxError, ReportedStop):
    """Examples ran, but their records were removed or replaced while the build ran, or
    the output folder's lock was, and another build locked it. Its message is logged:
    ``sphinx-build`` exits with status 2."""

    category = "docsaccel records lost"


def _build(app: Sphinx) -> GalleryBuild | None:
    return getattr(app, "_docsaccel_gallery", None)


def _note_raised(app: Sphinx, raised: str, said: bool) -> str:
    """Keep the first handler error of the build (:func:`.handler_errors.note_errors`);
    ``said``: its one line is logged as the build's error, and no traceback is shown.
    Returns that line: the build stopped before its examples ran, or, once some were
    processed (restored, run), while the galleries were generated."""
    build = _build(app)
    if build is not None and build.raised is None:
        build.raised = raised if said else f"{raised} (its traceback is in the build log)"
        build.stop_said = build.stop_said or said
    ran = build is not None and build.records_reset and not _none_ran(build)
    stopped = STOPPED_WHILE_GENERATING if ran else STOPPED_BEFORE_EXAMPLES
    return f"docsaccel: the build {stopped}: {raised}"


def junit_folders(app: Sphinx) -> list[Path]:
    """The folder sphinx-gallery writes its JUnit XML in, when it writes one: noted as
    this build's (:func:`docsaccel.layout.note_build_writes_in`), so the gates judge the
    file by this build's report, and refuse it when this build did not rewrite it.

    Read from conf.py's own values (``_raw_config``): the plugin notes it in its
    ``setup()``, before Sphinx has read its settings (sphinx-gallery's ``junit`` is no
    ``-D`` value), so a build stopped before ``config-inited`` is noted too."""
    raw = getattr(app.config, "_raw_config", None)
    gallery_conf = raw.get("sphinx_gallery_conf") if isinstance(raw, dict) else None
    if not isinstance(gallery_conf, dict):
        gallery_conf = getattr(app.config, "sphinx_gallery_conf", None)
    if not isinstance(gallery_conf, dict):
        return []
    folder = sg_compat.junit_folder(gallery_conf, app.outdir)
    return [] if folder is None else [folder]


def _on_config_inited(app: Sphinx, config: Any) -> None:
    lock = OutdirLock(app.outdir)
    try:
        lock.acquire()
    except LockedError as exc:
        # Refused, this build never touched the folder: the report there is the last one.
        layout.drop_build_started(app.outdir)
        raise config_error(f"docsaccel: {exc}") from None
    except OSError as exc:
        message = f"docsaccel: cannot lock the output folder {app.outdir}: {exc}"
        raise config_error(message) from None
    process_end.in_forked_child(lock.forget)
    process_end.on_process_end(_write_unfinished_reports)
    process_end.on_process_end(_fail_unjudged)
    process_end.stopped_early(lambda: bool(_unfinished_builds))
    process_end.remember_log_handlers()
    # Every extension is set up, so sphinx-gallery's handlers are connected; Sphinx takes
    # the handlers of an event when it emits it, so builder-inited's are replaced here.
    sg_compat.summary_in_one_line(app, lambda line: reported(ExamplesFailedError, line))
    sg_compat.abort_in_one_line(app, lambda exception: _aborted(app, exception))
    # After sphinx-gallery's handler was replaced above: the report of a build that one of
    # them stopped before any example ran names the handler and its error.
    note_errors(app, "builder-inited", lambda raised, said: _note_raised(app, raised, said))
    # Before builder-inited, where sphinx-gallery checks the examples' file names.
    sg_compat.type_duplicate_filename_warning()
    ended = _killed_last_time(Path(app.outdir))
    if ended is not None:
        logger.info(f"docsaccel: the last build in {app.outdir} was {ended}")
    remove_stale_pipes(layout.records_dir(app.outdir))
    layout.forget_report(app.outdir)
    galleries: list[GalleryLock] = []
    try:
        galleries = _lock_galleries(app, config)
        # This build writes sphinx-gallery's files now: their readers find its report.
        layout.note_built_from(app.outdir, app.srcdir, *junit_folders(app))
        _start_build(app, config, lock, galleries)
    except BaseException as exc:
        # A refused configuration leaves a report saying so: a gate reading the folder
        # fails, naming why, rather than finding no report (or the last build's).
        refused = GalleryBuild(
            Settings(),
            BudgetTable(),
            Path(app.outdir),
            srcdir=str(app.srcdir),
            conf=_conf_record(app),
            doctreedir=Path(app.doctreedir),
        )
        with contextlib.suppress(Exception):
            _show_unfinished(refused, refused.write_stopped_report(_why(exc)))
        _release(galleries)
        lock.release()
        raise


def _lock_galleries(app: Sphinx, config: Any) -> list[GalleryLock]:
    """Lock each gallery folder this build generates in the source tree, for the whole
    build: two builds of one tree share those folders (see :mod:`.lock`). Refused with
    one line naming the folder and the process holding it."""
    gallery_conf = getattr(config, "sphinx_gallery_conf", None) or {}
    folders = sg_compat.gallery_dirs(gallery_conf) if "gallery_dirs" in gallery_conf else []
    locks: list[GalleryLock] = []
    try:
        for _, gallery_dir in folders:
            gallery = GalleryLock(Path(app.srcdir, gallery_dir))
            gallery.acquire()
            process_end.in_forked_child(gallery.forget)
            locks.append(gallery)
    except LockedError as exc:
        _release(locks)
        raise config_error(f"docsaccel: {exc}") from None
    except OSError as exc:
        _release(locks)
        raise config_error(f"docsaccel: cannot lock the gallery folder: {exc}") from None
    return locks


def _release(locks: list[GalleryLock]) -> None:
    for gallery in locks:
        gallery.release()


def _killed_last_time(outdir: Path) -> str | None:
    """How the last build in ``outdir`` ended without finishing, for this build's log:
    killed outright (``SIGKILL``, the out-of-memory killer: its report is missing, its
    journals name what ran, ``"killed while running tutorials/plot_a.py ..."``), or after
    its examples ran, in the phase its report names (:func:`docsaccel.schema.ended_phase`,
    the gates' words too); ``None`` when it finished or its report says why otherwise."""
    try:
        report = read_json(layout.report_path(outdir), "report")
    except InputError:
        report = None  # none (or unreadable): the journals tell
    if isinstance(report, dict):
        build = report.get("build") or {}
        phase = ended_phase(build)
        if phase is None:
            return None
        # A build that ended itself (SIGTERM, Ctrl-C) said why in its report: not killed.
        ended = build.get("ended_because")
        if isinstance(ended, str) and ended:
            return f"stopped {phase} ({ended}; its examples had run)"
        return f"killed {phase} (its examples had run)"
    records = read_records(layout.records_dir(outdir), files=False)
    running = sorted(i for i, record in records.items() if is_unfinished(record))
    if not running:
        return None
    return f"killed while running {', '.join(running)} (no report; out of memory?)"


def _why(exc: BaseException) -> str:
    """One line saying what stopped the build: Ctrl-C named as every message names it
    (:data:`.process_end.INTERRUPTED`), not as the ``KeyboardInterrupt`` it raised."""
    if isinstance(exc, KeyboardInterrupt) and process_end.interrupted():
        return process_end.INTERRUPTED
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def _exclude_own_folders(app: Sphinx, config: Any, settings: Settings) -> None:
    """Keep docsaccel's folders out of the project's documents, wherever they sit in the
    source folder: the cache (the pages of the examples it keeps), the sharded builds'
    work, artifacts and records (copies of the project and its pages) and this build's
    output, and every shard artifact in the source folder (one a merge reads, one a CI job
    downloaded there). A project whose build folder lies beside its source folder excludes
    none of them in ``conf.py``; read, each copy would be published again."""
    srcdir = Path(app.srcdir)
    folders = [settings.cache, settings.shard_records, Path(app.outdir), Path(app.doctreedir)]
    for folder in [*folders, *layout.shard_folders(srcdir), *_copies_in(srcdir, folders)]:
        if folder is not None:
            _exclude_folder(config, folder, srcdir)


def _conf_record(app: Sphinx) -> dict[str, Any] | None:
    """What the report records of what this build ran before docsaccel: its ``conf.py``
    (:func:`conf_fingerprint`), the project's modules loaded by now (``modules``: what
    ``conf.py`` imported, the project's extensions) with what identifies their bytes
    (``module_stamps``), and the versions of the distributions of its Sphinx extensions
    (``distributions``), so a reader refuses this report once one of them changed and a
    later build may have failed on it (:func:`docsaccel.contract.modules_changed`,
    :func:`docsaccel.contract.distributions_changed`)."""
    conf = conf_fingerprint(app.confdir)
    if conf is None:
        return None
    installed = {sys.prefix, sys.base_prefix, *sysconfig.get_paths().values()}
    outside = [*installed, str(app.outdir), str(app.doctreedir)]
    modules = project_modules(layout.find_root(app.confdir), outside)
    # Only the files already listed are hashed, and versions are read from metadata:
    # little for a build's start.
    extensions = {name: getattr(sys.modules.get(name), "__file__", None) for name in app.extensions}
    return {
        **conf,
        "modules": modules,
        "module_stamps": module_stamps(modules),
        "distributions": distribution_versions(extensions, modules),
    }


def _copies_in(srcdir: Path, skipped: list[Path | None]) -> list[Path]:
    """Every docsaccel folder of copied pages under the source folder: each cache folder,
    whatever this build's cache is (``docs/.docsaccel-cache`` with the cache now off or
    elsewhere), and each shard artifact (the folders ``shard-merge`` reads, wherever they
    were put). Sphinx would read their pages as documents (duplicate labels, the copies
    published, the real pages linking into them). Told by the cache's tag and the
    artifact's manifest; their inside, ``skipped`` (the build's own folders) and ``.git``
    are not searched."""
    from docsaccel.cache.folder_tag import is_cache_folder
    from docsaccel.shard.artifact import is_artifact

    skip = {str(folder) for folder in skipped if folder is not None}
    found = []
    for folder, children, _files in os.walk(srcdir):
        here = Path(folder)
        if here != srcdir and (is_cache_folder(here) or is_artifact(here)):
            found.append(here)
            children.clear()
        else:
            children[:] = [
                name for name in children if name != ".git" and str(here / name) not in skip
            ]
    return found


def _exclude_folder(config: Any, folder: Path, srcdir: Path) -> None:
    try:
        relative = folder.resolve().relative_to(srcdir.resolve())
    except ValueError:
        return  # outside the source folder
    if relative.parts and relative.as_posix() not in config.exclude_patterns:
        config.exclude_patterns = [*config.exclude_patterns, relative.as_posix()]


def _warn_unread_ci(table: BudgetTable) -> None:
    """Say once when ``CI`` is set to neither a true nor a false spelling and the budget
    file has a ``ci_factor``: the build reads it as "not CI" (the variable is the CI
    service's, never refused), so the factor silently does not apply."""
    problem = ci_problem()
    if problem is not None and table.ci_factor != 1.0:
        logger.warning(
            f"docsaccel: {problem}; read as not CI, so the budgets of {table.path} are not "
            f"multiplied by its ci_factor {table.ci_factor:g}",
            type="docsaccel",
            subtype="ci",
        )


def _check_cache_place(app: Sphinx, config: Any, settings: Settings) -> None:
    """Refuse, before any example runs, a cache folder that is not a folder of its own:
    one that is, holds or is inside a folder this build reads or writes (the settings
    check the conf folder alone; the rest is known here). One line names the setting as
    given, its value and the folder it collides with."""
    if settings.cache is None:
        return
    folders = _folders_beside_cache(app, config)
    root = project_root(Path(app.confdir), settings.cache)
    problem = cache_collision(settings.cache, folders, root) or _foreign_cache(
        settings.cache, folders, root
    )
    if problem is not None:
        where, value = resolve("cache", config, os.environ)
        raise config_error(f"{where}={str(value)!r}: {problem}")


def _foreign_cache(cache: Path, folders: list[ClearOf], root: Path) -> str | None:
    """Why ``cache`` is a folder of the user's, not a cache (it holds files and neither
    docsaccel's tag nor a cache's folders), naming a file found there: the build would
    write its entries among them, and pruning would delete in it."""
    from docsaccel.incremental.folder_commands import foreign_files

    why = foreign_files(cache)
    if not why:
        return None
    suggested = own_cache_folder(cache, folders, root)
    return (
        f"{cache} is not a docsaccel cache folder: {why}; give the cache a folder of its "
        f"own, such as {suggested}"
    )


def _folders_beside_cache(app: Sphinx, config: Any) -> list[ClearOf]:
    """The folders the cache folder must stay clear of: the source folder (a cache
    strictly inside it is left out of the documents instead; it differs from the conf
    folder when ``sphinx-build -c`` names another), every examples and gallery folder of
    ``sphinx_gallery_conf`` (its defaults when ``conf.py`` leaves them out), the output
    folder, the doctree folder and every folder copied into the site."""
    srcdir = Path(app.srcdir).resolve()
    folders = [ClearOf(srcdir, "the Sphinx source folder", inside_allowed=True)]
    gallery_conf = getattr(config, "sphinx_gallery_conf", None) or {}
    try:
        pairs = sg_compat.gallery_dirs(gallery_conf)
    except TypeError:
        pairs = []  # not folder names: sphinx-gallery refuses them, naming the key
    for examples, gallery in pairs:
        what = "an examples folder of sphinx_gallery_conf (examples_dirs)"
        folders.append(ClearOf((srcdir / examples).resolve(), what))
        what = "a gallery folder of sphinx_gallery_conf (gallery_dirs)"
        folders.append(ClearOf((srcdir / gallery).resolve(), what))
    folders.append(ClearOf(Path(app.outdir).resolve(), "the build's output folder"))
    folders.append(ClearOf(Path(app.doctreedir).resolve(), "the build's doctree folder"))
    folders.extend(_copied_folders(app, config))
    return folders


#: The settings naming folders (or files) whose whole content the HTML builders copy into
#: the site: a cache among them would be published, entries and machine paths included.
#: ``templates_path`` is left out: Sphinx reads a template only by its name, never lists it.
_COPIED_SETTINGS = ("html_static_path", "html_extra_path")


def _copied_folders(app: Sphinx, config: Any) -> list[ClearOf]:
    """Every ``html_static_path`` and ``html_extra_path`` entry, resolved against the conf
    folder as Sphinx resolves them."""
    confdir = Path(app.confdir)
    folders = []
    for name in _COPIED_SETTINGS:
        entries = getattr(config, name, None) or []
        if isinstance(entries, (str, os.PathLike)):
            entries = [entries]  # Sphinx refuses it, naming the key
        for entry in entries:
            if isinstance(entry, (str, os.PathLike)):
                what = f"a folder copied into the site ({name})"
                folders.append(ClearOf((confdir / entry).resolve(), what))
    return folders


def _tag_cache(settings: Settings) -> None:
    """Make the cache folder and tag it as docsaccel's, before anything is written into
    it: a later build with another cache (or none) leaves it out of its documents, and a
    build or ``cache prune`` given it knows it is a cache."""
    if settings.cache is None:
        return
    from docsaccel.cache.store import CacheFolderError, tag_cache_folder

    try:
        tag_cache_folder(settings.cache)
    except CacheFolderError as exc:  # its parent went after the setting's check
        raise config_error(str(exc)) from None


def _writable_cache(settings: Settings) -> tuple[Settings, Path | None]:
    """The settings, and the cache folder to use read-only, if any.

    A build never stops over a cache it may not write (restored read-only, a read-only
    mount, a fork's pull request): it uses it read-only, saying so once. Its lookups
    still decide which examples are up to date (a hit is restored, a miss runs); nothing
    is stored. The settings then have the cache off, so nothing else writes into the
    folder (the Sphinx state, kept there, is neither restored nor saved)."""
    if settings.cache is None:
        return settings, None
    from docsaccel.cache.store import unwritable

    reason = unwritable(settings.cache)
    if reason is None:
        return settings, None
    logger.warning(
        f"docsaccel: the cache folder {settings.cache} {reason}: this build restores the "
        "examples it holds and runs the others, but saves nothing (and does not keep "
        "Sphinx's state)",
        type="docsaccel",
        subtype="cache",
    )
    return dataclasses.replace(settings, cache=None), settings.cache


def _start_build(app: Sphinx, config: Any, lock: OutdirLock, galleries: list[GalleryLock]) -> None:
    # Sphinx keeps every name conf.py defines; only those and -D tell a misspelled setting.
    overrides = getattr(config, "overrides", None)
    given = overrides if isinstance(overrides, dict) else {}
    for message in unknown_settings(getattr(config, "_raw_config", {}), given):
        logger.warning(message, type="docsaccel", subtype="config")
    for message in unknown_variables(os.environ):
        logger.warning(message, type="docsaccel", subtype="config")
    try:
        read_overrides(config)
        settings = read_settings(config, app.confdir)
    except SettingError as exc:
        raise config_error(str(exc)) from None
    _check_cache_place(app, config, settings)
    settings, read_only_cache = _writable_cache(settings)
    _tag_cache(settings)
    # Memory budgets above what the machine has are mistakes, found before any example runs.
    table = BudgetTable(memory_at_most=machine_bytes())
    if settings.budgets is not None:
        try:
            table = load_budgets(settings.budgets, memory_at_most=machine_bytes())
        except BudgetError as exc:
            raise config_error(f"{given_where(_BUDGETS_KEY, config)}: {exc}") from None
        # Messages and records name the file as conf.py does.
        table = dataclasses.replace(table, path=str(config.docsaccel_budgets))
        _warn_unread_ci(table)
    # The switch reaches every process that runs examples through the environment; the
    # value before is put back at the end, so a later build in this process reads its own.
    fast_env_before = os.environ.get(_FAST_ENV)
    os.environ[_FAST_ENV] = "1" if settings.fast else "0"
    _exclude_own_folders(app, config, settings)
    if read_only_cache is not None:
        _exclude_folder(config, read_only_cache, Path(app.srcdir))
    if settings.videos:
        scrapers = tuple(config.sphinx_gallery_conf["image_scrapers"])
        if VIDEO_SCRAPER not in scrapers:
            config.sphinx_gallery_conf["image_scrapers"] = (*scrapers, VIDEO_SCRAPER)
    build = GalleryBuild(
        settings,
        table,
        Path(app.outdir),
        lock=lock,
        gallery_locks=galleries,
        read_only_cache=read_only_cache,
        fast_env_before=fast_env_before,
        srcdir=str(app.srcdir),
        conf=_conf_record(app),
        doctreedir=Path(app.doctreedir),
    )
    app._docsaccel_gallery = build  # type: ignore[attr-defined]
    _unfinished_builds.append(build)


def _on_before_gallery(app: Sphinx) -> None:
    build = _build(app)
    if build is None:
        return
    build.builder = app.builder
    _show_started(build)
    try:
        _prepare_gallery(app, build, app.config.sphinx_gallery_conf)
    except BaseException as exc:
        # Whatever stops the build here (a plan, a shard setting, the cache), no example
        # ran: its report says why, and no gate judges it.
        build.stopped_before_examples = _why(exc)
        build.stop_said = isinstance(exc, ReportedStop)
        raise


def _aborted(app: Sphinx, exception: BaseException) -> SphinxError:
    """The stop of a build sphinx-gallery aborts at an example's error, or at the end of
    a ``parallel`` worker, in one line: the budgets' line when the error was a budget's
    interruption (:func:`_stopped_by_budgets`)."""
    build = _build(app)
    if build is not None:
        build.stop_said = True
    if sg_compat.worker_died(exception):
        return _worker_died(app)
    what = process_end.abort_text(exception)
    # The example's record is finished where it ran (a parallel build's worker, or this
    # process), as its error came out; an error from outside the example's code finishes
    # the one running here.
    where = process_end.aborted_in(exception) or process_end.fail_running(
        process_end.abort_error(exception)
    )
    stopped = _stopped_by_budgets(build, where)
    if stopped is not None:
        return stopped
    example = f"{os.path.relpath(where, app.srcdir)} " if where else "an example "
    return reported(
        ExamplesFailedError,
        f"sphinx-gallery: {example}failed ({what}; traceback above), and "
        "abort_on_example_error stops the build there",
    )


def _stopped_by_budgets(build: GalleryBuild | None, where: str | None) -> SphinxError | None:
    """The stop of a build whose example ``where`` (its source) its budget or the memory
    ceiling interrupted, and whose interruption ``abort_on_example_error`` made the
    build's end: the budgets failed it, as a build that went on would have been failed at
    its end (:func:`_fail_on_overruns`), the report saying so. ``None`` for any other
    example's error."""
    if build is None or where is None:
        return None
    records = build.records_before_the_end()
    found = next((e for e in build.examples if e.src_file == where), None)
    record = records.get(found.id) if found is not None else None
    if record is None or record["status"] != INTERRUPTED:
        return None
    overruns = _overruns(build, list(records.values()))
    said = budgets_failed_text([_said(r) for r in overruns], str(build.report_path))
    build.budgets_failed = said
    return reported(BudgetOverrunError, said)


def _worker_died(app: Sphinx) -> ExamplesFailedError:
    """The stop of a build whose ``parallel`` worker ended while it ran an example, in one
    line naming the example and why, from the records the workers journalled: the one
    the hard stop ended (its worker logged that line), or whose process ended it while it
    ran (the example's own ``os._exit``), before those merely running in the workers
    that ended with it."""
    build = _build(app)
    records = list(build.records_so_far().values()) if build is not None else []
    hard = [str(r["error"]) for r in records if is_stopped_hard(r)]
    if hard:
        # The worker logged the hard stop's ERROR line, naming the example, as it ended.
        return ExamplesFailedError("; ".join(hard))
    said = [r for r in records if is_unfinished(r) and r["error"] != UNFINISHED_ERROR]
    running = [r for r in records if is_unfinished(r) and r["error"] == UNFINISHED_ERROR]
    if said:
        what = "; ".join(_without_id(r) for r in said)
    elif running:
        names = ", ".join(sorted(str(r.get("id")) for r in running))
        what = f"{names} was running in it, and did not finish"
    else:
        what = "no example's record says which example it ran"
    return reported(
        ExamplesFailedError,
        f"docsaccel: a worker process of sphinx-gallery's parallel build ended while it "
        f"ran an example, and the build stopped there: {what}",
    )


def _without_id(record: dict[str, Any]) -> str:
    """A record's id and error, the id said once (a hard stop's error starts with it)."""
    error = str(record.get("error", ""))
    name = str(record.get("id"))
    return error if error.startswith(f"{name} ") else f"{name} {error}"


def _prepare_gallery(app: Sphinx, build: GalleryBuild, gallery_conf: dict[str, Any]) -> None:
    """Plan the examples, apply the shard settings and the cache, and install the hook
    that measures each example, before sphinx-gallery runs them."""
    _plan(app, build, gallery_conf)
    build.previous = read_records(build.records_dir)
    # The plan is every example sphinx-gallery builds, before a shard takes its share.
    built = [example.src_file for example in build.examples]
    drop_previous_outputs(build.planner, build.previous, gallery_conf["example_extensions"], built)
    if build.settings.shard_records is None:
        drop_expected_failure_marks(gallery_conf, app.srcdir)
    shutil.rmtree(build.records_dir, ignore_errors=True)
    build.records_dir.mkdir(parents=True, exist_ok=True)
    # Before any example: from here on, only this build's journals are read there.
    (build.records_dir / layout.BUILD_ID_FILE).write_text(build.build_id, "ascii")
    forget_written(build.records_dir)
    build.records_reset = True
    if build.settings.shard_examples is not None or build.settings.shard_records is not None:
        # Imported for a shard or merge build only: most builds are neither.
        from docsaccel.shard.roles import apply_shard_settings

        build.imported = apply_shard_settings(build.settings, build.examples, gallery_conf)
    # Before any example: a build killed outright leaves its journals, which name only
    # the examples it started; its readers list the others from this.
    write_plan(build.records_dir, build.examples, build.settings.fast)
    # A merge build takes the shards' pages as they are (their fast flag is checked above).
    for example in build.examples if build.settings.shard_records is None else ():
        made_by = _made_by(build, example)
        if made_by and made_by["fast"] != build.settings.fast and made_by["knobs"]:
            # Its page shows the other path's values: run it again although unchanged.
            sg_compat.forget_cached_run(Path(example.target_file))
    build.cache = _look_up_cache(app, build, gallery_conf)
    if build.cache is None and build.settings.shard_records is None:
        _run_again_unverified(build)
    # After the cache: the examples it restored are unchanged, and progress counts only
    # the examples this build executes.
    if build.settings.progress:
        build.progress = start_progress(build, gallery_conf)
    hook = ExampleHook.for_examples(
        build.examples,
        records_dir=str(build.records_dir),
        build_id=build.build_id,
        fast=build.settings.fast,
        on_overrun=build.settings.on_overrun,
        planner=build.planner,
        cache=build.cache.recording if build.cache else None,
        progress=build.progress.channel if build.progress else None,
        memory_limit=build.settings.memory_limit,
        fail_mode=given_value("on_overrun", build.settings.on_overrun, config=app.config),
        memory_limit_given=given_as("memory_limit", config=app.config),
        save_report=build.save_unfinished_report,
        between_examples=None if build.cache is None else lambda: _store_so_far(build),
        keep_lock=build.keep_lock,
        generated=build.generated,
    )
    sg_compat.install_hook(gallery_conf, hook)
    if build.cache is not None:
        # Extensions after this handler (autosummary's generation) may import project
        # modules before the first example: what those imports read is the examples' too.
        build.cache.recording.watch_prelude()
    settings = build.settings
    ceiling = "none" if settings.memory_limit is None else format_size(settings.memory_limit)
    logger.info(
        f"docsaccel: {len(build.examples)} examples, budgets from "
        f"{settings.budgets or '(none)'}, on overrun: {settings.on_overrun}, "
        f"fast path: {'on' if settings.fast else 'off'}, memory ceiling: {ceiling}"
    )


def _plan(app: Sphinx, build: GalleryBuild, gallery_conf: dict[str, Any]) -> None:
    """Plan the examples and check what needs the plan (budget patterns, the report
    page); a mistake stops the build here, before any example runs."""
    build.planner = Planner.for_build(app.srcdir, gallery_conf, build.table, build.settings.fast)
    if build.settings.report_page is not None:
        from docsaccel.gallery.report_page import check_report_page

        check_report_page(app, build.settings.report_page)
    try:
        build.examples, unused = build.planner.plan_checked(gallery_conf)
    except ExampleFileError as exc:  # the example's own file: its message names it
        raise config_error(str(exc)) from None
    except BudgetError as exc:
        raise config_error(f"{given_where(_BUDGETS_KEY, app.config)}: {exc}") from None
    for message in unused:
        logger.warning(message, type="docsaccel", subtype="budgets")
    _check_memory_room(app.config, build, gallery_conf)


def _check_memory_room(config: Any, build: GalleryBuild, gallery_conf: dict[str, Any]) -> None:
    """Refuse a memory ceiling, or a memory budget, that the build already fills before any
    example runs: every example would be stopped, or over its budget, by memory that is
    not its own (Sphinx's, sphinx-gallery's, the modules imported so far)."""
    ceiling = build.settings.memory_limit
    if ceiling is not None:
        held = build_bytes()
        if ceiling <= held:
            where, value = resolve("memory_limit", config, os.environ)
            size = (
                "" if str(value).strip() == format_size(ceiling) else f" ({format_size(ceiling)})"
            )
            raise config_error(
                f"{where} = {value!r}{size} is not above what the build's "
                f"processes hold before any example runs ({format_size(held)}): every "
                "example would be stopped by the ceiling; set it above that, with room for "
                "the examples, or a little under the machine's memory"
            )
        if ceiling - held < ceiling_room(held):
            # Not refused (Sphinx's memory moves); said, so an example stopped by it is not
            # blamed, also in a build whose examples are all restored from the cache.
            where, value = resolve("memory_limit", config, os.environ)
            logger.warning(
                f"docsaccel: {where} = {value!r} leaves {format_size(ceiling - held)} above "
                f"what the build's processes hold before any example runs "
                f"({format_size(held)}), less than {format_size(ceiling_room(held))}: an "
                "example may be stopped by memory that is not its own; raise the ceiling",
                type="docsaccel",
                subtype="memory",
            )
    if (gallery_conf.get("parallel") or 1) > 1:
        return  # the examples run in workers, whose own memory is not known yet
    # An example's peak counts what its process held when it started: this process's.
    held = rss_bytes()
    for example in build.examples:
        budget = example.budget.memory
        if budget.bytes is not None and budget.bytes <= held:
            raise config_error(
                f"{given_where(_BUDGETS_KEY, config)}: {example.id}: its memory budget of "
                f"{budget.describe()} "
                f"is not above what the process that runs the examples holds before any "
                f"example runs ({format_size(held)}): its peak counts that memory too, so "
                "it would always be over; give it room above that"
            )


def _run_again_unverified(build: GalleryBuild) -> None:
    """In a build without the example cache: run again the examples whose outputs a
    build with the cache made or restored (:func:`docsaccel.records.restored_unverified`),
    rather than keep a page only the cache's lookup could say is up to date."""
    again = [e for e in build.examples if restored_unverified(e.target_file)]
    for example in again:
        sg_compat.forget_cached_run(Path(example.target_file))
    if again:
        logger.info(
            f"docsaccel: {counted(len(again), 'example')} whose outputs a build with the example "
            "cache made run again: without the cache, only running them verifies them"
        )


def _look_up_cache(app: Sphinx, build: GalleryBuild, gallery_conf: dict[str, Any]) -> Any:
    """Restore the outputs of the examples the cache holds (see :mod:`docsaccel.cache`)."""
    settings = build.settings
    cache_dir = settings.cache or build.read_only_cache
    if cache_dir is None or settings.shard_records is not None:
        return None  # a merge build executes nothing: the shards used the cache
    from docsaccel.cache.cache_build import lookup

    cache = lookup(
        cache_dir=cache_dir,
        granularity=settings.cache_granularity,
        roots=settings.cache_roots,
        env_names=settings.cache_env,
        fast=settings.fast,
        examples=[e for e in build.examples if sg_compat.is_executable(e.src_file, gallery_conf)],
        gallery_conf=gallery_conf,
        confdir=Path(app.confdir),
        srcdir=Path(app.srcdir),
        outdir=build.outdir,
        warn=lambda message: logger.warning(message, type="docsaccel", subtype="cache"),
        info=logger.info,
        verify=settings.cache_verify,
        read_only=build.read_only_cache is not None,
    )
    # Reported as they are once sphinx-gallery has skipped them as unchanged.
    build.imported.update(cache.hits)
    list_taken_runs(build.examples, cache.hits, gallery_conf)
    cache.note_started()
    cache.replay_warnings()
    audit = f" ({len(cache.audits)} of them to audit it)" if cache.audits else ""
    logger.info(
        f"docsaccel: cache {cache_dir}: {counted(len(cache.hits), 'example')} restored, "
        f"{len(cache.missed)} to run{audit}"
    )
    return cache


def _on_gallery_executed(app: Sphinx) -> None:
    build = _build(app)
    if build is None:
        return
    if build.progress is not None:
        build.progress.stop()
    if build.cache is not None:
        build.cache.recording.end_prelude()
    gallery_conf = app.config.sphinx_gallery_conf
    stale = sg_compat.stale_targets(gallery_conf)
    failures = sg_compat.failures(gallery_conf)
    executed = sg_compat.executed_sources(gallery_conf)
    build.keep_lock()  # a parallel worker's example may have removed it
    records = build.records_so_far()
    build.adopt(records)
    fast = build.settings.fast
    for example in build.examples:
        record = records.get(example.id)
        if record is None and example.src_file in executed:
            # It ran, so the hook recorded it: the record went with a file an example
            # removed or replaced. Never "not executed": its time and memory are unknown.
            build.lost.add(example.id)
            record = base_record(example, FAILED, fast, error=RECORD_LOST_ERROR)
        elif record is None and example.id in build.imported and example.target_file in stale:
            record = build.imported[example.id]
        elif record is None and example.target_file in stale:
            record = _cached_record(build, example)
        elif record is None:
            record = base_record(example, NOT_EXECUTED, fast)
        elif example.src_file in failures and record["status"] != INTERRUPTED:
            if record["status"] == FAILED and record.get("finished_at"):
                continue  # its resetter recorded the failure when it ended
            error = failures[example.src_file].strip().splitlines()[-1]
            record = {**record, "status": FAILED, "error": error}
            if sg_compat.is_expected_failure(example.src_file, gallery_conf):
                record[EXPECTED_FAILURE] = True
        else:
            continue
        write_record(build.records_dir, record)
        records[example.id] = record
    if build.cache is not None:
        # The audit may run an example again: before the report, so it holds the verdicts.
        for example_id in build.cache.audit(records, failures):
            write_record(build.records_dir, records[example_id])
        build.cache.store_executed(records, failures, build.settings.on_overrun)
        build.cache_stored = True
    report = build.write_report(complete=True, records=records, interim=True)
    if build.lost:
        logger.error(
            f"docsaccel: the records of {', '.join(sorted(build.lost))} were lost: a file of "
            f"{build.records_dir} was removed or replaced while the build ran (by an "
            "example's code?); the report says complete: false"
        )
    _log_overruns(report, build.settings.on_overrun)
    logger.info(f"docsaccel: report written to {build.report_path}")
    try:
        app.emit(REPORT_READY_EVENT, report)
    except BaseException as exc:
        _fail_on_report_ready(build, exc)
        raise
    _warn_knob_problems(report)


def _fail_on_report_ready(build: GalleryBuild, exception: BaseException) -> None:
    """A ``docsaccel-report-ready`` handler raised: the build ends here, while Sphinx is
    being set up, so no ``build-finished`` handler will say why. The report fails now,
    naming the handler's event and error, as a raising handler of a later event does."""
    build.sphinx_failed = _raised_text(exception)
    build.write_report(complete=False, records=build.final_records)


def _warn_knob_problems(report: dict[str, Any]) -> None:
    """Warn of each knob an example picked that is likely a mistake, in one line naming
    the example (:func:`docsaccel.fast.knob_problems`): from the records, so an example
    restored unchanged warns again, and a ``-W`` build never passes once it failed."""
    for record in report["examples"]:
        for problem in knob_problems(record.get("knobs") or {}):
            logger.warning(
                f"docsaccel: {record['id']}: {problem}", type="docsaccel", subtype="knobs"
            )


def _made_by(build: GalleryBuild, example: Example) -> dict[str, Any] | None:
    """``{"fast", "knobs"}`` of the run that made the example's outputs, if known.

    The note beside the outputs in the source tree wins: the records of this output
    folder may describe another run than the one whose outputs sphinx-gallery keeps.
    """
    marker = read_run_marker(example.target_file)
    if marker is not None:
        return marker
    previous = build.previous.get(example.id)
    if previous:
        return {"fast": previous["fast"], "knobs": previous.get("knobs") or {}}
    return None


def _cached_record(build: GalleryBuild, example: Example) -> dict[str, Any]:
    previous = build.previous.get(example.id)
    if previous and previous["status"] in _REUSABLE:
        fields = {k: previous[k] for k in MEASURED_FIELDS if k in previous}
        fields.update(render=previous.get("render", {}), finished_at=previous.get("finished_at"))
    else:
        seconds = sg_compat.cached_seconds(Path(example.target_file))
        fields = (
            {"wall_seconds": 0.0, TIME_UNKNOWN: True}
            if seconds is None
            else {"wall_seconds": seconds}
        )
    made_by = _made_by(build, example) or {"fast": build.settings.fast, "knobs": {}}
    return base_record(example, CACHED, made_by["fast"], knobs=made_by["knobs"], **fields)


def _log_overruns(report: dict[str, Any], on_overrun: str) -> None:
    if on_overrun == "fail":
        # The build's end says each in its one ERROR line (:func:`_fail_on_overruns`); an
        # interrupted example's traceback, with the message, is sphinx-gallery's warning.
        return
    for record in report["examples"]:
        if record["status"] == INTERRUPTED and record.get("interrupted_by") == BY_CEILING:
            # The hook logged this error when the ceiling stopped the example (before
            # anything could kill the build): once is enough.
            continue
        if record["status"] == INTERRUPTED:
            logger.error(record["error"])
        elif _is_overrun(record):
            message = "; ".join(_overrun_texts(record))
            if record["status"] == CACHED:
                message += " (in its run the cache restored)"
            if on_overrun == "fail":
                logger.error(message)
            else:
                logger.warning(message, type="docsaccel", subtype="budget")


def _is_overrun(record: dict[str, Any]) -> bool:
    """Whether fail mode fails the build for this example: it was over its budget or
    interrupted in this build, or restored from the cache with a run over its budget. The
    log and the build's exit both ask this, so they agree whatever the example's origin."""
    return record["status"] in _OVERRUNS or _restored_over_budget(record)


def _restored_over_budget(record: dict[str, Any]) -> bool:
    """An example restored from the cache whose run was over its budget: the build that
    ran it said so, and so does this one (under ``-W`` the exit code must not depend on
    whether the example came from the cache)."""
    if record["status"] != CACHED or not (record.get("cache") or {}).get("hit"):
        return False
    return bool(_overrun_texts(record, only_over=True))


def _overrun_texts(record: dict[str, Any], only_over: bool = False) -> list[str]:
    """What an over-budget record went over: its time budget, its memory budget, or both."""
    texts = []
    budget, wall = record["budget_seconds"], record["wall_seconds"]
    if budget is not None and wall > budget:
        texts.append(
            f"{record['id']} took {format_over(wall, budget)}, over its budget of "
            f"{format_seconds(budget)} from {record['budget_detail']}"
        )
    memory, peak = record.get("memory_budget") or {}, peak_bytes(record)
    if memory.get("bytes") is not None and peak is not None and peak > memory["bytes"]:
        texts.append(
            f"{record['id']} peaked at {format_size(peak)}, over its memory budget of "
            f"{format_size(memory['bytes'])} from {memory['detail']}"
        )
    if only_over:
        return texts
    return texts or [f"{record['id']}: {record['error']}"]


def _on_report_ready(app: Sphinx, report: dict[str, Any]) -> None:
    build = _build(app)
    if build is None:
        return
    # Before Sphinx looks for its sources: a page an earlier build wrote, that these
    # settings no longer ask for, is neither read nor published again.
    docname = build.settings.report_page
    keep = None if docname is None else Path(app.srcdir, f"{docname}.rst").resolve()
    remove_unwanted_pages(app, keep)
    if docname is None or not build.settings.report_chart:
        # The chart an earlier build drew beside the report would stay published.
        with contextlib.suppress(OSError):
            layout.chart_path(app.outdir).unlink()
    if docname is None:
        return
    # Imported for a build with a report page only: the report views are the plugin's
    # largest import, and most builds never need them.
    from docsaccel.gallery.report_page import write_report_page

    write_report_page(app, report)


def _on_html_page_context(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    build = _build(app)
    if build is not None and pagename == build.settings.report_page:
        withhold_source(Path(app.outdir), context)


def _on_doctree_read(app: Sphinx, doctree: nodes.document) -> None:
    build = _build(app)
    example = build.by_docname(app.env.docname) if build else None
    if example is None:
        return
    text = _note_for(build, example)
    app.env.metadata[app.env.docname][METADATA_KEY] = text
    add_fast_note(doctree, text)


def _note_for(build: GalleryBuild, example: Example) -> str:
    if not build.settings.fast:
        return ""  # full builds show no note: no need to read the record
    # The records are final once the gallery has run: read them from the report in memory.
    return fast_note_text(build.final_records.get(example.id))


def _on_env_get_outdated(
    app: Sphinx, env: BuildEnvironment, added: set[str], changed: set[str], removed: set[str]
) -> list[str]:
    build = _build(app)
    if build is None:
        return []
    return [
        example.docname
        for example in build.examples
        if example.docname in env.all_docs
        and env.metadata.get(example.docname, {}).get(METADATA_KEY, "") != _note_for(build, example)
    ]


def _on_build_finished(app: Sphinx, exception: BaseException | None) -> None:
    cancel_all()  # an alarm left armed by an aborted example must not outlive the build
    build = _build(app)
    if build is not None and build.finished and build.last_report is not None:
        # The second emission, with the error a later handler raised on the first: say it
        # now, first of the handlers (the report, then its page), as that handler may
        # raise again and end the event before _final_verdict.
        _final_verdict(app, exception)
    if build is None or build.finished:
        return
    if build.progress is not None:
        build.progress.stop()
    build.keep_lock()
    build.sphinx_failed = _sphinx_failure(app, exception)
    # Until _final_verdict (the last handler) has seen how the build ended, the report
    # fails: a handler after this one may raise on every emission of the event, and the
    # build then ends, failing, with no handler of docsaccel's run again.
    build.verdict_pending = VERDICT_PENDING if exception is None else None
    report = build.write_report(complete=exception is None)
    if exception is None:
        # What the build left in its folders (sphinx-gallery's files) is now the last
        # finished build's: the gates read them again.
        layout.note_build_ended(app.outdir, app.srcdir, *junit_folders(app))
    if exception is not None:
        # This build's own page gets the final verdict last (:func:`_final_verdict`).
        _show_unfinished(build, report, but_own=True)
    build.finished = True
    # Until _fail_on_overruns (and sphinx-gallery's summary of failing examples before
    # it) has passed, the build may still fail: nothing may end it with status 0.
    process_end.verdict_pending(build, True)
    _restore_fast_env(build)
    _unfinished_builds.remove(build)
    # The output folder stays locked until _final_verdict, or the process's end when
    # the exit bound is armed below: while the report waits for its verdict, its build
    # runs, and a reader must say so rather than that it failed.
    build.release_gallery_locks()
    # A thread or exit handler an example left must not keep the finished build from
    # ending: it gets the grace of the hard stop, then the process ends, failing, and
    # neither the report nor the cache keeps the build as passing.
    grace = build.settings.interrupt_grace
    if _held(build):
        _awaiting_threads.append(build)
    build.exit_bounded = process_end.bound_exit(
        grace,
        on_stuck=lambda found: _fail_stuck(build, found, grace),
        workers=build.records_dir,
    )


#: What the exit bound's grace runs from in a build that did not finish.
_STOPPED = "it was stopped"


def _fail_stuck(
    build: GalleryBuild, found: process_end.Stuck, grace: float, after: str = "the build"
) -> None:
    """The build's process could not end after the build (``found`` says what holds it):
    the example that holds it fails, with what it left as its error; the report says why
    the build failed (``build.exit_blocked``), so a gate reading it fails; and neither
    the cache nor sphinx-gallery keeps the run of any example that may hold it, so the
    next build runs it again. When no example is known to hold it, none is blamed: the
    suspects only lose what they would have kept. Runs on the exit bound's thread, just
    before the process ends."""
    records = dict(build.final_records)
    for example_id, why in found.culprits.items():
        record = records.get(example_id)
        if record is None:
            continue
        error = f"{why}, {EXIT_BLOCKED_ERROR}"
        stopped = record.get("error")
        if record.get("status") == INTERRUPTED and isinstance(stopped, str) and stopped:
            # Why it was stopped leads, as for any stopped example; what it left that held
            # the process happened after.
            error = f"{stopped.removesuffix('.')}; then {error}"
        record = {**record, "status": FAILED, "error": error}
        record.pop(EXPECTED_FAILURE, None)  # whatever it was expected to do, not this
        write_record(build.records_dir, record)
        # The journal says it too: a reader of the journals alone sees the last line.
        journal_again(build.records_dir, record, build.build_id)
        records[example_id] = record
    build.exit_blocked = (
        f"the build's process had not ended {grace:g} s after {after}: {found.text}"
    )
    # The verdict came: this one.
    build.verdict_pending = None
    with contextlib.suppress(ValueError):
        _awaiting_threads.remove(build)
    report = build.rewrite_report(records)
    kept = set(found.culprits) or set(found.suspects)
    for example in build.examples:
        if example.id in kept:
            sg_compat.forget_cached_run(Path(example.target_file))
    if build.cache is not None:
        build.cache.withdraw(kept, build.final_records)
    # Last: the report page is a view; what a gate or the next build reads comes first.
    if build.report_page_files is not None:
        from docsaccel.gallery.report_page import rewrite_report_page

        rewrite_report_page(build, report)


def _sphinx_failure(app: Sphinx, exception: BaseException | None) -> str | None:
    """Why Sphinx will end this build with a failing status although it finished: the
    warnings it turns into errors (``-W``), or a status already set. A report that said
    nothing of it would let a gate reading it pass a build that failed. (An exception is
    the report's ``"complete": false``.)"""
    if exception is not None:
        return None
    warnings = getattr(app, "_warncount", 0)
    # Sphinx 8.1+ names it _fail_on_warnings. Before, -W alone set warningiserror (the
    # first warning raised), while -W --keep-going set keep_going instead, Sphinx setting
    # the exit status only after build-finished: read here, that build passed.
    fails = getattr(app, "_fail_on_warnings", None)
    if fails is None:
        fails = getattr(app, "warningiserror", False) or getattr(app, "keep_going", False)
    if isinstance(warnings, int) and warnings > 0 and fails:
        return warnings_failed_text(warnings)
    status = getattr(app, "statuscode", 0)
    if isinstance(status, int) and status != 0:
        return f"Sphinx set its exit status to {status}"
    return None


def _restore_fast_env(build: GalleryBuild) -> None:
    if build.fast_env_before is None:
        os.environ.pop(_FAST_ENV, None)
    else:
        os.environ[_FAST_ENV] = build.fast_env_before


def _fail_on_overruns(app: Sphinx, exception: BaseException | None) -> None:
    build = _build(app)
    if exception is not None or build is None:
        return
    # The report _on_build_finished has just written holds the final records.
    report = build.last_report or build.report(complete=True)
    if build.lock_lost is not None:
        lost = f"docsaccel: {build.outdir}: {build.lock_lost} (see {build.report_path})"
        raise reported(RecordsLostError, lost)
    if build.lost:
        raise reported(
            RecordsLostError,
            f"docsaccel: the records of {counted(len(build.lost), 'example')} were lost while the "
            f"build ran: "
            f"{', '.join(sorted(build.lost))} (see {build.report_path})",
        )
    overruns = _overruns(build, report["examples"])
    if overruns:
        said = budgets_failed_text([_said(record) for record in overruns], str(build.report_path))
        raise reported(BudgetOverrunError, said)


def _overruns(build: GalleryBuild, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records of the examples whose budgets fail the build: in fail mode each over
    its budget (:func:`_is_overrun`); in any mode each the memory ceiling stopped (the
    ceiling is the machine's)."""
    if build.settings.on_overrun == "fail":
        return [r for r in records if _is_overrun(r)]
    return [r for r in records if r.get("interrupted_by") == BY_CEILING]


def _final_verdict(app: Sphinx, exception: BaseException | None) -> None:
    """After every other handler of the build's end: what they did to the build's status
    is in the report too. A handler after the report may fail the build: raise
    (sphinx-gallery's summary of failing examples, a project's own handler; Sphinx then
    emits ``build-finished`` again with the error) or warn under ``-W``. Docsaccel's own
    stops (:class:`BudgetOverrunError`, :class:`RecordsLostError`) are in it already."""
    build = _build(app)
    if build is None or not build.finished or build.last_report is None:
        return
    try:
        _record_late_failure(app, build, exception)
    finally:
        try:
            _page_shows_the_verdict(build)
        finally:
            build.release_locks()


def _record_late_failure(app: Sphinx, build: GalleryBuild, exception: BaseException | None) -> None:
    """Write into the report why the build failed after the report was written, if it did,
    and that its verdict is no longer pending."""
    # What examples left holds the process: their verdict, the build's, comes as it ends
    # (:func:`_fail_unjudged`); until then the report says it waits, so a report whose
    # process is killed before that end passes no gate.
    pending, build.verdict_pending = build.verdict_pending, _awaits_process_end(build)
    if exception is None:
        why = _sphinx_failure(app, None)
    elif isinstance(exception, BudgetOverrunError):
        # Its records say which examples ran out of their budget; the report says too
        # that this failed the build, so no gate passes it.
        if build.budgets_failed is None:
            build.budgets_failed = str(exception).strip()
            build.rewrite_report(build.final_records)
            return
        why = None
    elif isinstance(exception, RecordsLostError):
        why = None  # the report's records_lost and complete: false say it already
    elif isinstance(exception, ExamplesFailedError):
        why = (str(exception).strip().splitlines() or [type(exception).__name__])[0]
    else:
        why = _raised_text(exception)
    if why is None or why == build.sphinx_failed:
        if pending != build.verdict_pending:
            build.rewrite_report(build.final_records)
        return
    build.sphinx_failed = why
    build.rewrite_report(build.final_records)


def _awaits_process_end(build: GalleryBuild) -> str | None:
    """The report's ``verdict_pending`` while what the examples of ``build`` left holds
    its finished build's process (:data:`_awaiting_threads`); else ``None``."""
    if build not in _awaiting_threads:
        return None
    held = _held(build)
    if not held:
        return None
    named = "; ".join(f"{example_id}: {left}" for example_id, left in sorted(held.items()))
    return verdict_at_process_end(named)


#: The event name Sphinx quotes in the message of the ``ExtensionError`` it wraps a
#: handler's exception in ("Handler <function f> for event 'html-page-context' threw an
#: exception"): quoted with ``%r``, so found whatever the message's language.
_EVENT_QUOTED = re.compile(r"'([a-z][a-z0-9-]*)'")
#: How the failure names the events whose handlers run as the build ends.
_EVENT_WORDS = {"build-finished": "the build's end"}


def _raised_text(exception: BaseException) -> str:
    """Why the build failed, for an exception that reached ``build-finished``: the event
    whose handler raised, named (``"a handler of html-page-context raised RuntimeError:
    boom"``), or ``"a handler of another extension raised ..."`` when Sphinx's message
    does not say which; the handler's own exception, not Sphinx's wrapper. Any other
    exception is the build's (``"the build raised SphinxError: ..."``)."""
    if isinstance(exception, ExtensionError):
        original = exception.orig_exc or exception.__cause__ or exception
        found = _EVENT_QUOTED.findall(exception.message)
        event = found[-1] if found else None
        source = _EVENT_WORDS.get(event, event) if event else "another extension"
        who = f"a handler of {source}"
    else:
        original, who = exception, "the build"
    text = str(original).strip().splitlines() or [type(original).__name__]
    return f"{who} raised {type(original).__name__}: {text[0]}"


def _page_shows_the_verdict(build: GalleryBuild) -> None:
    """The report page was written before Sphinx read the sources, saying the build has
    not finished (a build killed outright while it writes its pages leaves it so), from
    a report that could not yet know how the build ends (``-W`` failing it on a warning,
    a handler raising): put the final report's view into it, so the site's page says
    what ``report.json`` says."""
    shown, final = build.report_on_page, build.last_report
    if build.report_page_files is None or shown is None or final is None or shown is final:
        return
    if _verdict(shown) == _verdict(final):
        return
    from docsaccel.gallery.report_page import rewrite_report_page

    rewrite_report_page(build, final)


def _verdict(report: dict[str, Any]) -> tuple[object, ...]:
    """What a report says of how its build ended: whether it finished, why it failed, and
    why it ended (the page written while the build ran says it has not finished)."""
    build = report.get("build", {})
    return build.get("complete"), tuple(build_failures(build)), build.get("ended_because")


def _verdict_given(app: Sphinx, exception: BaseException | None) -> None:
    """No handler of ``build-finished`` failed the build: its exit status is Sphinx's."""
    build = _build(app)
    if exception is None and build is not None:
        process_end.verdict_pending(build, False)


def _said(record: dict[str, Any]) -> str:
    """What the build's failing line says of an example over its budget: its id and what
    it went over, once (the line is the only one that says it)."""
    if record["status"] == INTERRUPTED and record.get("interrupted_by") in (None, BY_TIME):
        budget = record.get("budget_seconds")
        if budget is None:
            return record["id"]
        return (
            f"{record['id']} was interrupted at its budget of {format_seconds(budget)} from "
            f"{record['budget_detail']}"
        )
    if record["status"] == INTERRUPTED:
        return _named(record)
    said = "; ".join(_overrun_texts(record, only_over=True)) or record["id"]
    return said + (" (in its run the cache restored)" if record["status"] == CACHED else "")


def _named(record: dict[str, Any]) -> str:
    """The example's id, with its peak when memory stopped it."""
    if record.get("interrupted_by") in (None, BY_TIME) or peak_bytes(record) is None:
        return record["id"]
    peak = format_size(peak_bytes(record) or 0)
    where = "the memory ceiling" if record["interrupted_by"] == BY_CEILING else "its memory budget"
    return f"{record['id']} (peak {peak}, stopped by {where})"


def _write_unfinished_reports() -> bool:
    # A build stopped before build-finished (an aborted example, an error, Ctrl-C,
    # SIGTERM, a hard stop) still leaves a report, marked incomplete. Returns whether
    # there was one: the process then ends with a failing status.
    unfinished = False
    for build in list(_unfinished_builds):
        unfinished = True
        if build.progress is not None:
            build.progress.stop()  # its named pipe goes with it
        stored = _store_finished(build)
        build.cache_stored = True
        _bound_unfinished(build, _forget_held(build))
        if stored:
            logger.info(
                f"docsaccel: the build stopped; the cache {build.settings.cache} keeps "
                f"{counted(stored, 'more example')} that finished"
            )
        ending = process_end.ending_why()
        stopped_at = None
        if not build.records_reset:
            stopped_at = _NOT_PLANNED if build.raised is None else _not_planned(build.raised)
        elif _none_ran(build):
            stopped_at = _none_ran_because(build)
        if stopped_at is not None:
            why = build.stopped_before_examples or ending or stopped_at
            _show_unfinished(build, build.write_stopped_report(why))
            if build.stop_said:
                logger.info(f"docsaccel: report written to {build.report_path} (complete: false)")
                continue
            logger.error(
                f"docsaccel: the build {STOPPED_BEFORE_EXAMPLES} ({why}); report "
                f"written to {build.report_path} (complete: false)"
            )
            continue
        # Once the examples ran (the report was written) it ended as the pages were.
        build.ended_writing = build.last_report is not None
        build.ended_because = ending
        if build.last_report is None:
            # A handler (sphinx-gallery's) raised once some examples were processed.
            build.stopped_while_generating = build.raised
        report = build.write_report(complete=False)
        if build.progress is not None:
            # The examples its end stopped in parallel workers: their lines say it.
            build.progress.settle({record["id"]: record for record in report["examples"]})
        _show_unfinished(build, report)
        written = f"report written to {build.report_path} (complete: false)"
        if build.stop_said:  # the ERROR line that stopped it named the examples
            logger.info(f"docsaccel: {written}")
            continue
        # An expected failure neither stopped the build nor failed it: not one of these.
        stopped = [
            r for r in report["examples"] if r["status"] == INTERRUPTED or is_build_failure(r)
        ]
        causes = [cause for cause in (ending, build.stopped_while_generating) if cause]
        because = f" ({'; '.join(causes)})" if causes else ""
        logger.error(
            f"docsaccel: the build stopped before its end{because}; {written}"
            + "".join(f"\n  {r['id']}: {r['error']}" for r in stopped)
        )
    return unfinished


def _show_started(build: GalleryBuild) -> None:
    """The report pages already in the output folder (the last build's, or restored with
    Sphinx's state just before) say this build started and has not finished, until it
    writes its own: a build killed outright (SIGKILL, out of memory) runs no handler,
    and would leave the last verdict ("All examples within budget") read as current."""
    doctreedir = getattr(build, "doctreedir", None)
    wanted = build.settings.report_page
    srcdir = Path(build.srcdir or ".")
    pages = published_pages(srcdir, build.outdir, doctreedir, wanted, build.builder)
    if not any(html.is_file() for _source, html in pages):
        return  # nothing to replace: the report page's module stays unloaded
    report = build.report(complete=False, records={})
    report["build"]["ended_because"] = started_not_finished(report["generated_at"])
    _show_unfinished(build, report)


def _show_unfinished(build: GalleryBuild, report: dict[str, Any], but_own: bool = False) -> None:
    """The build ends without finishing: the report pages in its output folder (restored
    with Sphinx's state, or left by the last build) show ``report``, never the verdict
    of a build that finished (:func:`.report_page.show_unfinished`)."""
    from docsaccel.gallery.report_page import show_unfinished

    try:
        show_unfinished(build, report, but_own=but_own)
    except Exception as exc:  # the report and the log lines after it come first
        logger.warning(
            f"docsaccel: cannot update the report page of {build.outdir}: {exc!r}",
            type="docsaccel",
            subtype="report",
        )


#: Why a build stopped before its examples were planned, when nothing else says: an error
#: before docsaccel's turn (another extension's, Sphinx's), which Sphinx showed. Said
#: after "stopped before its examples ran", so it does not say that again.
_NOT_PLANNED = "it ended before docsaccel planned them; the error is in the build log"


def _not_planned(raised: str) -> str:
    """:data:`_NOT_PLANNED`, naming the handler that raised (``raised``)."""
    return f"it ended before docsaccel planned them: {raised}"


def _none_ran_because(build: GalleryBuild) -> str:
    """Why a build stopped once its examples were planned but before any ran, when nothing
    else says: a ``builder-inited`` handler raised (sphinx-gallery's, over a misspelled
    ``examples_dirs``, or one of ``conf.py``), which Sphinx showed. Named when known."""
    # Said after "stopped before its examples ran", so it does not say that again.
    if build.raised is None:
        return "an error stopped it before any example ran; the error is in the build log"
    return build.raised


def _none_ran(build: GalleryBuild) -> bool:
    """Whether the build ended before the gallery ran and before any example started."""
    return build.last_report is None and not build.records_so_far()


def _store_finished(build: GalleryBuild, records: dict[str, Any] | None = None) -> int:
    """Store in the example cache the examples that have finished, before the gallery's
    end; return how many it stored (none once the gallery has run: all are stored then).
    The next build restores them (keeping sphinx-gallery's ``.md5`` of their outputs)
    rather than running them again. ``records``: the records to store from (default:
    every process's so far)."""
    if build.cache is None or build.cache_stored:
        return 0
    failures = sg_compat.failures(build.cache.gallery_conf)
    return build.cache.store_executed(
        build.records_so_far() if records is None else records,
        failures,
        build.settings.on_overrun,
        before_end=True,
    )


def _held(build: GalleryBuild) -> dict[str, str]:
    """The examples whose verdict waits for the process's end, each with what it left: a
    non-daemon thread still runs here, or ran in a worker of a parallel gallery (which
    said so, :func:`.process_end.tell_build`). If it keeps the process from ending they
    fail (:func:`_fail_stuck`)."""
    in_workers = process_end.left_in_workers(build.records_dir)
    held = {example_id: left for example_id, (_, left) in in_workers.items()}
    for example in build.examples:
        left = process_end.left_by(example.id)
        if left is not None:
            held[example.id] = f"it left {left}"
    return held


#: Why an example that left a thread running fails a build that did not finish.
_UNJUDGED = (
    "and the build stopped before its process could end, so whether that thread lets it "
    "end is unknown; an example must stop what it starts"
)


def _ended_unjudged(why: str) -> str:
    """Why it fails a finished build whose process a signal ended (``why``) during the
    exit grace."""
    return (
        f"and the build's process ended ({why}) before that thread let it end, so whether "
        "it does is unknown; an example must stop what it starts"
    )


def _fail_unjudged() -> bool:
    """``SIGTERM`` or Ctrl-C ended a finished build's process while it waited (the exit
    bound's grace) for threads its examples left: their verdict never came, so each of
    those examples fails (:func:`_forget_held`), the report is written again saying so,
    and one ERROR line names them. Only on a signal: at a normal exit those threads ended
    and let the process end (loky's does so at exit), which is the verdict that passes
    them. Returns whether it failed any (the process's own ERROR line is then left out)."""
    why = process_end.ending_why()
    if why != process_end.TERMINATED and process_end.interrupted():
        why = process_end.INTERRUPTED
    if why not in (process_end.TERMINATED, process_end.INTERRUPTED):
        for build in list(_awaiting_threads):
            _awaiting_threads.remove(build)
            _passed_at_process_end(build)
        return False
    failed = False
    for build in list(_awaiting_threads):
        _awaiting_threads.remove(build)
        build.verdict_pending = None  # given now: they fail
        held = _forget_held(build, _ended_unjudged(why))
        if not held:
            continue
        report = build.rewrite_report(build.final_records)
        if build.report_page_files is not None:
            from docsaccel.gallery.report_page import rewrite_report_page

            with contextlib.suppress(Exception):  # a view; the report is written
                rewrite_report_page(build, report)
        named = "; ".join(f"{example_id}: {left}" for example_id, left in sorted(held.items()))
        logger.error(
            f"docsaccel: the build's process ended: {why}, while it "
            f"waited for the thread(s) examples left ({named}); they fail, unjudged; "
            f"report written to {build.report_path}"
        )
        failed = True
    return failed


def _passed_at_process_end(build: GalleryBuild) -> None:
    """The threads the examples of the finished ``build`` left ended and let its process
    end: the verdict its report waited for (:func:`_awaits_process_end`) is the build's
    own, written into the report and its page."""
    if build.verdict_pending is None or build.last_report is None:
        return
    build.verdict_pending = None
    report = build.rewrite_report(build.final_records)
    if build.report_page_files is not None:
        from docsaccel.gallery.report_page import rewrite_report_page

        with contextlib.suppress(Exception):  # a view; the report is written
            rewrite_report_page(build, report)


def _forget_held(build: GalleryBuild, unjudged: str = _UNJUDGED) -> dict[str, str]:
    """A build that did not finish ends before the verdict on the examples that left a
    thread running (:func:`_held`): each fails, as it does when the thread holds the
    process (a gate must not pass it unjudged), and neither the cache nor
    sphinx-gallery's ``.md5`` keeps its run, so the next build runs it again
    (``unjudged``: why, after what it left). Returns them (:func:`_held`): the build's
    ERROR line names them."""
    held = _held(build)
    if not held:
        return held
    after_gallery = build.last_report is not None
    records = build.final_records if after_gallery else build.records_so_far()
    for example_id, left in held.items():
        record = records.get(example_id)
        if record is None or record.get("status") not in _REUSABLE:
            continue
        record = {**record, "status": FAILED, "error": f"{left}, {unjudged}"}
        record.pop(EXPECTED_FAILURE, None)
        write_record(build.records_dir, record)
        journal_again(build.records_dir, record, build.build_id)
        if after_gallery:
            build.final_records[example_id] = record
    for example in build.examples:
        if example.id in held:
            sg_compat.forget_cached_run(Path(example.target_file))
    if build.cache is not None:
        build.cache.withdraw(held, build.final_records or build.records_so_far())
    return held


def _bound_unfinished(build: GalleryBuild, held: Mapping[str, str]) -> None:
    """A build that did not finish must end too, whatever its examples left: the exit
    bound gives their threads the grace, then fails the example that holds the process
    (its record, ``build.exit_blocked``) and ends it. One fault, one ERROR line: when
    what holds it is the examples ``held`` (:func:`_forget_held`), which the build's
    ERROR line named, the bound says nothing more."""
    grace = build.settings.interrupt_grace

    def on_stuck(found: process_end.Stuck) -> bool:
        _fail_stuck(build, found, grace, _STOPPED)
        return bool(found.culprits) and set(found.culprits) <= set(held)

    process_end.bound_exit(
        grace,
        on_stuck=on_stuck,
        workers=build.records_dir,
        after=_STOPPED,
    )


def _store_so_far(build: GalleryBuild) -> None:
    """As an example starts in the build's process: store those before it, so even a
    build killed outright (``SIGKILL``) leaves them. From this process's records, held
    in memory: reading every journal again at each example would cost the build."""
    try:
        _store_finished(build, written_here(build.records_dir))
    except Exception as exc:  # the cache is never worth the next example's run
        logger.warning(
            f"docsaccel cache: cannot store the examples finished so far: {exc!r}; they "
            "are stored once the gallery has run",
            type="docsaccel",
            subtype="cache",
        )


def _on_env_updated(app: Sphinx, env: BuildEnvironment) -> list[str]:
    """Sphinx read every document: a build that ends from now on ended as it wrote its
    pages, and the report on disk says so (one killed outright writes nothing more)."""
    build = _build(app)
    if build is not None and not build.pages_read:
        build.pages_read = True
        if build.last_report is not None:
            build.write_report(complete=True, interim=True)
    return []


def connect(app: Sphinx) -> None:
    """Connect the handlers to ``app``'s events, in the order the adopting guide's *Design*
    section gives."""
    app.add_event(REPORT_READY_EVENT)
    # sphinx-gallery fills its config at priority 10 and runs the examples in
    # builder-inited at the default priority (500): settle budgets between the two, and
    # collect the results after.
    app.connect("config-inited", _on_config_inited, priority=20)
    app.connect("builder-inited", _on_before_gallery, priority=400)
    app.connect("builder-inited", _on_gallery_executed, priority=900)
    app.connect(REPORT_READY_EVENT, _on_report_ready)
    app.connect("doctree-read", _on_doctree_read)
    app.connect("html-page-context", _on_html_page_context)
    app.connect("env-get-outdated", _on_env_get_outdated)
    app.connect("env-updated", _on_env_updated)
    # The report first, then the overrun verdict, both before sphinx-gallery's summary of
    # failing examples (priority 500): an interrupted example is one of them, and its
    # ExtensionError would end the build with Sphinx's crash report instead of our line.
    app.connect("build-finished", _on_build_finished, priority=100)
    app.connect("build-finished", _fail_on_overruns, priority=400)
    app.connect("build-finished", _verdict_given, priority=900)
    # Last of all: a handler after the report may still fail the build.
    app.connect("build-finished", _final_verdict, priority=FINAL_PRIORITY)
