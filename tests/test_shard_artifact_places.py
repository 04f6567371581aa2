"""Shard artifacts kept inside the project: ``conf.py`` at the repository root (the sources
beside it, nothing excluded), galleries ``gallery/`` (a nested subsection) and ``howto/``
built into ``generated/``, sharded along the guide's CI path: ``shard-build`` in two
clones, their artifacts copied into a third, ``shard-merge`` there.

The merge of artifacts put among the sources publishes the serial site (no artifact page
read as a document); an artifact inside an examples or a gallery folder is refused in one
line; a merge build that fails says why in its line.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_shard_layouts import built_files, example, run

pytestmark = pytest.mark.slow

CONF = """\
project = "rooted"
extensions = ["sphinx_gallery.gen_gallery", "docsaccel.gallery"]
exclude_patterns = []
sphinx_gallery_conf = {
    "examples_dirs": ["gallery", "howto"],
    "gallery_dirs": ["generated/gallery", "generated/howto"],
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "show_memory": False,
}
"""
INDEX = """\
Rooted
======

.. toctree::

   generated/gallery/index
   generated/howto/index
"""
FILES = {
    "conf.py": CONF,
    "index.rst": INDEX,
    "gallery/README.txt": "Gallery\n=======\n",
    "gallery/plot_first.py": example("First", 'print("first ran")'),
    "gallery/intro/README.txt": "Intro\n-----\n",
    "gallery/intro/plot_sleep.py": example("Sleep", "import time\n\ntime.sleep(0.05)"),
    "howto/README.txt": "How to\n======\n",
    "howto/plot_how.py": example("How", 'print("how ran")'),
    "howto/plot_more.py": example("More", 'print("more ran")'),
}


def make_tree(root: Path, files: dict[str, str] = FILES) -> Path:
    shutil.rmtree(root, ignore_errors=True)
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    return root


def docsaccel(root: Path, *args: str):
    return run(root, "-m", "docsaccel.cli", *args)


def shard_build(root: Path, index: int, artifact: str):
    return docsaccel(
        root, "shard-build", "--docs", ".", "--shards", "2", "--index", str(index),
        "--artifact", artifact,
    )  # fmt: skip


def site_files(root: Path) -> dict[str, bytes]:
    """The site in ``_build/html`` and the source tree, the build folder's other files
    (the serial doctrees, the shard commands' work) left aside."""
    files = built_files(root, root / "_build" / "html")
    return {name: data for name, data in files.items() if not name.startswith("_build/")}


@pytest.fixture(scope="module")
def rooted(tmp_path_factory) -> tuple[Path, dict[str, bytes], list[Path]]:
    """The tree's folder, the files of its serial ``sphinx-build -M html . _build -W`` and
    the artifacts of its two shards, each built in a clone at the same place."""
    base = tmp_path_factory.mktemp("rooted")
    tree = base / "tree"
    done = run(make_tree(tree), "-m", "sphinx", "-M", "html", ".", "_build", "-W")
    assert done.returncode == 0, done.stdout + done.stderr
    serial = site_files(tree)
    artifacts = []
    for index in (0, 1):
        done = shard_build(make_tree(tree), index, f"art{index}")
        assert done.returncode == 0, done.stdout + done.stderr
        kept = base / "artifacts" / f"art{index}"
        kept.parent.mkdir(exist_ok=True)
        artifacts.append(Path(shutil.move(tree / f"art{index}", kept)))
    shutil.rmtree(tree)
    return tree, serial, artifacts


def place_artifacts(root: Path, artifacts: list[Path], folder: str) -> None:
    for index, artifact in enumerate(artifacts):
        shutil.copytree(artifact, root / folder / str(index))


def test_artifacts_merged_from_inside_the_project_publish_the_serial_site(rooted) -> None:
    tree, serial, artifacts = rooted
    root = make_tree(tree)
    place_artifacts(root, artifacts, "shards")

    done = docsaccel(root, "shard-merge", "-W", "--docs", ".", "shards")

    assert done.returncode == 0, done.stdout + done.stderr
    assert "duplicate label" not in done.stdout + done.stderr
    shutil.rmtree(root / "shards")
    site = site_files(root)
    assert not [name for name in site if "shards/" in name]
    assert site == serial


@pytest.mark.parametrize("artifact", ["gallery/art", "gallery/intro/art", "generated/gallery/art"])
def test_an_artifact_among_examples_or_gallery_pages_is_refused(rooted, artifact) -> None:
    tree, _serial, _artifacts = rooted
    root = make_tree(tree)

    done = shard_build(root, 0, artifact)

    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert f"--artifact {root / artifact} " in lines[0]
    assert "sphinx_gallery_conf" in lines[0]
    assert not (root / artifact / "manifest.json").exists()
    assert not (root / "_build" / "shard-work").exists()


def test_a_merge_of_artifacts_in_an_examples_folder_is_refused(rooted) -> None:
    tree, _serial, artifacts = rooted
    root = make_tree(tree)
    place_artifacts(root, artifacts, "gallery/shards")

    done = docsaccel(root, "shard-merge", "--docs", ".", "gallery/shards")

    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert f"{root / 'gallery' / 'shards'}" in lines[0]
    assert "an examples folder of sphinx_gallery_conf" in lines[0]
    assert not (root / "_build" / "html").exists()


def test_a_failed_merge_build_says_its_first_warning(rooted) -> None:
    tree, _serial, artifacts = rooted
    files = {**FILES, "index.rst": INDEX + "   missing\n"}
    root = make_tree(tree, files)

    done = docsaccel(root, "shard-merge", "-W", "--docs", ".", str(artifacts[0].parent))

    assert done.returncode == 2, done.stdout + done.stderr
    said = [line for line in done.stderr.splitlines() if line.startswith("docsaccel ")]
    assert len(said) == 1, done.stderr
    assert "failed with exit code 1: " in said[0]
    assert "nonexisting document 'missing'" in said[0]


def test_a_shard_whose_artifact_cannot_be_kept_leaves_none_among_the_sources(rooted) -> None:
    # The build only warns of the failing example, so the shard fails while it keeps the
    # outputs: a partial artifact, without its manifest, would be read as documents.
    conf = CONF.replace(
        '"show_memory": False,', '"show_memory": False,\n    "only_warn_on_example_error": True,'
    )
    files = {
        **FILES,
        "conf.py": conf,
        "howto/plot_more.py": example("More", "raise ValueError('no')"),
    }
    root = make_tree(rooted[0], files)

    done = docsaccel(
        root, "shard-build", "--docs", ".", "--shards", "1", "--index", "0", "--artifact", "art"
    )

    assert done.returncode == 2, done.stdout + done.stderr
    assert "howto/plot_more.py was executed by shard 0" in done.stderr
    assert not (root / "art").exists()
