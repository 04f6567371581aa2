"""How an output may show a folder's path, and whether it does.

A page or a captured output names a file of the checkout that made it (a warning an
example printed with its file's path, a ``todolist`` naming each todo's file) as the
path is, escaped as HTML text, or quoted as in a link. A stored output that shows the
folder of the checkout that made it is wrong in a checkout elsewhere: the example cache
runs such an example again there, and the Sphinx state writes such a page again.

Example:

>>> forms = path_forms("/ci/run 1/repo")
>>> sorted(forms)
[b'/ci/run 1/repo/', b'/ci/run%201/repo/']
>>> shows(b"UserWarning: /ci/run 1/repo/docs/plot_a.py:3", forms)
True
>>> shows(b"/ci/run 1/repository", forms)
False
"""

from __future__ import annotations

import html
import os
import urllib.parse

__all__ = ["path_forms", "shows"]


def path_forms(folder: str) -> frozenset[bytes]:
    """The byte strings that show a path under ``folder`` (with its trailing separator,
    so a sibling folder whose name starts alike is not one of them)."""
    prefix = os.path.join(folder, "")
    return frozenset(
        form.encode("utf-8") for form in (prefix, html.escape(prefix), urllib.parse.quote(prefix))
    )


def shows(data: bytes, forms: frozenset[bytes]) -> bool:
    """Whether ``data`` holds any of ``forms``."""
    return any(form in data for form in forms)
