"""The gallery plugin: per-example time budgets, the CI fast path, a record per example.

A Sphinx extension that sits beside ``sphinx_gallery.gen_gallery``::

    extensions = ["sphinx_gallery.gen_gallery", "docsaccel.gallery"]
    docsaccel_budgets = "conf/budgets.toml"   # relative to the conf dir
    docsaccel_on_overrun = "warn"             # or "fail"; DOCSACCEL_ON_OVERRUN overrides
    docsaccel_fast = False                    # or True; DOCSACCEL_FAST overrides

What happens during a build, in event order:

1. ``config-inited``: the output folder is locked for this build (:mod:`.lock`; a second
   build into it stops here, naming the holder) and the previous ``report.json`` is
   removed, so a build that fails before its examples run leaves no report to check by
   mistake; the settings are checked (:mod:`.config`; environment variables beat
   ``conf.py``) and the budget file is loaded; any error stops the build here, naming the
   file, the key and the value. Unknown ``docsaccel_*`` names are warned about.
2. ``builder-inited``, before sphinx-gallery runs the examples: every example gets its
   budget (:mod:`.plan`; an example is its path, so two sub-galleries may both hold a
   ``helper.py``), unused patterns are warned about, and :class:`.hook.ExampleHook`
   becomes sphinx-gallery's ``reset_modules`` (the user's own resetters still run).
   A shard build (``DOCSACCEL_SHARD_EXAMPLES``) narrows the examples sphinx-gallery
   executes to its own; a merge build (``DOCSACCEL_SHARD_RECORDS``) checks that every
   example will be skipped as unchanged, so it executes none (:mod:`.config`).
3. While each example runs, in whichever process runs it, the hook finds it by its path
   (planning it then, if the plan missed it: what ran is what the hook saw), measures it, interrupts
   it at its budget in fail mode (:mod:`.interrupt`) and writes its record (:mod:`.records`).
4. ``builder-inited``, after sphinx-gallery: unchanged examples are recorded as cached
   (in a merge build: with the record of the shard that executed them), failures as
   failed; overruns are reported through Sphinx logging (so ``-W`` applies);
   ``<outdir>/docsaccel/report.json`` is written and the ``docsaccel-report-ready`` event
   is emitted with the report: connect a page generator there
   (``app.connect("docsaccel-report-ready", handler)``, ``handler(app, report)``).
5. ``doctree-read``: example pages of a fast build get the fast-path note (:mod:`.note`).
6. ``build-finished``: the report is written again with the final wall time; in fail mode
   an overrun makes the build fail. When the build stops early (an aborted example, an
   error, Ctrl-C, ``SIGTERM``, the hard stop of an example, an example ending the
   process) the report is written as the process ends, with ``complete: false``, and the
   running example's record says why it did not finish (:mod:`.hook`). ``SIGTERM`` then
   ends the process with the signal's status, as without the plugin.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sphinx_gallery
from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.errors import ConfigError, SphinxError
from sphinx.util import logging

import docsaccel
from docsaccel.budgets import BudgetError, BudgetTable, format_seconds, load_budgets
from docsaccel.contract import CACHED, FAILED, INTERRUPTED, NOT_EXECUTED, OVER_BUDGET
from docsaccel.contract import FAST_ENV as FAST_ENV_VAR
from docsaccel.contract import OVERRUNS as _OVERRUNS
from docsaccel.contract import REUSABLE as _REUSABLE
from docsaccel.gallery import hook as hook_module
from docsaccel.gallery import sg_compat
from docsaccel.gallery.config import (
    CONFIG_DEFAULTS,
    Settings,
    read_settings,
    unknown_settings,
)
from docsaccel.gallery.hook import ExampleHook
from docsaccel.gallery.interrupt import GRACE_SECONDS, cancel_all, grace_seconds
from docsaccel.gallery.leftovers import bound_exit
from docsaccel.gallery.lock import LockedError, OutdirLock
from docsaccel.gallery.note import METADATA_KEY, add_fast_note, fast_note_text
from docsaccel.gallery.plan import Example, Planner
from docsaccel.gallery.progress import Progress, start_progress
from docsaccel.gallery.records import (
    base_record,
    build_report,
    read_records,
    read_run_marker,
    write_json,
    write_record,
)

if TYPE_CHECKING:
    from docsaccel.cache.build import CacheBuild

__all__ = ["REPORT_READY_EVENT", "BudgetOverrunError", "GalleryBuild", "setup"]

logger = logging.getLogger(__name__)

#: Emitted as ``handler(app, report)`` once every example has run and report.json exists.
REPORT_READY_EVENT = "docsaccel-report-ready"
#: The scraper added to ``image_scrapers`` when ``docsaccel_videos`` is on.
VIDEO_SCRAPER = "docsaccel.video.video_scraper"
_CONFIG_TYPES: dict[str, frozenset[type]] = {
    "docsaccel_budgets": frozenset({type(None), str, Path}),
    "docsaccel_on_overrun": frozenset({str}),
    "docsaccel_fast": frozenset({type(None), bool}),
    "docsaccel_videos": frozenset({bool}),
    "docsaccel_report_page": frozenset({type(None), str}),
    "docsaccel_report_chart": frozenset({bool}),
    "docsaccel_cache": frozenset({type(None), str, Path}),
    "docsaccel_cache_granularity": frozenset({str}),
    "docsaccel_cache_roots": frozenset({type(None), list, tuple}),
    "docsaccel_cache_env": frozenset({list, tuple}),
    "docsaccel_history": frozenset({type(None), str, Path}),
    "docsaccel_progress": frozenset({bool}),
}
_unfinished_builds: list[GalleryBuild] = []
#: The version of what the plugin stores in Sphinx's environment (see ``setup``).
ENV_VERSION = 1


class BudgetOverrunError(SphinxError):
    """The build ran examples over their budgets with ``docsaccel_on_overrun = "fail"``."""

    category = "docsaccel budget overrun"


@dataclass
class GalleryBuild:
    """The plugin's state for one Sphinx build: settings, plan, where records go."""

    settings: Settings
    table: BudgetTable
    outdir: Path
    started: float = field(default_factory=time.perf_counter)
    examples: list[Example] = field(default_factory=list)
    previous: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: In a merge build: the records of the shards, by example id.
    imported: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: The example cache of this build (``None``: no cache, or a merge build).
    cache: CacheBuild | None = None
    finished: bool = False
    #: The last report written, and its records by id. The first report is written once
    #: the gallery has run (or as the build stops): from then on the records are final.
    last_report: dict[str, Any] | None = None
    final_records: dict[str, dict[str, Any]] = field(default_factory=dict)
    lock: OutdirLock | None = None
    #: The build log's progress while the gallery runs (:mod:`.progress`).
    progress: Progress | None = None
    srcdir: str = ""
    _by_docname: dict[str, Example] = field(default_factory=dict, repr=False)
    planner: Planner | None = None
    #: ``DOCSACCEL_FAST`` before this build set it, put back when the build ends.
    fast_env_before: str | None = None
    #: What the Sphinx state did (:mod:`docsaccel.incremental.sphinxext`), for the report.
    sphinx_state: dict[str, Any] | None = None

    @property
    def records_dir(self) -> Path:
        return self.outdir / "docsaccel" / "records"

    @property
    def report_path(self) -> Path:
        return self.outdir / "docsaccel" / "report.json"

    def by_docname(self, docname: str) -> Example | None:
        if len(self._by_docname) != len(self.examples):
            self._by_docname = {example.docname: example for example in self.examples}
        return self._by_docname.get(docname)

    def adopt(self, records: dict[str, dict[str, Any]]) -> None:
        """Add the examples the hook recorded although the plan did not list them."""
        planned = {example.id for example in self.examples}
        for record in records.values():
            if record["id"] in planned or self.planner is None:
                continue
            example = self.planner.example_named(record["gallery"], record["name"])
            if example is not None and example.id == record["id"]:
                self.examples.append(example)
                planned.add(example.id)

    def report(
        self, complete: bool, records: dict[str, dict[str, Any]] | None = None
    ) -> dict[str, Any]:
        """The report of this build so far (see :func:`.records.build_report`).

        ``records``: the records by id (default: the final ones held in memory once a
        report was written, else those on disk).
        """
        build = {
            "wall_seconds": round(time.perf_counter() - self.started, 3),
            "fast": self.settings.fast,
            "on_overrun": self.settings.on_overrun,
            "complete": complete,
            "sphinx_gallery": sphinx_gallery.__version__,
            "docsaccel": docsaccel.__version__,
            "shard": self._shard(),
            "source_dir": self.srcdir,
        }
        if self.sphinx_state is not None:
            build["sphinx_state"] = self.sphinx_state
        if records is None and self.last_report is not None:
            records = self.final_records
        return build_report(self.records_dir, self.examples, build, records)

    def _shard(self) -> dict[str, Any] | None:
        if self.settings.shard_records is not None:
            return {"role": "merge", "examples": len(self.imported)}
        if self.settings.shard_examples is not None:
            return {"role": "shard", "examples": len(self.settings.shard_examples)}
        return None

    def write_report(
        self, complete: bool, records: dict[str, dict[str, Any]] | None = None
    ) -> dict[str, Any]:
        report = self.report(complete, records)
        write_json(self.report_path, report)
        self.last_report = report
        self.final_records = {record["id"]: record for record in report["examples"]}
        return report


def _build(app: Sphinx) -> GalleryBuild | None:
    return getattr(app, "_docsaccel_gallery", None)


def _on_config_inited(app: Sphinx, config: Any) -> None:
    lock = OutdirLock(app.outdir)
    try:
        lock.acquire()
    except LockedError as exc:
        raise ConfigError(f"docsaccel: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"docsaccel: cannot lock the output folder {app.outdir}: {exc}") from None
    _install_sigterm_handler()
    # The report of an earlier build must not outlive this one: if this build stops
    # before its examples run, there is no report to check by mistake.
    with contextlib.suppress(FileNotFoundError):
        Path(app.outdir, "docsaccel", "report.json").unlink()
    try:
        _start_build(app, config, lock)
    except BaseException:
        lock.release()
        raise


def _start_build(app: Sphinx, config: Any, lock: OutdirLock) -> None:
    # Sphinx keeps every name conf.py defines; only those tell a misspelled setting.
    for message in unknown_settings(getattr(config, "_raw_config", {})):
        logger.warning(message, type="docsaccel", subtype="config")
    settings = read_settings(config, app.confdir)
    table = BudgetTable()
    if settings.budgets_path is not None:
        try:
            table = load_budgets(settings.budgets_path)
        except BudgetError as exc:
            raise ConfigError(f"docsaccel_budgets: {exc}") from None
        # Messages and records name the file as conf.py does.
        table = dataclasses.replace(table, path=str(config.docsaccel_budgets))
    # The switch reaches every process that runs examples through the environment; the
    # value before is put back at the end, so a later build in this process reads its own.
    fast_env_before = os.environ.get(FAST_ENV_VAR)
    os.environ[FAST_ENV_VAR] = "1" if settings.fast else "0"
    if settings.videos:
        scrapers = tuple(config.sphinx_gallery_conf["image_scrapers"])
        if VIDEO_SCRAPER not in scrapers:
            config.sphinx_gallery_conf["image_scrapers"] = (*scrapers, VIDEO_SCRAPER)
    build = GalleryBuild(
        settings,
        table,
        Path(app.outdir),
        lock=lock,
        fast_env_before=fast_env_before,
        srcdir=str(app.srcdir),
    )
    app._docsaccel_gallery = build  # type: ignore[attr-defined]
    _unfinished_builds.append(build)


def _on_before_gallery(app: Sphinx) -> None:
    build = _build(app)
    if build is None:
        return
    gallery_conf = app.config.sphinx_gallery_conf
    build.planner = Planner.for_build(app.srcdir, gallery_conf, build.table, build.settings.fast)
    if build.settings.report_page is not None:
        from docsaccel.gallery.report_page import check_report_page

        check_report_page(app, build.settings.report_page)
    try:
        build.examples = build.planner.plan(gallery_conf)
        unused = build.table.check_examples(e.name for e in build.examples)
    except BudgetError as exc:
        raise ConfigError(f"docsaccel_budgets: {exc}") from None
    for message in unused:
        logger.warning(message, type="docsaccel", subtype="budgets")
    build.previous = read_records(build.records_dir)
    shutil.rmtree(build.records_dir, ignore_errors=True)
    build.records_dir.mkdir(parents=True, exist_ok=True)
    # Imported here: docsaccel.shard.roles imports the plugin's own modules.
    from docsaccel.shard.roles import apply_shard_settings

    build.imported = apply_shard_settings(build.settings, build.examples, gallery_conf)
    # A merge build takes the shards' pages as they are (their fast flag is checked above).
    for example in build.examples if build.settings.shard_records is None else ():
        made_by = _made_by(build, example)
        if made_by and made_by["fast"] != build.settings.fast and made_by["knobs"]:
            # Its page shows the other path's values: run it again although unchanged.
            sg_compat.forget_cached_run(Path(example.target_file))
    build.cache = _look_up_cache(app, build, gallery_conf)
    # After the cache: the examples it restored are unchanged, and progress counts only
    # the examples this build executes.
    if build.settings.progress:
        build.progress = start_progress(build, gallery_conf)
    hook = ExampleHook.for_examples(
        build.examples,
        records_dir=str(build.records_dir),
        fast=build.settings.fast,
        on_overrun=build.settings.on_overrun,
        planner=build.planner,
        cache=build.cache.recording if build.cache else None,
        progress=build.progress.channel if build.progress else None,
    )
    sg_compat.install_hook(gallery_conf, hook)
    settings = build.settings
    logger.info(
        f"docsaccel: {len(build.examples)} examples, budgets from "
        f"{settings.budgets_path or '(none)'}, on overrun: {settings.on_overrun}, "
        f"fast path: {'on' if settings.fast else 'off'}"
    )


def _look_up_cache(app: Sphinx, build: GalleryBuild, gallery_conf: dict[str, Any]) -> Any:
    """Restore the outputs of the examples the cache holds (see :mod:`docsaccel.cache`)."""
    settings = build.settings
    if settings.cache_dir is None or settings.shard_records is not None:
        return None  # a merge build executes nothing: the shards used the cache
    from docsaccel.cache.build import lookup

    cache = lookup(
        cache_dir=settings.cache_dir,
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
    )
    # Reported as they are once sphinx-gallery has skipped them as unchanged.
    build.imported.update(cache.hits)
    logger.info(
        f"docsaccel: cache {settings.cache_dir}: {len(cache.hits)} example(s) restored, "
        f"{len(cache.missed)} to run"
    )
    return cache


def _on_gallery_executed(app: Sphinx) -> None:
    build = _build(app)
    if build is None:
        return
    if build.progress is not None:
        build.progress.stop()
    gallery_conf = app.config.sphinx_gallery_conf
    stale = sg_compat.stale_targets(gallery_conf)
    failures = sg_compat.failures(gallery_conf)
    records = read_records(build.records_dir)
    build.adopt(records)
    fast = build.settings.fast
    for example in build.examples:
        record = records.get(example.id)
        if record is None and example.id in build.imported and example.target_file in stale:
            record = build.imported[example.id]
        elif record is None and example.target_file in stale:
            record = _cached_record(build, example)
        elif record is None:
            record = base_record(example, NOT_EXECUTED, fast)
        elif example.src_file in failures and record["status"] != INTERRUPTED:
            error = failures[example.src_file].strip().splitlines()[-1]
            record = {**record, "status": FAILED, "error": error}
        else:
            continue
        write_record(build.records_dir, record)
        records[example.id] = record
    if build.cache is not None:
        build.cache.store_executed(records, failures, build.settings.on_overrun)
    report = build.write_report(complete=True, records=records)
    _log_overruns(report, build.settings.on_overrun)
    logger.info(f"docsaccel: report written to {build.report_path}")
    app.emit(REPORT_READY_EVENT, report)


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
        fields = {k: previous[k] for k in ("wall_seconds", "cpu_seconds", "peak_rss_bytes")}
        fields.update(render=previous.get("render", {}), finished_at=previous.get("finished_at"))
    else:
        fields = {"wall_seconds": sg_compat.cached_seconds(Path(example.target_file)) or 0.0}
    made_by = _made_by(build, example) or {"fast": build.settings.fast, "knobs": {}}
    return base_record(example, CACHED, made_by["fast"], knobs=made_by["knobs"], **fields)


def _log_overruns(report: dict[str, Any], on_overrun: str) -> None:
    for record in report["examples"]:
        if record["status"] == INTERRUPTED:
            logger.error(record["error"])
        elif record["status"] == OVER_BUDGET:
            message = (
                f"{record['id']} took {format_seconds(round(record['wall_seconds'], 1))}, "
                f"over its budget of {format_seconds(record['budget_seconds'])} from "
                f"{record['budget_detail']}"
            )
            if on_overrun == "fail":
                logger.error(message)
            else:
                logger.warning(message, type="docsaccel", subtype="budget")


def _on_report_ready(app: Sphinx, report: dict[str, Any]) -> None:
    build = _build(app)
    if build is None or build.settings.report_page is None:
        return
    # Imported for a build with a report page only: the report views are the plugin's
    # largest import, and most builds never need them.
    from docsaccel.gallery.report_page import write_report_page

    write_report_page(app, report)


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
    if build is None or build.finished:
        return
    if build.progress is not None:
        build.progress.stop()
    build.write_report(complete=exception is None)
    build.finished = True
    _restore_fast_env(build)
    _unfinished_builds.remove(build)
    if build.lock is not None:
        build.lock.release()
    # A thread or exit handler an example left must not keep the finished build from
    # ending: it gets the grace of the hard stop, then the process ends, failing.
    try:
        grace = grace_seconds()
    except ValueError:  # a bad value is reported where a deadline needs it
        grace = GRACE_SECONDS
    bound_exit(grace, hook_module.EXIT_STATUS)


def _restore_fast_env(build: GalleryBuild) -> None:
    if build.fast_env_before is None:
        os.environ.pop(FAST_ENV_VAR, None)
    else:
        os.environ[FAST_ENV_VAR] = build.fast_env_before


def _fail_on_overruns(app: Sphinx, exception: BaseException | None) -> None:
    build = _build(app)
    if exception is not None or build is None or build.settings.on_overrun != "fail":
        return
    # The report _on_build_finished has just written holds the final records.
    report = build.last_report or build.report(complete=True)
    overruns = [r["id"] for r in report["examples"] if r["status"] in _OVERRUNS]
    if overruns:
        raise BudgetOverrunError(
            f"{len(overruns)} example(s) ran out of their time budget: {', '.join(overruns)} "
            f"(see {build.report_path})"
        )


def _write_unfinished_reports() -> bool:
    # A build stopped before build-finished (an aborted example, an error, Ctrl-C,
    # SIGTERM, a hard stop) still leaves a report, marked incomplete. Returns whether
    # there was one: the process then ends with a failing status.
    unfinished = False
    for build in list(_unfinished_builds):
        unfinished = True
        if build.examples:
            report = build.write_report(complete=False)
            stopped = [r for r in report["examples"] if r["status"] in (FAILED, INTERRUPTED)]
            logger.error(
                f"docsaccel: the build stopped before its end; report written to "
                f"{build.report_path} (complete: false)"
                + "".join(f"\n  {r['id']}: {r['error']}" for r in stopped)
            )
    return unfinished


hook_module.on_process_end(_write_unfinished_reports)


def _install_sigterm_handler() -> None:
    """``SIGTERM`` (CI cancelling, ``timeout``) writes the report as Ctrl-C does."""
    if threading.current_thread() is not threading.main_thread():
        return
    previous = signal.getsignal(signal.SIGTERM)
    if getattr(previous, "__name__", "") == _on_sigterm.__name__:
        return

    build_pid = os.getpid()

    def on_sigterm(signum: int, frame: Any) -> None:
        if os.getpid() != build_pid:
            # A copy an example forked inherits the handler, not the build: it ends as it
            # would without the plugin, writing no report over the build's.
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
            return
        _on_sigterm(previous)

    on_sigterm.__name__ = _on_sigterm.__name__
    signal.signal(signal.SIGTERM, on_sigterm)


def _on_sigterm(previous: Any) -> None:
    logger.error("docsaccel: the build was terminated (SIGTERM); writing its report")
    # The workers of a parallel build and anything the examples started end with it.
    hook_module.end_of_process(
        None, why="the build was terminated (SIGTERM) while it ran", every_process=True
    )
    if callable(previous):
        previous(signal.SIGTERM, None)
        return
    # End with the signal's own status, as the build would have without the plugin.
    signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)
    os.kill(os.getpid(), signal.SIGTERM)


def setup(app: Sphinx) -> dict[str, Any]:
    app.setup_extension("sphinx_gallery.gen_gallery")
    app.setup_extension("docsaccel.video")
    app.setup_extension("docsaccel.incremental.sphinxext")
    for key, default in CONFIG_DEFAULTS.items():
        app.add_config_value(key, default, "", types=_CONFIG_TYPES[key])
    app.add_event(REPORT_READY_EVENT)
    # sphinx-gallery fills its config at priority 10 and runs the examples in
    # builder-inited at the default priority (500): settle budgets between the two, and
    # collect the results after.
    app.connect("config-inited", _on_config_inited, priority=20)
    app.connect("builder-inited", _on_before_gallery, priority=400)
    app.connect("builder-inited", _on_gallery_executed, priority=900)
    app.connect(REPORT_READY_EVENT, _on_report_ready)
    app.connect("doctree-read", _on_doctree_read)
    app.connect("env-get-outdated", _on_env_get_outdated)
    # The report first (before sphinx-gallery may raise about failing examples), the
    # overrun verdict last.
    app.connect("build-finished", _on_build_finished, priority=100)
    app.connect("build-finished", _fail_on_overruns, priority=900)
    return {
        "version": docsaccel.__version__,
        # Bumped when what the plugin keeps in the environment (the note metadata) changes.
        "env_version": ENV_VERSION,
        "parallel_read_safe": True,
        "parallel_write_safe": True,
    }
