"""Which pages are written: those whose HTML would change, decided by content.

The design, in full: the caching guide's *Design* section.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from sphinx.application import Sphinx
from sphinx.builders.html import StandaloneHTMLBuilder
from sphinx.environment import BuildEnvironment
from sphinx.util import logging

from docsaccel import sg_compat
from docsaccel.cache.fingerprint import file_digest
from docsaccel.formats import context_key
from docsaccel.incremental.pages import Checker, Place, Tables
from docsaccel.incremental.sphinxext import assets, exports, order, viewcode
from docsaccel.incremental.sphinxext.sphinx_compat import (
    builder_pages,
    source_suffix,
    watch_site_copies,
)
from docsaccel.incremental.sphinxext.state_build import (
    TABLES_ATTR,
    IncrementalBuild,
    current,
    pages_of,
)

__all__ = [
    "builder_page_files",
    "filled_late_pages",
    "index_entries",
    "install",
    "linked_files",
    "on_collect_pages",
    "on_doctree_resolved",
    "on_doctree_resolved_last",
    "on_env_get_updated",
    "on_page_context",
    "on_write_started",
    "page_links",
    "page_outputs",
    "remove_stale",
    "restore_index_entries",
    "setting_text",
    "site_files",
    "sphinx_files",
    "write_context",
]

logger = logging.getLogger(__name__)
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
#: The folder of ``templates_path`` autosummary takes its templates from.
AUTOSUMMARY_TEMPLATES = "autosummary"
LOGGED = 50


def setting_text(value: Any, root: str) -> str:
    """A setting's value as text that is the same in every process and checkout."""
    if isinstance(value, dict):
        items = sorted((setting_text(k, root), setting_text(v, root)) for k, v in value.items())
        return "{" + ", ".join(f"{k}: {v}" for k, v in items) + "}"
    if isinstance(value, (set, frozenset)):
        return "{" + ", ".join(sorted(setting_text(v, root) for v in value)) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(setting_text(v, root) for v in value) + "]"
    if callable(value) and hasattr(value, "__qualname__"):
        return f"{getattr(value, '__module__', '?')}.{value.__qualname__}"
    text = repr(value) if not isinstance(value, str) else value
    return _anchored(_ADDRESS.sub("", text), root)


def _anchored(text: str, root: str) -> str:
    """``text`` with the root, and the folders just above it, written relative to the
    root (:meth:`.Place.anchors`): the same in a checkout that moved."""
    for path, key in Place(root).anchors():
        name = "<root>" if key == "." else f"<root>/{key}"
        text = re.sub(re.escape(path) + r"(?![\w.-])", lambda _m, n=name: n, text)
    return text


def _files(folders: Iterable[str | os.PathLike[str]]) -> list[str]:
    found = []
    for folder in folders:
        path = Path(folder)
        if path.is_file():
            found.append(str(path))
        elif path.is_dir():
            found += sorted(str(p) for p in path.rglob("*") if p.is_file())
    return found


def write_context(app: Sphinx, build: IncrementalBuild) -> dict[str, Any]:
    """``{"config": {name: digest}, "files": {key: digest}, "tags": digest}`` of what
    every page is written with (see the caching guide's design)."""
    root = build.restored.place.root
    config = {}
    for item in app.config.filter(frozenset({"html"})):
        value = item.value
        if item.name == "sphinx_gallery_conf" and isinstance(value, dict):
            value = sg_compat.settings_of_pages(value)
        config[item.name] = context_key({"v": setting_text(value, root)})
    confdir = Path(app.confdir)
    theme = getattr(app.builder, "theme", None)
    folders: list[Any] = list(theme.get_theme_dirs()) if theme is not None else []
    folders += [confdir / p for p in app.config.templates_path]
    folders += [confdir / p for p in app.config.html_static_path]
    files = {}
    for path in _files(folders):
        if AUTOSUMMARY_TEMPLATES in Path(path).parts:
            continue  # they make sources (autosummary's pages), counted as sources
        with contextlib.suppress(OSError):
            files[build.restored.place.key(path)] = file_digest(path)
    return {"config": config, "files": files, "tags": context_key({"t": sorted(app.tags)})}


def _context_change(before: dict[str, Any], now: dict[str, Any]) -> str | None:
    if not before:
        return "the last build kept no record of how its pages were written"
    old, new = before.get("config") or {}, now["config"]
    keys = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    if keys:
        return f"{', '.join(keys[:3])} changed"
    if before.get("tags") != now["tags"]:
        return "the tags changed"
    old, new = before.get("files") or {}, now["files"]
    paths = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    if paths:
        more = f" (and {len(paths) - 1} more)" if len(paths) > 1 else ""
        how = "changed" if paths[0] in old and paths[0] in new else "added or removed"
        return f"{paths[0]} {how}{more}"
    return None


def install(app: Sphinx) -> None:
    """``builder-inited``: note the write context; with a state, decide the pages by content."""
    build = current(app)
    if build is None or not build.pages or not isinstance(app.builder, StandaloneHTMLBuilder):
        return
    build.writing.context = write_context(app, build)
    build.writing.site_copies = watch_site_copies(app.builder)
    assets.watch(app, build)
    if not build.restored.origin:
        return
    builder = app.builder
    why = _context_change(build.restored.previous.write, build.writing.context)
    warned = set(build.restored.previous.warned_write)

    def get_outdated_docs() -> list[str]:
        env = builder.env
        if why:
            build.writing.every_page = why
            logger.info(f"docsaccel: every page: {why}")
            return sorted(env.found_docs)
        pages = []
        for docname in sorted(env.found_docs & set(env.all_docs)):
            if not Path(builder.get_outfilename(docname)).is_file():
                build.writing.reasons[docname] = "its page is missing"
            elif docname in warned or "*" in warned:
                build.writing.reasons[docname] = "it warned when last written"
            elif docname in build.restored.moved_pages:
                build.writing.reasons[docname] = (
                    "its page shows a path of the checkout, which moved"
                )
            else:
                continue
            pages.append(docname)
        return pages

    builder.get_outdated_docs = get_outdated_docs  # type: ignore[method-assign]


def _ancestors(env: BuildEnvironment, docnames: Iterable[str]) -> set[str]:
    """The documents whose toctrees show ``docnames``, all the way up."""
    found: set[str] = set()
    queue = list(docnames)
    while queue:
        for parent in env.files_to_rebuild.get(queue.pop(), ()):
            if parent not in found:
                found.add(parent)
                queue.append(parent)
    return found


def _forget_edited(tables: Tables, build: IncrementalBuild) -> None:
    """Leave out of the state the digests of inputs edited while this build ran (what the
    build read may be the old content), so the documents using them are read again by the
    next build; one warning names them."""
    edited = tables.forget_edited(
        build.restored.place, build.restored.started_ns, build.reading.started_ns
    )
    if edited:
        more = f" (and {len(edited) - 1} more)" if len(edited) > 1 else ""
        logger.warning(
            f"docsaccel: {edited[0]}{more} changed while the build ran: the pages using it"
            " may show its old content; the next build reads them again",
            type="docsaccel",
            subtype="cache",
        )


def on_env_get_updated(app: Sphinx, env: BuildEnvironment) -> list[str]:
    build = current(app)
    if build is None:
        return []
    records = pages_of(env)
    checker = build.reading.checker or Checker(
        Tables.from_json(getattr(env, TABLES_ATTR, None)), build.restored.place.root
    )
    # Pickled with the environment right after this event: the next build checks against it.
    tables = checker.current_tables(records.values())
    _forget_edited(tables, build)
    setattr(env, TABLES_ATTR, tables.to_json())
    build.reading.intersphinx = exports.intersphinx_digest(env)
    if not build.restored.origin or not build.pages:
        return []
    read = {d for d, r in records.items() if r.get("run") == build.run}
    try:
        return sorted(_pages_to_write(app, env, build, read, records))
    except Exception as exc:  # when in doubt, write every page: never a crash, never stale
        logger.warning(
            f"docsaccel: cannot tell which pages changed ({exc!r}); every page is written",
            type="docsaccel",
            subtype="cache",
        )
        build.writing.every_page = "what changed could not be told"
        return sorted(env.found_docs - read)


def _pages_to_write(
    app: Sphinx,
    env: BuildEnvironment,
    build: IncrementalBuild,
    read: set[str],
    records: dict[str, dict[str, Any]],
) -> set[str]:
    found = env.found_docs
    now = exports.navigation(env, app.config.root_doc)[1]
    if now != build.reading.navigation_before:
        build.writing.every_page = exports.describe_navigation(build.reading.navigation_before, now)
        logger.info(f"docsaccel: every page: {build.writing.every_page}")
        return set(found) - read
    after = exports.offers(env, read)
    before = {d: v for d, v in build.reading.exports_before.items() if d in read or d not in found}
    keys = exports.changed_keys(before, after)
    shown = {d for d in set(before) | set(after) if {f"doc:{d}", f"toc:{d}"} & keys}
    up = _ancestors(env, shown)
    domains = exports.domain_digests(env)
    changed_domains = {
        name
        for name in set(domains) | set(build.reading.domains_before)
        if domains.get(name) is None or domains.get(name) != build.reading.domains_before.get(name)
    }
    numbers = exports.numbers_digest(env) != build.reading.numbers_before
    inventories = build.reading.intersphinx != build.restored.previous.intersphinx
    late = build.restored.previous.filled_late
    others = bool(read) or any(d not in found for d in build.restored.previous.outputs)
    dirty: dict[str, str] = {}
    for docname in sorted(found - read):
        record = records.get(docname)
        if record is None:
            dirty[docname] = "no recorded dependencies"
            continue
        refs = set(record.get("refs", ()))
        hit = sorted(refs & keys)
        if hit:
            dirty[docname] = f"what its reference {hit[0].split(':', 1)[1]!r} resolves to changed"
        elif docname in up:
            dirty[docname] = "a title or section its toctree shows changed"
        elif set(record.get("domains", ())) & changed_domains:
            dirty[docname] = "the data of a domain it refers to changed"
        elif numbers and record.get("numref"):
            dirty[docname] = "figure or section numbers changed"
        elif inventories and refs:
            dirty[docname] = "the intersphinx inventories changed"
        elif others and late.get(docname):
            name = late[docname][0].rsplit(".", 1)[-1]
            dirty[docname] = f"an extension fills its {name} from other documents"
    build.writing.reasons.update(dirty)
    for docname in list(dirty)[:LOGGED]:
        logger.info(f"docsaccel: {docname} (page written): {dirty[docname]}")
    return set(dirty)


def on_write_started(app: Sphinx, builder: Any) -> None:
    """Sphinx writes the toctree parents of every page it writes; the rule above already
    adds those whose output changes."""
    build = current(app)
    build_phase(build, "write")
    if build is None or not build.restored.origin or not build.pages:
        return
    build.writing.files_to_rebuild = app.env.files_to_rebuild
    app.env.files_to_rebuild = {}
    restore_index_entries(app.env, build.restored.previous.index_entries)
    order.before_writing(app.env)


def index_entries(env: BuildEnvironment) -> dict[str, list[list[Any]]] | None:
    """The index entries of every page, for the record of the last build
    (:attr:`.last_build.LastBuild.index_entries`): Sphinx's search index takes them from
    the environment, which is pickled before any page is written, so they are empty in a
    restored one (and in Sphinx's own next build: only the pages it writes keep theirs)."""
    entries = getattr(env, "_search_index_index_entries", None)
    if not isinstance(entries, dict):
        return None
    return {d: [list(e) for e in v] for d, v in sorted(entries.items()) if d in env.found_docs}


def restore_index_entries(env: BuildEnvironment, kept: Any) -> None:
    """The kept entries of the pages not written, none of removed pages (idempotent)."""
    entries = getattr(env, "_search_index_index_entries", None)
    if not isinstance(entries, dict):
        return
    for docname in list(entries):
        if docname not in env.found_docs:
            del entries[docname]  # a removed page: no longer in the index
    if isinstance(kept, dict):
        for docname, items in kept.items():
            if docname in env.found_docs and docname not in entries:
                entries[docname] = [tuple(item) for item in items]


def build_phase(build: IncrementalBuild | None, phase: str) -> None:
    if build is not None:
        build.phase, build.current_doc = phase, None


def restore_files_to_rebuild(app: Sphinx, build: IncrementalBuild) -> None:
    if build.writing.files_to_rebuild is not None:
        app.env.files_to_rebuild = build.writing.files_to_rebuild
        build.writing.files_to_rebuild = None


def on_collect_pages(app: Sphinx) -> list[Any]:
    """Before the search index is written: drop the words no page holds any more; the
    module pages viewcode must write again removed (:func:`.viewcode.outdated_pages`).

    Sphinx's search index starts from the last one and removes the pages it writes again
    from each word, but keeps a word left with no page (a clean build has no such word).
    """
    build = current(app)
    if build is not None and build.restored.origin:
        # Before viewcode's generator of module pages runs (Sphinx calls every handler
        # of html-collect-pages before it takes their pages).
        viewcode.outdated_pages(app, build)
    indexer = getattr(app.builder, "indexer", None)
    if build is None or not build.restored.origin or indexer is None:
        return []
    indexer.prune(app.env.all_docs)
    for name in ("_mapping", "_title_mapping"):
        mapping = getattr(indexer, name, None)
        if isinstance(mapping, dict):
            for word in [w for w, pages in mapping.items() if not pages]:
                del mapping[word]
    return []


def on_doctree_resolved(app: Sphinx, doctree: Any, docname: str) -> None:
    build = current(app)
    if build is not None and docname in app.env.found_docs:
        build.writing.written.add(docname)
        build.phase, build.current_doc = "write", docname


def on_doctree_resolved_last(app: Sphinx, doctree: Any, docname: str) -> None:
    """After every extension's handler: which of the page's placeholders were filled."""
    build = current(app)
    if build is not None and docname in app.env.found_docs:
        read = pages_of(app.env).get(docname, {}).get("placeholders")
        build.writing.filled_late[docname] = exports.filled_late(read or {}, doctree)


def filled_late_pages(app: Sphinx, build: IncrementalBuild) -> dict[str, list[str]]:
    """``{docname: classes}`` of the pages whose placeholders an extension filled when
    they were written (:func:`.exports.filled_late`): found when written this build, as
    the last build found them otherwise."""
    found = app.env.found_docs
    before = build.restored.previous.filled_late
    kept = {d: v for d, v in before.items() if d in found and d not in build.writing.filled_late}
    kept.update({d: v for d, v in build.writing.filled_late.items() if v})
    return dict(sorted(kept.items()))


def on_page_context(app: Sphinx, pagename: str, *args: Any) -> None:
    build = current(app)
    if build is None:
        return
    if pagename not in app.env.found_docs:
        build.writing.other_pages.add(pagename)
    if build.phase == "write":
        build.current_doc = pagename if pagename in app.env.found_docs else None


def builder_page_files(app: Sphinx, build: IncrementalBuild) -> dict[str, str]:
    """``{page: file}`` of the pages the HTML builder wrote besides the documents' this
    build (:func:`.sphinx_compat.builder_pages`); those of the build before when it
    wrote none (a build with no page to write, before Sphinx 8)."""
    if not build.writing.other_pages:
        return dict(build.restored.previous.builder_pages)
    return builder_pages(app, build.writing.other_pages)


def page_outputs(app: Sphinx) -> dict[str, list[str]]:
    """``{docname: files relative to the output folder}`` a page builder writes for each
    document (its page and its copied source)."""
    builder, env = app.builder, app.env
    outdir = Path(app.outdir)
    found: dict[str, list[str]] = {}
    for docname in sorted(env.found_docs):
        files = [Path(builder.get_outfilename(docname))]
        if getattr(builder, "copysource", False) and app.config.html_copy_source:
            suffix = source_suffix(env, docname)
            name = docname + suffix
            if suffix != app.config.html_sourcelink_suffix:
                name += app.config.html_sourcelink_suffix
            files.append(outdir / "_sources" / name)
        found[docname] = [os.path.relpath(f, outdir).replace(os.sep, "/") for f in files]
    return found


def sphinx_files(env: Any) -> list[str]:
    """The images and downloads Sphinx copies into the output folder for its pages
    (relative to it, posix)."""
    images = {f"_images/{Path(dest).as_posix()}" for _, dest in env.images.values()}
    downloads = {f"_downloads/{Path(dest).as_posix()}" for _, dest in env.dlfiles.values()}
    return sorted(images | downloads)


#: The attributes of an HTML page that name a file it shows or offers.
_LINK = re.compile(r"""\b(?:src|href|srcset|data|poster)\s*=\s*(?:"([^"]*)"|'([^']*)')""")
#: Folders of the output Sphinx fills anew in every build (theme and static files, the
#: sources of pages): not files an extension copied for one page.
_EVERY_BUILD = ("_static/", "_sources/")


def page_links(page: Path, outdir: Path, pages: set[str]) -> list[str]:
    """The files of the output folder (relative to it, posix) that ``page`` links to,
    other than pages and :data:`_EVERY_BUILD`'s."""
    try:
        html = page.read_text("utf-8", errors="replace")
    except OSError:
        return []
    found: set[str] = set()
    for match in _LINK.finditer(html):
        value = match.group(1) if match.group(1) is not None else match.group(2)
        for candidate in value.split(","):  # a srcset: "a.png, b.png 2x"
            parts = urlsplit(candidate.strip().split(" ")[0])
            if parts.scheme or parts.netloc or not parts.path:
                continue
            target = os.path.normpath(os.path.join(page.parent, unquote(parts.path)))
            relative = os.path.relpath(target, outdir).replace(os.sep, "/")
            if relative.startswith("../") or relative in pages:
                continue
            if not relative.startswith(_EVERY_BUILD) and os.path.isfile(target):
                found.add(relative)
    return sorted(found)


def linked_files(
    app: Sphinx, build: IncrementalBuild, outputs: Mapping[str, list[str]]
) -> dict[str, list[str]]:
    """``{docname: files of the output folder its page links to}``, pages and what Sphinx
    copies in every build left out: what an extension copied for the page (sphinx-gallery's
    srcset images) is among them. The pages written in this build are read; the others
    are the restored ones, as the last build recorded them. ``outputs``: :func:`page_outputs`.
    """
    outdir = Path(app.outdir)
    pages = {f for files in outputs.values() for f in files}
    before = build.restored.previous.linked_files
    found: dict[str, list[str]] = {}
    for docname, files in outputs.items():
        kept = before.get(docname)
        if docname in build.writing.written or not isinstance(kept, list):
            kept = page_links(outdir / files[0], outdir, pages)
        found[docname] = kept
    return found


def remove_stale(
    app: Sphinx,
    build: IncrementalBuild,
    linked: Mapping[str, list[str]],
    outputs: Mapping[str, list[str]],
) -> int:
    """Delete what a restored output folder holds that this build's site does not: the
    files of removed documents and those a document no longer has, the builder's pages it
    no longer writes, images and downloads no page uses, restored files no page links to
    any more (``linked``: :func:`linked_files`; ``outputs``: :func:`page_outputs`).
    Returns how many."""
    if not build.restored.origin or not build.pages:
        return 0
    outdir = Path(app.outdir)
    env = app.env
    stale: set[Path] = set()
    for docname, files in build.restored.previous.outputs.items():
        if docname not in env.found_docs:
            stale |= {outdir / f for f in files}
        else:  # a file it no longer has (html_copy_source off, another html_file_suffix)
            gone = set(files) - set(outputs.get(docname, ()))
            stale |= {outdir / f for f in gone if build.restored.left_as_it_was(outdir / f)}
    # A page the builder wrote last time and no longer writes there (html_domain_indices
    # off, an additional page removed, another html_file_suffix): only when it wrote its
    # pages this build.
    if build.writing.other_pages:
        now = builder_pages(app, build.writing.other_pages)
        for name, relative in build.restored.previous.builder_pages.items():
            path = outdir / relative
            if now.get(name) != relative and build.restored.left_as_it_was(path):
                stale.add(path)
    # Only what Sphinx itself copied last time and no page uses now: an extension copies
    # files there too while it writes a page (sphinx-gallery's srcset images), and a
    # restored page that was not written again still needs them.
    used = set(sphinx_files(env))
    copied_before = set(build.restored.previous.sphinx_files)
    for relative in copied_before - used:
        path = outdir / relative
        if build.restored.left_as_it_was(path):
            stale.add(path)
    # What an extension copied for a page that is gone or no longer links to it: only
    # when no page links to it now, and as restored (this build did not write it again).
    before = build.restored.previous.linked_files
    linked_before = {f for files in before.values() for f in files}
    linked_now = {f for files in linked.values() for f in files}
    for relative in linked_before - linked_now - used:
        path = outdir / relative
        if build.restored.left_as_it_was(path):
            stale.add(path)
    # A static or extra file the builder copied last time and no longer copies (removed
    # from html_static_path or html_extra_path, a former language's stemmer): only when
    # it made its copies this build.
    if build.writing.site_copies is not None and build.writing.site_copies.complete:
        copied_now = set(site_files(build, outdir))
        for relative in set(build.restored.previous.site_files) - copied_now - used - linked_now:
            path = outdir / relative
            if build.restored.left_as_it_was(path):
                stale.add(path)
    stale |= viewcode.stale_pages(app, build)
    for path in stale:
        with contextlib.suppress(OSError):
            path.unlink()
    remove_emptied(outdir, stale)
    return len(stale)


def remove_emptied(outdir: Path, removed: Iterable[Path]) -> None:
    """Remove the folders under ``outdir`` that deleting ``removed`` left empty, up to
    the first one still holding something: a clean build makes no folder for a file it
    does not write (``_downloads/<digest>/`` of a renamed example's download)."""
    top = Path(os.path.abspath(outdir))
    # The builder makes these whatever it writes into them (``_sources/`` stays, empty,
    # with ``html_copy_source`` off): a clean build has them.
    kept = {top / name.rstrip("/") for name in _EVERY_BUILD}
    for path in removed:
        folder = Path(os.path.abspath(path)).parent
        while folder != top and top in folder.parents and folder not in kept:
            try:
                folder.rmdir()
            except OSError:  # not empty (or gone): what is above it is not empty either
                break
            folder = folder.parent


def site_files(build: IncrementalBuild, outdir: Path) -> list[str]:
    """The static and extra files the builder copied into the output folder this build
    (relative to it, posix); those of the build before when it made none."""
    site = build.writing.site_copies
    if site is None or not site.complete:
        return sorted(build.restored.previous.site_files)
    found = set()
    for path in site.files:
        with contextlib.suppress(ValueError):
            found.add(Path(path).relative_to(outdir).as_posix())
    return sorted(found)
