"""The example cache never touches a source file: a file a page only shows is no output.

An example's page may show a file of the docs source (``.. image:: /_static/img/pic.gif``).
That file is a dependency of the page, not something the example's run wrote: an entry
never stores it, a hit never puts it back, and undoing a lookup (an example restored,
then made to run by the state an example running again leaves) never deletes it. Each
project is a git repository with every file committed and the build's outputs ignored:
after every build, ``git status`` shows nothing.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from helpers.cache_project import CONF, Build, Project, example_source

pytestmark = pytest.mark.slow

#: A 1x1 GIF: what the page shows.
GIF = (
    b"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00"
    b"\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;"
)
PICTURE = "docs/_static/img/pic.gif"
IGNORED = "__pycache__/\ndocs/auto_examples/\ndocs/sg_execution_times.rst\n"
SHOWS_PICTURE = example_source(
    "Shows a picture",
    "import logging\n\nlogging.getLogger('x')\nprint('a')\n\n"
    "# %%\n# The picture:\n#\n# .. image:: /_static/img/pic.gif\n\nprint('shown')\n",
)
USES_MYLIB = example_source("Uses mylib", 'import mylib.lib\n\nprint("b", mylib.lib.value())\n')


def _git(folder: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def _commit_all(project: Project, message: str) -> None:
    _git(project.pristine, "add", "-A")
    _git(project.pristine, "commit", "-q", "-m", message)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """Two examples in a committed repository: ``plot_a`` shows a picture of the docs
    source and makes a logger, ``plot_b`` calls a library whose module makes one."""
    project = Project(tmp_path)
    for path in (project.pristine / "docs" / "examples").glob("plot_*.py"):
        path.unlink()
    # Its package is imported by conf.py: loaded before any example runs.
    project.write("mylib/__init__.py", 'import logging\n\nlogger = logging.getLogger("mylib")\n')
    project.write("mylib/lib.py", "def value():\n    return 1\n")
    # plot_a runs first: it leaves state (a logger in the manager mylib's logger shares).
    by_name = '"show_memory": False, "within_subsection_order": "FileNameSortKey",'
    project.write("docs/conf.py", CONF.replace('"show_memory": False,', by_name))
    project.write("docs/examples/plot_a.py", SHOWS_PICTURE)
    project.write("docs/examples/plot_b.py", USES_MYLIB)
    project.write(".gitignore", IGNORED)
    (project.pristine / PICTURE).parent.mkdir(parents=True, exist_ok=True)
    (project.pristine / PICTURE).write_bytes(GIF)
    _git(project.pristine, "init", "-q")
    _commit_all(project, "start")
    return project


def _checkout(build: Build) -> Path:
    return build.docs.parent


def _assert_clean(build: Build) -> None:
    assert build.returncode == 0, build.output
    status = _git(_checkout(build), "status", "--porcelain", "--untracked-files=all")
    assert status == "", status


def _entry_files(project: Project, example: str) -> dict[str, str]:
    (entry,) = (project.cache / "entries").glob(f"examples__{example}--*")
    return json.loads((entry / "entry.json").read_text("utf-8"))["files"]


def test_a_picture_the_page_shows_is_never_stored_restored_or_deleted(project: Project) -> None:
    first = project.build()
    _assert_clean(first)
    assert first.executed() == {"plot_a.py", "plot_b.py"}
    stored = _entry_files(project, "plot_a.py")
    assert stored and not [name for name in stored if "pic.gif" in name]
    second = project.build()
    _assert_clean(second)
    assert second.cached() == {"plot_a.py", "plot_b.py"}
    project.write("docs/examples/plot_b.py", USES_MYLIB.replace('"b"', '"b edited"'))
    _commit_all(project, "edit plot_b")
    third = project.build()
    _assert_clean(third)
    assert "plot_b.py" in third.executed()
    assert (_checkout(third) / PICTURE).read_bytes() == GIF
    assert "pic.gif" not in third.output  # no page names a missing file


def test_a_page_naming_a_file_missing_when_recorded_hits_once_it_is_there(
    project: Project,
) -> None:
    _git(project.pristine, "rm", "-q", PICTURE)
    _commit_all(project, "no picture yet")
    first = project.build()
    assert first.returncode == 0, first.output
    assert first.executed() == {"plot_a.py", "plot_b.py"}
    assert "pic.gif" in first.output  # Sphinx: the image file is not readable
    still_missing = project.build()
    assert "plot_a.py" in still_missing.executed()
    assert still_missing.records["plot_a.py"]["cache"]["reason"] == "restored page incomplete"
    (project.pristine / PICTURE).parent.mkdir(parents=True, exist_ok=True)
    (project.pristine / PICTURE).write_bytes(GIF)
    _commit_all(project, "the picture")
    there = project.build()
    _assert_clean(there)
    assert there.cached() == {"plot_a.py", "plot_b.py"}
    assert (_checkout(there) / PICTURE).read_bytes() == GIF
