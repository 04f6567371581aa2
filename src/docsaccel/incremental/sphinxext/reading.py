"""While each document is read: record what it was read from (its page record).

The design, in full: the caching guide's *Design* section.
"""

from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import dataclass, field
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.util.i18n import docname_to_domain

from docsaccel.cache.deps import absent_modules, collect, distribution_versions, listing_deps
from docsaccel.cache.fingerprint import file_digest
from docsaccel.cache.loaded import python_sources
from docsaccel.cache.recorder import Recorder
from docsaccel.incremental.closure import module_closure
from docsaccel.incremental.objects import definitions, is_dynamic, module_of
from docsaccel.incremental.pages import empty_record
from docsaccel.incremental.sphinxext import exports, viewcode
from docsaccel.incremental.sphinxext.state_build import IncrementalBuild, current, pages_of
from docsaccel.incremental.sphinxext.warnings import assign_chunk, note_document

__all__ = [
    "SOURCE_EXTENSIONS",
    "on_autodoc_docstring",
    "on_autodoc_signature",
    "on_doctree_read",
    "on_env_updated",
    "on_merge_info",
    "on_purge_doc",
    "on_source_read",
    "on_viewcode_find_source",
    "read_again",
]

#: Extensions whose links on the pages carry a module's line numbers (``linkcode``'s
#: ``linkcode_resolve`` usually returns ``...#L42``): with one loaded, a module whose
#: objects a page shows counts as a whole file. ``sphinx.ext.viewcode`` is not one: its
#: links name the object, and its ``_modules`` pages are refreshed from the files
#: (:func:`.viewcode.on_env_updated`).
SOURCE_EXTENSIONS = frozenset({"sphinx.ext.linkcode"})


@dataclass
class _Reading:
    docname: str
    #: ``(file, qualname)`` of the definitions the page shows, and the top-level modules of
    #: shown objects that live outside the roots.
    shown: set[tuple[str, str]] = field(default_factory=set)
    outside: set[str] = field(default_factory=set)
    dynamic: bool = False
    seen_objects: set[int] = field(default_factory=set)
    #: The modules of the shown objects (autodoc imports them by name, which the recorder's
    #: import hooks do not see: autodoc holds its own reference to ``import_module``).
    modules: set[str] = field(default_factory=set)
    #: The modules ``sphinx.ext.viewcode`` looked at (see :mod:`.viewcode`).
    viewcode: set[str] = field(default_factory=set)


_reading: _Reading | None = None


def read_again(app: Sphinx, env: BuildEnvironment, docnames: list[str]) -> None:
    """Read ``docnames`` again, in this order, while Sphinx updates the environment: each
    purged by every extension and cleared first, as Sphinx does for a changed document,
    so that a page read again leaves no trace of its earlier reading."""
    for docname in docnames:
        app.emit("env-purge-doc", env, docname)
        env.clear_doc(docname)
    for docname in docnames:
        app.builder.read_doc(docname)


def on_source_read(app: Sphinx, docname: str, source: list[str]) -> None:
    global _reading
    build = current(app)
    if build is None or not build.restored.usable:
        return
    _reading = _Reading(docname)
    note_document(app, build, "read", docname)
    project = build.project
    Recorder.get().start(project.roots, project.excluded)


def on_viewcode_find_source(app: Sphinx, modname: str) -> None:
    """``viewcode-find-source``, asked for every module viewcode looks at: noted, and no
    answer given (the other handlers, then viewcode, find it)."""
    reading = _reading
    if reading is not None and reading.docname == app.env.docname:
        reading.viewcode.add(modname)


def _note_object(app: Sphinx, name: str, obj: Any) -> None:
    reading = _reading
    if reading is None or current(app) is None or id(obj) in reading.seen_objects:
        return
    reading.seen_objects.add(id(obj))
    project = current(app).project
    reading.modules.add(module_of(obj) or "")
    parts = name.replace("::", ".").split(".")
    for cut in range(len(parts), 0, -1):
        if ".".join(parts[:cut]) in sys.modules:
            reading.modules.add(".".join(parts[:cut]))
            break
    found = definitions(obj, name)
    for definition in found:
        if project.owns_module(definition.file, definition.module):
            reading.shown.add((definition.file, definition.qualname))
        else:
            top = (module_of(obj) or "").partition(".")[0]
            if top:
                reading.outside.add(top)
    if not found:
        top = (module_of(obj) or name).partition(".")[0]
        reading.outside.add(top)
    # An object a library defines (a method a project class inherits from
    # ``collections.abc.Mapping``) shows the library's docstring: its version counts.
    if found and project.owns_module(found[0].file, found[0].module) and is_dynamic(obj, found):
        reading.dynamic = True


def on_autodoc_docstring(
    app: Sphinx, what: str, name: str, obj: Any, options: Any, lines: list[str]
) -> None:
    _note_object(app, name, obj)


def on_autodoc_signature(
    app: Sphinx, what: str, name: str, obj: Any, options: Any, signature: Any, annotation: Any
) -> None:
    _note_object(app, name, obj)


def _node_sources(doctree: nodes.document) -> set[str]:
    """The files whose text the doctree holds (``include``, ``literalinclude``)."""
    found = set()
    for node in doctree.findall(nodes.Element):
        for source in (node.source, node.get("source")):
            if isinstance(source, str) and os.path.isabs(source):
                found.add(os.path.normpath(source))
    return found


def _file_of(module: Any) -> str | None:
    path = getattr(module, "__file__", None)
    if not isinstance(path, str) or not path:
        return None
    # Asked of every loaded module for each document read: an absolute path normalises
    # the same way every time (a relative one depends on the working folder).
    known = _normal.get(path)
    if known is None:
        known = os.path.normpath(os.path.abspath(path))
        if os.path.isabs(path):
            _normal[path] = known
    return known


#: ``{a module's absolute __file__: its normalised path}``.
_normal: dict[str, str] = {}


def _catalogs(app: Sphinx, docname: str) -> set[str]:
    """The message catalogs that would translate the document, there or not: Sphinx notes
    a document's catalog only when it finds one, so one added later reads it again."""
    config = app.config
    if not config.language or not getattr(app.builder, "use_message_catalog", False):
        return set()
    domain = docname_to_domain(docname, config.gettext_compact)
    srcdir = str(app.srcdir)
    return {
        os.path.normpath(os.path.join(srcdir, str(d), config.language, "LC_MESSAGES", domain))
        + ".po"
        for d in config.locale_dirs
    }


def _downloads(env: BuildEnvironment, docname: str) -> set[str]:
    """The files the document links for download (``:download:``, sphinx-gallery's
    ``.py``, ``.ipynb`` and ``.zip``): the page shows their names, never their bytes,
    and the builder copies every one of them on each build."""
    return _files_of(getattr(env, "dlfiles", {}), str(env.srcdir), docname)


def _images(env: BuildEnvironment, docname: str) -> set[str]:
    return _files_of(getattr(env, "images", {}), str(env.srcdir), docname)


def _files_of(table: Any, srcdir: str, docname: str) -> set[str]:
    """The files of Sphinx's ``{file: (docnames, unique name)}`` table ``docname`` uses."""
    found = set()
    for name, (docnames, _unique) in list(table.items()):
        if docname in docnames:
            found.add(os.path.normpath(os.path.join(srcdir, str(name))))
    return found


def on_doctree_read(app: Sphinx, doctree: nodes.document) -> None:
    global _reading
    build = current(app)
    reading, _reading = _reading, None
    if build is None or reading is None or reading.docname != app.env.docname:
        if reading is not None:
            Recorder.get().stop()
        return
    seen = Recorder.get().stop()
    build.current_doc = None
    env = app.env
    try:
        record = _record(app, build, env, doctree, reading, seen)
    except Exception as exc:  # never worth the build: the page is read again next time
        record = empty_record(build.restored.place.key(str(env.doc2path(reading.docname))))
        record["reread"] = f"its dependencies could not be recorded ({exc!r})"
        record["run"] = build.run
    pages_of(env)[reading.docname] = record


def on_env_updated(app: Sphinx, env: BuildEnvironment) -> list[str]:
    """The reading is over: a read that failed before ``doctree-read`` stops recording."""
    global _reading
    if _reading is not None:
        _reading = None
        Recorder.get().stop()
    return []


def _record(
    app: Sphinx,
    build: IncrementalBuild,
    env: BuildEnvironment,
    doctree: nodes.document,
    reading: _Reading,
    seen: Any,
) -> dict[str, Any]:
    docname = reading.docname
    source = os.path.normpath(str(env.doc2path(docname)))
    place, project = build.restored.place, build.project
    record = empty_record(place.key(source))
    record["run"] = build.run
    loaded = python_sources()
    # viewcode links an object when its module defines it (a def or class): that is code.
    named = set(seen.modules) | reading.modules | reading.viewcode
    if reading.dynamic:
        # A docstring made at run time may come from any project module loaded.
        named |= {n for n, m in list(sys.modules.items()) if project.owns_module(_file_of(m), n)}
    ours, theirs = module_closure(named, project)
    seen.modules = set()  # the modules are followed above; collect keeps files and listings
    deps = collect(seen, project, source, "module")
    included = _node_sources(doctree)
    whole_sources = SOURCE_EXTENSIONS & set(app.extensions)
    files: set[str] = set()
    created: dict[str, str] = {}
    written = {os.path.normpath(p) for p in seen.written}
    modules: dict[str, dict[str, Any]] = {}
    module_files = set(ours.values())
    unknown = sorted(module_files & seen.unknown_reads)
    if unknown:
        # What those modules read when conf.py imported them is unknown: in doubt, read it.
        env.reread_always.add(docname)
        record["reread"] = (
            f"read again in every build: what {project.relative(unknown[0])} read when"
            " conf.py imported it is unknown (the log says why)"
        )
    for path in sorted(module_files - included):
        modules[place.key(path)] = {"shown": [], "whole": False}
    candidates = [project.absolute(key) for key in deps.files]
    # What the modules' code read when it ran before this read (importing them while
    # autosummary generated the pages, a data file a module body reads).
    for path in sorted(module_files):
        candidates += sorted(seen.carried_reads.get(path, ()))
    opened = set(candidates)
    candidates += sorted(_catalogs(app, docname))
    # Relative to the source folder before Sphinx 8, absolute since (as Sphinx joins them).
    srcdir = str(env.srcdir)
    candidates += [
        os.path.normpath(os.path.join(srcdir, str(p))) for p in env.dependencies.get(docname, ())
    ]
    linked = _downloads(env, docname) - opened - included - _images(env, docname)
    downloads: set[str] = set()
    for path in candidates:
        if path == source or (path in module_files and path not in included):
            continue
        if path in written or _made_while_reading(path, build):
            with contextlib.suppress(OSError):
                created[place.key(path)] = file_digest(path)
            continue
        if path in loaded and not project.owns_module(path, loaded[path]):
            continue  # a library's module: its distribution's version stands for it
        (downloads if path in linked else files).add(place.key(path))
    for path, qualname in sorted(reading.shown):
        use = modules.setdefault(place.key(path), {"shown": [], "whole": False})
        use["shown"].append(qualname)
        use["whole"] = use["whole"] or bool(whole_sources) or path in included
    for use in modules.values():
        use["shown"] = sorted(set(use["shown"]))
    record["files"] = sorted(files - set(modules))
    record["downloads"] = sorted(downloads - files - set(modules))
    record["created"] = dict(sorted(created.items()))
    record["modules"] = dict(sorted(modules.items()))
    record["dynamic"] = reading.dynamic
    dists = set(distribution_versions(theirs | reading.outside))
    record["dists"] = sorted(dists)
    record["absent"] = absent_modules(seen, module_files)
    listings = listing_deps(seen, project, module_files)
    record["listings"] = {name: listing.to_json() for name, listing in listings.items()}
    record.update(exports.references(doctree, docname))
    if reading.viewcode:
        record[viewcode.KEY] = sorted(reading.viewcode)
        record[viewcode.SHOWN] = viewcode.shown_objects(doctree)
    return record


def _made_while_reading(path: str, build: IncrementalBuild) -> bool:
    """Whether the file was written since the documents began to be read: by the read of
    another document (sphinx-gallery's empty "examples using" files), not an input the
    build was given."""
    try:
        return os.stat(path).st_mtime_ns >= build.reading.started_ns > 0
    except OSError:
        return False


def on_purge_doc(app: Sphinx, env: BuildEnvironment, docname: str) -> None:
    pages_of(env).pop(docname, None)


def on_merge_info(
    app: Sphinx, env: BuildEnvironment, docnames: set[str], other: BuildEnvironment
) -> None:
    theirs = pages_of(other)
    mine = pages_of(env)
    for docname in docnames:
        if docname in theirs:
            mine[docname] = theirs[docname]
    build = current(app)
    if build is not None:
        assign_chunk(app, build, docnames)
