"""``config-inited`` to ``build-finished``: what earlier builds generated in the source
folder is removed before this build's generators run, and what this one generates is
recorded for the next (:mod:`docsaccel.incremental.generated` says what and why).

A build in these folders then generates its sources from what a fresh checkout has: no
page of a removed class or renamed example is left over, and autosummary writes each page
as a clean build does. The log names what was removed and what of it no generator made
again (the left-over pages a build without docsaccel would have published).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

from docsaccel import layout
from docsaccel.counts import counted
from docsaccel.incremental.generated import GeneratedFiles
from docsaccel.incremental.state_store import StateStore

__all__ = ["SourceWatch", "merge_watch", "on_build_finished", "on_config_inited", "source_watch"]

logger = logging.getLogger(__name__)
#: How many names a log line shows.
SHOWN = 10


@dataclass
class SourceWatch:
    """The watch of what this build generates in the source folder, and what earlier
    builds generated that was removed before this one's generators ran."""

    generated: GeneratedFiles
    removed: list[str]


def _names(paths: list[str]) -> str:
    more = f" (and {len(paths) - SHOWN} more)" if len(paths) > SHOWN else ""
    return ", ".join(paths[:SHOWN]) + more


def _records(cache: Path) -> Path:
    """Where the cache folder ``cache`` keeps what builds generated in source folders."""
    return StateStore(cache).folder / "generated"


def source_watch(
    cache: Path,
    srcdir: Path,
    leave_out: list[Path],
    outdir: Path | None = None,
    *,
    read_beside: Path | None = None,
) -> GeneratedFiles:
    """The watch of what is generated in ``srcdir``, kept in the cache folder ``cache``
    and, given ``outdir``, beside that output folder too (``leave_out``: output folders
    under ``srcdir``, never sources); given ``read_beside``, the record a build keeps
    beside that output folder is read too. One place says where, for a build and for the
    shard merge, which writes outputs into the same folders just before its build."""
    copies = [] if outdir is None else [layout.generated_dir(outdir)]
    seen = [] if read_beside is None else [layout.generated_dir(read_beside)]
    return GeneratedFiles(_records(cache), srcdir, [*leave_out, cache], copies=copies, seen=seen)


def merge_watch(cache: Path, srcdir: Path, leave_out: list[Path], outdir: Path) -> GeneratedFiles:
    """Begin the record of a shard merge building into ``outdir``
    (:func:`docsaccel.shard.build.run_merge`): what earlier builds generated in ``srcdir``
    is removed, then what this process creates is noted, the shards' outputs it copies in;
    its build, started next, joins the record and ``finish()`` writes it.

    The removal is the merge build's as well, which removes nothing (:func:`_removes_earlier`):
    so what a build into ``outdir`` recorded beside it (the Sphinx state off) goes here too."""
    watch = source_watch(cache, srcdir, leave_out, read_beside=outdir)
    watch.remove_earlier()
    watch.watch()
    return watch


def _removes_earlier(app: Sphinx) -> bool:
    """Whether this build removes what earlier builds generated in its source folder: not
    a shard merge's build with the cache on. Its merge removed that before it copied the
    shards' outputs in (:func:`merge_watch`), and those copies, noted in the merge's log,
    would read here as what an earlier build generated and left (the pages of examples
    the shards restored, the marks of their expected failures): the merge build would
    then run the examples again, or publish no page for them."""
    settings = app._docsaccel_gallery.settings  # type: ignore[attr-defined]
    return settings.shard_records is None or settings.cache is None


def _build_watch(app: Sphinx, state_on: bool) -> GeneratedFiles | None:
    """The watch of this build: in its cache folder while the Sphinx state is on, else
    beside the output (the cache folder read-only, or to hold no state: the cache's record
    then only read); ``None`` without a cache."""
    gallery = getattr(app, "_docsaccel_gallery", None)
    settings = getattr(gallery, "settings", None)
    if settings is None or settings.shard_examples is not None:
        return None  # a shard's build: the merge records what the shards generated
    outdir, leave_out = Path(app.outdir), [Path(app.outdir), Path(app.doctreedir)]
    if settings.cache is not None and state_on:
        return source_watch(settings.cache, Path(app.srcdir), leave_out, outdir)
    cache = settings.cache or getattr(gallery, "read_only_cache", None)
    if cache is None:
        return None
    return GeneratedFiles(
        layout.generated_dir(outdir),
        Path(app.srcdir),
        [*leave_out, cache],
        seen=[_records(cache)],
    )


def on_config_inited(app: Sphinx, state_on: bool) -> None:
    """Before any generator: remove what earlier builds generated, watch this one
    (``state_on``: the Sphinx state is kept in the cache folder, and so is the record)."""
    generated = _build_watch(app, state_on)
    if generated is None:
        return
    removed = generated.remove_earlier() if _removes_earlier(app) else []
    if generated.unreadable:
        logger.warning(
            f"docsaccel: the record of what earlier builds generated in the source folder, "
            f"{generated.unreadable}: nothing they generated is removed, so a page since "
            "taken out may stay; build from a fresh checkout to be sure",
            type="docsaccel",
            subtype="cache",
        )
    generated.watch()
    app._docsaccel_sources = SourceWatch(generated, removed)  # type: ignore[attr-defined]
    app._docsaccel_gallery.generated = generated  # for sphinx-gallery's parallel workers
    app.connect("build-finished", on_build_finished, priority=990)
    if removed:
        logger.info(
            f"docsaccel: {counted(len(removed), 'file')} earlier builds generated in "
            "the source folder removed, to be generated as in a fresh checkout"
        )


def on_build_finished(app: Sphinx, exception: BaseException | None) -> None:
    """Record what this build generated; name what earlier builds made and it did not."""
    sources = getattr(app, "_docsaccel_sources", None)
    if sources is None:
        return
    made = set(sources.generated.finish())
    gone = sorted(set(sources.removed) - made)
    if gone:
        logger.info(
            f"docsaccel: {counted(len(gone), 'file')} earlier builds generated in the source "
            f"folder were not made again by this one, and stay removed: {_names(gone)}"
        )
