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
from helpers.incremental_build import Built, Workspace, from_cache, needs_state, replace

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


def test_in_parallel_the_restored_build_reads_both_too(base: Path, tmp_path: Path):
    # A clean -j 2 build warns of a duplicate between its reading processes or not as
    # they finish (a process forked after another's documents were merged sees them):
    # the restored build reads the two documents again as a serial build does.
    ws, restored = _restored(base, tmp_path, jobs=2)
    assert {"api", "guide"} <= restored.read, restored.state
    warnings = _warnings(restored.output)
    assert not [w for w in warnings if "api.rst:" in w and "duplicate" in w], warnings
    other = (ws.outdir / "other.html").read_text("utf-8")
    assert 'href="guide.html#setup-guide"' in other
