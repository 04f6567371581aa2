"""Headless OpenGL backend selection, with real MuJoCo contexts in child processes."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from docsaccel.headless import HeadlessGLError, ensure_headless_gl, probe

# libglvnd reads this list of EGL vendor files; pointing it at a missing file makes EGL
# unusable for real, without touching the machine.
NO_EGL = {"__EGL_VENDOR_LIBRARY_FILENAMES": "/nonexistent/egl_vendor.json"}


def clean_env(**extra: str) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("MUJOCO_GL", "PYOPENGL_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY")
        and not key.startswith("DOCSACCEL_GL")
    }
    env.update(extra)
    return env


def test_probe_egl_renders() -> None:
    assert probe("egl", clean_env()).ok


def test_picks_egl_first_when_unset_and_no_display() -> None:
    env = clean_env()
    assert ensure_headless_gl(env) == "egl"
    assert env["MUJOCO_GL"] == "egl"
    assert env["PYOPENGL_PLATFORM"] == "egl"


def test_falls_back_to_the_next_candidate() -> None:
    env = clean_env(**NO_EGL)
    # egl is broken here, so the pick must come from later in the list.
    with pytest.raises(HeadlessGLError) as excinfo:
        ensure_headless_gl(env, candidates=("egl", "definitely-not-a-backend"))
    message = str(excinfo.value)
    assert "egl:" in message and "definitely-not-a-backend:" in message
    assert ensure_headless_gl(clean_env(), candidates=("definitely-not-a-backend", "egl")) == "egl"


def test_no_backend_works_gives_one_clear_error() -> None:
    env = clean_env(**NO_EGL)
    with pytest.raises(HeadlessGLError) as excinfo:
        ensure_headless_gl(env, candidates=("egl", "osmesa-missing"))
    message = str(excinfo.value)
    assert "MUJOCO_GL is unset" in message
    assert "Tried egl:" in message
    assert "libegl1" in message
    assert "MUJOCO_GL" not in env


def test_unusable_explicit_value_names_variable_and_value() -> None:
    env = clean_env(MUJOCO_GL="bogus")
    with pytest.raises(HeadlessGLError) as excinfo:
        ensure_headless_gl(env)
    message = str(excinfo.value)
    assert "MUJOCO_GL='bogus' cannot render here" in message
    assert "invalid value for environment variable MUJOCO_GL" in message


def test_explicit_egl_that_cannot_render_names_packages() -> None:
    env = clean_env(MUJOCO_GL="egl", **NO_EGL)
    with pytest.raises(HeadlessGLError, match=r"MUJOCO_GL='egl'.*libegl1"):
        ensure_headless_gl(env)


def test_display_present_leaves_mujoco_default() -> None:
    env = clean_env(DISPLAY=":99")
    assert ensure_headless_gl(env) is None
    assert "MUJOCO_GL" not in env


def test_verified_choice_is_inherited_without_probing_again() -> None:
    env = clean_env()
    ensure_headless_gl(env)
    # A child process started with this environment trusts the verified backend.
    env["DOCSACCEL_GL_VERIFIED"] = env["MUJOCO_GL"] = "egl"
    env.update(NO_EGL)  # would fail if it probed again
    assert ensure_headless_gl(env) == "egl"


def test_cli_doctor_reports_the_backend() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "docsaccel.cli", "doctor"],
        env=clean_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "MUJOCO_GL egl (rendering works)" in done.stdout


def test_cli_doctor_fails_clearly_without_backend() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "docsaccel.cli", "doctor"],
        env=clean_env(MUJOCO_GL="bogus"),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert "MUJOCO_GL='bogus' cannot render here" in done.stdout
