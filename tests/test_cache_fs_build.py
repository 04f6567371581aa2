"""The example cache and the file system in real builds, each from a fresh copy of the
project: a file an example writes that a later one reads, and a folder an example lists.

sphinx-gallery runs an example in its own folder (``docs/examples``), so ``../../data`` is
the project's ``data/``; with its default order (fewest lines of code first) the writer
runs first, although its name sorts after the reader's.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers.cache_project import Build, Project, example_source

from docsaccel.cache.fingerprint import file_digest
from docsaccel.cache.manage import explain

pytestmark = pytest.mark.slow

WRITER = example_source(
    "Write", 'from pathlib import Path\nPath("../../data/derived.txt").write_text("derived 1\\n")\n'
)
READER = example_source(
    "Read",
    "from pathlib import Path\n\n"
    'text = Path("../../data/derived.txt").read_text()\n'
    'print("read:", text.strip())\n'
    'print("done")\n',
)
OVERWRITER = example_source(
    "Overwrite",
    "from pathlib import Path\n\n"
    'path = Path("../../data/derived.txt")\n'
    "before = path.read_text().strip()\n"
    'path.write_text("derived 2\\n")\n'
    'print("overwrote", before)\n',
)
GLOBBER = example_source(
    "Glob",
    "import glob\n\n"
    'names = sorted(glob.glob("../../data/*.csv"))\n'
    "for name in names:\n"
    "    with open(name) as stream:\n"
    '        print(name.rsplit("/", 1)[-1], stream.read().strip())\n'
    'print("found", len(names))\n',
)

# The file is written by a child process: no audit event of the build's process shows it.
CHILD_WRITER = example_source(
    "Child write",
    "import subprocess\nimport sys\n\nsubprocess.run([sys.executable, '-c', "
    + repr("open('../../data/child.txt', 'w').write('from child\\n')")
    + "], check=True)\n",
)
# Longer than the writer, so it runs after it (see the module docstring).
CHILD_READER = READER.replace("derived.txt", "child.txt") + 'print("more")\nprint("lines")\n'


@pytest.fixture
def project(tmp_path: Path) -> Project:
    project = Project(tmp_path)
    for name in ("plot_a_alpha.py", "plot_b_beta.py", "plot_c_data.py", "plot_d_dist.py"):
        (project.pristine / "docs" / "examples" / name).unlink()
    return project


def _entry(project: Project, name: str) -> dict:
    (folder,) = (project.cache / "entries").glob(f"examples__{name}--*")
    return json.loads((folder / "entry.json").read_text("utf-8"))


def _page(build: Build, name: str) -> str:
    return (build.outdir / "auto_examples" / f"{name}.html").read_text("utf-8")


def _derived(build: Build) -> Path:
    return build.docs.parent / "data" / "derived.txt"


def test_a_file_an_example_wrote_is_put_back_for_the_next_one(project: Project) -> None:
    project.write("docs/examples/plot_w_write.py", WRITER)
    project.write("docs/examples/plot_r_read.py", READER)
    project.write("docs/examples/plot_x_overwrite.py", OVERWRITER)
    cold = project.build()
    assert cold.returncode == 0, cold.output
    assert cold.executed() == {
        "plot_w_write.py",
        "plot_r_read.py",
        "plot_x_overwrite.py",
        "plot_e_figure.py",
    }
    # The order they ran in: the writer, the reader, then the one overwriting the file.
    assert "overwrote derived 1" in _page(cold, "plot_x_overwrite")
    assert "read: derived 1" in _page(cold, "plot_r_read")
    writer = _entry(project, "plot_w_write.py")
    assert writer["written"] and list(writer["written"]) == ["data/derived.txt"]
    assert "data/derived.txt" not in writer["deps"]["files"]
    # Its own run kept what it wrote, not what the later example overwrote it with.
    (writer_folder,) = (project.cache / "entries").glob("examples__plot_w_write.py--*")
    kept = writer_folder / "written" / "data" / "derived.txt"
    assert kept.read_text("utf-8") == "derived 1\n"
    reader = _entry(project, "plot_r_read.py")
    assert reader["deps"]["files"] == {"data/derived.txt": file_digest(kept)}
    # Nothing recorded a listing: the import system's and matplotlib's do not count.
    for name in cold.executed():
        assert _entry(project, name)["deps"]["listings"] == {}, name

    warm = project.build()  # a fresh copy: data/derived.txt is not there
    assert warm.returncode == 0, warm.output
    assert warm.executed() == set()
    assert _page(warm, "plot_r_read") == _page(cold, "plot_r_read")
    assert _page(warm, "plot_x_overwrite") == _page(cold, "plot_x_overwrite")
    # Both writers put back in the order they run: the last one's content stays.
    assert _derived(warm).read_text("utf-8") == "derived 2\n"

    # The writer's source changes but not what it writes: the examples reading the file
    # run again too (what it will write is not known when they are looked up).
    project.write("docs/examples/plot_w_write.py", WRITER + "# a comment\n")
    edited = project.build()
    assert edited.returncode == 0, edited.output
    assert edited.executed() == {"plot_w_write.py", "plot_r_read.py", "plot_x_overwrite.py"}
    assert edited.records["plot_r_read.py"]["cache"]["reason"] == (
        "data/derived.txt is written by examples/plot_w_write.py, which runs again: source changed"
    )
    assert edited.records["plot_w_write.py"]["cache"]["reason"] == "source changed"
    # It reads the file first; writing it too, it would otherwise be overwritten later.
    assert edited.records["plot_x_overwrite.py"]["cache"]["reason"] == (
        "data/derived.txt is written by examples/plot_w_write.py, which runs again: source changed"
    )
    assert _derived(edited).read_text("utf-8") == "derived 2\n"
    assert project.build().executed() == set()

    project.write("docs/examples/plot_w_write.py", WRITER.replace("derived 1", "derived 3"))
    changed = project.build()
    assert changed.executed() == {"plot_w_write.py", "plot_r_read.py", "plot_x_overwrite.py"}
    assert "read: derived 3" in _page(changed, "plot_r_read")
    again = project.build()
    assert again.executed() == set()
    assert "read: derived 3" in _page(again, "plot_r_read")


def test_a_file_a_child_process_wrote_is_put_back_for_the_next_one(project: Project) -> None:
    project.write("docs/examples/plot_c_child.py", CHILD_WRITER)
    project.write("docs/examples/plot_r_read.py", CHILD_READER)
    cold = project.build()
    assert cold.returncode == 0, cold.output
    assert "read: from child" in _page(cold, "plot_r_read")
    assert list(_entry(project, "plot_c_child.py")["written"]) == ["data/child.txt"]
    assert "data/child.txt" in _entry(project, "plot_r_read.py")["deps"]["files"]
    assert project.build().executed() == set()
    # The writer is restored, not run: what its child process wrote is put back for the
    # reader, which runs again.
    project.write("docs/examples/plot_r_read.py", CHILD_READER + "# a comment\n")
    edited = project.build()
    assert edited.returncode == 0, edited.output
    assert edited.executed() == {"plot_r_read.py"}
    assert "read: from child" in _page(edited, "plot_r_read")


def test_a_corrupt_written_file_makes_the_writer_run_with_a_warning(project: Project) -> None:
    project.write("docs/examples/plot_w_write.py", WRITER)
    project.write("docs/examples/plot_r_read.py", READER)
    assert project.build().returncode == 0
    (folder,) = (project.cache / "entries").glob("examples__plot_w_write.py--*")
    (folder / "written" / "data" / "derived.txt").write_text("tampered", "utf-8")
    again = project.build()
    assert again.returncode == 0, again.output
    assert again.executed() == {"plot_w_write.py", "plot_r_read.py"}
    assert "cannot put back data/derived.txt" in again.output
    assert "read: derived 1" in _page(again, "plot_r_read")
    assert _derived(again).read_text("utf-8") == "derived 1\n"

    # An entry naming a file the project does not count (.git): refused, nothing written.
    (folder,) = (project.cache / "entries").glob("examples__plot_w_write.py--*")
    meta = json.loads((folder / "entry.json").read_text("utf-8"))
    meta["written"][".git/hooks/pre-commit"] = meta["written"]["data/derived.txt"]
    (folder / "written" / ".git" / "hooks").mkdir(parents=True)
    shutil.copyfile(
        folder / "written" / "data" / "derived.txt",
        folder / "written" / ".git" / "hooks" / "pre-commit",
    )
    (folder / "entry.json").write_text(json.dumps(meta), "utf-8")
    hostile = project.build()
    assert hostile.returncode == 0, hostile.output
    assert hostile.records["plot_w_write.py"]["cache"]["reason"] == "entry corrupt"
    assert "would write .git/hooks/pre-commit" in hostile.output
    assert not (hostile.docs.parent / ".git" / "hooks").exists()


def test_a_file_added_to_a_listed_folder_reruns_the_example_that_listed_it(
    project: Project,
) -> None:
    project.write("docs/examples/plot_g_glob.py", GLOBBER)
    cold = project.build()
    assert cold.returncode == 0, cold.output
    assert "found 1" in _page(cold, "plot_g_glob")
    listing = _entry(project, "plot_g_glob.py")["deps"]["listings"]
    assert listing["data"]["names"] == ["table.csv"]

    assert project.build().executed() == set()

    project.write("data/extra.csv", "x\n")
    added = project.build()
    assert added.returncode == 0, added.output
    assert added.executed() == {"plot_g_glob.py"}
    assert added.records["plot_g_glob.py"]["cache"]["reason"] == ("data/ listing changed (1 added)")
    assert "found 2" in _page(added, "plot_g_glob")
    assert project.build().executed() == set()

    text, code = explain(
        "examples/plot_g_glob.py", cache=project.cache, docs=project.pristine / "docs"
    )
    assert code == 0, text
    assert "same    listing data/ (2 names)" in text
    project.write("data/third.csv", "y\n")
    text, _ = explain(
        "examples/plot_g_glob.py", cache=project.cache, docs=project.pristine / "docs"
    )
    assert "CHANGED listing data/ (2 names)" in text
    assert "- data/ listing changed (1 added)" in text


def test_roots_above_the_marked_root_keep_writes_and_listings(project: Project) -> None:
    """A ``pyproject.toml`` in the docs folder marks it as the root; the project widens the
    roots to the repository above it, where the examples write and list."""
    project.write("docs/pyproject.toml", '[project]\nname = "docs"\nversion = "0"\n')
    conf = project.pristine.joinpath("docs/conf.py").read_text("utf-8")
    project.write("docs/conf.py", conf + 'docsaccel_cache_roots = [".."]\n')
    project.write("docs/examples/plot_w_write.py", WRITER)
    project.write("docs/examples/plot_r_read.py", READER)
    project.write("docs/examples/plot_g_glob.py", GLOBBER)
    cold = project.build()
    assert cold.returncode == 0, cold.output
    assert "WARNING" not in cold.output
    assert _entry(project, "plot_w_write.py")["written"].keys() == {"data/derived.txt"}
    warm = project.build()
    assert warm.returncode == 0, warm.output
    assert warm.executed() == set()
    assert "read: derived 1" in _page(warm, "plot_r_read")
    assert _derived(warm).read_text("utf-8") == "derived 1\n"
    project.write("data/extra.csv", "x\n")
    added = project.build()
    assert added.executed() == {"plot_g_glob.py"}
    # Paths are relative to the repository, not to the docs folder the marker names.
    text, _ = explain("examples/plot_g_glob.py", cache=project.cache, docs=added.docs)
    assert "same    listing data/ (3 names)" in text
    assert "up to date" in text
