"""Every real build runs in a test marked ``slow``, so ``-m "not slow"`` is a lane of seconds.

The helpers that start a real build (Sphinx, sphinx-gallery, a shard build) call
:func:`require_slow`; a test that reaches one without the marker fails, naming itself,
instead of quietly slowing the fast lane. ``tests/conftest.py`` tells this module which
test runs (:func:`set_current`), before any of its fixtures is set up.

Example::

    @pytest.mark.slow
    def test_a_build(tmp_path):
        build(make_project(tmp_path, ["plot_quick.py"]))
"""

from __future__ import annotations

from typing import Any

__all__ = ["require_slow", "set_current"]

_current: Any = None


def set_current(item: Any) -> None:
    """The test item about to run (pytest's ``pytest_runtest_setup``)."""
    global _current
    _current = item


def require_slow() -> None:
    """Fail the running test unless it is marked ``slow``: it is about to build for real."""
    if _current is not None and _current.get_closest_marker("slow") is None:
        raise AssertionError(
            f"{_current.nodeid} runs a real build: mark it @pytest.mark.slow (or set "
            "pytestmark = pytest.mark.slow in its module), so -m 'not slow' stays fast"
        )
