"""Render gating for torchrl's own MuJoCo envs: ``MujocoEnv`` and its subclasses.

The design, in full: the render gating guide's *Design* section.
"""

from __future__ import annotations

import time
from typing import Any

from docsaccel.render import torchrl_compat
from docsaccel.render.schedule import Schedule, check_stride
from docsaccel.render.stats import RenderStats, publish_stats

__all__ = ["NativeRenderGate", "gate_native_env", "native_gate"]

# Where a gated env keeps its gate, in its instance dict.
_GATE_ATTR = "_docsaccel_render_gate"


def _check_schedule(schedule: Any) -> Schedule:
    if not (hasattr(schedule, "advance") and hasattr(schedule, "keeps_current_frame")):
        raise TypeError(
            "schedule must have advance() and keeps_current_frame(), "
            f"got {type(schedule).__name__}: {schedule!r}"
        )
    return schedule


class NativeRenderGate:
    """Decides, for one ``MujocoEnv``, which pixel observations are rendered fresh.

    Rules, applied each time the env builds the pixels of a reset or a step:

    - the first frame after a reset (full or partial) is fresh, as in torchrl;
    - otherwise the frame is fresh iff :attr:`schedule` keeps the current frame;
    - else the env's last fresh frame is handed out again (torchrl never mutates it).

    Statistics (:class:`~docsaccel.render.RenderStats`, one frame per reset or step of
    the whole batch) are in :attr:`render_stats`, published to :mod:`docsaccel.registry`
    under ``"render"`` / :attr:`stats_label`.
    """

    def __init__(self, env_id: str, schedule: Schedule, render_every: int) -> None:
        check_stride("render_every", render_every)
        self.schedule = _check_schedule(schedule)
        self.render_stats = RenderStats(env_id=env_id, render_every=render_every)
        self.stats_label = publish_stats(self.render_stats)

    def use_schedule(self, schedule: Schedule) -> None:
        """Follow ``schedule`` from now on."""
        self.schedule = _check_schedule(schedule)

    def render_pixels(self, env: Any, render_fresh: Any) -> Any:
        """The pixels of the frame ``env`` is building: ``render_fresh()`` or the last frame."""
        stats = self.render_stats
        stats.record_frame()
        self.schedule.advance()
        last = torchrl_compat.last_pixels(env)
        if last is None:
            stats.record_reset()
        elif last.shape[0] == env.num_envs and not self.schedule.keeps_current_frame():
            stats.record_reused()
            return last
        started = time.perf_counter()
        frame = render_fresh()
        stats.record_fresh(time.perf_counter() - started)
        return frame

    def __repr__(self) -> str:
        return f"NativeRenderGate({self.render_stats.env_id!r}, schedule={self.schedule!r})"


def _gated_class(cls: type) -> type:
    """``cls`` with ``_render_pixels`` asking the instance's gate (one class per ``cls``)."""
    return torchrl_compat.overriding_subclass(cls, torchrl_compat.RENDER_PIXELS, _gating)


def _gating(original: Any) -> Any:
    def _render_pixels(self: Any) -> Any:
        gate = self.__dict__.get(_GATE_ATTR)
        if gate is None:  # an instance of the gated class nobody gated: torchrl's path
            return original(self)
        return gate.render_pixels(self, lambda: original(self))

    return _render_pixels


def native_gate(env: Any) -> NativeRenderGate | None:
    """The gate installed on ``env``, or ``None``."""
    return getattr(env, "__dict__", {}).get(_GATE_ATTR)


def gate_native_env(env: Any, schedule: Schedule, render_every: int = 1) -> NativeRenderGate:
    """Gate ``env``'s pixel rendering by ``schedule``; return its gate.

    ``env`` is a torchrl ``MujocoEnv`` created with ``from_pixels=True`` and
    ``backend="mujoco"`` (checked by
    :func:`~docsaccel.render.torchrl_compat.check_native_env`). A gated env keeps its gate
    and switches to ``schedule``. ``render_every`` is the stride reported in the statistics.
    """
    gate = native_gate(env)
    if gate is not None:
        gate.use_schedule(schedule)
        return gate
    torchrl_compat.check_native_env(env)
    gate = NativeRenderGate(type(env).__name__, schedule, render_every)
    env.__dict__[_GATE_ATTR] = gate
    env.__class__ = _gated_class(type(env))
    return gate
