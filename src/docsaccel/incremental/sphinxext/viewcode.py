"""``sphinx.ext.viewcode``'s module pages as a clean build of the same tree has them.

The design, in full: the caching guide's *Design* section.
"""

from __future__ import annotations

import contextlib
import posixpath
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.pycode import ModuleAnalyzer

from docsaccel.incremental.sphinxext.sphinx_compat import reads_in_parallel
from docsaccel.incremental.sphinxext.state_build import IncrementalBuild, current, pages_of

__all__ = [
    "EXTENSION",
    "KEY",
    "SHOWN",
    "kept_without_objects",
    "links",
    "on_env_updated",
    "outdated_pages",
    "refresh_sources",
    "shown_objects",
    "stale_pages",
]

EXTENSION = "sphinx.ext.viewcode"
#: The page record's key of the modules viewcode looked at while the document was read.
KEY = "viewcode"
#: The page record's key of the objects viewcode links the document's page to.
SHOWN = "viewcode_shown"
#: Where viewcode writes its pages (``sphinx.ext.viewcode.OUTPUT_DIRNAME``).
FOLDER = "_modules"


def shown_objects(doctree: nodes.Node) -> list[list[str]]:
    """``[[module, object, name of the documenting module]]`` of the anchors viewcode put
    in ``doctree`` as it was read, in its order."""
    from sphinx.ext.viewcode import viewcode_anchor

    found = []
    prefix = f"{FOLDER}/"
    for anchor in doctree.findall(viewcode_anchor):
        target, fullname = str(anchor.get("reftarget", "")), anchor.get("refid")
        if not target.startswith(prefix) or not isinstance(fullname, str):
            continue
        refname = anchor.parent.get("module") if anchor.parent is not None else None
        module = target[len(prefix) :].replace("/", ".")
        found.append([module, fullname, str(refname or module)])
    return found


def _shown_in_order(records: dict[str, Any], found: list[str]) -> tuple[dict, dict]:
    """``({module: {object: document}}, {module: anchor name})`` as a clean serial build
    makes them: the last document showing an object links it, the first names it."""
    used: dict[str, dict[str, str]] = {}
    refnames: dict[str, str] = {}
    for docname in found:
        for module, fullname, refname in (records.get(docname) or {}).get(SHOWN, ()):
            used.setdefault(module, {})[fullname] = docname
            refnames.setdefault(module, refname)
    return used, refnames


def kept_without_objects(app: Sphinx, env: BuildEnvironment) -> set[str]:
    """The modules a clean build of this tree keeps an entry for even with no object."""
    records = pages_of(env)
    found = sorted(env.found_docs)
    if reads_in_parallel(app, len(found)):
        return {m for d in found for m in (records.get(d) or {}).get(KEY, ())}
    return set((records.get(found[-1]) or {}).get(KEY, ())) if found else set()


def _code_and_tags(app: Sphinx, modname: str, known: Any = None) -> tuple[str, Any] | None:
    """``(code, tags)`` of a module as viewcode's ``has_tag`` finds them now: from a
    ``viewcode-find-source`` handler, else from its source; ``None``: no source.

    ``known``: an entry whose tags still serve when its code is the module's (finding the
    tags parses the module; reading its source does not)."""
    found = app.events.emit_firstresult("viewcode-find-source", modname)
    if found is not None:
        return found[0], found[1]
    try:
        analyzer = ModuleAnalyzer.for_module(modname)
        if known and analyzer.code == known[0]:
            return known[0], known[1]
        analyzer.find_tags()
    except Exception:
        return None
    return analyzer.code, analyzer.tags


def _entry(app: Sphinx, modname: str) -> Any:
    """A module's entry with no object, as viewcode makes it (``False``: no source)."""
    found = _code_and_tags(app, modname)
    if found is None:
        return False
    code, tags = found
    return code, tags, {}, modname


def _page_file(app: Sphinx, modname: str) -> Path | None:
    """The file viewcode compares the module's modification time with before writing its
    page (``should_generate_module_page``); ``None``: a builder with no pages."""
    suffix = getattr(app.builder, "out_suffix", None)
    if not isinstance(suffix, str):
        return None
    return Path(app.outdir, FOLDER, modname.replace(".", "/") + suffix)


def refresh_sources(app: Sphinx, modules: dict[str, Any]) -> list[str]:
    """Every module entry whose code is not the module's any more made again from its
    source, as viewcode makes it; the module names refreshed.

    An edit of a module reads again only the pages showing what changed (a docstring: the
    pages showing its object; a comment between objects: the module's own pages, where
    viewcode looks at nothing), and with ``-j N`` viewcode's merge keeps the main
    process's entry over the fresh one of the process that read a page. So nothing else
    brings the entry up to date: its ``_modules`` page would show the old code, its
    ``[docs]`` links at the old lines. The objects kept
    are those the new code still defines; their documents and anchor name do not depend on
    the code. The refreshed modules' pages are deleted: viewcode writes a module's page
    again only when there is none or the module's file is newer than it, and a file
    keeps the time it had in a copy that kept times (``cp -p``, an archive).
    """
    refreshed = []
    for modname, entry in list(modules.items()):
        if not entry:
            continue  # no source: viewcode writes no page
        found = _code_and_tags(app, modname, entry)
        if found is None or found[0] == entry[0]:
            continue
        code, tags = found
        used = {name: docname for name, docname in entry[2].items() if name in tags}
        modules[modname] = (code, tags, used, entry[3])
        refreshed.append(modname)
        page = _page_file(app, modname)
        if page is not None:
            with contextlib.suppress(OSError):
                page.unlink(missing_ok=True)
    return refreshed


def on_env_updated(app: Sphinx, env: BuildEnvironment) -> list[str]:
    build = current(app)
    modules = getattr(env, "_viewcode_modules", None)
    if build is None or not build.restored.origin or not isinstance(modules, dict):
        return []  # a build that read every document is the clean build
    refresh_sources(app, modules)
    found = sorted(env.found_docs)
    if not reads_in_parallel(app, len(found)):
        used, refnames = _shown_in_order(pages_of(env), found)
        for modname, entry in list(modules.items()):
            if entry and modname not in used:
                entry[2].clear()  # no document shows an object of it (any more)
        for modname, objects in used.items():
            entry = modules.get(modname)
            if entry is None:
                entry = _entry(app, modname)
            if not entry:
                modules[modname] = False
                continue
            code, tags = entry[0], entry[1]
            shown = {name: docname for name, docname in objects.items() if name in tags}
            modules[modname] = (code, tags, shown, refnames[modname])
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
        if path not in wanted and build.restored.left_as_it_was(path)
    }


def links(env: BuildEnvironment) -> dict[str, Any]:
    """``{module: (its objects' documents, anchor name)}``: what of a module's page the
    documents make (its ``[docs]`` links)."""
    modules = getattr(env, "_viewcode_modules", None)
    if not isinstance(modules, dict):
        return {}
    return {m: (sorted(e[2].items()), e[3]) for m, e in modules.items() if e}


def outdated_pages(app: Sphinx, build: IncrementalBuild) -> list[Path]:
    """Remove, for viewcode to write them again, the module pages whose links changed in
    this build, or every one when every page is written; the pages removed."""
    if EXTENSION not in app.extensions:
        return []
    now = links(app.env)
    before = build.reading.viewcode_before
    changed = [
        m for m in now if build.writing.every_page or before is None or before.get(m) != now[m]
    ]
    removed = []
    for modname in changed:
        page = _page_file(app, modname)
        if page is not None and page.is_file():
            with contextlib.suppress(OSError):
                page.unlink()
                removed.append(page)
    return removed
