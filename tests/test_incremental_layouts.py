"""The Sphinx state of a project laid out differently: no ``.git``, ``pyproject.toml`` or
``setup.py`` marks its root, so the project is the folder of ``conf.py``; the package
``conf.py`` puts on ``sys.path`` (``sys.path.insert(0, "../src")``) lies outside it and
in no distribution, and so do the gallery's examples (``examples_dirs: ["../examples"]``).

No version stands for that package's edits: its modules count by their source, as the
example cache counts them, and a changed docstring is read again. The gallery's zips of
its examples differ on every build (they hold the files' times): the index page that
links them is not read again for that.

Each build is from a fresh copy of the tree, compared with a clean build file by file.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers.incremental_build import WRITTEN_WITH_ANY, Workspace, built_with, needs_state, replace

pytestmark = [pytest.mark.slow, needs_state]

EXAMPLE = {"auto_examples/plot_mean"}
TIMES_PAGE = "auto_examples/sg_execution_times"


def _unmarked(project: Path) -> None:
    """No marker of the root; the gallery's examples beside ``docs`` (outside the
    project) and its zips of every example, as sphinx-gallery makes them by default."""
    (project / "pyproject.toml").unlink()
    shutil.move(project / "docs" / "examples", project / "examples")
    conf = project / "docs" / "conf.py"
    text = conf.read_text("utf-8")
    for old, new in [
        ('"examples_dirs": ["examples"]', '"examples_dirs": ["../examples"]'),
        ('"download_all_examples": False', '"download_all_examples": True'),
    ]:
        assert old in text, old
        text = text.replace(old, new)
    conf.write_text(text, "utf-8")


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """The cache after a build of the unchanged, unmarked project."""
    root = tmp_path_factory.mktemp("unmarked")
    _, built = built_with(root, [_unmarked])
    assert built.state["origin"] == "none", built.output
    return root / "cache"


def _workspace(cache: Path, tmp_path: Path) -> Workspace:
    ws = Workspace(tmp_path)
    ws.fresh_copy(_unmarked)
    shutil.copytree(cache, ws.cache)
    return ws


def test_nothing_changed_reads_and_writes_nothing(base, tmp_path):
    ws = _workspace(base, tmp_path)
    built = ws.build()
    assert built.returncode == 0, built.output
    assert built.state["origin"] == "cache", built.output
    assert built.read - {TIMES_PAGE} == set(), built.state
    assert built.written - {TIMES_PAGE} == set(), built.state
    assert ws.differences() == []
    # What the project is, said once: nothing marks it, so the folder of conf.py.
    assert built.output.count("set docsaccel_cache_roots to count others") == 1, built.output


@pytest.mark.parametrize(
    ("edit", "pages"),
    [
        (
            replace("src/pkg/stats.py", "Average of the values.", "Arithmetic mean."),
            {"api/pkg.stats", "api/pkg.stats.mean"},
        ),
        (
            replace("src/pkg/base.py", "Say what this is.", "Say what kind of thing it is."),
            {"api/pkg.base.Base", "api/pkg.shapes.Circle"},
        ),
        (
            replace("src/pkg/_impl.py", "Help with ``x``.", "Help a lot with ``x``."),
            {"api/pkg", "api/pkg.helper"},
        ),
    ],
    ids=["docstring", "base class docstring", "re-exported function"],
)
def test_a_change_to_the_package_outside_the_project_is_read_again(base, tmp_path, edit, pages):
    ws = _workspace(base, tmp_path)
    ws.fresh_copy(edit)
    built = ws.build()
    assert built.returncode == 0, built.output
    assert built.state["origin"] == "cache", built.output
    # The example imports the package: it runs again (its page is read again when what
    # sphinx-gallery wrote of the run changed; a quick run's time may come out the same).
    assert "../examples/plot_mean.py" in built.ran
    timed = EXAMPLE | {TIMES_PAGE}
    assert built.read - timed == pages, built.state["read"]
    assert built.written - timed == pages | WRITTEN_WITH_ANY, built.state
    assert ws.differences() == []


def test_moved_checkout_reads_nothing_and_finds_the_package_beside_it(base, tmp_path):
    # The tree the state was made in still exists, unchanged: the package beside the
    # moved checkout is the one compared, so its edit is read again.
    ws = _workspace(base, tmp_path / "somewhere" / "else")
    built = ws.build()
    assert built.returncode == 0, built.output
    assert built.read - {TIMES_PAGE} == set(), built.state
    ws.fresh_copy(replace("src/pkg/stats.py", "Average of the values.", "Arithmetic mean."))
    built = ws.build()
    assert built.returncode == 0, built.output
    assert {"api/pkg.stats", "api/pkg.stats.mean"} <= built.read, built.state["read"]
    assert ws.differences() == []


def _module_doc_from_docs(project: Path) -> None:
    """``pkg.stats`` (outside the project) takes its docstring from a file under ``docs``
    when it is imported."""
    (project / "docs" / "stats_doc.txt").write_text("Statistics, from a file.\n", "utf-8")
    module = project / "src" / "pkg" / "stats.py"
    module.write_text(
        module.read_text("utf-8")
        + "\nimport os as _os\n\n"
        + "with open(_os.path.join(_os.path.dirname(__file__), '..', '..', 'docs',"
        + " 'stats_doc.txt'), encoding='utf-8') as _f:\n"
        + "    __doc__ = _f.read()\n",
        "utf-8",
    )


def test_a_file_a_module_outside_the_project_reads_is_a_dependency(tmp_path):
    # The module reading it is in no distribution and outside the roots: it carries what
    # it reads as a module under them does, so the page showing its docstring is read again.
    ws = Workspace(tmp_path)
    ws.fresh_copy(_unmarked)
    ws.fresh_copy(_module_doc_from_docs)
    built = ws.build()
    assert built.returncode == 0, built.output
    ws.fresh_copy(replace("docs/stats_doc.txt", "from a file", "from an edited file"))
    built = ws.build()
    assert built.returncode == 0, built.output
    assert built.state["origin"] == "cache", built.output
    assert "api/pkg.stats" in built.read, built.state["read"]
    assert ws.differences() == []
