"""The gallery plugin: per-example time budgets, the CI fast path, a record per example.

The design, in full: the adopting guide's *Design* section.
"""

from __future__ import annotations

from typing import Any

__all__ = ["setup"]


def setup(app: Any) -> dict[str, Any]:
    """Sphinx's entry point: :func:`docsaccel.gallery.extension.setup`."""
    from docsaccel.gallery.extension import setup as setup_plugin

    return setup_plugin(app)
