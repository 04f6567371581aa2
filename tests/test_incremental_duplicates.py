"""A name two documents define, one of them edited in a fresh copy: a restored build reads
both, so the name's holder, the pages linking it and the duplicate's warnings are a clean
build's.

The edited page (``api``) sorts before the page it duplicates (``guide``): a clean build
reads ``api`` first, so ``guide`` holds the label and the object and warns; read alone,
``api`` would take them and warn instead, and ``other.rst``'s ``:ref:`` would link it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.incremental_build import (
    Built,
    Workspace,
    from_cache,
    needs_state,
    replace,
    write,
)

pytestmark = [pytest.mark.slow, needs_state]

#: ``guide`` describes an object, in the base every test restores from.
BASE = [
    replace(
        "docs/guide.rst",
        "Details\n",
        ".. py:function:: pkg.twice()\n\n   Described here.\n\nDetails\n",
    )
]
#: ``api`` defines the guide's label and describes the same object.
DUPLICATES = replace(
    "docs/api.rst",
    "API reference\n",
    ".. _setup-guide:\n\nAPI reference\n=============\n\n"
    ".. py:function:: pkg.twice()\n\n   And here.\n\nThe package\n",
)
MESSAGES = ("duplicate label setup-guide", "duplicate object description of pkg.twice")
ARGS = ("-W", "--keep-going")


def _warnings(output: str) -> list[str]:
    return sorted(line for line in output.splitlines() if "WARNING" in line)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = Workspace(tmp_path_factory.mktemp("base"))
    for edit in BASE:
        ws.fresh_copy(edit)
    built = ws.build()
    assert built.returncode == 0, built.output
    return ws.cache


def _restored(base: Path, root: Path, jobs: int) -> tuple[Workspace, Built]:
    ws = from_cache(base, root, [*BASE, DUPLICATES], jobs=jobs)
    return ws, ws.build(None, *ARGS)


def test_both_documents_are_read_and_warn_as_in_a_clean_build(base: Path, tmp_path: Path):
    ws, restored = _restored(base, tmp_path, jobs=1)
    assert restored.state["origin"] == "cache", restored.output
    assert {"api", "guide"} <= restored.read, restored.state
    assert "guide.rst: it defines a name api.rst defines too" in restored.output
    assert "api/pkg" not in restored.read, restored.state
    warnings = _warnings(restored.output)
    for message in MESSAGES:
        # Located in the document read second, naming the first: once each.
        assert [w for w in warnings if message in w and "guide.rst" in w], warnings
        assert not [w for w in warnings if message in w and "api.rst:" in w], warnings
    assert restored.returncode == 1, restored.output
    # The label's holder is the guide: the other page links it.
    other = (ws.outdir / "other.html").read_text("utf-8")
    assert 'href="guide.html#setup-guide"' in other
    ws.fresh_copy()
    clean = ws.build(ws.root / "clean-cache", *ARGS)
    assert clean.returncode == restored.returncode
    assert _warnings(clean.output) == warnings


def test_the_pages_equal_a_clean_build_s(base: Path, tmp_path: Path):
    ws, restored = _restored(base, tmp_path, jobs=1)
    assert restored.returncode == 1, restored.output
    assert ws.differences() == []


def test_in_parallel_the_warnings_are_a_clean_parallel_build_s(base: Path, tmp_path: Path):
    # Sphinx's parallel read checks no duplicate between its reading processes, so a
    # clean -j 2 build warns only of two documents it reads in one chunk; which of two
    # chunks holds the name depends on which process finishes last.
    ws, restored = _restored(base, tmp_path, jobs=2)
    ws.fresh_copy()
    clean = ws.build(ws.root / "clean-cache", *ARGS)
    assert _warnings(restored.output) == _warnings(clean.output), clean.output
    assert restored.returncode == clean.returncode


def test_in_parallel_a_duplicate_two_chunks_hold_does_not_warn(tmp_path: Path):
    """The guide (in the base) and an API page Sphinx reads in another chunk describe the
    same object: a clean -j 2 build says nothing, nor does the restored one."""
    edits = [*BASE]
    first = Workspace(tmp_path / "first", jobs=2)
    for edit in edits:
        first.fresh_copy(edit)
    assert first.build().returncode == 0
    # A page sorted first: a clean -j 2 build reads it in the first chunk, the guide in
    # a later one.
    twice = [
        write("docs/a_twice.rst", "Twice\n=====\n\n.. py:function:: pkg.twice()\n\n   Again.\n"),
        replace("docs/index.rst", "   guide\n", "   a_twice\n   guide\n"),
    ]
    ws = from_cache(first.cache, tmp_path / "second", [*edits, *twice], jobs=2)
    restored = ws.build(None, *ARGS)
    assert "a_twice" in restored.read and "guide" not in restored.read, restored.state
    for page in ("a_twice.html", "guide.html"):
        assert "pkg.twice" in (ws.outdir / page).read_text("utf-8")
    ws.fresh_copy()
    clean = ws.build(ws.root / "clean-cache", *ARGS)
    assert "duplicate object description" not in clean.output, clean.output
    assert _warnings(restored.output) == _warnings(clean.output), restored.output
    assert restored.returncode == clean.returncode == 0, restored.output
