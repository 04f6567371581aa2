"""The example cache when the galleries' folders change between two builds.

An entry's files are paths inside the source dir: after ``gallery_dirs`` is renamed,
moved into a sub-folder or swapped between two galleries, restoring them where they were
would publish pages no toctree includes (a warning, so ``-W`` fails) and leave a folder
the configuration no longer uses. Each layout change is built with the cache and
compared, file by file, with a clean build of the same tree.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.cache_project import CONF, Project, example_source

from docsaccel.incremental.oracle import differences, output_files

pytestmark = pytest.mark.slow

#: Only the example cache: the Sphinx state is left out, so the files compared are the
#: ones the restored examples make.
EXAMPLES_ONLY = {"DOCSACCEL_CACHE_SPHINX": "0"}


def _layout(project: Project, pairs: list[tuple[str, str]]) -> None:
    """Point ``sphinx_gallery_conf`` at ``pairs`` of (examples, gallery) folders; an
    examples folder of the pairs that is not there is ``examples`` renamed."""
    for examples, _ in pairs:
        folder = project.pristine / "docs" / examples
        if not folder.exists():
            (project.pristine / "docs" / "examples").rename(folder)
    examples = [e for e, _ in pairs]
    galleries = [g for _, g in pairs]
    conf = CONF.replace('"examples_dirs": ["examples"]', f'"examples_dirs": {examples!r}')
    conf = conf.replace('"gallery_dirs": ["auto_examples"]', f'"gallery_dirs": {galleries!r}')
    conf = conf.replace('["_build", "examples"]', repr(["_build", "examples", "more", "sources"]))
    project.write("docs/conf.py", conf)
    toctree = "".join(f"   {g}/index\n" for g in sorted(galleries))
    project.write("docs/index.rst", f"Tiny\n====\n\n.. toctree::\n\n{toctree}")


def _small(project: Project) -> Project:
    """The tiny project with two quick examples and a second gallery, ``more``."""
    for name in ("plot_c_data.py", "plot_d_dist.py", "plot_e_figure.py"):
        (project.pristine / "docs" / "examples" / name).unlink()
    project.write("docs/more/README.rst", "More\n====\n")
    project.write("docs/more/plot_m.py", example_source("More", 'print("more")\n'))
    return project


#: ``{change: (pairs before, pairs after)}``.
CHANGES = {
    "gallery renamed": ([("examples", "auto_examples")], [("examples", "gallery")]),
    "gallery moved into a sub-folder": (
        [("examples", "auto_examples")],
        [("examples", "tutorials/auto_examples")],
    ),
    "galleries swapped": (
        [("examples", "auto_examples"), ("more", "auto_more")],
        [("examples", "auto_more"), ("more", "auto_examples")],
    ),
    "examples renamed": ([("examples", "auto_examples")], [("sources", "auto_examples")]),
}
#: Why each example ran again after the change.
REASONS = {
    "gallery renamed": {"gallery folder changed: auto_examples → gallery"},
    "gallery moved into a sub-folder": {
        "gallery folder changed: auto_examples → tutorials/auto_examples"
    },
    "galleries swapped": {
        "gallery folder changed: auto_examples → auto_more",
        "gallery folder changed: auto_more → auto_examples",
    },
    "examples renamed": {"new example"},
}


@pytest.mark.parametrize("change", CHANGES)
def test_a_changed_gallery_folder_builds_what_a_clean_build_builds(
    tmp_path: Path, change: str
) -> None:
    project = _small(Project(tmp_path))
    before, after = CHANGES[change]
    _layout(project, before)
    first = project.build("-W", env=EXAMPLES_ONLY)
    assert first.returncode == 0, first.output
    assert first.cached() == set(), first.records

    _layout(project, after)
    cached = project.build("-W", env=EXAMPLES_ONLY)
    clean = project.build("-W", env={"DOCSACCEL_CACHE": "0"})
    assert clean.returncode == 0, clean.output
    assert cached.returncode == 0, cached.output
    assert differences(output_files(cached.outdir), output_files(clean.outdir)) == []
    # Nothing put back where this build does not write it: every example ran again.
    assert cached.cached() == set(), cached.records
    assert {r["cache"]["reason"] for r in cached.records.values()} == REASONS[change]
    folders = {p.relative_to(clean.docs) for p in clean.docs.rglob("*") if p.is_dir()}
    assert {p.relative_to(cached.docs) for p in cached.docs.rglob("*") if p.is_dir()} == folders
    unused = {g for _, g in before} - {g for _, g in after}
    assert not any((cached.docs / g).exists() for g in unused), unused

    # The entries the build after the change stored are those restored next time.
    again = project.build("-W", env=EXAMPLES_ONLY)
    assert again.returncode == 0, again.output
    assert again.executed() == set()
    assert again.cached() == set(clean.records)
    assert differences(output_files(again.outdir), output_files(clean.outdir)) == []
