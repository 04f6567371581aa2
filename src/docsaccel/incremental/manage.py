"""``docsaccel cache explain / stats / prune`` over a whole cache folder: the example
entries (:mod:`docsaccel.cache.manage`) and the Sphinx states beside them.

- ``explain`` of a document of the site (``api/pkg.stats.rst``, one a state holds) is
  :func:`docsaccel.incremental.explain.explain_document`; of anything else, an example's;
- ``stats`` adds a line for the states (a state naming a missing or damaged object is
  unusable: every object the states name is read to tell);
- ``prune`` prunes the states first, least recently used first, to at most the limit on
  their own (one state spares a whole build its reading), and the entries share what they
  leave.

Each returns ``(text, exit code)`` as :mod:`docsaccel.cache.manage` does; the CLI prints.

Example::

    text, code = prune(".docsaccel-cache", max_size="2G")
    text, code = explain("api/pkg.stats.rst", ".docsaccel-cache", docs="docs")
"""

from __future__ import annotations

import os
from pathlib import Path

from docsaccel.cache import manage
from docsaccel.incremental.explain import explain_document, find_document
from docsaccel.incremental.state import StateStore

__all__ = ["explain", "prune", "stats"]

Cache = str | os.PathLike[str]


def explain(thing: str, cache: Cache, docs: Cache = "docs") -> tuple[str, int]:
    if Path(cache).is_dir() and find_document(thing, cache, docs)[1]:
        return explain_document(thing, cache, docs)
    return manage.explain(thing, cache, docs)


def stats(cache: Cache) -> tuple[str, int]:
    text, code = manage.stats(cache)
    store = StateStore(cache)
    states = store.all_states(check_objects=True) if code == 0 else []
    if states:
        unusable = sum(1 for _, meta in states if meta is None)
        text += (
            f"Sphinx states: {len(states) - unusable}, {manage.human_size(store.size_on_disk())}"
        )
        text += f" (and {unusable} unusable, which prune removes)\n" if unusable else "\n"
    return text, code


def prune(cache: Cache, max_size: str) -> tuple[str, int]:
    try:
        limit = manage.parse_size(max_size)
    except ValueError:
        return manage.prune(cache, max_size)  # which names the bad size
    if not Path(cache).is_dir():
        return manage.prune(cache, max_size)  # which names the missing folder
    removed, freed, kept = StateStore(cache).prune(limit)
    text, code = manage.prune(cache, max_size, reserved=kept)
    plural = "" if removed == 1 else "s"
    text += (
        f"Sphinx states: removed {removed} state{plural} ({manage.human_size(freed)}); "
        f"{manage.human_size(kept)} left\n"
    )
    return text, code
