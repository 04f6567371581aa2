"""What the tests need is installed before they run, never by a test.

``make test-deps`` installs Debian's ``chromium`` once, before the test lanes start: the
lanes run side by side, and an apt-get started from a test in each raced for apt's lock.
"""

from __future__ import annotations

import subprocess

import pytest
from helpers import browser


def test_a_missing_chromium_fails_the_test_naming_what_installs_it(monkeypatch) -> None:
    started: list[object] = []
    # apt-get is there (as on CI's Debian), Chromium is not.
    monkeypatch.setattr(browser.shutil, "which", {"apt-get": "/usr/bin/apt-get"}.get)
    monkeypatch.setattr(subprocess, "run", lambda *args, **kwargs: started.append(args))
    monkeypatch.setattr(subprocess, "Popen", lambda *args, **kwargs: started.append(args))

    with pytest.raises(pytest.fail.Exception) as failed:
        browser.find_chromium()

    message = str(failed.value)
    assert "\n" not in message
    assert "no chromium executable" in message
    assert "`make test-deps`" in message
    assert started == [], "the helper started a process (an install) instead of failing"


def test_chromium_on_path_is_used_as_found(monkeypatch) -> None:
    found = {"chromium-browser": "/opt/bin/chromium-browser"}
    monkeypatch.setattr(browser.shutil, "which", found.get)

    assert browser.find_chromium() == "/opt/bin/chromium-browser"
