"""What the project's modules read when imported before docsaccel watched: a child Python
imports them again under the recorder (:mod:`docsaccel.cache.early`)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from docsaccel.cache.deps import Project
from docsaccel.cache.early import early_reads, loaded_project_modules


@pytest.fixture
def layout(tmp_path: Path):
    """A package under the roots (``proj/earlypkg``) reading a table at import, and a
    module beside them (``early_side.py``) reading a file under them."""
    proj = tmp_path / "proj"
    (proj / "earlypkg").mkdir(parents=True)
    (proj / "table.csv").write_text("a,b\n", "utf-8")
    (proj / "side.txt").write_text("side\n", "utf-8")
    (proj / "earlypkg" / "__init__.py").write_text(
        "import pathlib\nTABLE = (pathlib.Path(__file__).parents[1] / 'table.csv').read_text()\n",
        "utf-8",
    )
    (tmp_path / "early_side.py").write_text(
        "import pathlib\n"
        "TEXT = (pathlib.Path(__file__).parent / 'proj' / 'side.txt').read_text()\n",
        "utf-8",
    )
    (tmp_path / "early_fails.py").write_text(
        "import sys\nif sys.argv[0] == '-c':\n    raise RuntimeError('only once')\n", "utf-8"
    )
    sys.path[:0] = [str(proj), str(tmp_path)]
    try:
        yield tmp_path, Project(str(proj), (str(proj),))
    finally:
        sys.path.remove(str(proj))
        sys.path.remove(str(tmp_path))
        for name in ("earlypkg", "early_side", "early_fails"):
            sys.modules.pop(name, None)


def test_the_reads_of_modules_imported_before_are_seen_again(layout):
    top, project = layout
    import early_side  # noqa: F401
    import earlypkg  # noqa: F401

    names = loaded_project_modules(project)
    assert "earlypkg" in names and "early_side" in names
    assert not any(n.startswith("docsaccel") or n == "json" for n in names)
    reads, why, *_ = early_reads(project, names, str(top))
    assert why is None
    assert reads[str(top / "proj" / "earlypkg" / "__init__.py")] == {
        str(top / "proj" / "table.csv")
    }
    assert reads[str(top / "early_side.py")] == {str(top / "proj" / "side.txt")}


def test_a_module_that_fails_to_import_again_makes_the_reads_unknown(layout):
    top, project = layout
    reads, why, *_ = early_reads(project, ["early_side", "early_fails"], str(top))
    assert reads == {}
    assert why is not None and "early_fails" in why and "only once" in why


def test_nothing_loaded_starts_no_child(layout):
    top, project = layout
    assert early_reads(project, [], str(top)) == ({}, None, None, {}, {})


def test_conf_py_runs_again_before_the_imports_and_loader_data_counts(layout):
    # conf.py sets what the package reads before importing the submodule that reads it;
    # the submodule reads a second file through its loader (pkgutil.get_data).
    top, project = layout
    proj = top / "proj"
    (proj / "earlypkg" / "core.py").write_text(
        "import pkgutil\n"
        "from earlypkg import DATA\n"
        "TEXT = open(DATA).read() if DATA else 'default'\n"
        "EXTRA = pkgutil.get_data('earlypkg', 'extra.txt')\n",
        "utf-8",
    )
    (proj / "earlypkg" / "__init__.py").write_text("DATA = None\n", "utf-8")
    (proj / "earlypkg" / "extra.txt").write_text("extra\n", "utf-8")
    (proj / "chosen.txt").write_text("chosen\n", "utf-8")
    conf = proj / "conf.py"
    conf.write_text(
        "import os\nimport earlypkg\n"
        "earlypkg.DATA = os.path.abspath('chosen.txt')\n"
        "import earlypkg.core\n",
        "utf-8",
    )
    reads, why, *_ = early_reads(project, ["earlypkg", "earlypkg.core"], str(proj), str(conf))
    assert why is None
    assert reads[str(proj / "earlypkg" / "core.py")] == {
        str(proj / "chosen.txt"),
        str(proj / "earlypkg" / "extra.txt"),
    }
