"""Render statistics of one gated env, published live to :mod:`docsaccel.registry`.

The design, in full: the render gating guide's *Design* section.

Example: a reset and three steps rendered one frame in two.

>>> stats = RenderStats(env_id="Hopper-v5", render_every=2)
>>> stats.record_reset()
>>> for seconds in (0.500, 0.040, None, 0.040):  # the first render also sets up OpenGL
...     stats.record_frame()
...     if seconds is None:
...         stats.record_reused()
...     else:
...         stats.record_fresh(seconds)
>>> stats.fresh_renders, stats.reused_frames, stats.skipped_renders
(3, 1, 1)
>>> round(stats.as_dict()["saved_seconds"], 3)  # one skipped render x the mean later one
0.04
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from dataclasses import dataclass

from docsaccel import registry
from docsaccel.contract import fork_safe_lock

__all__ = ["RenderStats", "publish_stats"]

_label_lock = fork_safe_lock()
_label_counters: defaultdict[str, itertools.count] = defaultdict(lambda: itertools.count(1))


@dataclass
class RenderStats:
    """Counts of fresh and reused frames of one env, and the render time they cost or saved.

    The mean fresh render time leaves out the first render when there are others: the
    first one also creates the OpenGL context (often 10x a frame), which a reused frame
    would not have cost again.
    """

    env_id: str
    render_every: int
    fresh_renders: int = 0
    reused_frames: int = 0
    resets: int = 0
    frames: int = 0
    render_seconds: float = 0.0
    first_render_seconds: float = 0.0

    def record_fresh(self, seconds: float) -> None:
        """One underlying render call that took ``seconds``."""
        if self.fresh_renders == 0:
            self.first_render_seconds = seconds
        self.fresh_renders += 1
        self.render_seconds += seconds

    def record_reset(self) -> None:
        """One episode started (its first frame is always rendered fresh)."""
        self.resets += 1

    def record_frame(self) -> None:
        """The stream moved to a new frame (a reset or a step), rendered or not."""
        self.frames += 1

    @property
    def skipped_renders(self) -> int:
        """Renders an every-frame renderer would have made that this env did not."""
        return max(self.frames - self.fresh_renders, 0)

    def record_reused(self) -> None:
        """One frame served from the last fresh render instead of rendering."""
        self.reused_frames += 1

    @property
    def mean_render_seconds(self) -> float:
        """Mean duration of one fresh render, the first left out if there are others."""
        if self.fresh_renders > 1:
            return (self.render_seconds - self.first_render_seconds) / (self.fresh_renders - 1)
        return self.render_seconds

    @property
    def saved_seconds(self) -> float:
        """Estimated render time saved against rendering every frame of the stream.

        Skipped renders x mean fresh render time. A frame nobody asked for (a
        ``VideoFileRecorder`` asks only for kept frames) is saved as much as a reused one.
        """
        return self.skipped_renders * self.mean_render_seconds

    def as_dict(self) -> dict[str, object]:
        """Plain JSON-compatible numbers, as the example record stores them."""
        return {
            "env_id": self.env_id,
            "render_every": self.render_every,
            "fresh_renders": self.fresh_renders,
            "reused_frames": self.reused_frames,
            "resets": self.resets,
            "frames": self.frames,
            "skipped_renders": self.skipped_renders,
            "render_seconds": self.render_seconds,
            "saved_seconds": self.saved_seconds,
        }


def publish_stats(stats: RenderStats) -> str:
    """Publish ``stats`` live in the registry under a new unique label; return the label."""
    with _label_lock:
        label = f"{stats.env_id}#{next(_label_counters[stats.env_id])}"
    registry.publish(registry.RENDER_SECTION, label, stats)
    return label
