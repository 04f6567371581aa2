"""What identifies the code a build ran before docsaccel, and whether it changed since.

A report records the project's modules its build had loaded when docsaccel started (what
``conf.py`` imported, local extensions) and the installed distributions of its Sphinx
extensions, so every reader refuses a report left behind by a later build that failed
on one of them before docsaccel ran (:func:`docsaccel.contract.modules_changed`,
:func:`docsaccel.contract.distributions_changed`). A module is identified by its size and
its bytes' digest, not its modification time: an edit within the filesystem's timestamp
resolution of the report's write keeps the time, never the bytes. Only the files already
listed are hashed, and a distribution's version is read from its metadata.

>>> import tempfile, pathlib
>>> folder = tempfile.TemporaryDirectory()
>>> module = pathlib.Path(folder.name, "m.py")
>>> _ = module.write_text("A = 1\\n")
>>> stamps = module_stamps([str(module)])
>>> content_changed(str(module), stamps[str(module)])
False
>>> _ = module.write_text("A = 2\\n")
>>> content_changed(str(module), stamps[str(module)])
True
>>> folder.cleanup()
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from importlib import metadata
from typing import Any

__all__ = ["content_changed", "distribution_versions", "module_stamps"]


def _digest(path: str) -> str:
    with open(path, "rb") as stream:
        return hashlib.file_digest(stream, "sha256").hexdigest()


def module_stamps(paths: Iterable[str]) -> dict[str, dict[str, Any]]:
    """``{path: {"size": ..., "sha256": ...}}`` of the files ``paths`` that can be read."""
    stamps = {}
    for path in paths:
        try:
            stamps[path] = {"size": os.stat(path).st_size, "sha256": _digest(path)}
        except OSError:
            continue
    return stamps


def content_changed(path: str, stamp: Any) -> bool | None:
    """Whether ``path`` no longer holds what ``stamp`` (:func:`module_stamps`) recorded:
    its size first, its digest only when the size is the same. ``None`` when the file is
    not there (a report read on another machine says nothing) or the stamp is not one."""
    if not isinstance(stamp, dict) or not isinstance(stamp.get("sha256"), str):
        return None
    try:
        if os.stat(path).st_size != stamp.get("size"):
            return True
        return _digest(path) != stamp["sha256"]
    except OSError:
        return None


def distribution_versions(
    module_files: dict[str, str | None], own: Iterable[str]
) -> dict[str, str]:
    """``{distribution: version}`` of the installed distributions that hold the Sphinx
    extensions ``module_files`` (``{module name: its file}``) but those whose file is one
    of ``own``, the project's modules (recorded by :func:`module_stamps`). A module is
    matched to a distribution by its top-level name or, for a namespace package, its
    full name or a package between (``sphinx.ext.autodoc``: ``sphinx``;
    ``sphinxcontrib.bibtex``), as pip names them; one of no distribution is left out."""
    skip = {os.path.abspath(path) for path in own}
    found: dict[str, str] = {}
    # ``(name, version)`` of each name looked up: a distribution's metadata is read from
    # its files at every access, and Sphinx's own extensions all name ``sphinx``.
    tried: dict[str, tuple[str, str] | None] = {}
    for name, path in module_files.items():
        if isinstance(path, str) and os.path.abspath(path) in skip:
            continue
        parts = name.split(".")
        longer = (".".join(parts[:end]) for end in range(len(parts), 1, -1))
        for prefix in (parts[0], *longer):
            if prefix not in tried:
                tried[prefix] = _named_version(prefix)
            if (held := tried[prefix]) is not None:
                found[held[0]] = held[1]
                break
    return found


def _named_version(name: str) -> tuple[str, str] | None:
    """``(name, version)`` of the installed distribution ``name`` (as pip normalises it),
    or ``None``."""
    try:
        dist = metadata.distribution(name)
    except (metadata.PackageNotFoundError, ValueError):
        return None
    return dist.metadata["Name"], dist.version
