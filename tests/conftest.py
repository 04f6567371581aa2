"""Shared test setup: a clean environment, headless MuJoCo, the fixtures several modules use.

- Every docsaccel variable (from the settings' declaration) is cleared before any test:
  a cache or fast path exported in the shell must not leak into the test builds.
- MuJoCo must render headless before any test imports it.
- Each test tells :mod:`helpers.slow` it runs, so a real build in a test not marked
  ``slow`` fails instead of slowing the fast lane.
- The build servers that fork the session's builds stop with the session.
"""

from __future__ import annotations

import gc
import os

import pytest
from helpers import slow

from docsaccel import registry
from docsaccel.settings import environment_variables

for _name in environment_variables():
    os.environ.pop(_name, None)

from docsaccel.headless import ensure_headless_gl  # noqa: E402

ensure_headless_gl()


def pytest_runtest_setup(item: pytest.Item) -> None:
    slow.set_current(item)


@pytest.fixture(scope="session")
def browser():
    """A headless Chromium (Debian's package) driven by Playwright."""
    from helpers.browser import CHROMIUM_ARGS, find_chromium
    from playwright.sync_api import sync_playwright

    executable = find_chromium()
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="session", autouse=True)
def build_servers():
    """The session's build servers (:mod:`helpers.build_server`, started by the first
    build that needs one), stopped at its end."""
    from helpers import build_server

    yield
    build_server.stop_all()


@pytest.fixture
def fresh_processes(monkeypatch):
    """Builds as fresh ``python -m sphinx`` processes, not forks of a build server: for
    tests whose subject is how a build's process ends (its exit handlers, the threads and
    workers it waits for), which an interpreter's own end decides."""
    from helpers import build_server

    monkeypatch.setenv(build_server.FRESH_ENV, "1")


@pytest.fixture(scope="session", autouse=True)
def reference_builds(tmp_path_factory):
    """One folder for the session's clean reference builds, which every comparison of
    the same tree reuses (:mod:`helpers.incremental_build`)."""
    from helpers import incremental_build

    incremental_build.REFERENCE_BUILDS = tmp_path_factory.mktemp("reference-builds")
    return incremental_build.REFERENCE_BUILDS


@pytest.fixture
def clean_registry():
    """The per-example registry, empty before and after the test."""
    registry.clear()
    yield
    registry.clear()


@pytest.fixture
def collect_closed_envs():
    """Free the GL contexts of earlier tests' envs now, not in the middle of a rollout."""
    gc.collect()
