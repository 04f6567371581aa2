"""The command line of a Python process docsaccel starts for the user's project.

``python -m sphinx`` and ``python -c`` put the current folder first on ``sys.path``;
the user's ``sphinx-build`` puts its script's folder there. Run from a repository root
holding a folder named as the project's package (matplotlib's layout: ``mypkg/`` with
the package in ``mypkg/mypkg/``), the child would import that folder, a namespace
package, instead of the installed package the user's own build imports. ``-P``
(Python 3.11+) adds no folder, so a child sees the ``sys.path`` the user's build sees.

>>> python_command("-m", "sphinx")[1:]
['-P', '-m', 'sphinx']
"""

from __future__ import annotations

import sys

__all__ = ["python_command"]


def python_command(*args: str) -> list[str]:
    """This interpreter run with ``args``, adding no folder to ``sys.path``."""
    return [sys.executable, "-P", *args]
