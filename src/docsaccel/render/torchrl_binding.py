"""Bind render gating to a torchrl ``VideoRecorder``: gymnasium envs and torchrl's own MuJoCo envs.

The design, in full: the render gating guide's *Design* section.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import gymnasium as gym

from docsaccel.render.gating import RenderEvery, find_render_every
from docsaccel.render.schedule import check_stride

if TYPE_CHECKING:
    from docsaccel.render.native import NativeRenderGate

__all__ = ["RecorderSchedule", "bind_recorder", "gated_video_env"]


class RecorderSchedule:
    """The frame schedule of a torchrl ``VideoRecorder``, read live from the recorder.

    The frame being rendered will be the recorder's frame ``count + 1``; it is kept iff
    that is a multiple of ``skip``. While ``skip`` is still unresolved and the recorder has
    no parent env (so torchrl could not resolve it either), every frame is rendered
    fresh: rendering too much is slow, never wrong.

    Under a macro action, the frame may be counted by a copy torchrl made of the recorder
    instead (see :mod:`docsaccel.render.recorder_tracking`): the schedule reads the
    counter of the copy that steps the env, once the recorder is tracked (``tracker``).
    """

    def __init__(self, recorder: Any, tracker: Any = None) -> None:
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
        self.tracker = tracker

    def advance(self) -> None:
        """Nothing to do: the recorder counts its frames itself."""

    def keeps_current_frame(self) -> bool:
        """Whether the recorder (or its copy stepping the env) will keep the frame rendered now."""
        counting = self.recorder if self.tracker is None else self.tracker.active
        skip = self._skip(counting)
        return skip is None or (counting.count + 1) % skip == 0

    @property
    def every(self) -> int | None:
        """The recorder's ``skip``, ``None`` while neither given nor resolvable."""
        return self._skip(self.recorder)

    @staticmethod
    def _skip(recorder: Any) -> int | None:
        from docsaccel.render import torchrl_compat

        skip = torchrl_compat.recorder_skip_as_given(recorder)
        if skip is None and recorder.parent is not None:
            # Resolves the default (2, or 1 for batched parents) as the recorder itself will.
            skip = recorder.skip
        return skip

    def __repr__(self) -> str:
        return f"RecorderSchedule({type(self.recorder).__name__}, count={self.recorder.count})"


def _gate_targets(env: Any) -> list[Any]:
    """Every RenderEvery and every torchrl MujocoEnv inside ``env``, outermost first.

    ``env`` is a gymnasium chain, or a (transformed, batched) torchrl env.
    """
    gated = find_render_every(env)
    if gated is not None:
        return [gated]
    if isinstance(env, gym.Env):
        return []
    from torchrl.envs import ParallelEnv, TransformedEnv

    from docsaccel.render import torchrl_compat

    if torchrl_compat.is_native_env(env):
        return [env]
    if isinstance(env, ParallelEnv):
        raise ValueError(
            "bind_recorder cannot bind the envs of a ParallelEnv: they run in other "
            "processes, where this process's recorder counter cannot be read; use SerialEnv "
            "(for torchrl's MujocoEnv: num_envs=N with parallel=False)"
        )
    if isinstance(env, TransformedEnv):
        return _gate_targets(env.base_env)
    inner = torchrl_compat.gym_wrapper_env(env)
    if inner is not None:
        return _gate_targets(inner)
    workers = torchrl_compat.serial_workers(env)
    return [found for worker in workers for found in _gate_targets(worker)]


def bind_recorder(recorder: Any, env: Any) -> list[RenderEvery | NativeRenderGate]:
    """Make the render gating inside ``env`` follow ``recorder``; return the gates.

    ``env`` contains the gymnasium or torchrl envs to gate: a gymnasium chain containing
    a :class:`RenderEvery`, a torchrl ``GymWrapper`` around one, a torchrl ``MujocoEnv``
    created with ``from_pixels=True`` (gated in place: its gate, a
    :class:`~docsaccel.render.native.NativeRenderGate`, is returned), a ``TransformedEnv``
    of those, or an in-process ``SerialEnv`` of those. Raises ValueError when ``env``
    contains nothing to gate, and before gating anything when a ``MujocoEnv`` inside
    cannot be gated exactly (no pixels, an unchecked backend or torchrl version).
    """
    RecorderSchedule(recorder)  # validates the recorder before anything is changed
    targets = _gate_targets(env)
    if not targets:
        raise ValueError(
            f"bind_recorder found nothing to gate inside {type(env).__name__}: wrap a "
            "gymnasium env in RenderEvery before handing it to torchrl, or use one of "
            "torchrl's MujocoEnv created with from_pixels=True"
        )
    natives = [target for target in targets if not isinstance(target, RenderEvery)]
    if natives:
        from docsaccel.render import torchrl_compat
        from docsaccel.render.native import gate_native_env, native_gate

        for native in natives:
            if native_gate(native) is None:
                torchrl_compat.check_native_env(native)
    from docsaccel.render.recorder_tracking import track_recorder

    schedule = RecorderSchedule(recorder, track_recorder(recorder))
    gates: list[RenderEvery | NativeRenderGate] = []
    for target in targets:
        if isinstance(target, RenderEvery):
            target.use_schedule(schedule)
            gates.append(target)
        else:
            gates.append(gate_native_env(target, schedule, render_every=schedule.every or 1))
    return gates


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

    For a gymnasium env, builds ``TransformedEnv(GymWrapper(RenderEvery(env, skip),
    from_pixels=True), VideoRecorder(logger, tag, skip=skip, **recorder_kwargs))``; for a
    torchrl env (one of torchrl's own ``MujocoEnv``, or a ``SerialEnv`` of them),
    ``TransformedEnv(env, VideoRecorder(...))``. Either way the recorder is bound, so only
    the frames the video keeps are rendered. The recorder is ``result.transform``.

    Args:
        env: a gymnasium env created with ``render_mode="rgb_array"``, or a torchrl
            ``MujocoEnv`` created with ``from_pixels=True`` and ``backend="mujoco"``.
        skip: the recorder keeps one frame in ``skip`` (int >= 1).
        logger: a torchrl logger for ``dump()`` (e.g. ``CSVLogger(..., video_format="mp4")``),
            or ``None`` to keep the frames in ``result.transform.obs`` only.
        tag: the video tag in the logger.
        pixels_only: passed to ``GymWrapper``: drop the state observation. A torchrl
            ``MujocoEnv`` takes it at creation instead (``pixels_only=True``).
        recorder_kwargs: more ``VideoRecorder`` arguments (``fps``, ``max_frames``, ...).

    torchrl writes MP4 through ``torchcodec``, which is not a dependency of docsaccel:
    without it, leave ``video_format`` out (frames saved as a ``.pt`` tensor file).
    """
    check_stride("skip", skip)
    from torchrl.envs import EnvBase, GymWrapper, TransformedEnv
    from torchrl.record import VideoRecorder

    if isinstance(env, gym.Env):
        gated = RenderEvery(env, render_every=skip)
        recorder = VideoRecorder(logger, tag, skip=skip, **recorder_kwargs)
        recorded = TransformedEnv(
            GymWrapper(gated, from_pixels=True, pixels_only=pixels_only), recorder
        )
        bind_recorder(recorder, gated)
        return recorded
    if not isinstance(env, EnvBase):
        raise TypeError(
            "gated_video_env takes a gymnasium env or a torchrl env (one of torchrl's "
            f"MujocoEnv), got {type(env).__name__}: {env!r}"
        )
    if pixels_only:
        raise ValueError(
            f"pixels_only=True is a GymWrapper option; {type(env).__name__} is already a "
            "torchrl env: create it with pixels_only=True instead"
        )
    recorder = VideoRecorder(logger, tag, skip=skip, **recorder_kwargs)
    recorded = TransformedEnv(env, recorder)
    bind_recorder(recorder, recorded)
    return recorded
