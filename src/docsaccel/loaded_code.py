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
    matched to a distribution by its name or the name of a package above it
    (``sphinxcontrib.bibtex``; ``sphinx.ext.autodoc``: ``sphinx``), as pip names them;
    one of no distribution is left out."""
    skip = {os.path.abspath(path) for path in own}
    found: dict[str, str] = {}
    tried: dict[str, metadata.Distribution | None] = {}
    for name, path in module_files.items():
        if isinstance(path, str) and os.path.abspath(path) in skip:
            continue
        parts = name.split(".")
        for end in range(len(parts), 0, -1):
            prefix = ".".join(parts[:end])
            if prefix not in tried:
                try:
                    tried[prefix] = metadata.distribution(prefix)
                except (metadata.PackageNotFoundError, ValueError):
                    tried[prefix] = None
            dist = tried[prefix]
            if dist is not None:
                found[dist.metadata["Name"]] = dist.version
                break
    return found
