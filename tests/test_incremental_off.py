"""With a Sphinx release the Sphinx state is not checked with, the state turns itself
off: the log says why, and the build is a full one (every document read, no state used)
whose output equals a clean build's. It runs with every Sphinx (the version is bumped in
``conf.py``, before docsaccel reads it)."""

from __future__ import annotations

import pytest
from helpers.incremental_build import Workspace

pytestmark = pytest.mark.slow


def test_a_sphinx_release_the_state_is_not_checked_with_turns_it_off(tmp_path):
    ws = Workspace(tmp_path)
    bump = "\nimport sphinx\n\nsphinx.version_info = (10, 0, 0, 'final', 0)\n"
    ws.fresh_copy(lambda project: (project / "docs" / "conf.py").open("a").write(bump))
    built = ws.build()
    assert built.returncode == 0, built.output
    assert "docsaccel: Sphinx state off: checked with Sphinx 7.4, 8.2, 9.0" in built.output
    assert "updating environment: [new config] 18 added" in built.output
    assert built.state == {}
    assert ws.differences() == []


def test_a_sphinx_gallery_release_the_state_is_not_checked_with_turns_it_off(tmp_path):
    ws = Workspace(tmp_path)
    bump = "\nimport sphinx_gallery\n\nsphinx_gallery.__version__ = '0.21.0'\n"
    ws.fresh_copy(lambda project: (project / "docs" / "conf.py").open("a").write(bump))
    built = ws.build()
    assert built.returncode == 0, built.output
    assert "docsaccel: Sphinx state off: checked with sphinx-gallery 0.22" in built.output
    assert built.state == {}
    assert ws.differences() == []
