"""Embed the videos a gallery example writes in its page, as HTML5 video.

The design, in full: the videos guide's *Design* section.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from docsaccel import registry
from docsaccel.contract import VIDEO_SUFFIXES, VIDEOS_SECTION
from docsaccel.settings import env_name, read_env_setting

__all__ = ["VIDEO_SUFFIXES", "embed", "find_new_videos", "setup", "video_scraper"]

#: Set to ``0`` to embed only the videos passed to :func:`embed`.
SCAN_ENV = env_name("video_scan")
_SECTION = VIDEOS_SECTION
# Videos modified after this moment are new to the scraper; moved forward at every scrape,
# so each video is embedded once, in the block that wrote it.
_last_scan = time.time()


def embed(path: str | os.PathLike[str]) -> Path:
    """Ask the scraper to embed ``path`` (mp4 or gif) after the current code block.

    Use it for videos written outside the example's folder, e.g. by a logger::

        from docsaccel.video import embed

        embed(logger.log_dir / "videos" / "rollout.mp4")
    """
    path = Path(path).resolve()
    if path.suffix.lower() not in VIDEO_SUFFIXES:
        raise ValueError(
            f"embed(path={str(path)!r}): expected a video ending in "
            f"{' or '.join(VIDEO_SUFFIXES)}, got {path.suffix!r}"
        )
    if not path.is_file():
        raise FileNotFoundError(f"embed(path={str(path)!r}): no such file")
    registry.publish(_SECTION, str(path), {"path": str(path)})
    return path


def find_new_videos(folder: str | os.PathLike[str], since: float) -> list[Path]:
    """Videos under ``folder`` modified after ``since`` (a ``time.time()`` value), sorted."""
    found = []
    for root, dirs, files in os.walk(folder):
        # Build outputs and hidden folders hold copies of videos, not new ones.
        dirs[:] = [d for d in dirs if not d.startswith((".", "_"))]
        # Runs after every code block of every example: test the name before any stat.
        for name in files:
            if name.lower().endswith(VIDEO_SUFFIXES):
                path = Path(root, name)
                if path.stat().st_mtime > since:
                    found.append(path)
    return sorted(found)


def _frames(path: Path) -> tuple[list[Any], float]:
    import imageio.v3 as iio

    frames = list(iio.imiter(path))
    if not frames:
        raise ValueError(f"{path}: the video has no frames")
    meta = iio.immeta(path)
    fps = meta.get("fps")
    if not fps and meta.get("duration"):  # gif: duration of one frame, in ms
        fps = 1000.0 / float(meta["duration"])
    return frames, float(fps or 10.0)


def _save_outputs(video: Path, poster_path: Callable[[], Path]) -> tuple[Path, Path]:
    """Write the poster PNG at ``poster_path()`` and the mp4 beside it; return both paths.

    The path is taken only once the video is read: sphinx-gallery requires an image at
    every path a scraper takes, so a video that cannot be read must take none."""
    import imageio.v3 as iio
    import numpy as np

    frames, fps = _frames(video)
    poster = poster_path()
    iio.imwrite(poster, np.asarray(frames[len(frames) // 2])[..., :3])
    target = poster.with_suffix(".mp4")
    if video.suffix.lower() == ".mp4":
        shutil.copyfile(video, target)
    else:
        rgb = [np.asarray(frame)[..., :3] for frame in frames]
        # Even sizes and yuv420p: what H.264 in every browser needs.
        height, width = rgb[0].shape[:2]
        rgb = [frame[: height - height % 2, : width - width % 2] for frame in rgb]
        iio.imwrite(
            target, np.stack(rgb), fps=fps, codec="libx264", plugin="FFMPEG", macro_block_size=2
        )
    return poster, target


def _rst_path(path: Path, src_dir: str) -> str:
    return "/" + _rst_text(Path(os.path.relpath(path, src_dir)).as_posix())


def _rst_text(text: str) -> str:
    """``text`` as one line of a directive's argument or option: no line breaks or controls.

    A file name is free text: a newline in it would end the directive and start reST of
    the name's choosing (raw HTML included). The directive takes the rest of the line
    literally and the HTML writer escapes it.
    """
    return "".join(" " if ch in _BREAKS or ord(ch) < 32 or ord(ch) == 127 else ch for ch in text)


# Every character str.splitlines() breaks lines at, as docutils does.
_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")


def _example_folder(block_vars: dict[str, Any]) -> Path | None:
    """Where sphinx-gallery runs the example's blocks: the example's folder. Never the
    working directory at scrape time, which the example's code may have moved anywhere
    (``os.chdir("/")`` would walk the machine and embed a stranger's video)."""
    src_file = block_vars.get("src_file")
    return Path(src_file).parent if src_file else None


def _can_embed(video: Path, block_vars: dict[str, Any]) -> bool:
    """Whether ``video`` can be embedded here: imageio (the ``mujoco`` extra) reads and
    converts videos; without it a video is left out with a warning, and the example's
    build goes on as without the scraper."""
    if importlib.util.find_spec("imageio") is not None:
        return True
    _warn(
        f"the video {video.name} is not embedded: embedding videos needs imageio "
        "(pip install 'docsaccel[mujoco]'), or set docsaccel_videos = False",
        block_vars,
    )
    return False


def _warn(message: str, block_vars: dict[str, Any]) -> None:
    from sphinx.util import logging

    location = block_vars.get("src_file")
    logging.getLogger(__name__).warning(
        f"docsaccel: {message}", type="docsaccel", subtype="video", location=location
    )


def video_scraper(block: Any, block_vars: dict[str, Any], gallery_conf: dict[str, Any]) -> str:
    """sphinx-gallery image scraper: embed the videos written by the last code block."""
    global _last_scan
    started, _last_scan = _last_scan, time.time()
    videos = [Path(path) for path in registry.take(_SECTION)]
    folder = _example_folder(block_vars)
    if folder is not None and read_env_setting("video_scan"):
        videos += find_new_videos(folder, since=started)
    image_paths = block_vars["image_path_iterator"]
    rst = []
    for video in dict.fromkeys(videos):  # keep order, drop duplicates
        if not _can_embed(video, block_vars):
            continue
        try:
            poster, target = _save_outputs(video, lambda: Path(next(image_paths)))
        except Exception as exc:  # a video it cannot read is the example's file, not an error
            _warn(f"cannot embed the video {video}: {type(exc).__name__}: {exc}", block_vars)
            continue
        rst.append(
            f"\n.. docsaccel-video:: {_rst_path(target, gallery_conf['src_dir'])}\n"
            f"   :poster: {_rst_path(poster, gallery_conf['src_dir'])}\n"
            f"   :alt: {_rst_text(video.name)}\n"
        )
    return "".join(rst)


def setup(app: Any) -> dict[str, Any]:
    """Register the ``docsaccel-video`` directive (see :mod:`docsaccel.video.directive`)."""
    from docsaccel.video.directive import setup as setup_directive

    return setup_directive(app)
