"""A sharded build that fails or is stopped never leaves the site's report page saying
an earlier build's verdict, as a serial build never does.

The project is laid out as a newcomer's: ``conf.py`` in ``documentation/``, a gallery at
the repository root with a nested sub-gallery, another inside the conf folder, and the
report page on. Real ``docsaccel shard-local`` runs in temporary folders.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.derived_files import assert_no_unfinished_text
from helpers.gallery_build import child_env
from helpers.processes import start_shard_local, wait_for_mark
from helpers.slow import require_slow

from docsaccel.contract import ended_by

pytestmark = pytest.mark.slow

CONF = """\
project = "newcomer"
extensions = ["sphinx_gallery.gen_gallery", "docsaccel.gallery"]
exclude_patterns = ["_build"]
sphinx_gallery_conf = {
    "examples_dirs": ["../tutorials", "recipes"],
    "gallery_dirs": ["auto_tutorials", "auto_recipes"],
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "show_memory": False,
}
docsaccel_budgets = "budgets.toml"
docsaccel_report_page = "budget_report"
"""
INDEX = """\
Newcomer
========

.. toctree::

   auto_tutorials/index
   auto_recipes/index
"""


def example(title: str, body: str) -> str:
    return f'"""\n{title}\n{"=" * len(title)}\n\nAn example.\n"""\n\n{body}\n'


FILES = {
    "documentation/conf.py": CONF,
    "documentation/index.rst": INDEX,
    "documentation/budgets.toml": 'default = "1m"\n',
    "documentation/recipes/README.txt": "Recipes\n=======\n",
    "documentation/recipes/plot_recipe.py": example("Recipe", 'print("recipe")'),
    "tutorials/README.txt": "Tutorials\n=========\n",
    "tutorials/plot_intro.py": example("Intro", 'print("intro")'),
    "tutorials/advanced/README.txt": "Advanced\n--------\n",
    "tutorials/advanced/plot_deep.py": example("Deep", 'print("deep")'),
}
FINE = "All examples within budget"
PAGE = Path("documentation/_build/html/budget_report.html")


def make_tree(root: Path) -> Path:
    for relative, text in FILES.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    return root


COMMAND = ["-m", "docsaccel.cli", "shard-local", "-W", "--docs", "documentation", "--shards", "2"]


def shard_local(root: Path, *args: str) -> subprocess.CompletedProcess:
    require_slow()
    return subprocess.run(
        [sys.executable, *COMMAND, *args],
        cwd=root,
        env=child_env({"DOCSACCEL_FAST": "1"}),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def published(tmp_path: Path) -> Path:
    """The tree after a sharded build that passed, its page saying all is fine."""
    root = make_tree(tmp_path / "tree")
    done = shard_local(root)
    assert done.returncode == 0, done.stdout + done.stderr
    assert FINE in (root / PAGE).read_text("utf-8")
    return root


def test_a_merged_site_publishes_no_derived_file_saying_it_did_not_finish(tmp_path) -> None:
    root = published(tmp_path)
    assert_no_unfinished_text(root / PAGE.parent)


def test_a_failed_shard_leaves_the_page_saying_the_build_failed(tmp_path) -> None:
    root = published(tmp_path)
    bad = root / "documentation" / "recipes" / "plot_bad.py"
    bad.write_text(example("Bad", 'raise RuntimeError("shard kaboom")'), encoding="utf-8")

    done = shard_local(root)

    assert done.returncode == 2, done.stdout + done.stderr
    page = (root / PAGE).read_text("utf-8")
    assert FINE not in page
    assert "The build failed" in page and "recipes/plot_bad.py" in page


def test_a_failed_dirhtml_shard_leaves_its_page_saying_the_build_failed(tmp_path) -> None:
    """``--builder dirhtml``: the page is ``budget_report/index.html``, which the command
    rewrites when a shard fails, as it does the ``html`` builder's page."""
    root = make_tree(tmp_path / "tree")
    page = root / PAGE.parent / "budget_report" / "index.html"
    done = shard_local(root, "--builder", "dirhtml")
    assert done.returncode == 0, done.stdout + done.stderr
    assert FINE in page.read_text("utf-8") and not (root / PAGE).exists()
    bad = root / "documentation" / "recipes" / "plot_bad.py"
    bad.write_text(example("Bad", 'raise RuntimeError("shard kaboom")'), encoding="utf-8")

    done = shard_local(root, "--builder", "dirhtml")

    assert done.returncode == 2, done.stdout + done.stderr
    text = page.read_text("utf-8")
    assert FINE not in text
    assert "The build failed" in text and "recipes/plot_bad.py" in text


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["sigint", "sigterm"])
def test_a_stopped_shard_local_leaves_the_page_saying_it_did_not_finish(
    tmp_path, signum: int
) -> None:
    root = published(tmp_path)
    started = tmp_path / "started.txt"
    body = f"import pathlib, time\npathlib.Path({str(started)!r}).write_text('1')\ntime.sleep(600)"
    (root / "tutorials" / "plot_intro.py").write_text(example("Intro", body), encoding="utf-8")
    process = start_shard_local(root, *COMMAND[3:])
    try:
        wait_for_mark(started, process)  # a shard runs the example
        process.send_signal(signum)
        out, err = process.communicate(timeout=300)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)

    assert process.returncode == 128 + signum, out + err  # a shell's code for the signal
    page = (root / PAGE).read_text("utf-8")
    assert FINE not in page
    assert "the build did not finish" in page
    # Named as a serial build stopped by the same signal names it.
    assert f"ended before its shards were merged: {ended_by(signum)}" in page
