"""The build context of a Sphinx state: what must match for a stored state to be used.

The design, in full: the caching guide's *Design* section.

>>> fixed = {"project": "docs", "builder": "html", "sphinx": "8.2.3", "docutils": "0.21.2"}
>>> old = state_context(**fixed, extensions={"furo": "2024.1"}, theme="furo", tags=[])
>>> new = state_context(**fixed, extensions={"furo": "2025.1"}, theme="furo", tags=[])
>>> len(context_key(new)), context_key(old) != context_key(new)
(16, True)
>>> describe_difference(old, new)
'extension furo changed: 2024.1 → 2025.1'
"""

from __future__ import annotations

import platform
import sys
from collections.abc import Iterable, Mapping
from typing import Any

from docsaccel.formats import context_key
from docsaccel.incremental.state_store import STATE

__all__ = ["context_key", "describe_difference", "state_context"]


def state_context(
    *,
    project: str,
    builder: str,
    sphinx: str,
    docutils: str,
    extensions: Mapping[str, str | None],
    theme: str | None,
    tags: Iterable[str],
    libraries: Mapping[str, str] | None = None,
    env: Mapping[str, str | None] | None = None,
) -> dict[str, Any]:
    """The context of a build (see the caching guide's design)."""
    return {
        "format": STATE.version,
        "project": project,
        "builder": builder,
        "python": platform.python_version(),
        "implementation": sys.implementation.name,
        "platform": f"{sys.platform}-{platform.machine()}",
        "sphinx": sphinx,
        "docutils": docutils,
        "extensions": {name: extensions[name] for name in sorted(extensions)},
        "libraries": dict(sorted((libraries or {}).items())),
        "theme": theme,
        "tags": sorted(set(tags)),
        "env": dict(sorted((env or {}).items())),
    }


_LABELS = {
    "format": "state format",
    "project": "source folder",
    "builder": "builder",
    "python": "Python",
    "implementation": "Python implementation",
    "platform": "platform",
    "sphinx": "Sphinx",
    "docutils": "docutils",
    "theme": "theme",
    "tags": "tags",
    "env": "environment (docsaccel_cache_env)",
}


def describe_difference(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """Why a state made in context ``old`` does not serve ``new``, in a few words."""
    parts = [
        f"{label} changed: {old.get(key)} → {new.get(key)}"
        for key, label in _LABELS.items()
        if old.get(key) != new.get(key)
    ]
    for key, kind in (("extensions", "extension"), ("libraries", "library")):
        before, now = old.get(key) or {}, new.get(key) or {}
        for name in sorted(set(before) | set(now)):
            if name not in before:
                parts.append(f"{kind} {name} added")
            elif name not in now:
                parts.append(f"{kind} {name} removed")
            elif before[name] != now[name]:
                was, is_now = _differing(str(before[name]), str(now[name]))
                parts.append(f"{kind} {name} changed: {was} → {is_now}")
    return "; ".join(parts) or "build context changed"


def _differing(old: str, new: str) -> tuple[str, str]:
    """Of two values made of the same ``name value, ...`` parts (``conf.py``'s: ``code
    ..., helpers ...``), only the parts that differ."""
    before, now = old.split(", "), new.split(", ")
    if len(before) != len(now) or len(before) < 2 or "(" in old + new:
        return old, new
    changed = [i for i, (a, b) in enumerate(zip(before, now, strict=True)) if a != b]
    if any(a.partition(" ")[0] != b.partition(" ")[0] for a, b in zip(before, now, strict=True)):
        return old, new
    return ", ".join(before[i] for i in changed), ", ".join(now[i] for i in changed)
