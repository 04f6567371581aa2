"""The builds the shard commands start import the project's packages as the user's own
``sphinx-build`` run from the same folder does: a folder there named as a package on
``sys.path`` (matplotlib's repository root holds ``mypkg/``) is not imported instead."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.gallery_build import child_env, make_doc_layout
from helpers.slow import require_slow

pytestmark = pytest.mark.slow

EXAMPLE = '''"""
Where {stem}
============
"""
import mypkg

print("mypkg from", mypkg.__file__, mypkg.value)
'''


def _project(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A repository root holding ``doc/``, ``examples/`` and a folder ``mypkg/`` that is
    not the package ``mypkg`` the environment gives (on ``PYTHONPATH``)."""
    root = tmp_path / "repo"
    root.mkdir()
    make_doc_layout(root, ["auto_examples"], examples_dirs=["../examples"])
    (root / "examples").mkdir()
    (root / "examples" / "README.rst").write_text("Examples\n========\n", encoding="utf-8")
    for stem in ("one", "two"):
        text = EXAMPLE.format(stem=stem)
        (root / "examples" / f"plot_{stem}.py").write_text(text, encoding="utf-8")
    (root / "mypkg").mkdir()
    (root / "mypkg" / "__init__.py").write_text('"""Not the package."""\n', encoding="utf-8")
    installed = tmp_path / "site" / "mypkg"
    installed.mkdir(parents=True)
    (installed / "__init__.py").write_text("value = 42\n", encoding="utf-8")
    path = os.pathsep.join(p for p in (str(installed.parent), os.environ.get("PYTHONPATH")) if p)
    return root, child_env({"PYTHONPATH": path, "DOCSACCEL_CACHE": "0"})


def _run(root: Path, env: dict[str, str], *command: str) -> subprocess.CompletedProcess:
    require_slow()
    return subprocess.run(
        list(command), cwd=root, env=env, capture_output=True, text=True, timeout=600, check=False
    )


def test_shard_local_from_the_root_imports_what_sphinx_build_there_imports(tmp_path) -> None:
    root, env = _project(tmp_path)
    installed = str(tmp_path / "site" / "mypkg" / "__init__.py")
    sphinx_build = str(Path(sys.executable).with_name("sphinx-build"))

    serial = _run(root, env, sphinx_build, "-b", "html", "-q", "doc", "out")
    assert serial.returncode == 0, serial.stdout + serial.stderr
    assert installed in (root / "out" / "auto_examples" / "plot_one.html").read_text("utf-8")

    command = (sys.executable, "-m", "docsaccel.cli", "shard-local", "--docs", "doc")
    sharded = _run(root, env, *command, "--shards", "2")
    assert sharded.returncode == 0, sharded.stdout + sharded.stderr
    site = root / "doc" / "_build" / "html" / "auto_examples"
    for stem in ("one", "two"):
        assert installed in (site / f"plot_{stem}.html").read_text("utf-8"), stem
