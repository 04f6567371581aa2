"""The gallery plugin: per-example time budgets, the CI fast path, a record per example.

A Sphinx extension that sits beside ``sphinx_gallery.gen_gallery``::

    extensions = ["sphinx_gallery.gen_gallery", "docsaccel.gallery"]
    docsaccel_budgets = "conf/budgets.toml"   # relative to the conf dir
    docsaccel_on_overrun = "warn"             # or "fail"; DOCSACCEL_ON_OVERRUN overrides
    docsaccel_fast = False                    # or True; DOCSACCEL_FAST overrides

Every setting: :mod:`docsaccel.settings`. What loading the plugin does:
:mod:`.extension`; what it does in a build, event by event: :mod:`.events`; around each
example, in whichever process runs it: :mod:`.hook`; however a process ends:
:mod:`.process_end`. This package hands on ``setup`` and nothing else: importing it, or
any module of it (as sphinx-gallery's parallel workers do, to run the hook), loads none
of the plugin's handlers and registers nothing.
"""

from __future__ import annotations

from typing import Any

__all__ = ["setup"]


def setup(app: Any) -> dict[str, Any]:
    """Sphinx's entry point: :func:`docsaccel.gallery.extension.setup`."""
    from docsaccel.gallery.extension import setup as setup_plugin

    return setup_plugin(app)
