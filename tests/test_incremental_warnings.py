"""Warnings under ``-W`` with the Sphinx state and the example cache: a build that restores
what a clean build runs or reads must warn as the clean build does, so that CI's exit code
is the same either way.

Each build is from a fresh copy of the project (new modification times everywhere); the
accelerated build has the cache of a build of the same tree, the clean one an empty cache.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.incremental_build import Built, Workspace, from_cache, needs_state, replace, write

pytestmark = [pytest.mark.slow, needs_state]

#: The example imports the whole package: the cache suggests ``function`` granularity.
HINT = "examples/plot_mean.py depends on"


def _clean(ws: Workspace, *args: str) -> Built:
    ws.fresh_copy()
    return ws.build(ws.root / "clean-cache", *args)


def test_a_restored_example_suggests_as_its_run_did(tmp_path):
    # The suggestion is an info line: under -W neither build fails for it.
    first = Workspace(tmp_path / "first")
    built = first.build()
    assert built.returncode == 0, built.output
    assert HINT in built.output
    ws = from_cache(first.cache, tmp_path / "second")
    accelerated = ws.build(None, "-W")
    assert "examples/plot_mean.py" not in accelerated.ran, accelerated.output
    clean = _clean(ws, "-W")
    assert "examples/plot_mean.py" in clean.ran
    assert HINT in clean.output and clean.returncode == 0, clean.output
    assert HINT in accelerated.output, accelerated.output
    assert accelerated.returncode == clean.returncode


#: The same function described on two pages: Sphinx warns on the page it reads second.
DUPLICATE = [
    replace(
        "docs/guide.rst",
        "Details\n",
        ".. py:function:: pkg.twice()\n\n   Described here.\n\nDetails\n",
    ),
    replace(
        "docs/other.rst",
        ":class:`pkg.shapes.Circle`.",
        ":class:`pkg.shapes.Circle`.\n\n.. py:function:: pkg.twice()\n\n   And here.\n",
    ),
]
DUPLICATE_WARNING = "duplicate object description of pkg.twice, other instance in guide"


def _warnings(output: str) -> list[str]:
    return sorted(line for line in output.splitlines() if "WARNING" in line)


def test_a_duplicate_description_warns_again_with_nothing_changed(tmp_path: Path):
    # Serial: Sphinx's parallel read checks no duplicate between its reading processes, so
    # whether a -j N build warns depends on how it splits the documents to read.
    jobs = 1
    first = Workspace(tmp_path / "first", jobs=jobs)
    for edit in DUPLICATE:
        first.fresh_copy(edit)
    built = first.build(None, "-D", "docsaccel_cache_granularity=function")
    assert built.returncode == 0, built.output
    assert DUPLICATE_WARNING in built.output, built.output
    ws = from_cache(first.cache, tmp_path / "second", DUPLICATE, jobs=jobs)
    args = ("-W", "--keep-going", "-D", "docsaccel_cache_granularity=function")
    accelerated = ws.build(None, *args)
    assert accelerated.state["origin"] == "cache", accelerated.output
    assert {"guide", "other"} <= accelerated.read, accelerated.state
    assert "api/pkg" not in accelerated.read, accelerated.state
    clean = _clean(ws, *args)
    assert clean.returncode == 1, clean.output
    assert accelerated.returncode == clean.returncode, accelerated.output
    assert _warnings(accelerated.output) == _warnings(clean.output)


#: The example takes longer than its budget (``on overrun: warn``, the default); function
#: granularity, so that the cache's suggestion is no line of these builds.
SLOW_EXAMPLE = [
    replace(
        "docs/examples/plot_mean.py",
        "print(mean(",
        "import time\n\ntime.sleep(0.5)\nprint(mean(",
    ),
    write("docs/budgets.toml", "default = 0.2\n"),
    replace(
        "docs/conf.py", 'project = "pkg"', 'project = "pkg"\ndocsaccel_budgets = "budgets.toml"'
    ),
]
OVER_BUDGET = "examples/plot_mean.py took"


def test_a_restored_example_over_its_budget_warns_as_its_run_did(tmp_path: Path):
    args = ("-D", "docsaccel_cache_granularity=function")
    first = Workspace(tmp_path / "first")
    for edit in SLOW_EXAMPLE:
        first.fresh_copy(edit)
    built = first.build(None, *args)
    assert built.returncode == 0, built.output
    assert OVER_BUDGET in built.output, built.output
    ws = from_cache(first.cache, tmp_path / "second", SLOW_EXAMPLE)
    accelerated = ws.build(None, "-W", *args)
    assert "examples/plot_mean.py" not in accelerated.ran, accelerated.output
    clean = _clean(ws, "-W", *args)
    assert "examples/plot_mean.py" in clean.ran
    assert clean.returncode == 1 and OVER_BUDGET in clean.output, clean.output
    assert OVER_BUDGET in accelerated.output, accelerated.output
    assert accelerated.returncode == clean.returncode


#: Warnings Sphinx gives while it resolves or writes a page, located elsewhere than in the
#: page's own source (a docstring, an included file) or in it (a missing reference); with
#: what each prints.
LATE_WARNINGS = [
    replace(
        "src/pkg/stats.py", "Average of the values.", "Average of the values: :doc:`/no-such-page`."
    ),
    write("docs/snippet.inc", "This paragraph links to :doc:`/nowhere-included`.\n"),
    replace("docs/other.rst", "See :ref:`setup-guide`", "See :ref:`no-such-label`"),
]
LATE_MESSAGES = [
    "stats.py:docstring of pkg.stats.mean:1: WARNING: unknown document: '/no-such-page'",
    "snippet.inc:1: WARNING: unknown document: '/nowhere-included'",
    "other.rst:4: WARNING: undefined label: 'no-such-label'",
]
#: A page without a title in the root toctree, which every page's sidebar shows: Sphinx
#: warns about it (at the root document's toctree) once for every page it writes. And a
#: toctree entry naming no document.
TOCTREE_WARNINGS = [
    write("docs/untitled.rst", "A page without a title.\n"),
    replace("docs/index.rst", "   guide\n", "   guide\n   untitled\n   no-such-document\n"),
]
TOCTREE_MESSAGES = [
    "index.rst:4: WARNING: toctree contains reference to document 'untitled' that doesn't "
    "have a title: no link will be generated",
    "index.rst:4: WARNING: toctree contains reference to nonexisting document 'no-such-document'",
]
#: A page that warns in neither case: restored, neither read nor written.
QUIET = "api/pkg.wrap.MyTool"


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize(
    ("edits", "messages"),
    [(LATE_WARNINGS, LATE_MESSAGES), (TOCTREE_WARNINGS, TOCTREE_MESSAGES)],
    ids=["late", "toctree"],
)
def test_restored_builds_warn_as_a_clean_build(tmp_path: Path, edits, messages, jobs: int):
    # One workspace (the same paths in every location), a fresh copy for every build, one
    # cache: the first build is a clean one, the next two restore what it left.
    ws = Workspace(tmp_path, jobs=jobs)
    for edit in edits:
        ws.fresh_copy(edit)
    args = ("-W", "--keep-going", "-D", "docsaccel_cache_granularity=function")
    clean = ws.build(None, *args)
    assert clean.returncode == 1, clean.output
    for message in messages:
        assert message in clean.output, (message, clean.output)
    for _ in range(2):
        ws.fresh_copy()
        restored = ws.build(None, *args)
        assert restored.state["origin"] == "cache", restored.output
        assert QUIET not in restored.read, restored.state
        if edits is LATE_WARNINGS:
            assert QUIET not in restored.written, restored.state
        assert restored.returncode == 1, restored.output
        assert _warnings(restored.output) == _warnings(clean.output), restored.output
