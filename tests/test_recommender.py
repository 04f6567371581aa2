"""sphinx-gallery's recommender: the ``<stem>.recommendations`` file an example's page
includes is written by sphinx-gallery for every example of the gallery once all of them
ran, on every build; it is not an output of the example's run.

So the note of an example's run lists the same files on every run (sphinx-gallery's own
rebuild test: a rebuild that runs only the failing examples again rewrites none of their
notes), and a page restored from the example cache into a fresh copy is served though its
``.recommendations`` file is not there yet (sphinx-gallery writes it before Sphinx reads
the page).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.cache_project import CONF, Project, differing
from helpers.gallery_build import build, make_project

from docsaccel import sg_compat
from docsaccel.records import run_outputs

pytestmark = pytest.mark.slow

RECOMMENDER = 'sphinx_gallery_conf["recommender"] = {"enable": True, "n_examples": 1}\n'


def test_a_rebuild_rewrites_no_note_of_a_failing_example(tmp_path: Path) -> None:
    conf = (
        RECOMMENDER
        + 'sphinx_gallery_conf["expected_failing_examples"] = ["examples/plot_crash.py"]\n'
    )
    src = make_project(tmp_path, ["plot_figure.py", "plot_crash.py"], conf=conf)
    first = build(src)
    assert first.returncode == 0, first.output
    target = src / "auto_examples" / "plot_crash.py"
    recommendations = src / "auto_examples" / "plot_crash.recommendations"
    assert recommendations.is_file()  # the page includes it
    marker = sg_compat.run_marker_file(target)
    before = marker.stat().st_mtime_ns, marker.read_bytes()
    listed = run_outputs(target)
    assert listed is not None and "auto_examples/plot_crash.rst" in listed
    assert "auto_examples/plot_crash.recommendations" not in listed

    again = build(src)
    assert again.returncode == 0, again.output
    assert again.record("plot_crash.py")["pid"] is not None  # it ran again (it fails)
    assert (marker.stat().st_mtime_ns, marker.read_bytes()) == before
    assert run_outputs(target) == listed


def test_a_restored_page_gets_its_recommendations_from_sphinx_gallery(tmp_path: Path) -> None:
    project = Project(tmp_path)
    project.write("docs/conf.py", CONF + RECOMMENDER)
    cold = project.build()
    assert cold.returncode == 0, cold.output
    assert cold.cached() == set()
    # Each build is a fresh copy: the warm one starts without any .recommendations file.
    warm = project.build()
    assert warm.returncode == 0, warm.output
    assert warm.executed() == set(), {n: r.get("cache") for n, r in warm.records.items()}
    assert warm.cached() == set(cold.records)
    files = warm.gallery_files()
    assert all(f"{Path(n).stem}.recommendations" in files for n in cold.records)
    assert differing(cold.gallery_files(), files) == []
