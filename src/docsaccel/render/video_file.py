"""Write the frames a :class:`~docsaccel.render.RenderEvery` schedule keeps to mp4 or gif.

The gymnasium-only counterpart of torchrl's ``VideoRecorder(skip=k)``, for tutorials that
do not use torchrl. It reads the gated env's own :class:`~docsaccel.render.FrameSchedule`,
so the frames it writes are exactly the frames rendered fresh; :meth:`dump` starts a new
video and restarts the schedule, as ``VideoRecorder.dump()`` resets its counter.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np

from docsaccel.contract import VIDEO_SUFFIXES
from docsaccel.render.gating import find_render_every
from docsaccel.render.schedule import FrameSchedule

__all__ = ["VIDEO_FORMATS", "VideoFileRecorder"]

#: File suffixes :class:`VideoFileRecorder` can write: those the gallery's video scraper
#: embeds (:data:`docsaccel.contract.VIDEO_SUFFIXES`).
VIDEO_FORMATS: tuple[str, ...] = VIDEO_SUFFIXES


class VideoFileRecorder(gym.Wrapper[Any, Any, Any, Any], gym.utils.RecordConstructorArgs):
    """Record the kept frames of a gated env and write them to an mp4 or gif file with imageio.

    Wrap a :class:`RenderEvery` env (directly or through other wrappers). After each
    ``reset()`` and ``step()``, when the gated env's schedule keeps the current frame, the
    recorder takes it with ``render()``: one fresh frame in ``render_every``, written at
    ``fps`` frames per second. :meth:`dump` writes the video (the first to ``path``,
    later ones to ``<stem>-1<suffix>``, ``<stem>-2<suffix>``, ...) and starts a new one;
    :meth:`close` dumps what is left. ``frames`` holds the frames of the current video.

    Change logs:
        docsaccel 0.1.0 - first version.
    """

    def __init__(self, env: gym.Env[Any, Any], path: str | Path, *, fps: float = 30) -> None:
        """Record ``env`` (which contains a :class:`RenderEvery`) to ``path`` at ``fps``."""
        # Checked now, not when the video is written: after the whole rollout, a bad
        # path or fps would lose every frame.
        path = _checked_path(path)
        if (
            isinstance(fps, bool)
            or not isinstance(fps, int | float)
            or not math.isfinite(fps)
            or not fps > 0
        ):
            raise ValueError(
                f"VideoFileRecorder fps must be a finite number of frames per second > 0, "
                f"got {fps!r}; e.g. fps=30"
            )
        gated = find_render_every(env)
        if gated is None:
            raise ValueError(
                f"VideoFileRecorder records a RenderEvery env, got {env!r}: wrap it first, "
                "e.g. VideoFileRecorder(RenderEvery(env, render_every=16), path)"
            )
        if not isinstance(gated.schedule, FrameSchedule):
            raise ValueError(
                f"the RenderEvery in {env!r} follows {gated.schedule!r}, not its own "
                "FrameSchedule: it is bound to another recorder already"
            )
        gym.utils.RecordConstructorArgs.__init__(self, path=str(path), fps=fps)
        gym.Wrapper.__init__(self, env)
        self.path = path
        self.fps = fps
        self.schedule: FrameSchedule = gated.schedule
        self.frames: list[np.ndarray] = []
        self.written: list[Path] = []

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Reset the env and record its first frame if the schedule keeps it."""
        result = self.env.reset(seed=seed, options=options)
        self._capture()
        return result

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        """Step the env and record its frame if the schedule keeps it."""
        result = self.env.step(action)
        self._capture()
        return result

    def _capture(self) -> None:
        if self.schedule.keeps_current_frame():
            self.frames.append(self.env.render())

    def dump(self) -> Path | None:
        """Write the current video, start a new one; return the file written (None if empty)."""
        frames, self.frames = self.frames, []
        self.schedule.restart()
        if not frames:
            return None
        target = self.path
        if self.written:
            target = self.path.with_name(f"{self.path.stem}-{len(self.written)}{self.path.suffix}")
        target.parent.mkdir(parents=True, exist_ok=True)
        _write_video(target, frames, self.fps)
        self.written.append(target)
        return target

    def close(self) -> None:
        """Write the frames not dumped yet, then close the env."""
        self.dump()
        super().close()


def _checked_path(path: str | os.PathLike[str]) -> Path:
    """``path`` as a Path, if a video can be written there; ValueError saying why not."""
    if not isinstance(path, str | os.PathLike):
        raise ValueError(f"VideoFileRecorder path must be a file path, got {path!r}")
    path = Path(path)
    if path.suffix.lower() not in VIDEO_FORMATS:
        raise ValueError(
            f"VideoFileRecorder path {str(path)!r} has suffix {path.suffix!r}; "
            f"use one of {VIDEO_FORMATS}, e.g. {str(path.with_suffix('.mp4'))!r}"
        )
    if path.is_dir():
        raise ValueError(
            f"VideoFileRecorder path {str(path)!r} is a directory; give a file in it, "
            f"e.g. {str(path / 'video.mp4')!r}"
        )
    # The folder is created when the video is written: the nearest existing one decides.
    folder = path.absolute().parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise ValueError(
            f"VideoFileRecorder path {str(path)!r}: {str(folder)!r} is a file, not a folder"
        )
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(
            f"VideoFileRecorder path {str(path)!r}: the folder {str(folder)!r} is not "
            "writable; give a path in a folder you can write to"
        )
    if path.exists() and not os.access(path, os.W_OK):
        raise ValueError(f"VideoFileRecorder path {str(path)!r} exists and is not writable")
    return path


def _write_video(path: Path, frames: list[np.ndarray], fps: float) -> None:
    import imageio.v2 as imageio_v2
    import imageio.v3 as imageio_v3

    if path.suffix.lower() == ".gif":
        imageio_v3.imwrite(path, np.stack(frames), plugin="pillow", duration=1000.0 / fps, loop=0)
    else:
        # macro_block_size=2: H.264 (yuv420p) needs even sizes; keep every pixel otherwise.
        imageio_v2.mimwrite(path, frames, format="FFMPEG", fps=fps, macro_block_size=2)
