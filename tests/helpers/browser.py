"""A real headless Chromium for the site tests, driven by Playwright.

Playwright's own browser download is not used: Debian's ``chromium`` package is the browser.
When it is missing, :func:`ensure_chromium` installs it with apt-get (as root, e.g. in CI);
where that is impossible, the browser tests are skipped locally and fail in CI (``CI=true``),
so a green CI run always includes them.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from docsaccel.budgets import is_ci

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


def _install_with_apt() -> str:
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        return "not root or no apt-get"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "chromium"]):
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            return f"{' '.join(command)} failed: {done.stderr.strip()[-500:]}"
    return ""


@functools.cache
def ensure_chromium() -> str:
    """Path of a Chromium executable, installing Debian's package when needed."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    problem = _install_with_apt()
    found = shutil.which("chromium")
    if found:
        return found
    message = f"no chromium executable and it could not be installed ({problem})"
    if is_ci():
        pytest.fail(message)
    pytest.skip(message)


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
