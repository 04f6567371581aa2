"""The :class:`RenderEvery` gymnasium wrapper: render only the frames the video keeps."""

from __future__ import annotations

import time
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np

from docsaccel.render.schedule import FrameSchedule, Schedule, check_stride
from docsaccel.render.stats import RenderStats, publish_stats

__all__ = ["IMAGE_RENDER_MODES", "RenderEvery", "find_render_every"]

#: Render modes whose ``render()`` returns one image array per call.
IMAGE_RENDER_MODES: tuple[str, ...] = ("rgb_array", "depth_array")


class RenderEvery(gym.Wrapper[Any, Any, Any, Any], gym.utils.RecordConstructorArgs):
    """Render a fresh frame only where the video keeps one; hand out the last fresh frame elsewhere.

    Rendering a MuJoCo frame costs hundreds of physics steps, and video recorders keep one
    frame in ``k`` (torchrl's ``VideoRecorder(skip=k)``). This wrapper asks a frame
    schedule, shared with the recorder, whether the frame at the current stream position
    is kept: if so ``render()`` renders fresh, otherwise it returns the last fresh frame
    (same shape and dtype, so consumers that need a frame every step keep working).
    Every kept frame is byte-identical to the frame an ungated env renders at the same
    position.

    Rules:

    - standalone (no recorder bound), frame ``n`` of the stream is kept iff
      ``n % render_every == 0``, counting reset observations and counting across episodes
      as torchrl's ``VideoRecorder`` does (:class:`~docsaccel.render.FrameSchedule`);
    - the first frame after :meth:`reset` is always fresh; the very first reset renders
      at once, since MuJoCo envs aim their camera at the state of their first render;
    - each fresh frame is a new array; an array once handed out is never mutated;
    - ``render_every=1`` is an exact pass-through;
    - :func:`~docsaccel.render.bind_recorder` makes the schedule follow a torchrl
      ``VideoRecorder``'s own counter and ``skip`` instead (also through dumps);
      :class:`~docsaccel.render.VideoFileRecorder` records exactly this schedule's frames.

    Statistics (:class:`~docsaccel.render.RenderStats`) are in :attr:`render_stats` and
    published to :mod:`docsaccel.registry` under ``"render"`` / :attr:`stats_label`.

    Example, with an env whose frames cost nothing (the render guide gates MuJoCo's):

    >>> import numpy as np
    >>> from docsaccel import registry
    >>> class Still(gym.Env):
    ...     metadata = {"render_modes": ["rgb_array"]}
    ...     observation_space = action_space = gym.spaces.Discrete(1)
    ...     render_mode = "rgb_array"
    ...     def reset(self, *, seed=None, options=None):
    ...         return 0, {}
    ...     def step(self, action):
    ...         return 0, 0.0, False, False, {}
    ...     def render(self):
    ...         return np.zeros((2, 2, 3), np.uint8)
    >>> env = RenderEvery(Still(), render_every=16)
    >>> _ = env.reset(seed=0)
    >>> frames = [env.render()]  # the reset's frame: fresh
    >>> for _ in range(31):
    ...     _ = env.step(0)
    ...     frames.append(env.render())  # frames 16 and 32 fresh, the others reused
    >>> env.render_stats.fresh_renders, env.render_stats.reused_frames
    (3, 29)
    >>> env.close()
    >>> registry.clear()

    Change logs:
        docsaccel 0.1.0 - first version.
    """

    def __init__(
        self,
        env: gym.Env[Any, Any],
        render_every: int,
        *,
        schedule: Schedule | None = None,
    ) -> None:
        """Wrap ``env`` (created with ``render_mode="rgb_array"``).

        Args:
            env: the environment to gate; its ``render()`` must return an image array.
            render_every: keep one frame in ``render_every`` (int >= 1). Once a torchrl
                recorder is bound, that recorder's ``skip`` decides instead.
            schedule: the frame schedule to follow; by default a new
                :class:`~docsaccel.render.FrameSchedule` with ``every=render_every``.
        """
        check_stride("render_every", render_every)
        if not isinstance(env, gym.Env):
            raise TypeError(f"RenderEvery wraps a gymnasium.Env, got {type(env).__name__}: {env!r}")
        if env.render_mode not in IMAGE_RENDER_MODES:
            raise ValueError(
                f"render_mode is {env.render_mode!r}, which is incompatible with RenderEvery: "
                f"it needs a render_mode that returns an image, one of {IMAGE_RENDER_MODES}. "
                'Create the env with gym.make(env_id, render_mode="rgb_array").'
            )
        gym.utils.RecordConstructorArgs.__init__(self, render_every=render_every)
        gym.Wrapper.__init__(self, env)
        self.render_every = render_every
        self.schedule: Schedule = FrameSchedule(render_every) if schedule is None else schedule
        self._last_frame: np.ndarray | None = None
        self._fresh_required = True
        self._first_frame_pending = False
        env_id = env.spec.id if env.spec is not None else type(env.unwrapped).__name__
        self.render_stats = RenderStats(env_id=env_id, render_every=render_every)
        self.stats_label = publish_stats(self.render_stats)

    def use_schedule(self, schedule: Schedule) -> None:
        """Follow ``schedule`` from now on (the next frame is rendered fresh)."""
        if not (hasattr(schedule, "advance") and hasattr(schedule, "keeps_current_frame")):
            raise TypeError(
                "schedule must have advance() and keeps_current_frame(), "
                f"got {type(schedule).__name__}: {schedule!r}"
            )
        self.schedule = schedule
        self._fresh_required = True

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Reset the env; the frame of the new episode's first observation is fresh."""
        result = self.env.reset(seed=seed, options=options)
        self._fresh_required = True
        self.render_stats.record_reset()
        self.render_stats.record_frame()
        self.schedule.advance()
        if self._last_frame is None:
            # MuJoCo envs create their camera at the first render, aimed at the state of
            # that moment: render where an every-frame consumer first would, so that all
            # later frames are seen from the same camera as in an ungated run.
            self._render_fresh()
            self._first_frame_pending = True
        return result

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        """Step the env; its frame enters the stream at the next position."""
        result = self.env.step(action)
        self._first_frame_pending = False
        self.render_stats.record_frame()
        self.schedule.advance()
        return result

    def render(self) -> Any:
        """A fresh frame if the schedule keeps the current frame, else the last fresh one."""
        if self._first_frame_pending:
            self._first_frame_pending = False
            return self._last_frame
        if self._fresh_required or self.schedule.keeps_current_frame():
            return self._render_fresh()
        self.render_stats.record_reused()
        return self._last_frame

    def _render_fresh(self) -> Any:
        started = time.perf_counter()
        frame = self.env.render()
        self.render_stats.record_fresh(time.perf_counter() - started)
        if not isinstance(frame, np.ndarray):
            raise TypeError(
                f"{self.render_stats.env_id}.render() returned {type(frame).__name__}, "
                "RenderEvery needs a numpy image array"
            )
        # Some envs render into one buffer they reuse: copy (~0.1% of a render's cost), so
        # a frame handed out once, and maybe handed out again, is never mutated.
        frame = frame.copy()
        self._last_frame = frame
        self._fresh_required = False
        return frame


def find_render_every(env: Any) -> RenderEvery | None:
    """The outermost :class:`RenderEvery` in a chain of gymnasium wrappers, or ``None``."""
    while env is not None:
        if isinstance(env, RenderEvery):
            return env
        env = getattr(env, "env", None) if isinstance(env, gym.Wrapper) else None
    return None
