"""Two galleries each holding an example of one file name: the images Sphinx copies into
``_images`` under one name are numbered as a clean build numbers them.

Sphinx names the second image of a file name it meets ``<stem>1<suffix>``, and a clean
serial build meets them in the documents' sorted order. Both galleries' thumbnails are
``sphx_glr_plot_mean_thumb.png``: the API page of ``pkg.stats.mean`` shows both (its
"examples using" list, the first gallery's first) and each gallery's index page shows its
own. A restored build must still number them as a clean build: after one of the two
examples is removed (the kept environment holds the other's number), and when both
galleries' pages are read again by parallel readers (Sphinx takes their images in the
order the readers finish).

Each build is from a fresh copy of the tree, compared with a clean build file by file.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.incremental_build import Workspace, from_cache, needs_state, replace, write

pytestmark = [pytest.mark.slow, needs_state]

THUMB = "sphx_glr_plot_mean_thumb"
FIRST, SECOND = "docs/examples/plot_mean.py", "demos/plot_mean.py"


def _example(title: str, intro: str) -> str:
    return (
        f'"""\n{title}\n{"=" * len(title)}\n\n{intro}\n"""\n\n'
        "from pkg.stats import mean\n\nprint(mean([4.0, 5.0]))\n"
    )


#: A second gallery, outside ``docs``, with an example named as the first gallery's.
SECOND_GALLERY = [
    replace("docs/conf.py", '["examples"]', '["examples", "../demos"]'),
    replace("docs/conf.py", '["auto_examples"]', '["auto_examples", "demos"]'),
    replace(
        "docs/conf.py",
        "templates_path",
        'suppress_warnings = ["sphinx_gallery.duplicate_filename"]\ntemplates_path',
    ),
    replace("docs/index.rst", "auto_examples/index", "auto_examples/index\n   demos/index"),
    write("demos/README.txt", "Demos\n=====\n"),
    write(SECOND, _example("Mean demo", "The mean again.")),
]


def _remove_first(project: Path) -> None:
    (project / FIRST).unlink()


def _thumbs(ws: Workspace) -> dict[str, list[str]]:
    """The thumbnail names each gallery's index page shows (for a failure's message)."""
    found = {}
    for gallery in ("auto_examples", "demos"):
        page = ws.outdir / gallery / "index.html"
        text = page.read_text("utf-8") if page.is_file() else ""
        found[gallery] = sorted({w.split("/")[-1] for w in text.split('"') if THUMB in w})
    return found


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = Workspace(tmp_path_factory.mktemp("base"))
    for edit in SECOND_GALLERY:
        ws.fresh_copy(edit)
    built = ws.build()
    assert built.returncode == 0, built.output
    return ws.cache


def test_removing_one_of_two_examples_of_a_name_numbers_the_other_as_a_clean_build(
    base: Path, tmp_path: Path
):
    ws = from_cache(base, tmp_path, [*SECOND_GALLERY, _remove_first])
    built = ws.build()
    assert built.returncode == 0, built.output
    assert built.state["origin"] == "cache", built.output
    # The other gallery's page kept its image's number: it is read again, numbered anew.
    assert {"demos/index", "api/pkg.stats.mean"} <= built.read, built.state["read"]
    assert ws.differences() == [], _thumbs(ws)
    assert _thumbs(ws) == {"auto_examples": [], "demos": [f"{THUMB}.png"]}


def test_pages_of_both_examples_read_in_parallel_number_them_as_a_clean_build(
    base: Path, tmp_path: Path
):
    ws = from_cache(base, tmp_path, SECOND_GALLERY, jobs=2)
    for build in range(2):
        # Both intros edited: both index pages and the API page listing both are read.
        for path in (FIRST, SECOND):
            ws.fresh_copy(write(path, _example("Mean", f"Intro {build} of {path}.")))
        built = ws.build()
        assert built.returncode == 0, built.output
        assert {"auto_examples/index", "demos/index"} <= built.read, built.state["read"]
        assert ws.differences() == [], _thumbs(ws)
        assert _thumbs(ws) == {"auto_examples": [f"{THUMB}.png"], "demos": [f"{THUMB}1.png"]}
