"""A cache hit restores every file the example's run wrote, proven against the cold build.

Galleries whose outputs no list of file kinds names: ``image_srcset`` variants, a
project scraper writing its own files (one through a child process, which no audit
event of the build shows), and a matplotlib animation. Two builds from fresh copies share
a cache: the warm one executes nothing, and its output folder equals the cold one's,
file for file, with measured times masked.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers.cache_project import CONF, Build, Project, example_source

from docsaccel.records import run_outputs

pytestmark = pytest.mark.slow

SCRAPER = '''
import os
import subprocess
from pathlib import Path


def scraper(block, block_vars, gallery_conf):
    """Writes an SVG and a data file beside the image path it is given, a note in a
    folder of its own, and (through a child process) a file no page names."""
    if "SCRAPE" not in block.content:
        return ""
    path = Path(next(block_vars["image_path_iterator"]))
    svg = path.with_suffix(".svg")
    svg.write_text('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>')
    data = path.parent.parent / "scraped" / (path.stem + ".txt")
    data.parent.mkdir(exist_ok=True)
    data.write_text("scraped data\\n")
    subprocess.run(["sh", "-c", f"echo child > {path.with_suffix('.child')}"], check=True)
    src = gallery_conf["src_dir"]
    return (
        f"\\n.. image:: /{os.path.relpath(svg, src)}\\n\\n"
        f".. literalinclude:: /{os.path.relpath(data, src)}\\n\\n"
    )
'''

GALLERY_CONF = (
    '"show_memory": False, "image_srcset": ["2x"], "matplotlib_animations": True,\n'
    '    "image_scrapers": ("matplotlib", mylib.scraper.scraper),'
)

EXAMPLES = {
    "plot_e_figure.py": None,  # the tiny project's own figure, now with a 2x variant
    "plot_animation.py": example_source(
        "Animation",
        "import matplotlib\nmatplotlib.use('agg')\nimport matplotlib.pyplot as plt\n"
        "from matplotlib.animation import FuncAnimation\n\n"
        "fig, ax = plt.subplots()\n(line,) = ax.plot([0, 1], [0, 1])\n\n\n"
        "def update(i):\n    line.set_ydata([0, i / 5])\n    return (line,)\n\n\n"
        "anim = FuncAnimation(fig, update, frames=4)\n",
    ),
    "plot_scraped.py": example_source("Scraped", 'print("SCRAPE")\n'),
}
TIMES = [
    re.compile(rb"\d+ minutes \d+\.\d+ seconds"),
    re.compile(rb"\d+:\d\d\.\d+"),  # sg_execution_times.rst's table
]


@pytest.fixture
def project(tmp_path: Path) -> Project:
    project = Project(tmp_path)
    for name in ("plot_a_alpha.py", "plot_b_beta.py", "plot_c_data.py", "plot_d_dist.py"):
        (project.pristine / "docs" / "examples" / name).unlink()
    project.write("mylib/scraper.py", SCRAPER)
    conf = CONF.replace("import mylib.alpha", "import mylib.alpha\nimport mylib.scraper")
    project.write("docs/conf.py", conf.replace('"show_memory": False,', GALLERY_CONF))
    for name, text in EXAMPLES.items():
        if text is not None:
            project.write(f"docs/examples/{name}", text)
    return project


def _masked(data: bytes) -> bytes:
    for pattern in TIMES:
        data = pattern.sub(b"<time>", data)
    return data


def _site(build: Build) -> dict[str, bytes]:
    """The output folder's files, times masked; docsaccel's own files and Sphinx's
    pickled environment (object identities) left out."""
    return {
        path.relative_to(build.outdir).as_posix(): _masked(path.read_bytes())
        for path in sorted(build.outdir.rglob("*"))
        if path.is_file()
        and path.relative_to(build.outdir).parts[0] not in ("docsaccel", ".doctrees")
    }


@pytest.mark.parametrize("parallel", [False, True])
def test_a_hit_restores_every_file_the_run_wrote(project: Project, parallel: bool) -> None:
    if parallel:  # each example's outputs are taken in the worker that runs it
        conf = (project.pristine / "docs" / "conf.py").read_text("utf-8")
        project.write("docs/conf.py", conf.replace('"show_memory": False,', '"parallel": 2,'))
    cold = project.build()
    assert cold.returncode == 0, cold.output
    assert cold.executed() == set(EXAMPLES)
    files = cold.gallery_files()
    for name in (
        "images/sphx_glr_plot_e_figure_001_2_00x.png",
        "images/sphx_glr_plot_scraped_001.svg",
        "images/sphx_glr_plot_scraped_001.child",
        "scraped/sphx_glr_plot_scraped_001.txt",
        "images/thumb/sphx_glr_plot_animation_thumb.gif",
    ):
        assert name in files, sorted(files)
    listed = run_outputs(cold.docs / "auto_examples" / "plot_scraped.py")
    assert "auto_examples/images/sphx_glr_plot_scraped_001.child" in listed

    warm = project.build()
    assert warm.returncode == 0, warm.output
    assert warm.executed() == set()
    assert warm.cached() == set(EXAMPLES)
    assert warm.gallery_files() == files
    cold_site, warm_site = _site(cold), _site(warm)
    assert sorted(warm_site) == sorted(cold_site)
    assert [name for name in cold_site if warm_site[name] != cold_site[name]] == []
    assert "_images/sphx_glr_plot_e_figure_001_2_00x.png" in cold_site


def test_a_file_missing_from_an_entry_makes_a_miss_naming_it(project: Project) -> None:
    assert project.build().returncode == 0
    (entry,) = (project.cache / "entries").glob("examples__plot_e_figure.py--*")
    missing = "auto_examples/images/sphx_glr_plot_e_figure_001_2_00x.png"
    (entry / "files" / missing).unlink()
    again = project.build()
    assert again.returncode == 0, again.output
    assert again.executed() == {"plot_e_figure.py"}
    assert again.cached() == {"plot_animation.py", "plot_scraped.py"}
    assert again.records["plot_e_figure.py"]["cache"]["reason"] == "entry corrupt"
    assert "WARNING" in again.output and missing in again.output
    assert project.build().executed() == set()


def test_a_restored_page_naming_a_missing_file_is_a_miss(project: Project) -> None:
    # An entry whose file list lacks a file its page names (as an older docsaccel, whose
    # list came from file kinds, stored for image_srcset variants).
    assert project.build().returncode == 0
    (entry,) = (project.cache / "entries").glob("examples__plot_e_figure.py--*")
    meta_path = entry / "entry.json"
    meta = meta_path.read_text("utf-8")
    variant = "auto_examples/images/sphx_glr_plot_e_figure_001_2_00x.png"
    assert f'"{variant}"' in meta
    meta = re.sub(rf'\s*"{re.escape(variant)}": "[0-9a-f]+",?', "", meta)
    meta_path.write_text(meta, "utf-8")
    (entry / "files" / variant).unlink()
    again = project.build()
    assert again.returncode == 0, again.output
    assert again.executed() == {"plot_e_figure.py"}
    assert again.records["plot_e_figure.py"]["cache"]["reason"] == "restored page incomplete"
    assert f"names {variant}, which is not there" in again.output
