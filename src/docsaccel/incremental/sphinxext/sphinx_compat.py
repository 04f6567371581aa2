"""The parts of Sphinx's internals the Sphinx state uses that differ between the Sphinx
releases docsaccel supports (7.4 to 9.0), in one place.

The design, in full: the caching guide's *Design* section.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sphinx.environment import BuildEnvironment
from sphinx.util.logging import NAMESPACE, MemoryHandler

__all__ = [
    "SiteCopies",
    "builder_pages",
    "domains_in_order",
    "held_warnings",
    "reads_in_parallel",
    "source_suffix",
    "standard_domain",
    "watch_site_copies",
]

#: The names a template asset loses when it is copied (``basic.css_t`` -> ``basic.css``).
_TEMPLATE_SUFFIXES = ("_t", ".jinja")


def domains_in_order(env: BuildEnvironment) -> list[Any]:
    """Every domain of the build, by name."""
    domains: Any = env.domains
    if hasattr(domains, "sorted"):
        return list(domains.sorted())
    return [domains[name] for name in sorted(domains)]


def standard_domain(env: BuildEnvironment) -> Any:
    """The ``std`` domain (labels, terms, documents)."""
    domain = getattr(env.domains, "standard_domain", None)
    return domain if domain is not None else env.get_domain("std")


#: The pages of Sphinx's HTML builder that are no document's, but the domain indices.
_BUILDER_PAGES = frozenset({"genindex", "genindex-all", "search", "opensearch"})


def builder_pages(app: Any, names: Iterable[str]) -> dict[str, str]:
    """``{page: file relative to the output folder (posix)}`` of those of ``names`` (pages
    written this build that are no document) the HTML builder itself writes."""
    builder, env = app.builder, app.env
    own = set(_BUILDER_PAGES) | set(getattr(app.config, "html_additional_pages", {}) or {})
    for domain in domains_in_order(env):
        own |= {f"{domain.name}-{index.name}" for index in getattr(domain, "indices", ())}
    found = {}
    for name in names:
        if name in env.found_docs or not (name in own or name.startswith("genindex-")):
            continue
        if name == "opensearch":
            found[name] = "_static/opensearch.xml"
            continue
        path = os.path.relpath(builder.get_outfilename(name), app.outdir)
        found[name] = path.replace(os.sep, "/")
    return dict(sorted(found.items()))


def reads_in_parallel(app: Any, count: int) -> bool:
    """Whether Sphinx reads ``count`` documents in parallel processes in this build.

    Asked of the extensions' declarations, as ``is_parallel_allowed`` does, without its
    warnings (which it gives when Sphinx asks)."""
    import sphinx
    from sphinx.util.parallel import parallel_available

    if not parallel_available or app.parallel <= 1 or count == 0:
        return False
    if sphinx.version_info < (8, 1) and count <= 5:
        return False
    return all(getattr(ext, "parallel_read_safe", None) for ext in app.extensions.values())


def source_suffix(env: BuildEnvironment, docname: str) -> str:
    """The suffix of a document's source file (``.rst``)."""
    return os.path.splitext(str(env.doc2path(docname, False)))[1]


class SiteCopies:
    """What the HTML builder's copies of static and extra files did in one build: the
    files they named as their destination (absolute, normalised: copied, or left as they
    were because the same file is there already, a restored one), and whether both ran
    (a build with no page to write skips them before Sphinx 8)."""

    def __init__(self) -> None:
        self.files: set[str] = set()
        self.ran: set[str] = set()

    @property
    def complete(self) -> bool:
        return self.ran == set(_SITE_COPIES)


_SITE_COPIES = ("copy_static_files", "copy_extra_files")


def watch_site_copies(builder: Any) -> SiteCopies:
    """Watch the HTML builder's copies of static and extra files (:class:`SiteCopies`):
    what a build's site holds of them, for the files a later build no longer copies."""
    import sphinx.builders.html as html_module
    import sphinx.util.fileutil as fileutil

    site = SiteCopies()
    copies = site.files

    def note(source: Any, destination: Any) -> None:
        dest = Path(destination)
        if dest.is_dir():
            dest = dest / Path(source).name
        copies.add(os.path.normpath(dest))
        for suffix in _TEMPLATE_SUFFIXES:
            if dest.name.endswith(suffix):
                copies.add(os.path.normpath(str(dest)[: -len(suffix)]))

    def watched(name: str, method: Any) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            site.ran.add(name)
            asset_file, copyfile = fileutil.copy_asset_file, html_module.copyfile

            def copy_asset_file(source: Any, destination: Any, *more: Any, **named: Any) -> Any:
                note(source, destination)
                return asset_file(source, destination, *more, **named)

            def copy(source: Any, destination: Any, *more: Any, **named: Any) -> Any:
                note(source, destination)
                return copyfile(source, destination, *more, **named)

            fileutil.copy_asset_file, html_module.copyfile = copy_asset_file, copy
            try:
                return method(*args, **kwargs)
            finally:
                fileutil.copy_asset_file, html_module.copyfile = asset_file, copyfile

        return run

    for name in _SITE_COPIES:
        method = getattr(builder, name, None)
        if method is not None:
            setattr(builder, name, watched(name, method))
    return site


def held_warnings() -> list[logging.LogRecord] | None:
    """The warnings Sphinx holds until the reading ends (its list: removing one drops it),
    or ``None`` when it holds none back (they are printed, or raise, as they come)."""
    for handler in logging.getLogger(NAMESPACE).handlers:
        if isinstance(handler, MemoryHandler):
            return handler.buffer
    return None
