"""``docsaccel cache explain / stats / prune`` over a whole cache folder: the example
entries (:mod:`docsaccel.cache.manage`) and the Sphinx states beside them.

The design, in full: the caching guide's *Design* section.

Example: a folder of other files is refused, an empty one is a new cache.

>>> import tempfile
>>> from pathlib import Path
>>> folder = tempfile.TemporaryDirectory()
>>> _ = Path(folder.name, "notes.txt").write_text("mine")
>>> prune(folder.name, max_size="2G")
("--cache '...': not a docsaccel cache folder: it holds notes.txt, and none of ...", 2)
>>> Path(folder.name, "notes.txt").unlink()
>>> stats(folder.name)
('cache ...: 0 entries, 0 B\\nlast build: none recorded\\n', 0)
>>> folder.cleanup()
"""

from __future__ import annotations

import os
from pathlib import Path

from docsaccel.cache import manage
from docsaccel.cache.store import FOLDER_NAMES, is_cache_folder
from docsaccel.incremental.explain import explain_document, find_document
from docsaccel.incremental.state_store import FOLDER, StateStore

__all__ = ["explain", "foreign_files", "foreign_folder", "prune", "stats"]

Cache = str | os.PathLike[str]


def foreign_folder(cache: Cache) -> str:
    """Why ``cache`` is not a cache folder (one line naming it and what it holds), or
    ``""``: a folder that holds files, none of them the example cache's nor the Sphinx
    states', is another folder given by mistake. Reading it would report an empty cache,
    and pruning it would write a lock into it. An empty folder is a new cache."""
    why = foreign_files(cache)
    return f"--cache {str(cache)!r}: not a docsaccel cache folder: {why}" if why else ""


def foreign_files(cache: Cache) -> str:
    """What ``cache`` holds when it is a folder of someone else's files (``"it holds
    ext.py, and none of entries, ..."``), or ``""``: missing, empty, or a docsaccel cache
    (its tag, or one of the names the example cache and the Sphinx states keep at its
    top). The one rule every writer into a cache folder checks first: the build (before
    any example) and ``cache prune``, so docsaccel never writes into, prunes or clears a
    folder of files it did not write (``docsaccel_cache = "_ext"``)."""
    folder = Path(cache)
    if not folder.is_dir():
        return ""  # a missing folder or a file: docsaccel.cache.manage names it
    names = sorted(path.name for path in folder.iterdir())
    if not names or set(names) & {*FOLDER_NAMES, FOLDER} or is_cache_folder(folder):
        return ""
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return f"it holds {shown}, and none of {', '.join((*FOLDER_NAMES, FOLDER))}"


def _refused(cache: Cache) -> tuple[str, int] | None:
    why = foreign_folder(cache)
    return (f"{why}\n", 2) if why else None


def explain(thing: str, cache: Cache, docs: Cache = "docs") -> tuple[str, int]:
    refused = _refused(cache)
    if refused:
        return refused
    if Path(cache).is_dir() and find_document(thing, cache, docs)[1]:
        return explain_document(thing, cache, docs)
    return manage.explain(thing, cache, docs)


def stats(cache: Cache) -> tuple[str, int]:
    refused = _refused(cache)
    if refused:
        return refused
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
    refused = _refused(cache)
    if refused:
        return refused
    try:
        limit = manage.parse_size(max_size)
    except ValueError:
        return manage.prune(cache, max_size)  # which names the bad size
    if not Path(cache).is_dir():
        return manage.prune(cache, max_size)  # which names the missing folder
    try:
        removed, freed, kept = StateStore(cache).prune(limit)
        text, code = manage.prune(cache, max_size, reserved=kept)
    except OSError as exc:  # a folder it may not write (read-only, not its owner's)
        where = f" ({exc.filename})" if exc.filename else ""
        return f"cache {cache}: cannot prune: {exc.strerror or exc}{where}\n", 2
    text += f"Sphinx states: {_pruned(removed, freed)}; {manage.human_size(kept)} left\n"
    return text, code


def _pruned(removed: int, freed: int) -> str:
    """What pruning the Sphinx states did: the bytes it freed are those of the files it
    deleted, which are objects no state kept names (a state's own file is small), so a
    prune that removed no state may still free space.

    >>> _pruned(0, 11_848_000)
    'removed no state; freed 11.3 MiB of files no state named'
    >>> _pruned(2, 4096)
    'removed 2 states; freed 4.0 KiB'
    """
    if removed == 0 and freed == 0:
        return "removed nothing"
    if removed == 0:
        return f"removed no state; freed {manage.human_size(freed)} of files no state named"
    plural = "" if removed == 1 else "s"
    return f"removed {removed} state{plural}; freed {manage.human_size(freed)}"
