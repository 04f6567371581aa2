"""``config-inited`` to ``build-finished``: what earlier builds generated in the source
folder is removed before this build's generators run, and what this one generates is
recorded for the next (:mod:`docsaccel.incremental.generated` says what and why).

A build in these folders then generates its sources from what a fresh checkout has: no
page of a removed class or renamed example is left over, and autosummary writes each page
as a clean build does. The log names what was removed and what of it no generator made
again (the left-over pages a build without docsaccel would have published).

Example (what the state's ``config-inited`` handler and ``setup`` do)::

    sources.on_config_inited(app, build)
    app.connect("build-finished", sources.on_build_finished, priority=990)
"""

from __future__ import annotations

from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

from docsaccel.incremental.generated import GeneratedFiles
from docsaccel.incremental.sphinxext.state_build import IncrementalBuild, current

__all__ = ["on_build_finished", "on_config_inited"]

logger = logging.getLogger(__name__)
#: How many names a log line shows.
SHOWN = 10


def _names(paths: list[str]) -> str:
    more = f" (and {len(paths) - SHOWN} more)" if len(paths) > SHOWN else ""
    return ", ".join(paths[:SHOWN]) + more


def on_config_inited(app: Sphinx, build: IncrementalBuild) -> None:
    """Before any generator: remove what earlier builds generated, watch this one."""
    generated = GeneratedFiles(
        build.store.folder / "generated",
        Path(app.srcdir),
        leave_out=[build.outdir, build.doctreedir, build.store.folder.parent],
    )
    build.sources_removed = generated.remove_earlier()
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
