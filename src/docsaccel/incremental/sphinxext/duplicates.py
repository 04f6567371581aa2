"""A name two documents define is read in both, in the order a clean build reads them.

Sphinx keeps one target per label, object or citation: in a clean build the document read
last holds it and warns, naming the other ("duplicate label x, other instance in y"). A
restored build reads only the documents that changed: when one of them defines what a
document it does not read defines, the edited one is read against the other's kept entry,
so the other holds the name in a clean build but not here (a ``:ref:`` links elsewhere),
and the warning is located in the wrong document.

The design, in full: the caching guide's *Design* section.
"""

from __future__ import annotations

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.util import logging

from docsaccel.incremental.sphinxext import exports
from docsaccel.incremental.sphinxext.reading import read_again
from docsaccel.incremental.sphinxext.sphinx_compat import held_warnings
from docsaccel.incremental.sphinxext.state_build import current
from docsaccel.incremental.sphinxext.warnings import other_instances, read_in

__all__ = ["on_before_read_docs", "on_env_updated"]

logger = logging.getLogger(__name__)


def on_before_read_docs(app: Sphinx, env: BuildEnvironment, docnames: list[str]) -> None:
    """Which documents this build reads (last: as every handler leaves the list)."""
    build = current(app)
    if build is not None:
        build.reading.docnames = list(docnames)


def on_env_updated(app: Sphinx, env: BuildEnvironment) -> list[str]:
    """Read again, with the documents that met them, the documents not read whose names
    they duplicate; the latter are then written too (returned)."""
    build = current(app)
    held = held_warnings()
    if build is None or not build.restored.origin or held is None:
        return []
    reading = set(build.reading.docnames)
    kept: dict[str, str] = {}
    readers: set[str] = set()
    for record in held:
        reader = read_in(record)
        if reader is None:
            continue
        for other in other_instances(app, record):
            if other not in reading and other in env.all_docs:
                kept.setdefault(other, reader)
                readers.add(reader)
    if not kept:
        return []
    again = sorted(readers | set(kept))
    held[:] = [r for r in held if read_in(r) not in again]
    build.reading.exports_before.update(exports.offers(env, set(kept)))
    for other, reader in sorted(kept.items()):
        reason = f"it defines a name {env.doc2path(reader, False)} defines too"
        build.reading.reasons[other] = [reason]
        logger.info(f"docsaccel: {env.doc2path(other, False)}: {reason}")
    read_again(app, env, again)
    build.reading.docnames.extend(sorted(kept))
    return sorted(kept)
