"""``build-finished``: keep this build's Sphinx state for the next one.

The design, in full: the caching guide's *Design* section.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.util import logging

from docsaccel.counts import counted
from docsaccel.formats import write_json
from docsaccel.incremental.last_build import LastBuild
from docsaccel.incremental.sphinxext import output_record
from docsaccel.incremental.sphinxext.assets import assets_facts, unwatch
from docsaccel.incremental.sphinxext.state_build import (
    MARKER,
    MARKER_FORMAT,
    TABLES_ATTR,
    IncrementalBuild,
    current,
    pages_of,
)
from docsaccel.incremental.sphinxext.untrusted_output import (
    foreign_files,
    own_folders,
    recorded_files,
    written_by_builds,
)
from docsaccel.incremental.sphinxext.warnings import uninstall
from docsaccel.incremental.sphinxext.writing import (
    builder_page_files,
    filled_late_pages,
    index_entries,
    linked_files,
    page_outputs,
    remove_stale,
    restore_files_to_rebuild,
    restore_index_entries,
    site_files,
    sphinx_files,
)
from docsaccel.incremental.state_store import StateError, files_under

__all__ = ["on_build_finished", "summary"]

logger = logging.getLogger(__name__)


def summary(build: IncrementalBuild) -> dict[str, Any]:
    """What the report says of the Sphinx state (``build.sphinx_state``)."""
    return {
        "origin": build.restored.origin or "none",
        "why_full": None if build.restored.origin else build.restored.full_reason,
        "read": {d: build.reading.reasons.get(d, ["?"])[0] for d in sorted(build.reading.reasons)},
        "written": len(build.writing.written),
        "written_pages": sorted(build.writing.written),
        "every_page": build.writing.every_page,
        "written_why": dict(sorted(build.writing.reasons.items())),
    }


def _facts(
    app: Sphinx,
    build: IncrementalBuild,
    outputs: dict[str, list[str]],
    linked: dict[str, list[str]],
) -> LastBuild:
    facts = LastBuild(
        warned_read=sorted(build.reading.warned),
        warned_write=sorted(build.writing.warned),
        # As env-get-updated saw them (sphinx-gallery loads inventories at its end).
        intersphinx=build.reading.intersphinx,
    )
    if build.pages and build.writing.context:
        facts.write = build.writing.context
        facts.outputs = outputs
        facts.linked_files = linked
        facts.filled_late = filled_late_pages(app, build)
        facts.builder_pages = builder_page_files(app, build)
        facts.sphinx_files = sphinx_files(app.env)
        facts.site_files = site_files(build, Path(app.outdir))
        facts.assets = assets_facts(build)
        # A build with no page to write ends before write-started, which restores them.
        restore_index_entries(app.env, build.restored.previous.index_entries)
        facts.index_entries = index_entries(app.env)
    return facts


def on_build_finished(app: Sphinx, exception: BaseException | None) -> None:
    build = current(app)
    uninstall(app)
    if build is None:
        return
    unwatch(build)
    restore_files_to_rebuild(app, build)
    if exception is not None:
        # Nothing is saved; the failed build's log ends with the line that failed it.
        return
    read = sum(1 for r in pages_of(app.env).values() if r.get("run") == build.run)
    written = len(build.writing.written)
    logger.info(
        f"docsaccel: Sphinx state: {counted(read, 'document')} read, "
        f"{counted(written, 'page')} written"
    )
    outputs: dict[str, list[str]] = {}
    linked: dict[str, list[str]] = {}
    if build.pages and build.writing.context:
        outputs = page_outputs(app)
        linked = linked_files(app, build, outputs)
    removed = remove_stale(app, build, linked, outputs)
    if removed:
        logger.info(
            f"docsaccel: {counted(removed, 'file')} of removed pages, images or downloads deleted"
        )
    facts = _facts(app, build, outputs, linked)
    marker: dict[str, Any] = {
        **MARKER_FORMAT.header(),
        "key": build.key,
        "facts": facts.to_json(),
    }
    doctrees = {
        rel: path
        for rel, path in files_under(build.doctreedir).items()
        if rel != MARKER and not rel.startswith(".")
    }
    output: dict[str, Path] = {}
    foreign: list[str] = []
    if build.pages:
        # Only what builds wrote: a user's file there is no build's, and a fresh checkout
        # restoring the state would publish it where a clean build has none.
        found = files_under(build.outdir, own_folders(build.outdir, build.doctreedir))
        output = written_by_builds(
            build.outdir,
            found,
            build.restored.started_ns,
            recorded_files(facts),
            build.restored.files,
            build.restored.finished,
        )
        foreign = foreign_files(found, output)
    meta = {
        "context": build.context,
        "root": build.restored.place.root,
        "build": {
            **facts.to_json(),
            "pages": pages_of(app.env),
            "tables": getattr(app.env, TABLES_ATTR, None) or {},
        },
    }
    try:
        build.restored.store.save(
            build.key, meta, {"doctrees": doctrees, "output": output}, build.restored.files
        )
    except (OSError, StateError, TypeError, ValueError) as exc:
        logger.warning(
            f"docsaccel: cannot store the Sphinx state in {build.restored.store.folder}: {exc}",
            type="docsaccel",
            subtype="cache",
        )
    with contextlib.suppress(OSError):  # without it, the next build here uses the cache
        write_json(build.doctreedir / MARKER, marker, indent=None)
    output_record.finished(build.outdir, recorded_files(facts), foreign)
