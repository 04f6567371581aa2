"""The video scraper and directive, through real sphinx-gallery builds."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import imageio.v3 as iio
import numpy as np
import pytest
from helpers.gallery_build import build as build_project

from docsaccel import registry
from docsaccel.video import embed, find_new_videos

CONF = """
extensions = ["sphinx_gallery.gen_gallery", "docsaccel.video"]
sphinx_gallery_conf = {
    "examples_dirs": ["examples"],
    "gallery_dirs": ["auto_examples"],
    "image_scrapers": ("matplotlib", "docsaccel.video.video_scraper"),
}
exclude_patterns = ["_build", "examples/README.rst"]
"""

# Twelve frames of a red bar moving right by 4 px a frame: frame i has red at x = 4i..4i+8.
EXAMPLE = '''
"""
Write videos
============
"""
import imageio.v3 as iio
import numpy as np

frames = np.zeros((12, 48, 64, 3), np.uint8)
for i in range(12):
    frames[i, :, i * 4 : i * 4 + 8] = (255, 0, 0)
iio.imwrite("out_video.mp4", frames, fps=6, codec="libx264", plugin="FFMPEG")

# %%
# A gif, and a video written outside the example's folder, passed explicitly.
import tempfile
from pathlib import Path
from docsaccel.video import embed

iio.imwrite("out_anim.gif", frames, duration=100, loop=0)
elsewhere = Path(tempfile.mkdtemp()) / "logged.mp4"
iio.imwrite(elsewhere, frames, fps=6, codec="libx264", plugin="FFMPEG")
embed(elsewhere)

# %%
# No video here.
print("done")
'''


def project(tmp_path: Path, example: str = EXAMPLE, conf: str = "") -> Path:
    src = tmp_path / "src"
    (src / "examples").mkdir(parents=True)
    (src / "conf.py").write_text(CONF + conf)
    (src / "index.rst").write_text("Test\n====\n\n.. toctree::\n\n   auto_examples/index\n")
    (src / "examples" / "README.rst").write_text("Examples\n========\n")
    (src / "examples" / "plot_video.py").write_text(textwrap.dedent(example))
    return src


def build(tmp_path: Path, example: str = EXAMPLE, **env: str) -> Path:
    built = build_project(project(tmp_path, example), "-W", env=env)
    assert built.returncode == 0, built.output[-3000:]
    return built.outdir


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("video"))


def red_bar_start(image: np.ndarray) -> int:
    red = (image[..., 0] > 160) & (image[..., 1] < 100)
    return int(np.argmax(red.any(axis=0)))


@pytest.mark.slow
def test_each_video_is_embedded_once_in_the_block_that_wrote_it(site) -> None:
    page = (site / "auto_examples" / "plot_video.html").read_text()
    assert page.count("<video") == 3
    assert page.count('type="video/mp4"') == 3
    for index in (1, 2, 3):
        assert f'src="../_images/sphx_glr_plot_video_00{index}.mp4"' in page
        assert f'poster="../_images/sphx_glr_plot_video_00{index}.png"' in page
    # The third code block wrote nothing: its output is text only.
    assert page.rindex("<video") < page.index("done")


@pytest.mark.slow
def test_videos_are_playable_mp4_and_posters_are_middle_frames(site) -> None:
    for index in (1, 2, 3):
        frames = iio.imread(site / "_images" / f"sphx_glr_plot_video_00{index}.mp4")
        assert frames.shape[0] == 12 and frames.shape[1:3] == (48, 64)
        poster = iio.imread(site / "_images" / f"sphx_glr_plot_video_00{index}.png")
        assert poster.shape == (48, 64, 3)
        # Middle frame (6): the red bar starts at x = 24 (allow codec blur).
        assert abs(red_bar_start(poster) - 24) <= 2


@pytest.mark.slow
def test_poster_is_the_gallery_thumbnail(site) -> None:
    thumb = site / "_images" / "sphx_glr_plot_video_thumb.png"
    assert thumb.is_file()
    image = iio.imread(thumb)
    # sphinx-gallery's default "no image" thumbnail has no red bar.
    red = (image[..., 0] > 160) & (image[..., 1] < 100)
    assert red.any()


@pytest.mark.slow
def test_scan_can_be_turned_off(tmp_path) -> None:
    site = build(tmp_path, DOCSACCEL_VIDEO_SCAN="0")
    page = (site / "auto_examples" / "plot_video.html").read_text()
    # Only the explicitly embedded video remains.
    assert page.count("<video") == 1


def test_find_new_videos_skips_old_and_build_folders(tmp_path) -> None:
    old = tmp_path / "old.mp4"
    old.write_bytes(b"x")
    os.utime(old, (1, 1))
    (tmp_path / "_build").mkdir()
    (tmp_path / "_build" / "copy.mp4").write_bytes(b"x")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "new.gif").write_bytes(b"x")
    (tmp_path / "notes.txt").write_bytes(b"x")
    assert find_new_videos(tmp_path, since=100) == [tmp_path / "sub" / "new.gif"]


def test_every_video_of_a_page_is_handed_to_the_html_builder() -> None:
    from types import SimpleNamespace

    from docutils import nodes

    from docsaccel.video.directive import _copy_video_files, video_node

    def video(uri: str, poster: str | None) -> video_node:
        node = video_node(alt="")
        node["uri"], node["poster"] = uri, poster
        return node

    doctree = nodes.document(None, None)
    section = nodes.section("", nodes.paragraph(text="text"), video("a/one.mp4", "a/one.png"))
    doctree += [section, nodes.container("", nodes.container("", video("b/two.webm", None)))]
    doctree += nodes.image(uri="a/plain.png")
    env_images = {
        "a/one.mp4": ({"page"}, "one.mp4"),
        "a/one.png": ({"page"}, "one.png"),
        "b/two.webm": ({"page"}, "two1.webm"),
        "a/plain.png": ({"page"}, "plain.png"),
    }
    builder = SimpleNamespace(images={"a/plain.png": "plain.png"})
    app = SimpleNamespace(builder=builder, env=SimpleNamespace(images=env_images))
    _copy_video_files(app, doctree, "page")
    # Sphinx's own image collector registers plain images; the videos and posters are added.
    assert builder.images == {
        "a/plain.png": "plain.png",
        "a/one.mp4": "one.mp4",
        "a/one.png": "one.png",
        "b/two.webm": "two1.webm",
    }
    # A builder that copies no images (text, man) is left alone.
    _copy_video_files(SimpleNamespace(builder=SimpleNamespace(), env=app.env), doctree, "page")


def test_embed_rejects_bad_paths(tmp_path) -> None:
    with pytest.raises(ValueError, match=r"embed\(path=.*notes\.txt.*expected a video"):
        embed(tmp_path / "notes.txt")
    with pytest.raises(FileNotFoundError, match=r"embed\(path=.*missing\.mp4.*no such file"):
        embed(tmp_path / "missing.mp4")
    good = tmp_path / "ok.gif"
    good.write_bytes(b"GIF89a")
    try:
        assert embed(good) == good.resolve()
        assert str(good.resolve()) in registry.snapshot()["videos"]
    finally:
        registry.clear()


@pytest.mark.slow
def test_videos_play_in_a_real_browser(site, browser) -> None:
    from helpers.browser import PageProblems, serve

    with serve(site) as base:
        page = browser.new_page()
        problems = PageProblems(page)
        page.goto(f"{base}/auto_examples/plot_video.html")
        page.wait_for_function(
            "Array.from(document.querySelectorAll('video')).every(v => v.readyState >= 1)",
            timeout=15000,
        )
        states = page.evaluate(
            "Array.from(document.querySelectorAll('video')).map(v => "
            "({ready: v.readyState, duration: v.duration, width: v.videoWidth}))"
        )
        played = page.evaluate(
            """async () => {
                const video = document.querySelector('video');
                video.muted = true;
                await video.play();
                await new Promise(resolve => setTimeout(resolve, 400));
                return video.currentTime;
            }"""
        )
        page.close()
    assert len(states) == 3
    assert all(s["ready"] >= 1 and s["duration"] > 0 and s["width"] == 64 for s in states)
    assert played > 0
    assert problems.items == []


# Writes a video in a folder of its own, then moves the working directory there, as code
# that changes directory and forgets to come back does.
ELSEWHERE = """
\"\"\"
Moves away
==========
\"\"\"
import os
import tempfile

import imageio.v3 as iio
import numpy as np

away = tempfile.mkdtemp()
iio.imwrite(os.path.join(away, "stranger.mp4"), np.zeros((4, 16, 16, 3), np.uint8), fps=4)
os.chdir(away)
print("moved")
"""


@pytest.mark.slow
def test_the_scan_stays_in_the_example_s_folder_when_its_code_moves_away(tmp_path) -> None:
    site = build(tmp_path, ELSEWHERE)
    page = (site / "auto_examples" / "plot_video.html").read_text()
    assert "moved" in page
    assert "<video" not in page


# Without imageio (``[docs]`` alone): conf.py makes it unimportable, as an install
# without the ``mujoco`` extra has it.
NO_IMAGEIO = 'import sys\nsys.modules["imageio"] = None\n'
GIF_WITHOUT_IMAGEIO = """
\"\"\"
A gif from PIL
==============
\"\"\"
from PIL import Image

frames = [Image.new("RGB", (16, 16), (40 * i, 0, 0)) for i in range(4)]
frames[0].save("anim.gif", save_all=True, append_images=frames[1:], duration=100)
print("saved")
"""


@pytest.mark.slow
def test_without_imageio_a_video_is_left_out_with_a_warning_and_the_build_goes_on(
    tmp_path,
) -> None:
    src = project(tmp_path, GIF_WITHOUT_IMAGEIO, conf=NO_IMAGEIO)

    built = build_project(src)

    assert built.returncode == 0, built.output[-3000:]
    page = (built.outdir / "auto_examples" / "plot_video.html").read_text()
    assert "saved" in page and "<video" not in page
    assert "the video anim.gif is not embedded: embedding videos needs imageio" in built.output
    assert "plot_video.py" in built.output
    # A warning as any other: -W turns it into an error, suppress_warnings silences it.
    strict = project(tmp_path / "strict", GIF_WITHOUT_IMAGEIO, conf=NO_IMAGEIO)
    assert build_project(strict, "-W").returncode != 0
    quiet = project(tmp_path / "quiet", GIF_WITHOUT_IMAGEIO, conf=NO_IMAGEIO)
    with (quiet / "conf.py").open("a") as conf:
        conf.write('suppress_warnings = ["docsaccel.video"]\n')
    assert build_project(quiet, "-W").returncode == 0


@pytest.mark.slow
def test_a_video_the_scraper_cannot_read_is_left_out_with_a_warning(tmp_path) -> None:
    broken = (
        '"""\nA broken video\n==============\n"""\n'
        "open('broken.mp4', 'wb').write(b'not a video')\nprint('written')\n"
    )
    built = build_project(project(tmp_path, broken))

    assert built.returncode == 0, built.output[-3000:]
    assert "cannot embed the video" in built.output and "broken.mp4" in built.output
    page = (built.outdir / "auto_examples" / "plot_video.html").read_text()
    assert "written" in page and "<video" not in page
