"""A real headless Chromium for the site tests, driven by Playwright.

Playwright's own browser download is not used: Debian's ``chromium`` package is the browser.
A test never installs it: ``make test-deps`` does, once, before the test lanes start (they
run side by side, and apt-get run from each would race for apt's lock). Where it is
missing, a browser test fails naming that command, locally as in CI, so a green run always
includes the browser tests.
"""

from __future__ import annotations

import functools
import http.server
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

#: The executables Debian's and Ubuntu's packages install, in the order tried.
CHROMIUM_NAMES = ("chromium", "chromium-browser")
#: What installs the browser (the Makefile's target, which the test lanes depend on).
INSTALL_COMMAND = "make test-deps"

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--autoplay-policy=no-user-gesture-required",
]


def find_chromium() -> str:
    """Path of the Chromium executable; fail the test, naming what installs it, without one."""
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    pytest.fail(
        f"no chromium executable on PATH ({' or '.join(CHROMIUM_NAMES)}): run `{INSTALL_COMMAND}`"
    )


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def serve(folder: Path) -> Iterator[str]:
    """Serve ``folder`` over HTTP on a free loopback port; yield the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class PageProblems:
    """Console errors, page errors and failed requests seen while a page was open."""

    def __init__(self, page) -> None:
        self.items: list[str] = []
        page.on("console", lambda m: m.type == "error" and self._console(m))
        page.on("pageerror", lambda e: self.items.append(f"page error: {e}"))
        page.on("response", self._response)

    def _console(self, message) -> None:
        # A missing favicon is reported by the request below, with its URL.
        if "Failed to load resource" not in message.text:
            self.items.append(f"console: {message.text}")

    def _response(self, response) -> None:
        if response.status >= 400 and not response.url.endswith("/favicon.ico"):
            self.items.append(f"HTTP {response.status}: {response.url}")
