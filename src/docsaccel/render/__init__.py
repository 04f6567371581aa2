"""Render gating for MuJoCo envs: render only the frames the video keeps, and exactly those.

The design, in full: the render gating guide's *Design* section.
"""

from docsaccel.headless import ensure_headless_gl

# MuJoCo reads MUJOCO_GL once, at its first import: pick a backend that can render before
# any gated env creates a context (a no-op when already chosen or when a display exists).
ensure_headless_gl()

from docsaccel.render.gating import RenderEvery  # noqa: E402
from docsaccel.render.schedule import FrameSchedule  # noqa: E402
from docsaccel.render.stats import RenderStats  # noqa: E402
from docsaccel.render.torchrl_binding import RecorderSchedule, bind_recorder, gated_video_env  # noqa: E402
from docsaccel.render.video_file import VideoFileRecorder  # noqa: E402

__all__ = [
    "FrameSchedule",
    "RecorderSchedule",
    "RenderEvery",
    "RenderStats",
    "VideoFileRecorder",
    "bind_recorder",
    "gated_video_env",
]
