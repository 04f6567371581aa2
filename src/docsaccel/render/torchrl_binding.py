"""Bind :class:`~docsaccel.render.RenderEvery` to a torchrl ``VideoRecorder``.

``VideoRecorder(skip=k)`` keeps the frame it sees when its own counter, incremented
first, is a multiple of ``skip``; the counter goes on across episodes and ``dump()``
sets it back to 0. :class:`RecorderSchedule` reads that counter and ``skip`` at render
time (the render of a step happens inside the base env, before the recorder counts the
frame), so the env renders fresh exactly the frames the recorder will keep: through
resets, dumps, ``dump_on_done``, a ``skip`` left at its default, and batched envs whose
recorder counts one tick per batch.

torchrl is imported only inside the functions that need it, so importing this module
does not need torchrl.

Example::

    import gymnasium as gym
    from docsaccel.render import gated_video_env

    env = gated_video_env(gym.make("HalfCheetah-v5", render_mode="rgb_array"), skip=16)
    env.rollout(200)                     # 14 renders instead of 202, 12 frames kept
    recorder = env.transform             # the bound torchrl VideoRecorder
    recorder.dump()
"""

from __future__ import annotations

from typing import Any

from docsaccel.render.gating import RenderEvery, find_render_every
from docsaccel.render.schedule import check_stride

__all__ = ["RecorderSchedule", "bind_recorder", "gated_video_env"]


class RecorderSchedule:
    """The frame schedule of a torchrl ``VideoRecorder``, read live from the recorder.

    The frame being rendered will be the recorder's frame ``count + 1``; it is kept iff
    that is a multiple of ``skip``. While ``skip`` is still unresolved and the recorder has
    no parent env (so torchrl could not resolve it either), every frame is rendered
    fresh: rendering too much is slow, never wrong.
    """

    def __init__(self, recorder: Any) -> None:
        missing = [name for name in ("count", "skip", "in_keys") if not hasattr(recorder, name)]
        if missing:
            raise TypeError(
                f"expected a torchrl VideoRecorder, got {type(recorder).__name__} "
                f"without {', '.join(missing)}"
            )
        if len(recorder.in_keys) != 1:
            raise ValueError(
                f"VideoRecorder in_keys={recorder.in_keys!r}: render gating needs exactly "
                "one pixel key, since the recorder counts one tick per key"
            )
        self.recorder = recorder

    def advance(self) -> None:
        """Nothing to do: the recorder counts its frames itself."""

    def keeps_current_frame(self) -> bool:
        """Whether the recorder will keep the frame rendered now."""
        skip = self._skip()
        return skip is None or (self.recorder.count + 1) % skip == 0

    def _skip(self) -> int | None:
        skip = getattr(self.recorder, "_skip", None)
        if skip is None and self.recorder.parent is not None:
            # Resolves the default (2, or 1 for batched parents) as the recorder itself will.
            skip = self.recorder.skip
        return skip

    def __repr__(self) -> str:
        return f"RecorderSchedule({type(self.recorder).__name__}, count={self.recorder.count})"


def _gated_envs(env: Any) -> list[RenderEvery]:
    """Every RenderEvery inside a gymnasium chain or a (transformed, batched) torchrl env."""
    gated = find_render_every(env)
    if gated is not None:
        return [gated]
    from torchrl.envs import GymWrapper, ParallelEnv, SerialEnv, TransformedEnv

    if isinstance(env, ParallelEnv):
        raise ValueError(
            "bind_recorder cannot bind the envs of a ParallelEnv: they run in other "
            "processes, where this process's recorder counter cannot be read; use SerialEnv"
        )

    if isinstance(env, TransformedEnv):
        return _gated_envs(env.base_env)
    if isinstance(env, GymWrapper):
        return _gated_envs(env._env)
    if isinstance(env, SerialEnv):
        if env.is_closed:
            env.start()  # a SerialEnv creates its sub-envs lazily
        return [found for sub_env in env._envs for found in _gated_envs(sub_env)]
    return []


def bind_recorder(recorder: Any, env: Any) -> list[RenderEvery]:
    """Make every :class:`RenderEvery` inside ``env`` follow ``recorder``; return them.

    ``env`` is a gymnasium chain containing a ``RenderEvery``, a torchrl ``GymWrapper``
    around one, a ``TransformedEnv`` of those, or an in-process ``SerialEnv`` of those.
    Raises ValueError when ``env`` contains none.

    Example::

        from torchrl.envs import GymWrapper, TransformedEnv
        from torchrl.record import VideoRecorder

        gated = RenderEvery(gym.make("Ant-v5", render_mode="rgb_array"), render_every=5)
        recorder = VideoRecorder(None, "ant", skip=5)
        env = TransformedEnv(GymWrapper(gated, from_pixels=True), recorder)
        bind_recorder(recorder, env)
    """
    schedule = RecorderSchedule(recorder)
    gated = _gated_envs(env)
    if not gated:
        raise ValueError(
            f"bind_recorder found no RenderEvery inside {type(env).__name__}: wrap the "
            "gymnasium env in RenderEvery before handing it to torchrl"
        )
    for gated_env in gated:
        gated_env.use_schedule(schedule)
    return gated


def gated_video_env(
    env: Any,
    *,
    skip: int,
    logger: Any = None,
    tag: str = "rollout",
    pixels_only: bool = False,
    **recorder_kwargs: Any,
) -> Any:
    """The common torchrl stack in one call, with rendering gated to the recorded frames.

    Builds ``TransformedEnv(GymWrapper(RenderEvery(env, skip), from_pixels=True),
    VideoRecorder(logger, tag, skip=skip, **recorder_kwargs))`` and binds the recorder,
    so only the frames the video keeps are rendered. The recorder is ``result.transform``.

    Args:
        env: a gymnasium env created with ``render_mode="rgb_array"``.
        skip: the recorder keeps one frame in ``skip`` (int >= 1).
        logger: a torchrl logger for ``dump()`` (e.g. ``CSVLogger(..., video_format="mp4")``),
            or ``None`` to keep the frames in ``result.transform.obs`` only.
        tag: the video tag in the logger.
        pixels_only: passed to ``GymWrapper``: drop the state observation.
        recorder_kwargs: more ``VideoRecorder`` arguments (``fps``, ``max_frames``, ...).

    Example::

        import gymnasium as gym
        from torchrl.record import CSVLogger
        from docsaccel.render import gated_video_env

        logger = CSVLogger("cheetah", log_dir="videos", video_format="mp4")
        env = gated_video_env(
            gym.make("HalfCheetah-v5", render_mode="rgb_array"), skip=16, logger=logger
        )
        env.rollout(1000)
        env.transform.dump()   # videos/cheetah/videos/rollout_0.mp4, 62 frames
    """
    check_stride("skip", skip)
    from torchrl.envs import GymWrapper, TransformedEnv
    from torchrl.record import VideoRecorder

    gated = RenderEvery(env, render_every=skip)
    recorder = VideoRecorder(logger, tag, skip=skip, **recorder_kwargs)
    recorded = TransformedEnv(
        GymWrapper(gated, from_pixels=True, pixels_only=pixels_only), recorder
    )
    bind_recorder(recorder, gated)
    return recorded
