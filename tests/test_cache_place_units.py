"""The folders a cache folder must stay clear of, and the rule, without a build: several
and nested galleries, sphinx-gallery's default folders, a suggestion that is allowed."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from docsaccel.gallery.events import _folders_beside_cache
from docsaccel.settings import cache_collision


def _folders(tmp_path: Path, gallery_conf: dict | None, **html: list) -> list:
    src = tmp_path / "docs"
    app = SimpleNamespace(
        srcdir=src, confdir=src, outdir=src / "_build/html", doctreedir=tmp_path / "trees"
    )
    config = SimpleNamespace(sphinx_gallery_conf=gallery_conf, **html)
    return _folders_beside_cache(app, config)


def test_folders_copied_into_the_site_are_kept_clear_of(tmp_path) -> None:
    """Sphinx copies every html_static_path and html_extra_path entry into the site."""
    folders = _folders(tmp_path, None, html_static_path=["_static"], html_extra_path=["../x"])
    cache = (tmp_path / "docs" / "_static" / "cache").resolve()
    problem = cache_collision(cache, folders, tmp_path)
    assert problem is not None and "inside a folder copied into the site (html_static_path)" in (
        problem
    )
    problem = cache_collision((tmp_path / "x").resolve(), folders, tmp_path)
    assert problem is not None and "is a folder copied into the site (html_extra_path)" in problem


NESTED = {
    "examples_dirs": ["examples", "../tutorials_src"],
    "gallery_dirs": ["gallery", "gallery/tutorials"],
}


@pytest.mark.parametrize(
    ("cache", "says"),
    [
        ("docs/gallery", "is a gallery folder"),
        ("docs/gallery/tutorials/cache", "is inside a gallery folder"),
        ("docs/gallery/tutorials", "is a gallery folder"),
        ("tutorials_src", "is an examples folder"),
        ("docs/examples/data", "is inside an examples folder"),
        ("docs/_build", "holds the build's output folder"),
        ("trees/cache", "is inside the build's doctree folder"),
        ("docs", "is the Sphinx source folder"),
    ],
)
def test_a_cache_sharing_a_folder_of_the_build_is_refused(tmp_path: Path, cache, says) -> None:
    problem = cache_collision((tmp_path / cache).resolve(), _folders(tmp_path, NESTED), tmp_path)
    assert problem is not None and says in problem, problem
    suggested = Path(problem.split("such as ")[1])
    assert cache_collision(suggested, _folders(tmp_path, NESTED), tmp_path) is None


@pytest.mark.parametrize("cache", ["docs/_cache", ".docsaccel-cache", "docs/_build/cache"])
def test_a_folder_of_its_own_is_allowed(tmp_path: Path, cache) -> None:
    assert (
        cache_collision((tmp_path / cache).resolve(), _folders(tmp_path, NESTED), tmp_path) is None
    )


def test_sphinx_gallerys_default_folders_are_kept_clear_of(tmp_path: Path) -> None:
    """``conf.py`` without ``examples_dirs``/``gallery_dirs``: sphinx-gallery's defaults."""
    for cache, says in [("examples", "is an examples folder"), ("docs/auto_examples", "is a")]:
        problem = cache_collision((tmp_path / cache).resolve(), _folders(tmp_path, {}), tmp_path)
        assert problem is not None and says in problem, problem


@pytest.mark.parametrize(
    "cache", [".git", "mylib", "docs/_build/html", "docs/_build/html/x", "docs", "trees"]
)
def test_the_suggestion_is_at_the_project_root_never_in_a_refused_folder(tmp_path, cache):
    """One suggestion, ``.docsaccel-cache`` beside ``.git``: never inside the folder just
    refused (``.git``, the user's package) nor in a build folder ``make clean`` deletes."""
    from docsaccel.settings import own_cache_folder

    (tmp_path / ".git").mkdir()
    refused = (tmp_path / cache).resolve()
    suggested = own_cache_folder(refused, _folders(tmp_path, NESTED), tmp_path.resolve())
    assert suggested == tmp_path.resolve() / ".docsaccel-cache"
    assert refused not in suggested.parents
