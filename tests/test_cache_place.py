"""The example cache's folder must be a folder of its own: a build refuses, before any
example runs, a cache folder that is, holds or is inside an examples folder, a gallery
folder or the build's output folder, with one line naming the setting, the value and the
folder; its report says why, so ``docsaccel check`` fails it.

The project is laid out as a newcomer's was: ``conf.py`` in ``docs/source``, one gallery
from ``examples/`` at the repository root into ``auto_examples``, another from
``docs/source/tutorials`` into ``auto_tutorials``, the site in ``docs/build/html``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from helpers.gallery_build import Built, build, run_cli

pytestmark = pytest.mark.slow

CONF = """\
project = "newcomer"
extensions = ["sphinx_gallery.gen_gallery", "docsaccel.gallery"]
exclude_patterns = ["tutorials"]
sphinx_gallery_conf = {
    "examples_dirs": ["../../examples", "tutorials"],
    "gallery_dirs": ["auto_examples", "auto_tutorials"],
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "show_memory": False,
}
"""
INDEX = "Newcomer\n========\n\n.. toctree::\n\n   auto_examples/index\n   auto_tutorials/index\n"
EXAMPLE = '"""\nPrints\n======\n\nAn example.\n"""\n\nprint("ran")\n'
FILES = {
    "docs/source/conf.py": CONF,
    "docs/source/index.rst": INDEX,
    "docs/source/tutorials/README.txt": "Tutorials\n=========\n",
    "docs/source/tutorials/plot_tutorial.py": EXAMPLE,
    "examples/README.txt": "Examples\n========\n",
    "examples/plot_example.py": EXAMPLE,
}


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("newcomer")
    for relative, text in FILES.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    return root


def _build(root: Path, conf: str = "", env: dict[str, str] | None = None) -> Built:
    """Build the project with ``conf`` appended to its ``conf.py``: the gate reads the
    report against that ``conf.py``, so it stays until the next build writes its own."""
    (root / "docs" / "source" / "conf.py").write_text(CONF + conf, encoding="utf-8")
    return build(root / "docs" / "source", env=env, outdir=root / "docs" / "build" / "html")


def _check(built: Built) -> subprocess.CompletedProcess:
    return run_cli("check", str(built.report_path))


def _assert_refused(built: Built, line: str) -> None:
    """Exit status 2, one line saying ``line``, no example run, and a failing gate."""
    assert built.returncode == 2, built.output
    lines = [text for text in built.output.splitlines() if text.strip()]
    assert len(lines) == 1 and line in lines[0], built.output
    assert line in built.report["build"]["stopped_before_examples"]
    assert built.report["examples"] == []
    checked = _check(built)
    assert checked.returncode != 0, checked.stdout + checked.stderr
    assert line in checked.stdout + checked.stderr


def test_a_cache_in_a_gallery_folder_is_refused(root: Path) -> None:
    """The gallery's pages and the cache's shared one folder: the site had no gallery."""
    built = _build(root, 'docsaccel_cache = "auto_examples"\n')

    gallery = (root / "docs" / "source" / "auto_examples").resolve()
    _assert_refused(
        built,
        f"docsaccel_cache='auto_examples': {gallery} is a gallery folder of "
        "sphinx_gallery_conf (gallery_dirs); give the cache a folder of its own",
    )
    assert not (gallery / "entries").exists()


def test_a_cache_in_the_users_examples_folder_is_refused(root: Path) -> None:
    """The cache's entries were written among the user's tracked examples."""
    built = _build(root, 'docsaccel_cache = "../../examples"\n')

    examples = (root / "examples").resolve()
    _assert_refused(
        built,
        f"docsaccel_cache='../../examples': {examples} is an examples folder of "
        f"sphinx_gallery_conf (examples_dirs); give the cache a folder of its own, such "
        f"as {root.resolve() / '.docsaccel-cache'}",
    )
    assert sorted(p.name for p in examples.iterdir()) == ["README.txt", "plot_example.py"]


def test_a_cache_inside_the_output_folder_is_refused(root: Path) -> None:
    """The cache (Sphinx's state, the machine's paths) was published with the site."""
    html = (root / "docs" / "build" / "html").resolve()
    value = str(html / "_cache")

    built = _build(root, env={"DOCSACCEL_CACHE": value})

    _assert_refused(
        built,
        f"DOCSACCEL_CACHE={value!r}: {value} is inside the build's output folder {html}",
    )
    assert not (html / "_cache").exists()


def test_a_cache_that_holds_the_output_folder_is_refused(root: Path) -> None:
    """The build's own folder above the site: the site would be written into the cache."""
    built = _build(root, 'docsaccel_cache = "../build"\n')

    _assert_refused(built, f"{(root / 'docs' / 'build').resolve()} holds the build's output")


def test_a_cache_of_its_own_inside_the_sources_is_kept(root: Path) -> None:
    """Allowed as before: strictly inside the source folder, clear of every gallery, it is
    left out of the documents, and the build passes its gate."""
    built = _build(root, 'docsaccel_cache = "_cache"\n')

    assert built.returncode == 0, built.output
    assert {r["status"] for r in built.report["examples"]} == {"ok"}
    assert (root / "docs" / "source" / "_cache" / "entries").is_dir()
    assert not (built.outdir / "_cache").exists()
    assert _check(built).returncode == 0


@pytest.mark.parametrize("setting", ["html_static_path", "html_extra_path"])
def test_a_cache_in_a_folder_copied_into_the_site_is_refused(root: Path, setting: str) -> None:
    """The whole cache (entries, the last build's record with the machine's paths) was
    copied into ``html/_static/cache`` with the site, and the build passed."""
    # The folder is there, as in a project that uses it (a cache whose parent is missing
    # is refused for that first).
    (root / "docs" / "source" / "_static").mkdir(exist_ok=True)
    built = _build(root, f'{setting} = ["_static"]\ndocsaccel_cache = "_static/cache"\n')

    static = (root / "docs" / "source" / "_static").resolve()
    _assert_refused(
        built,
        f"docsaccel_cache='_static/cache': {static / 'cache'} is inside a folder copied "
        f"into the site ({setting}) {static}; give the cache a folder of its own",
    )
    assert not (static / "cache").exists()
    assert not (built.outdir / "_static" / "cache").exists()
