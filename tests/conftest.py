"""Shared test setup: MuJoCo must render headless before any test imports it."""

from __future__ import annotations

from docsaccel.headless import ensure_headless_gl

ensure_headless_gl()
