"""Render gating for MuJoCo envs: render only the frames the video keeps, and exactly those.

A 480x360 MuJoCo render costs hundreds of physics steps, and a video recorder keeps one
frame in ``k``. :class:`RenderEvery` renders fresh only the frames a shared schedule says
are kept, and hands out the last fresh frame otherwise; every kept frame is
byte-identical to an ungated run.

- gymnasium only: ``VideoFileRecorder(RenderEvery(env, render_every=k), "run.mp4")``;
- torchrl: ``gated_video_env(env, skip=k)`` builds ``GymWrapper`` + ``VideoRecorder``,
  bound; :func:`bind_recorder` binds a stack you built yourself;
- torchrl's own MuJoCo envs (``MujocoEnv``, ``AntEnv``, ``SatelliteEnv``, ...) created with
  ``from_pixels=True``: the same two functions gate the env instance in place
  (:mod:`docsaccel.render.native`), macro actions included.

Each gated env's :class:`RenderStats` are published to :mod:`docsaccel.registry` under
``"render"``. torchrl is imported only when the torchrl helpers are called. The render
guide (``docs/guide/render.rst``) shows each of them in use.
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
