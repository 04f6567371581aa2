"""The plugin's state for one Sphinx build: its settings, its examples, its report.

The design, in full: the adopting guide's *Design* section.

Example (in a build the settings come from ``read_settings(app.config, app.confdir)`` and
the examples from the plan):

>>> import tempfile
>>> from pathlib import Path
>>> from docsaccel.budgets import BudgetTable
>>> from docsaccel.settings import Settings
>>> outdir = tempfile.TemporaryDirectory()
>>> build = GalleryBuild(Settings(), BudgetTable(), Path(outdir.name))
>>> report = build.write_report(complete=True)
>>> build.report_path.relative_to(outdir.name).as_posix()
'docsaccel/report.json'
>>> report["build"]["complete"], report["build"]["fast"], report["examples"]
(True, False, [])
>>> outdir.cleanup()
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sphinx_gallery
from sphinx.util import logging

import docsaccel
from docsaccel import layout
from docsaccel.budgets import BudgetTable
from docsaccel.contract import BUDGETS_FAILED, SHARD_RUNS, VERDICT_PENDING_KEY
from docsaccel.examples import Example, Planner
from docsaccel.formats import write_json
from docsaccel.gallery.lock import GalleryLock, OutdirLock
from docsaccel.gallery.progress import Progress
from docsaccel.records import build_report, read_records, written_here
from docsaccel.settings import Settings

logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    from docsaccel.cache.cache_build import CacheBuild

__all__ = ["GalleryBuild"]


class GalleryBuild:
    """The plugin's state for one Sphinx build: settings, plan, where records go.

    A plain class rather than a dataclass: one is made per build and never compared,
    shown or copied, so the methods a dataclass would compile at import, for each of
    these attributes, would serve nothing.
    """

    def __init__(
        self,
        settings: Settings,
        table: BudgetTable,
        outdir: Path,
        *,
        lock: OutdirLock | None = None,
        gallery_locks: list[GalleryLock] | None = None,
        read_only_cache: Path | None = None,
        fast_env_before: str | None = None,
        srcdir: str = "",
        conf: dict[str, str] | None = None,
        doctreedir: Path | None = None,
    ) -> None:
        self.settings = settings
        #: This build's id: in its journals' names and its report (``build.id``), so that
        #: records another build's process writes into its folder are not taken as its own.
        self.build_id = uuid.uuid4().hex[:16]
        #: Sphinx's doctree folder: where the report page's note is (:mod:`.page_file`).
        self.doctreedir = doctreedir
        #: Sphinx's builder, once made: it names the report pages' HTML files
        #: (:func:`.page_file.page_html`); ``None`` before.
        self.builder: Any = None
        #: The conf.py this build read (:func:`docsaccel.contract.conf_fingerprint`): a
        #: reader of the report can tell a later build that never reached docsaccel.
        self.conf = conf
        self.table = table
        self.outdir = outdir
        self.started = time.perf_counter()
        self.examples: list[Example] = []
        self.previous: dict[str, dict[str, Any]] = {}
        #: The records of the examples taken as they were, by id: a merge build's from the
        #: shards, the example cache's of those it restored.
        self.imported: dict[str, dict[str, Any]] = {}
        #: The example cache of this build (``None``: no cache, or a merge build).
        self.cache: CacheBuild | None = None
        #: Whether the cache has stored the examples this build ran (once: after the
        #: gallery, or as the build stops before).
        self.cache_stored = False
        self.finished = False
        #: The last report written, and its records by id. The first report is written
        #: once the gallery has run (or as the build stops): from then on the records are
        #: final.
        self.last_report: dict[str, Any] | None = None
        self.final_records: dict[str, dict[str, Any]] = {}
        self.lock = lock
        #: The locks on the source tree's gallery folders this build generates.
        self.gallery_locks = list(gallery_locks or [])
        #: The example cache's folder when the build may not write it: looked up and
        #: restored from, never written (``settings.cache`` is then ``None``).
        self.read_only_cache = read_only_cache
        #: The build log's progress while the gallery runs (:mod:`.progress`).
        self.progress: Progress | None = None
        self.srcdir = srcdir
        self._by_docname: dict[str, Example] = {}
        self.planner: Planner | None = None
        #: ``DOCSACCEL_FAST`` before this build set it, put back when the build ends.
        self.fast_env_before = fast_env_before
        #: What the Sphinx state did (:mod:`docsaccel.incremental.sphinxext`), for the
        #: report.
        self.sphinx_state: dict[str, Any] | None = None
        #: The Sphinx state's watch of what the build generates in the source folder,
        #: handed to the examples' workers (:attr:`.hook.ExampleHook.generated`).
        self.generated: Any = None
        #: The ids of the examples that ran but whose record could not be read back.
        self.lost: set[str] = set()
        #: Why the build stopped before its examples ran (a refused setting, an error),
        #: once it did; its report then holds no example and says this.
        self.stopped_before_examples: str | None = None
        #: Why the build stopped once some examples were processed, before the galleries
        #: were all generated (the first handler error, :attr:`raised`); else None.
        self.stopped_while_generating: str | None = None
        #: The first exception an event handler not docsaccel's let out, in one line naming
        #: the handler (:mod:`.handler_errors`): why a build stopped before any example;
        #: it says where the traceback is when Sphinx showed one.
        self.raised: str | None = None
        #: Why the build's process ended before the build did, when a signal ended it.
        self.ended_because: str | None = None
        #: Whether it ended after its examples ran, while the pages were read or written.
        self.ended_writing = False
        #: Whether Sphinx had read every document (``env-updated``): then it writes pages.
        self.pages_read = False
        #: Whether the ``ERROR:`` line that stopped it already said why (a refused setting,
        #: an aborted gallery, a dead worker, naming the examples it stopped at): the
        #: unfinished report's note then only says where the report is.
        self.stop_said = False
        #: Why Sphinx itself fails the build although every example ran (warnings it turns
        #: into errors under ``-W``), as known at build-finished.
        self.sphinx_failed: str | None = None
        #: The line the build's budgets ended it with
        #: (:data:`docsaccel.contract.BUDGETS_FAILED`), once they did; else None.
        self.budgets_failed: str | None = None
        #: What kept the process from ending once the build was done (an example's
        #: thread or exit handler), as the exit bound ended it; else None.
        self.exit_blocked: str | None = None
        #: Whether the exit bound was armed at the build's end
        #: (:func:`.process_end.bound_exit`): what an example left may then hold the
        #: process past the verdict, and fail the build as the process ends.
        self.exit_bounded = False
        #: :data:`docsaccel.contract.VERDICT_PENDING` from the report written at the
        #: build's end until the plugin's last handler of it ran; else None.
        self.verdict_pending: str | None = None
        #: What this build said of its history file (:meth:`warn_history`).
        self.history_said: set[str] = set()
        #: The report page this build wrote, its source and its HTML
        #: (:func:`.report_page.write_report_page`), to rewrite with a later verdict.
        self.report_page_files: tuple[Path, Path] | None = None
        #: The report whose view that page shows: written before the build ended, it
        #: may not show the verdict the build's end added to the report.
        self.report_on_page: dict[str, Any] | None = None
        #: Whether the records folder holds this build's records (it is emptied just
        #: before the examples run; until then it holds the last build's).
        self.records_reset = False
        #: Why the output folder stopped being this build's alone (its lock was removed
        #: and another build locked it), or None.
        self.lock_lost: str | None = None

    @property
    def records_dir(self) -> Path:
        return layout.records_dir(self.outdir)

    @property
    def report_path(self) -> Path:
        return layout.report_path(self.outdir)

    def by_docname(self, docname: str) -> Example | None:
        if len(self._by_docname) != len(self.examples):
            self._by_docname = {example.docname: example for example in self.examples}
        return self._by_docname.get(docname)

    def records_so_far(self) -> dict[str, dict[str, Any]]:
        """The records of this build as they stand: the journals on disk (a parallel
        build's workers'), then what this process wrote itself, which no change to the
        files can take back. A record file this process did not write is none of this
        build's (the plugin writes them once the gallery has run, in this process)."""
        written = written_here(self.records_dir)
        journals = read_records(self.records_dir, files=False, superseded=written)
        return {**journals, **written}

    def records_before_the_end(self) -> dict[str, dict[str, Any]]:
        """:meth:`records_so_far`, with the records of the examples taken as they were
        before the gallery ran (restored by the example cache, a merge's shard records)
        and not run since: what a report of a build stopped before the gallery's end says
        of them (restored, not "not executed"). Once the gallery ran, the plugin records
        them itself."""
        return {**self.imported, **self.records_so_far()}

    def keep_lock(self) -> None:
        """Lock the output folder and the gallery folders again if an example removed a
        lock; when another build locked one first, say so once (this build's report is
        then incomplete)."""
        if self.lock_lost is not None:
            return
        locks = [] if self.lock is None else [self.lock]
        for lock in [*locks, *self.gallery_locks]:
            message = lock.keep()
            if message is not None:
                self.lock_lost = (
                    f"the lock of {lock.folder} was removed while it ran, and {message}"
                )
                logger.error(f"docsaccel: {self.outdir}: {self.lock_lost}")
                return

    def release_gallery_locks(self) -> None:
        """Let the gallery folders go: the build writes nothing more into them."""
        for lock in self.gallery_locks:
            lock.release()

    def release_locks(self) -> None:
        """Let the output folder and the gallery folders go: the build is done, its
        verdict in its report. Until then the output folder's lock says to every reader
        that the build runs (:func:`docsaccel.layout.lock_holder`).

        With the exit bound armed (:attr:`exit_bounded`), the output folder's lock is kept
        until the process ends: the verdict in the report is not the last word while what
        an example left may still hold the process, and the bound then rewrites it."""
        self.release_gallery_locks()
        if self.lock is None:
            return
        if self.exit_bounded:
            # The kernel drops the lock as the process ends, whichever way (the thread
            # ends, the bound or a signal ends it) and after any of them has rewritten
            # the report: a release at each of those ends would miss one.
            self.lock.keep_until_exit()
        else:
            self.lock.release()

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
        """The report of this build so far (see :func:`docsaccel.records.build_report`).

        ``records``: the records by id (default: the final ones held in memory once a
        report was written, else :meth:`records_so_far`).
        """
        build = {
            "wall_seconds": round(time.perf_counter() - self.started, 3),
            "fast": self.settings.fast,
            "on_overrun": self.settings.on_overrun,
            # Without an example's record, its time and memory are unknown.
            "complete": complete and not self.lost and self.lock_lost is None,
            "sphinx_gallery": sphinx_gallery.__version__,
            "docsaccel": docsaccel.__version__,
            "shard": self._shard(),
            "source_dir": self.srcdir,
            "memory_limit": self.settings.memory_limit,
            "id": self.build_id,
        }
        if self.conf is not None:
            build["conf"] = self.conf
        if self.sphinx_state is not None:
            build["sphinx_state"] = self.sphinx_state
        if self.lost:
            build["records_lost"] = sorted(self.lost)
        if self.lock_lost is not None:
            build["lock_lost"] = self.lock_lost
        if self.stopped_before_examples is not None:
            build["stopped_before_examples"] = self.stopped_before_examples
        if self.stopped_while_generating is not None:
            build["stopped_while_generating"] = self.stopped_while_generating
        if self.budgets_failed is not None:
            build[BUDGETS_FAILED] = self.budgets_failed
        if self.sphinx_failed is not None:
            build["sphinx_failed"] = self.sphinx_failed
        if self.exit_blocked is not None:
            build["exit_blocked"] = self.exit_blocked
        if self.verdict_pending is not None:
            build[VERDICT_PENDING_KEY] = self.verdict_pending
        if self.ended_because is not None:
            build["ended_because"] = self.ended_because
        if self.ended_writing:
            build.update(self._phase())
        if records is None:
            records = self.final_records if self.last_report is not None else None
        if records is None:
            records = self.records_before_the_end()
        return build_report(self.records_dir, self.examples, build, records)

    def _shard(self) -> dict[str, Any] | None:
        if self.settings.shard_records is not None:
            merge: dict[str, Any] = {"role": "merge", "examples": len(self.imported)}
            runs = layout.shard_runs(self.settings.shard_records)
            if runs:
                merge[SHARD_RUNS] = runs
            return merge
        if self.settings.shard_examples is not None:
            return {"role": "shard", "examples": len(self.settings.shard_examples)}
        return None

    def warn_history(self, message: str) -> None:
        """Say what a reader of the history file (``docsaccel_history``) found wrong with
        it, once per build: the progress estimate and the report page each read it, the
        page again when a later verdict rewrites it, and a line cut short is one fault."""
        if message in self.history_said:
            return
        self.history_said.add(message)
        logger.warning(f"docsaccel_history: {message}", type="docsaccel", subtype="history")

    def save_unfinished_report(self) -> None:
        """Write the report as it stands, ``complete: false``, from the records so far,
        leaving what the build keeps in memory as it was (an example crossed the memory
        ceiling: the process may be killed before it can say more)."""
        report = self.report(complete=False, records=self.records_before_the_end())
        write_json(self.report_path, report)

    def write_stopped_report(self, why: str) -> dict[str, Any]:
        """Write the report of a build that stopped before its examples ran, ``why``:
        no example, ``"complete": false``, so a gate reading it fails, saying why (the
        records folder still holds the last build's records: none of them is this
        build's)."""
        self.stopped_before_examples = why
        return self.write_report(complete=False, records={})

    def rewrite_report(self, records: dict[str, dict[str, Any]]) -> dict[str, Any]:
        """Write the last report again with ``records`` and the build's facts as they now
        stand (:attr:`exit_blocked`), keeping what it said of the build's end: its wall
        time and whether it finished. For a verdict that comes after the build's end."""
        last = (self.last_report or {}).get("build", {})
        report = self.report(bool(last.get("complete", False)), records)
        if "wall_seconds" in last:
            report["build"]["wall_seconds"] = last["wall_seconds"]
        write_json(self.report_path, report)
        self.last_report = report
        self.final_records = {record["id"]: record for record in report["examples"]}
        return report

    def _phase(self) -> dict[str, bool]:
        """The report's flags of a build that ran its examples and has not ended: it
        writes the pages (``writing``), and reads the documents first (``reading``)."""
        return {"writing": True} if self.pages_read else {"writing": True, "reading": True}

    def write_report(
        self,
        complete: bool,
        records: dict[str, dict[str, Any]] | None = None,
        interim: bool = False,
    ) -> dict[str, Any]:
        """Write the report (:meth:`report`) and keep it as the build's last one.

        ``interim``: the build writes it again, indented for readers, when it ends (at
        ``build-finished``, or as its process ends before): until then programs read it
        (the ``docsaccel-report-ready`` handlers), so it is written on one line, with the
        JSON encoder's fast path. On disk it says ``"complete": false`` and
        ``"writing": true`` meanwhile: only a process killed outright (``SIGKILL``, the
        out-of-memory killer) leaves it so, and that build did not finish.
        """
        report = self.report(complete, records)
        on_disk = report
        if interim:
            build = {**report["build"], "complete": False, **self._phase()}
            on_disk = {**report, "build": build}
        write_json(self.report_path, on_disk, indent=None if interim else 2)
        self.last_report = report
        self.final_records = {record["id"]: record for record in report["examples"]}
        return report
