"""``config-inited`` to ``build-finished``: what earlier builds generated in the source
folder is removed before this build's generators run, and what this one generates is
recorded for the next (:mod:`docsaccel.incremental.generated` says what and why).

A build in these folders then generates its sources from what a fresh checkout has: no
page of a removed class or renamed example is left over, and autosummary writes each page
as a clean build does. The log names what was removed and what of it no generator made
again (the left-over pages a build without docsaccel would have published).
"""

from __future__ import annotations

from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

from docsaccel.incremental.generated import GeneratedFiles
from docsaccel.incremental.sphinxext.state_build import IncrementalBuild, current
from docsaccel.incremental.state_store import StateStore

__all__ = ["merge_watch", "on_build_finished", "on_config_inited", "source_watch"]

logger = logging.getLogger(__name__)
#: How many names a log line shows.
SHOWN = 10


def _names(paths: list[str]) -> str:
    more = f" (and {len(paths) - SHOWN} more)" if len(paths) > SHOWN else ""
    return ", ".join(paths[:SHOWN]) + more


def source_watch(cache: Path, srcdir: Path, leave_out: list[Path]) -> GeneratedFiles:
    """The watch of what is generated in ``srcdir``, kept in the cache folder ``cache``
    (``leave_out``: output folders under ``srcdir``, never sources). One place says where,
    for a build and for the shard merge, which writes outputs into the same folders just
    before its build."""
    return GeneratedFiles(StateStore(cache).folder / "generated", srcdir, [*leave_out, cache])


def merge_watch(cache: Path, srcdir: Path, leave_out: list[Path]) -> GeneratedFiles:
    """Begin the record of a shard merge (:func:`docsaccel.shard.build.run_merge`): what
    earlier builds generated in ``srcdir`` is removed, then what this process creates is
    noted, the shards' outputs it copies in; its build, started next, joins the record
    and ``finish()`` writes it."""
    watch = source_watch(cache, srcdir, leave_out)
    watch.remove_earlier()
    watch.watch()
    return watch


def on_config_inited(app: Sphinx, build: IncrementalBuild) -> None:
    """Before any generator: remove what earlier builds generated, watch this one."""
    generated = source_watch(
        build.store.folder.parent, Path(app.srcdir), [build.outdir, build.doctreedir]
    )
    build.sources_removed = generated.remove_earlier()
    if generated.unreadable:
        logger.warning(
            f"docsaccel: the record of what earlier builds generated in the source folder, "
            f"{generated.unreadable}: nothing they generated is removed, so a page since "
            "taken out may stay; build from a fresh checkout to be sure",
            type="docsaccel",
            subtype="cache",
        )
    generated.watch()
    build.generated = generated
    gallery = getattr(app, "_docsaccel_gallery", None)
    if gallery is not None:
        gallery.generated = generated  # for sphinx-gallery's parallel workers
    if build.sources_removed:
        logger.info(
            f"docsaccel: {len(build.sources_removed)} file(s) earlier builds generated in "
            "the source folder removed, to be generated as in a fresh checkout"
        )


def on_build_finished(app: Sphinx, exception: BaseException | None) -> None:
    """Record what this build generated; name what earlier builds made and it did not."""
    build = current(app)
    if build is None or build.generated is None:
        return
    made = set(build.generated.finish())
    gone = sorted(set(build.sources_removed) - made)
    if gone:
        logger.info(
            f"docsaccel: {len(gone)} file(s) earlier builds generated in the source folder "
            f"were not made again by this one, and stay removed: {_names(gone)}"
        )
