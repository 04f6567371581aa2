"""``docsaccel doctor``: what docsaccel will run with on this machine.

Prints the versions of the libraries docsaccel works with and the headless OpenGL backend
MuJoCo will render with, so a maintainer can tell at once why a docs build cannot record
videos on a CI runner.

Example::

    $ docsaccel doctor
    docsaccel 0.1.0
    python 3.11.7
    sphinx 9.0.4
    ...
    MUJOCO_GL egl (rendering works)
"""

from __future__ import annotations

import importlib.util
import platform
from importlib import metadata

from docsaccel import __version__
from docsaccel.headless import HeadlessGLError, ensure_headless_gl

LIBRARIES = ("sphinx", "sphinx-gallery", "gymnasium", "mujoco", "torch", "torchrl", "imageio")


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


def gl_status() -> tuple[bool, str]:
    """Whether MuJoCo can render here, and a one-line explanation.

    A missing ``mujoco`` package is named first: probing the system's OpenGL libraries
    without it would blame them for what ``pip install`` fixes.
    """
    if importlib.util.find_spec("mujoco") is None:
        return False, (
            "not checked: the Python package mujoco is not installed; "
            'pip install "docsaccel[mujoco]"'
        )
    try:
        backend = ensure_headless_gl()
    except HeadlessGLError as exc:
        return False, str(exc)
    if backend is None:
        return True, "unset (a display exists: MuJoCo's default applies)"
    return True, f"{backend} (rendering works)"


def describe() -> tuple[str, bool]:
    """The doctor's text, and whether everything docsaccel needs to render works."""
    lines = [f"docsaccel {__version__}", f"python {platform.python_version()}"]
    lines += [f"{name} {_version(name)}" for name in LIBRARIES]
    ok, gl = gl_status()
    lines.append(f"MUJOCO_GL {gl}")
    return "\n".join(lines), ok
