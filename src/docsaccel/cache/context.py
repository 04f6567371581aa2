"""What shapes an example's output besides its code: the build's *context*.

The design, in full: the caching guide's *Design* section.

Example:

>>> conf = {"thumbnail_size": (400, 280)}
>>> full = build_context(fast=False, gallery_conf=conf, env_names=["SEED"])
>>> fast = build_context(fast=True, gallery_conf=conf, env_names=["SEED"])
>>> len(context_key(fast)), context_key(fast) == context_key(full)
(16, False)
>>> describe_difference(full, fast)
'fast path switch changed: off → on'
>>> bigger = build_context(False, {**conf, "thumbnail_size": (800, 560)}, env_names=["SEED"])
>>> describe_difference(full, bigger)
'sphinx_gallery_conf changed: thumbnail_size'
"""

from __future__ import annotations

import os
import platform
import re
import sys
from collections.abc import Iterable, Mapping
from typing import Any

import sphinx_gallery

from docsaccel.cache.store import ENTRY_FORMAT
from docsaccel.formats import context_key

__all__ = [
    "build_context",
    "code_in_settings",
    "context_key",
    "describe_difference",
    "env_values",
]

#: ``sphinx_gallery_conf`` keys that change what an executed example's page holds.
GALLERY_KEYS = (
    "image_scrapers",
    "reset_modules",
    "reset_modules_order",
    "image_srcset",
    "thumbnail_size",
    "default_thumb_file",
    "compress_images",
    "matplotlib_animations",
    "capture_repr",
    "ignore_repr_types",
    "show_memory",
    "line_numbers",
    "remove_config_comments",
    "first_notebook_cell",
    "last_notebook_cell",
    "notebook_images",
    "promote_jupyter_magic",
    "inspect_global_variables",
    "doc_module",
    "backreferences_dir",
    "exclude_implicit_doc",
    "prefer_full_module",
    "download_all_examples",
    "plot_gallery",
)
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _stable(value: Any) -> Any:
    """A JSON value that stays the same across processes for the same setting."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Mapping):
        return {str(k): _stable(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [_stable(v) for v in value]
        return sorted(items, key=repr) if isinstance(value, (set, frozenset)) else items
    if callable(value) and hasattr(value, "__qualname__"):
        return f"{getattr(value, '__module__', '?')}.{value.__qualname__}"
    # An object (a scraper instance, a resetter): its class and its repr without addresses.
    kind = type(value)
    return f"{kind.__module__}.{kind.__qualname__}: {_ADDRESS.sub('', repr(value))}"


def code_in_settings(gallery_conf: Mapping[str, Any]) -> frozenset[str]:
    """The modules whose code sphinx-gallery runs with every example because the settings
    that shape a page name it: the module of each function or object in them (a scraper
    or resetter the project ships) and each module named by a string scraper.

    Only names are in the context; these modules' files are each entry's dependencies.
    """
    from docsaccel.sg_compat import user_resetters

    values: list[Any] = [gallery_conf.get(key) for key in GALLERY_KEYS]
    values.extend(user_resetters(dict(gallery_conf)))
    found: set[str] = set()
    while values:
        value = values.pop()
        if value is None or isinstance(value, (bool, int, float, bytes)):
            continue
        if isinstance(value, str):
            if value in (gallery_conf.get("image_scrapers") or ()):
                found.add(value)
        elif isinstance(value, Mapping):
            values.extend(value.values())
        elif isinstance(value, (list, tuple, set, frozenset)):
            values.extend(value)
        else:
            holder = value if callable(value) and hasattr(value, "__qualname__") else type(value)
            module = getattr(holder, "__module__", None)
            if isinstance(module, str) and module != "builtins":
                found.add(module)
    return frozenset(found)


def build_context(
    fast: bool, gallery_conf: Mapping[str, Any], env_names: Iterable[str] = ()
) -> dict[str, Any]:
    """The context of a build (see the caching guide's design)."""
    from docsaccel.sg_compat import user_resetters

    conf = {key: gallery_conf.get(key) for key in GALLERY_KEYS}
    conf["reset_modules"], conf["reset_modules_order"] = user_resetters(dict(gallery_conf))
    return {
        "format": ENTRY_FORMAT.version,
        "fast": fast,
        "python": platform.python_version(),
        "implementation": sys.implementation.name,
        "platform": f"{sys.platform}-{platform.machine()}",
        "sphinx_gallery": sphinx_gallery.__version__,
        "gallery_conf": _stable(conf),
        "env": env_values(env_names),
    }


def env_values(names: Iterable[str]) -> dict[str, str | None]:
    """``{name: value or None}`` of the environment variables ``docsaccel_cache_env``
    names: part of the example cache's context and of the Sphinx state's."""
    return {name: os.environ.get(name) for name in sorted(set(names))}


_LABELS = {
    "format": "cache format",
    "fast": "fast path switch",
    "python": "Python",
    "implementation": "Python implementation",
    "platform": "platform",
    "sphinx_gallery": "sphinx-gallery",
}


def _show(key: str, value: Any) -> str:
    if key == "fast":
        return "on" if value else "off"
    return "unset" if value is None else str(value)


def describe_difference(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """Why an entry made in context ``old`` does not serve ``new``, in a few words."""
    parts = []
    for key, label in _LABELS.items():
        if old.get(key) != new.get(key):
            parts.append(
                f"{label} changed: {_show(key, old.get(key))} → {_show(key, new.get(key))}"
            )
    old_env, new_env = old.get("env") or {}, new.get("env") or {}
    for name in sorted(set(old_env) | set(new_env)):
        if old_env.get(name) != new_env.get(name):
            parts.append(f"environment variable {name} changed")
    old_conf, new_conf = old.get("gallery_conf") or {}, new.get("gallery_conf") or {}
    keys = sorted(k for k in set(old_conf) | set(new_conf) if old_conf.get(k) != new_conf.get(k))
    if keys:
        parts.append(f"sphinx_gallery_conf changed: {', '.join(keys)}")
    return "; ".join(parts) or "build settings changed"
