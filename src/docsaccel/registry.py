"""A per-process registry of facts about the example being executed.

The design, in full: the adopting guide's *Design* section.

Example:

>>> from docsaccel import registry
>>> registry.publish("knobs", "rollouts", {"value": 1, "fast": 1, "full": 4})
>>> registry.snapshot()
{'knobs': {'rollouts': {'value': 1, 'fast': 1, 'full': 4}}}
>>> registry.clear()
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# Named in the contract, where render gating and the gallery plugin both read it. The
# contract is the only module of docsaccel the registry imports.
from docsaccel.contract import RENDER_SECTION, fork_safe_lock

__all__ = ["RENDER_SECTION", "clear", "publish", "snapshot", "take", "update"]


_lock = fork_safe_lock()
_facts: dict[str, dict[str, Any]] = {}


def publish(section: str, key: str, value: Any) -> None:
    """Record ``value`` under ``section``/``key``; a later publish of the same key replaces it."""
    _check_names(section, key)
    with _lock:
        _facts.setdefault(section, {})[key] = value


def update(section: str, key: str, change: Callable[[Any], Any]) -> None:
    """Record ``change(value)`` under ``section``/``key``, ``value`` being what is recorded
    there (None when nothing is): under the registry's lock, so a fact that grows with
    each call (every pick of one knob) loses no call made by another thread."""
    _check_names(section, key)
    with _lock:
        entries = _facts.setdefault(section, {})
        entries[key] = change(entries.get(key))


def snapshot() -> dict[str, dict[str, Any]]:
    """Return every published fact as plain data (``as_dict()`` is called on live objects)."""
    with _lock:
        items = {section: dict(entries) for section, entries in _facts.items()}
    return {
        section: {key: _plain(value) for key, value in entries.items()}
        for section, entries in items.items()
    }


def take(section: str) -> dict[str, Any]:
    """Remove ``section`` and return its facts as plain data (empty when never published)."""
    with _lock:
        entries = _facts.pop(section, {})
    return {key: _plain(value) for key, value in entries.items()}


def clear() -> None:
    """Forget every fact (the plugin calls this before each example)."""
    with _lock:
        _facts.clear()


def _check_names(section: str, key: str) -> None:
    if not isinstance(section, str) or not section:
        raise ValueError(f"registry section must be a non-empty string, got {section!r}")
    if not isinstance(key, str) or not key:
        raise ValueError(f"registry key must be a non-empty string, got {key!r}")


def _plain(value: Any) -> Any:
    as_dict = getattr(value, "as_dict", None)
    return as_dict() if callable(as_dict) else value
