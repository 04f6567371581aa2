"""Warnings under ``-W`` with the Sphinx state and the example cache: a build that restores
what a clean build runs or reads must warn as the clean build does, so that CI's exit code
is the same either way.

Each build is from a fresh copy of the project (new modification times everywhere); the
accelerated build has the cache of a build of the same tree, the clean one an empty cache.
"""

from __future__ import annotations

import pytest
from helpers.incremental_build import Built, Workspace, from_cache, needs_state

pytestmark = [pytest.mark.slow, needs_state]

#: The example imports the whole package: the cache suggests ``function`` granularity.
HINT = "examples/plot_mean.py depends on"


def _clean(ws: Workspace, *args: str) -> Built:
    ws.fresh_copy()
    return ws.build(ws.root / "clean-cache", *args)


def test_a_restored_example_warns_as_its_run_did(tmp_path):
    first = Workspace(tmp_path / "first")
    built = first.build()
    assert built.returncode == 0, built.output
    assert HINT in built.output
    ws = from_cache(first.cache, tmp_path / "second")
    accelerated = ws.build(None, "-W")
    assert "examples/plot_mean.py" not in accelerated.ran, accelerated.output
    clean = _clean(ws, "-W")
    assert "examples/plot_mean.py" in clean.ran
    assert HINT in clean.output and clean.returncode == 1, clean.output
    assert HINT in accelerated.output, accelerated.output
    assert accelerated.returncode == clean.returncode
