"""The clean reference build a skip is proven against is made once per tree and session.

:meth:`helpers.incremental_build.Workspace.differences` compares a build with a clean
build of the same tree; the clean build is a pure function of the tree and the build's
arguments, so a second comparison of the same tree (in any test's folder) reuses it, and
a changed tree gets its own.
"""

from __future__ import annotations

import pytest
from helpers.incremental_build import Workspace, replace


@pytest.fixture
def counted_builds(monkeypatch) -> list[tuple]:
    """The arguments of every build the workspaces start from now on."""
    started: list[tuple] = []
    build = Workspace.build

    def counted(self, *args, **kwargs):
        started.append(args)
        return build(self, *args, **kwargs)

    monkeypatch.setattr(Workspace, "build", counted)
    return started


@pytest.mark.slow
def test_a_clean_build_of_the_same_tree_is_made_once(tmp_path, counted_builds) -> None:
    first = Workspace(tmp_path / "first")
    assert first.build().returncode == 0
    assert first.differences() == []
    second = Workspace(tmp_path / "second")
    assert second.build().returncode == 0
    counted_builds.clear()

    assert second.differences() == []

    assert counted_builds == [], "the clean build of an unchanged tree was made again"


@pytest.mark.slow
def test_a_changed_tree_gets_its_own_clean_build(tmp_path, counted_builds) -> None:
    ws = Workspace(tmp_path)
    assert ws.build().returncode == 0
    assert ws.differences() == []
    # A text no other test writes: a tree another test in this session already built
    # would (rightly) reuse that test's clean build.
    edit = f"Arithmetic mean, edited by {tmp_path.name}."
    ws.fresh_copy(replace("src/pkg/stats.py", "Average of the values.", edit))
    assert ws.build().returncode == 0
    counted_builds.clear()

    assert ws.differences() == []

    assert len(counted_builds) == 1, counted_builds
    clean = (tmp_path / "clean-output").rglob("*.html")
    assert any(edit in page.read_text("utf-8") for page in clean)
