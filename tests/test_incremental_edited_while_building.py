"""Inputs edited while a build runs: the state it keeps must not vouch for content the
build never read. A fresh copy of the edited tree, built from that state, publishes what a
clean build of it publishes."""

from __future__ import annotations

import pytest
from helpers.incremental_build import Workspace, local_extension, needs_state, replace, write

pytestmark = [pytest.mark.slow, needs_state]

OLD, NEW = "Average of the values.", "Arithmetic mean."

#: Rewrites ``src/pkg/stats.py`` once its page is read, long after the module was
#: imported (by autosummary and the gallery's example): the build shows the old docstring.
EDITOR = f"""\
from pathlib import Path


def _edit(app, doctree):
    if app.env.docname != "api/pkg.stats.mean":
        return
    path = Path(app.srcdir).parent / "src" / "pkg" / "stats.py"
    text = path.read_text("utf-8")
    if {OLD!r} in text:
        path.write_text(text.replace({OLD!r}, {NEW!r}), "utf-8")


def setup(app):
    app.connect("doctree-read", _edit)
    return {{"parallel_read_safe": True, "parallel_write_safe": True}}
"""


@pytest.mark.parametrize("jobs", [1, 2], ids=["serial", "j2"])
def test_a_module_edited_while_read_is_read_again_from_a_fresh_copy(tmp_path, jobs):
    ws = Workspace(tmp_path, jobs=jobs)
    for edit in local_extension("editor", EDITOR):
        ws.fresh_copy(edit)
    first = ws.build()
    assert first.returncode == 0, first.output
    assert NEW in (ws.project / "src" / "pkg" / "stats.py").read_text("utf-8")
    assert "src/pkg/stats.py changed while the build ran" in first.output, first.output
    ws.fresh_copy(replace("src/pkg/stats.py", OLD, NEW))
    built = ws.build()
    assert built.returncode == 0, built.output
    assert built.state["origin"] == "cache", built.output
    assert "api/pkg.stats.mean" in built.read, built.state["read"]
    assert ws.differences() == []


CODE_OLD = "return sum(values) / len(values)\n"
CODE_NEW = "return sum(values) / len(values) + 1\n"

#: Imports ``pkg.stats`` before the gallery runs its example, then changes its code: the
#: example runs with the old code (it prints 2.0, the edited tree's build 3.0).
CODE_EDITOR = f"""\
from pathlib import Path


def _edit(app):
    import pkg.stats  # noqa: F401  (imported before the edit, as autosummary would)

    path = Path(app.srcdir).parent / "src" / "pkg" / "stats.py"
    text = path.read_text("utf-8")
    if {CODE_OLD!r} in text:
        path.write_text(text.replace({CODE_OLD!r}, {CODE_NEW!r}), "utf-8")


def setup(app):
    app.connect("builder-inited", _edit, priority=400)
    return {{"parallel_read_safe": True, "parallel_write_safe": True}}
"""


AFTER = '''"""
After
=====

Runs after plot_mean.py (sphinx-gallery orders them by their number of code lines).
"""

total = 0
for step in range(3):
    total += step
    total *= 2
print("after", total)
print("done")
'''


def test_a_module_edited_before_the_example_ran_runs_it_again_from_a_fresh_copy(tmp_path):
    ws = Workspace(tmp_path)
    for edit in local_extension("editor", CODE_EDITOR):
        ws.fresh_copy(edit)
    # An example after it: the cache stores the finished ones as each example starts,
    # then at the gallery's end, and says once that plot_mean.py makes no entry.
    ws.fresh_copy(write("docs/examples/plot_zz_after.py", AFTER))
    first = ws.build()
    assert first.returncode == 0, first.output
    assert "not storing examples/plot_mean.py: src/pkg/stats.py changed while it ran" in (
        first.output
    ), first.output
    assert first.output.count("not storing examples/plot_mean.py") == 1, first.output
    ws.fresh_copy(replace("src/pkg/stats.py", CODE_OLD, CODE_NEW))
    built = ws.build()
    assert built.returncode == 0, built.output
    assert "examples/plot_mean.py" in built.ran, built.report
    assert ws.differences() == []
