"""The sphinx-gallery releases ``sg_compat`` was checked against, and what happens outside them.

Inside the checked series nothing is said; outside them the plugin warns through Sphinx's
logging (so ``-W`` fails the build and ``suppress_warnings`` can silence it); a release
missing a private name ``sg_compat`` needs, or one known not to work, is refused with an
error naming the release.
"""

from __future__ import annotations

import pytest
from helpers.gallery_build import build, make_project
from sphinx_gallery import gen_rst

from docsaccel import sg_compat


def test_the_checked_series_say_nothing_and_others_name_the_release() -> None:
    for series in sg_compat.CHECKED_SPHINX_GALLERY:
        assert sg_compat.unchecked_release(f"{series}.0") is None
        assert sg_compat.unchecked_release(f"{series}.3+local") is None
    assert sg_compat.unchecked_release() is None  # the installed one is checked
    for version in ("0.16.2", "0.23.0", "0.23.dev0", "1.0.0"):
        message = sg_compat.unchecked_release(version)
        assert message is not None and f"sphinx-gallery {version} is installed" in message
        assert "sphinx-gallery >=0.17,<0.23" in message


def test_a_missing_private_name_is_refused_naming_it_and_the_release() -> None:
    with pytest.raises(ImportError) as raised:
        sg_compat._private(gen_rst, "_generate_file_rst_renamed")
    message = str(raised.value)
    assert "sphinx_gallery.gen_rst._generate_file_rst_renamed" in message
    assert f"sphinx-gallery {sg_compat.sphinx_gallery.__version__} does not have" in message
    assert sg_compat._private(gen_rst, "generate_file_rst") is gen_rst.generate_file_rst


def test_a_release_known_broken_is_refused_with_the_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sg_compat.BROKEN_SPHINX_GALLERY, "0.21.7", "it loses every record")
    with pytest.raises(ImportError, match=r"sphinx-gallery 0\.21\.7: it loses every record"):
        sg_compat.refuse_broken("0.21.7")
    sg_compat.refuse_broken("0.21.0")
    sg_compat.refuse_broken()


@pytest.mark.slow
def test_a_build_with_an_unchecked_release_warns_through_sphinx(tmp_path) -> None:
    # conf.py runs before the extensions are set up: the plugin sees this version.
    conf = "import sphinx_gallery\nsphinx_gallery.__version__ = '0.23.0'\n"
    src = make_project(tmp_path, ["plot_quick.py"], conf=conf)
    warned = build(src, "-W", "--keep-going")
    assert warned.returncode == 1, warned.output
    assert "sphinx-gallery 0.23.0 is installed" in warned.output
    silenced = build(
        src, "-W", "-D", "suppress_warnings=docsaccel.sphinx_gallery", outdir=tmp_path / "b"
    )
    assert silenced.returncode == 0, silenced.output
    assert "0.23.0" not in silenced.output
