"""With a Sphinx (or sphinx-gallery) release the Sphinx state is not checked with, the
state turns itself off: the log says why, and the build is a full one (every document
read, no state used) whose output equals a clean build's. It runs with every release (the
version is bumped in ``conf.py``, before docsaccel reads it)."""

from __future__ import annotations

import pytest
from helpers.incremental_build import Workspace

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    ("bump", "said"),
    [
        (
            "import sphinx\n\nsphinx.version_info = (10, 0, 0, 'final', 0)\n",
            "docsaccel: Sphinx state off: checked with Sphinx 7.4, 8.2, 9.0",
        ),
        (
            "import sphinx_gallery\n\nsphinx_gallery.__version__ = '0.21.0'\n",
            "docsaccel: Sphinx state off: checked with sphinx-gallery 0.22",
        ),
    ],
    ids=["sphinx", "sphinx-gallery"],
)
def test_a_release_the_state_is_not_checked_with_turns_it_off(tmp_path, bump, said):
    ws = Workspace(tmp_path)
    ws.fresh_copy(lambda project: (project / "docs" / "conf.py").open("a").write("\n" + bump))
    built = ws.build()
    assert built.returncode == 0, built.output
    assert said in built.output
    assert "updating environment: [new config] 18 added" in built.output
    assert built.state == {}
    assert ws.differences() == []


def test_the_state_turned_off_is_named_as_the_user_turned_it_off(tmp_path):
    ws = Workspace(tmp_path)
    ws.fresh_copy()
    built = ws.build(env={"DOCSACCEL_CACHE_SPHINX": "0"})
    assert built.returncode == 0, built.output
    assert "docsaccel: Sphinx state off (DOCSACCEL_CACHE_SPHINX)" in built.output
