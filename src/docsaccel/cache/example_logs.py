"""The warnings an example's processing gave, kept with its entry and given again when
the cache restores it.

The design, in full: the caching guide's *Design* section.

Example: what one example's processing logged, written beside its dependencies, read back.

>>> import tempfile
>>> from docsaccel.sphinx_logs import Logged
>>> folder = tempfile.TemporaryDirectory()
>>> thumb = Logged("thumbnail not found", 30, "sphinx_gallery", "thumbnail")
>>> cache_notice = Logged("not storing it", 30, "docsaccel", "cache")
>>> kept = [w for w in (thumb, cache_notice) if about_the_example(w)]
>>> write(f"{folder.name}/plot_a.py.json", kept)
>>> read(f"{folder.name}/plot_a.py.json") == [thumb]
True
>>> folder.cleanup()
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from docsaccel.contract import read_json
from docsaccel.formats import write_json
from docsaccel.sphinx_logs import Capture, Logged, sphinx_warns_here

__all__ = [
    "ABOUT_THE_BUILD",
    "LOGGED_SUFFIX",
    "about_the_example",
    "from_entry",
    "read",
    "replay",
    "start",
    "stop",
    "write",
]

#: ``(type, subtype)`` of the warnings about the build, not the example's run: docsaccel's
#: cache notices (what this build stores or restores), its checks of the configuration,
#: budgets and history (an over-budget run is said again from its record), and
#: sphinx-gallery's configuration and optional dependencies (said once per build).
ABOUT_THE_BUILD = frozenset(
    {
        ("docsaccel", "cache"),
        ("docsaccel", "config"),
        ("docsaccel", "budget"),
        ("docsaccel", "budgets"),
        ("docsaccel", "history"),
        ("docsaccel", "sphinx_gallery"),
        ("sphinx_gallery", "config"),
        ("sphinx_gallery", "dependency"),
    }
)
#: The name of an example's warnings file beside its dependencies: ``<slug><LOGGED_SUFFIX>``.
LOGGED_SUFFIX = ".logged.json"
#: Where replayed warnings come from in the log's records.
_LOGGER = "docsaccel.cache"


def about_the_example(logged: Logged) -> bool:
    """Whether a warning is part of what the example's processing produced."""
    return (logged.type, logged.subtype) not in ABOUT_THE_BUILD


_capture = Capture(about_the_example)


def start() -> None:
    """The example's processing starts in this process: collect what it logs."""
    if sphinx_warns_here():
        _capture.start()


def stop() -> list[Logged]:
    """The example's processing ended: what it logged."""
    return _capture.stop()


def write(path: str, logged: Iterable[Logged]) -> None:
    write_json(path, [w.to_json() for w in logged], indent=None)


def read(path: str | os.PathLike[str]) -> list[Logged]:
    """Raises :class:`~docsaccel.contract.InputError` (no file) or ``ValueError``."""
    data = read_json(path, "list of logged warnings")
    if not isinstance(data, list):
        raise ValueError(f"{path}: the logged warnings are not a list")
    return [Logged.from_json(item) for item in data]


def from_entry(meta: dict[str, Any]) -> list[Logged]:
    """The warnings an entry keeps (``meta["warnings"]``); ``ValueError`` if malformed."""
    data = meta.get("warnings", [])
    if not isinstance(data, list):
        raise ValueError("key 'warnings' is not a list")
    return [Logged.from_json(item) for item in data]


def replay(logged: Iterable[Logged], made_in: Any, root: str) -> None:
    """Log each warning again, as a run in ``root`` gives it (``made_in``: where it ran)."""
    for warning in logged:
        if isinstance(made_in, str):
            warning = warning.relocated(made_in, root)
        warning.replay(_LOGGER)
