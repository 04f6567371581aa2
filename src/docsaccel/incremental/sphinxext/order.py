"""What the documents put in the environment, in the order a clean build puts it there.

The design, in full: the caching guide's *Design* section.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment

from docsaccel.incremental.sphinxext.state_build import current

__all__ = [
    "before_writing",
    "document_of",
    "in_document_order",
    "on_before_read_docs",
    "on_env_updated",
]


def document_of(value: Any, docnames: Mapping[str, int]) -> str | None:
    """The document a domain's value names (``docname`` or ``(docname, ...)``), else None."""
    if isinstance(value, tuple) and value:
        value = value[0]
    return value if isinstance(value, str) and value in docnames else None


def in_document_order(
    data: dict[Any, Any], docnames: Mapping[str, int], initial: Iterable[Any] = ()
) -> bool:
    """Put ``data`` in the order of ``docnames`` (``{docname: position}``), in place, when
    its keys are documents or its values each name theirs (but the keys of the domain's
    initial data, first in every build); whether it had that shape."""
    first = set(initial)
    if all(isinstance(k, str) and k in docnames for k in data):
        position = {k: docnames[k] for k in data}
    else:
        position = {}
        for key, value in data.items():
            docname = document_of(value, docnames)
            if docname is not None:
                position[key] = docnames[docname]
            elif key in first:
                position[key] = -1
            else:
                return False  # a shape this does not know: left as it is
    # Stable: a document's own entries keep their order.
    ordered = sorted(data.items(), key=lambda item: position[item[0]])
    if [k for k, _ in ordered] != list(data):
        data.clear()
        data.update(ordered)
    return True


def _positions(docnames: Iterable[str]) -> dict[str, int]:
    return {d: i for i, d in enumerate(sorted(docnames))}


def on_env_updated(app: Sphinx, env: BuildEnvironment) -> list[str]:
    """Every domain's document-keyed data in the documents' sorted order."""
    docnames = _positions(env.all_docs)
    for domain in env.domains.values():
        for name, value in domain.data.items():
            if isinstance(value, dict):
                initial = domain.initial_data.get(name)
                in_document_order(value, docnames, initial if isinstance(initial, dict) else ())
    return []


def on_before_read_docs(app: Sphinx, env: BuildEnvironment, docnames: list[str]) -> None:
    """A restored environment without what the documents to read put there, before the
    first is read (as in a parallel read, and a clean build, which has none of it).

    A serial read purges each document just before reading it: the first read would meet
    the stale entries of one read after it (and warn of a duplicate a clean build reports
    on the other document)."""
    build = current(app)
    if build is None or not build.restored.origin:
        return
    for docname in docnames:
        if docname in env.all_docs:
            app.emit("env-purge-doc", env, docname)
            env.clear_doc(docname)


def before_writing(env: BuildEnvironment) -> None:
    """The search index's index entries as a clean build writes them: a place for every
    page's in the documents' order (the pages written fill theirs in where they stand)."""
    entries = getattr(env, "_search_index_index_entries", None)
    if isinstance(entries, dict):
        kept = {d: entries.get(d, []) for d in sorted(env.found_docs)}
        entries.clear()
        entries.update(kept)
