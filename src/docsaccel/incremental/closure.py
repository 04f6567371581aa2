"""The project modules a page's read depends on, and the libraries they use.

The design, in full: the caching guide's *Design* section.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable

from docsaccel.cache.deps import Project
from docsaccel.cache.fingerprint import imported_names

__all__ = ["module_closure"]


def _file(name: str) -> str | None:
    path = getattr(sys.modules.get(name), "__file__", None)
    return os.path.normpath(os.path.abspath(path)) if isinstance(path, str) and path else None


def _parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def module_closure(seeds: Iterable[str], project: Project) -> tuple[dict[str, str], set[str]]:
    """``({module: file} of project modules, top-level names of other loaded modules)``."""
    ours: dict[str, str] = {}
    theirs: set[str] = set()
    queue = [name for name in seeds if name in sys.modules]
    followed: set[str] = set()
    while queue:
        name = queue.pop()
        if name in followed:
            continue
        followed.add(name)
        path = _file(name)
        if path is None or not project.owns_module(path, name):
            top = name.partition(".")[0]
            if top not in sys.stdlib_module_names and top not in ("__main__", "builtins"):
                theirs.add(top)
            continue
        ours[name] = path
        for parent in _parents(name):
            parent_file = _file(parent)
            if parent_file is not None and project.owns_module(parent_file, parent):
                ours.setdefault(parent, parent_file)
        package = (
            name if os.path.basename(path).startswith("__init__.") else name.rpartition(".")[0]
        )
        queue.extend(n for n in imported_names(path, package) if n in sys.modules)
    return ours, theirs
