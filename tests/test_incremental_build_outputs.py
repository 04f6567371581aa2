"""Files a build writes itself, with the Sphinx state: a restored build's pages are the
ones a clean build writes, and what a directive writes outside the HTML folder is no
input of its page.

- An extension that copies its CSS into the output once the pages are written (at
  ``build-finished``, as matplotlib's plot_directive and MyST-NB do): a clean build's
  pages link it without Sphinx's ``?v=`` checksum (the file is not there yet when the
  pages are written); a restored output folder already holds it, and the pages written
  again must still link it as a clean build does.
- matplotlib's plot_directive writes its figures under the build folder, beside the
  doctrees, outside the HTML folder: a fresh copy has none, and the page is not read
  again for that.

Each build is from a fresh copy of the project, with the cache of a build of the same
tree; the output is compared with a clean build of the same tree, file by file.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.incremental_build import (
    WRITTEN_WITH_ANY,
    built_with,
    extension,
    from_cache,
    local_extension,
    needs_state,
    replace,
    write,
)

pytestmark = [pytest.mark.slow, needs_state]

#: Adds ``late.css`` to every page and copies it into ``_static`` at build-finished.
LATE_EXTENSION = """\
from pathlib import Path


def copy_css(app, exception):
    if exception is None and app.builder.format == "html":
        target = Path(app.outdir) / "_static" / "late.css"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("p { color: teal; }\\n", "utf-8")


def setup(app):
    app.add_css_file("late.css")
    app.connect("build-finished", copy_css)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
"""
WITH_LATE_CSS = local_extension("late", LATE_EXTENSION)

PLOT_PAGE = """\
Plotted
=======

.. plot::

   import matplotlib
   matplotlib.use("Agg")
   import matplotlib.pyplot as plt
   plt.plot([1, 2, 3])
"""
WITH_PLOT = [
    extension("matplotlib.sphinxext.plot_directive"),
    replace(
        "docs/conf.py",
        'html_theme = "alabaster"\n',
        'html_theme = "alabaster"\nplot_formats = ["png"]\n',
    ),
    write("docs/plotted.rst", PLOT_PAGE),
    replace("docs/index.rst", "   other\n", "   other\n   plotted\n"),
]
#: A change that writes one page again (and reads only it).
OTHER_CHANGED = replace("docs/other.rst", "See :ref:", "Now see :ref:")


def _cache_of(root: Path, edits, jobs: int = 1) -> Path:
    """The cache after a build of the project with ``edits``, its doctrees beside the HTML
    folder (as ``make html`` puts them): plot_directive writes its figures beside them."""
    built_with(root, edits, jobs=jobs, doctrees_beside=True)
    return root / "cache"


# With -j 2 the pages are written in forked processes.
@pytest.mark.parametrize("jobs", [1, 2])
def test_a_page_written_again_links_a_late_css_as_a_clean_build_does(tmp_path, jobs):
    cache = _cache_of(tmp_path / "base", WITH_LATE_CSS, jobs)
    edits = [*WITH_LATE_CSS, OTHER_CHANGED]
    ws = from_cache(cache, tmp_path / "next", edits, jobs=jobs, doctrees_beside=True)
    built = ws.build()
    assert built.returncode == 0, built.output
    assert built.state["origin"] == "cache", built.output
    assert built.read == {"other"}, built.state
    assert built.written == {"other"} | WRITTEN_WITH_ANY, built.state
    assert "_static/late.css" in (ws.outdir / "other.html").read_text("utf-8")
    assert ws.differences() == []


def test_a_plot_page_is_not_read_again_for_the_figures_its_build_wrote(tmp_path):
    cache = _cache_of(tmp_path / "base", WITH_PLOT)
    ws = from_cache(cache, tmp_path / "next", WITH_PLOT, doctrees_beside=True)
    built = ws.build()
    assert built.returncode == 0, built.output
    assert built.state["origin"] == "cache", built.output
    assert built.read == set(), built.state
    assert ws.differences() == []
    # A page written again links plot_directive's CSS (copied late) as a clean build does.
    ws.fresh_copy(OTHER_CHANGED)
    built = ws.build()
    assert built.returncode == 0, built.output
    assert built.read == {"other"}, built.state
    assert "docsaccel: Sphinx state: 1 document read, " in built.output, built.output
    assert ws.differences() == []
