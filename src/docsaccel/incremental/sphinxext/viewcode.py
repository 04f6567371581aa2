"""``sphinx.ext.viewcode``'s module pages as a clean build of the same tree has them.

viewcode keeps, per module a page documents an object of, the module's code and which
document shows each object, and writes a ``_modules/<module>.html`` page for each. A
module a document looked at without any object it shows (an inherited member whose class
lives in another module) gets an entry with no object; each document viewcode purges
drops every such entry. So a clean serial build keeps those of the document it reads
last, a clean parallel build (``-j N``) keeps those of every document (its processes
purge nothing while they read), and a build reading only some documents keeps those of
the last one it read: a page too many or too few.

The modules each document looked at are in its page record (``viewcode``, noted from the
``viewcode-find-source`` event viewcode asks for every one, by
:func:`.reading.on_viewcode_find_source`). After reading (:func:`on_env_updated`), the
modules without objects are the ones a clean build keeps, and at the end
(:func:`stale_pages`) a restored module page for a module no longer there is deleted.

Example (what ``setup`` connects when viewcode is loaded)::

    app.connect("env-updated", on_env_updated, priority=980)
"""

from __future__ import annotations

import posixpath
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.pycode import ModuleAnalyzer

from docsaccel.incremental.sphinxext.build import IncrementalBuild, current, pages_of
from docsaccel.incremental.sphinxext.sphinx_compat import reads_in_parallel
from docsaccel.incremental.state import untouched

__all__ = ["EXTENSION", "KEY", "kept_without_objects", "on_env_updated", "stale_pages"]

EXTENSION = "sphinx.ext.viewcode"
#: The page record's key of the modules viewcode looked at while the document was read.
KEY = "viewcode"
#: Where viewcode writes its pages (``sphinx.ext.viewcode.OUTPUT_DIRNAME``).
FOLDER = "_modules"


def kept_without_objects(app: Sphinx, env: BuildEnvironment) -> set[str]:
    """The modules a clean build of this tree keeps an entry for even with no object."""
    records = pages_of(env)
    found = sorted(env.found_docs)
    if reads_in_parallel(app, len(found)):
        return {m for d in found for m in (records.get(d) or {}).get(KEY, ())}
    return set((records.get(found[-1]) or {}).get(KEY, ())) if found else set()


def _entry(app: Sphinx, modname: str) -> Any:
    """A module's entry with no object, as viewcode makes it (``False``: no source)."""
    found = app.events.emit_firstresult("viewcode-find-source", modname)
    if found is None:
        try:
            analyzer = ModuleAnalyzer.for_module(modname)
            analyzer.find_tags()
        except Exception:
            return False
        found = analyzer.code, analyzer.tags
    code, tags = found
    return code, tags, {}, modname


def on_env_updated(app: Sphinx, env: BuildEnvironment) -> list[str]:
    build = current(app)
    modules = getattr(env, "_viewcode_modules", None)
    if build is None or not build.origin or not isinstance(modules, dict):
        return []  # a build that read every document is the clean build
    wanted = kept_without_objects(app, env)
    for modname, entry in list(modules.items()):
        if entry and not entry[2] and modname not in wanted:
            del modules[modname]
    for modname in sorted(wanted - set(modules)):
        modules[modname] = _entry(app, modname)
    return []


def stale_pages(app: Sphinx, build: IncrementalBuild) -> set[Path]:
    """The restored module pages of modules viewcode no longer has."""
    folder = Path(app.outdir) / FOLDER
    modules = getattr(app.env, "_viewcode_modules", None)
    if EXTENSION not in app.extensions or not isinstance(modules, dict) or not folder.is_dir():
        return set()
    builder = app.builder
    pages = {posixpath.join(FOLDER, "index")}
    pages |= {posixpath.join(FOLDER, m.replace(".", "/")) for m, e in modules.items() if e}
    wanted = {Path(builder.get_outfilename(p)) for p in pages}
    suffix = getattr(builder, "out_suffix", ".html")
    return {
        path
        for path in folder.rglob(f"*{suffix}")
        if path not in wanted and untouched(path, build.restored)
    }
