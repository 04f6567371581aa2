"""Shared test setup: MuJoCo must render headless before any test imports it."""

from __future__ import annotations

import pytest

from docsaccel.headless import ensure_headless_gl

ensure_headless_gl()


@pytest.fixture(scope="session")
def browser():
    """A headless Chromium (Debian's package) driven by Playwright."""
    from browser import CHROMIUM_ARGS, ensure_chromium
    from playwright.sync_api import sync_playwright

    executable = ensure_chromium()
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()
