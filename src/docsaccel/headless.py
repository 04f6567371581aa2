"""Pick a working headless OpenGL backend for MuJoCo before MuJoCo is imported.

The design, in full: the fast path guide's *Design* section.

>>> env = {"DISPLAY": ":0"}
>>> ensure_headless_gl(env), env
(None, {'DISPLAY': ':0'})
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from docsaccel.child_python import python_command
from docsaccel.settings import env_name

__all__ = ["CANDIDATES", "HeadlessGLError", "ProbeResult", "ensure_headless_gl", "probe"]

#: Headless backends tried, in order, when ``MUJOCO_GL`` is unset and there is no display.
CANDIDATES: tuple[str, ...] = ("egl", "osmesa")

#: System packages (Debian/Ubuntu names) that provide each backend.
PACKAGES: dict[str, str] = {
    "egl": "libegl1 libgl1-mesa-dri (Mesa's software EGL) or a GPU driver's EGL",
    "osmesa": "libosmesa6",
    "glfw": "libglfw3 and a running display (X11/Wayland)",
}

# Set in the environment once a backend has been verified, so child processes (sphinx
# workers, test subprocesses) do not probe again.
_VERIFIED_ENV = env_name("gl_verified")

_PROBE_CODE = """
import mujoco
context = mujoco.GLContext(16, 16)
context.make_current()
context.free()
"""


class HeadlessGLError(RuntimeError):
    """No OpenGL backend that MuJoCo can render with in this environment."""


@dataclass(frozen=True)
class ProbeResult:
    """Outcome of trying one ``MUJOCO_GL`` value in a child process."""

    backend: str
    ok: bool
    detail: str


def probe(backend: str, env: Mapping[str, str] | None = None, timeout: float = 60.0) -> ProbeResult:
    """Create a tiny MuJoCo GL context with ``MUJOCO_GL=backend`` in a child process."""
    child_env = dict(os.environ if env is None else env)
    child_env["MUJOCO_GL"] = backend
    child_env.pop("PYOPENGL_PLATFORM", None)
    if backend in ("egl", "osmesa"):
        child_env["PYOPENGL_PLATFORM"] = backend
    try:
        done = subprocess.run(
            python_command("-c", _PROBE_CODE),
            env=child_env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return ProbeResult(backend, False, f"no answer within {timeout:.0f} s")
    if done.returncode == 0:
        return ProbeResult(backend, True, "")
    lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
    return ProbeResult(backend, False, lines[-1] if lines else f"exit code {done.returncode}")


def _has_display(env: Mapping[str, str]) -> bool:
    return bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))


def _failure_message(results: Sequence[ProbeResult], explicit: bool) -> str:
    tried = "; ".join(f"{r.backend}: {r.detail}" for r in results)
    packages = "; ".join(
        f"{r.backend} needs {PACKAGES.get(r.backend, 'a valid value')}" for r in results
    )
    if explicit:
        head = f"MUJOCO_GL={results[0].backend!r} cannot render here"
        hint = "Unset MUJOCO_GL to let docsaccel pick egl or osmesa, or install the packages"
    else:
        head = "MUJOCO_GL is unset, there is no display, and no headless OpenGL backend works"
        hint = "Install one of them (Debian/Ubuntu: apt-get install libegl1 libgl1-mesa-dri)"
    return f"{head}. Tried {tried}. {hint}: {packages}."


def ensure_headless_gl(
    env: os._Environ[str] | dict[str, str] | None = None,
    candidates: Sequence[str] = CANDIDATES,
) -> str | None:
    """Make sure MuJoCo will be able to render; return the backend in use.

    Returns ``None`` when a display exists and ``MUJOCO_GL`` is unset (MuJoCo's own
    default applies). ``env`` is the environment to read and update (``os.environ`` by
    default). Raises :class:`HeadlessGLError` with the variable, what was tried and the
    packages to install when nothing works.
    """
    env = os.environ if env is None else env
    if env is os.environ and "mujoco" in sys.modules:
        # MuJoCo has already read MUJOCO_GL; changing it now would change nothing.
        return env.get("MUJOCO_GL") or None
    requested = env.get("MUJOCO_GL", "").strip()
    if requested:
        if env.get(_VERIFIED_ENV) == requested:
            return requested
        result = probe(requested, env)
        if not result.ok:
            raise HeadlessGLError(_failure_message([result], explicit=True))
        env[_VERIFIED_ENV] = requested
        return requested
    if _has_display(env):
        return None
    results = []
    for backend in candidates:
        result = probe(backend, env)
        if result.ok:
            env["MUJOCO_GL"] = backend
            env["PYOPENGL_PLATFORM"] = backend
            env[_VERIFIED_ENV] = backend
            return backend
        results.append(result)
    raise HeadlessGLError(_failure_message(results, explicit=False))
