"""Which frames of a video stream are kept: the contract shared by renderer and recorder.

The design, in full: the render gating guide's *Design* section.

Example:

>>> from docsaccel.render.schedule import FrameSchedule
>>> schedule = FrameSchedule(every=3)
>>> kept = []
>>> for _ in range(7):
...     schedule.advance()  # a frame enters the stream
...     kept.append(schedule.keeps_current_frame())
>>> kept
[False, False, True, False, False, True, False]
"""

from __future__ import annotations

import contextlib
import operator
from typing import Protocol

__all__ = ["FrameSchedule", "Schedule", "check_stride"]


class Schedule(Protocol):
    """What :class:`~docsaccel.render.RenderEvery` needs to know about the consumer."""

    def advance(self) -> None:
        """A new frame entered the stream (after a reset or a step)."""

    def keeps_current_frame(self) -> bool:
        """Whether the consumer will keep the frame at the current stream position."""


def check_stride(name: str, value: object) -> int:
    """Return ``value`` as an int if it is an integer >= 1, else raise ValueError naming ``name``.

    Any integer type counts (``numpy.int64`` from a config array, through
    ``__index__``); ``bool`` is rejected although it is an ``int`` subclass: ``True`` as
    a stride is always a mistake.
    """
    if not isinstance(value, bool) and not isinstance(value, int):
        with contextlib.suppress(TypeError):
            value = operator.index(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be an int >= 1, got {value!r}")
    return int(value)


class FrameSchedule:
    """A standalone frame counter: frame ``n`` (from 1, across episodes) is kept iff n % every == 0.

    Used by :class:`~docsaccel.render.RenderEvery` when no recorder is bound, and shared
    with :class:`~docsaccel.render.VideoFileRecorder` so that the frames written are the
    frames rendered fresh.
    """

    def __init__(self, every: int) -> None:
        self.every = check_stride("every", every)
        self.position = 0

    def advance(self) -> None:
        """Count one more frame of the stream."""
        self.position += 1

    def keeps_current_frame(self) -> bool:
        """Whether the frame at the current position is kept (never before the first frame)."""
        return self.position > 0 and self.position % self.every == 0

    def restart(self) -> None:
        """Start counting a new video from zero (what ``VideoRecorder.dump()`` does)."""
        self.position = 0

    def __repr__(self) -> str:
        return f"FrameSchedule(every={self.every}, position={self.position})"
