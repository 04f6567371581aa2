"""Which copy of a torchrl ``VideoRecorder`` will count the frame being rendered.

The design, in full: the render gating guide's *Design* section.
"""

from __future__ import annotations

from typing import Any

from docsaccel.render import torchrl_compat

__all__ = ["RecorderTracker", "track_recorder"]

# Where a tracked recorder, and each copy torchrl makes of it, keeps the shared tracker.
_TRACKER_ATTR = "_docsaccel_recorder_tracker"


class RecorderTracker:
    """The copy of one recorder that counts the next frame (:attr:`active`)."""

    def __init__(self, recorder: Any) -> None:
        self.recorder = recorder
        self.active = recorder

    def __repr__(self) -> str:
        which = "the recorder" if self.active is self.recorder else "a copy"
        return f"RecorderTracker(active={which}, count={self.active.count})"


def _tracked_class(cls: type) -> type:
    """``cls`` whose inverse pass marks the instance as the active copy (one per ``cls``)."""
    return torchrl_compat.overriding_subclass(cls, torchrl_compat.INV_CALL, _tracking)


def _tracking(original: Any) -> Any:
    def _inv_call(self: Any, tensordict: Any) -> Any:
        tracker = self.__dict__.get(_TRACKER_ATTR)
        if tracker is not None:
            tracker.active = self
        return original(self, tensordict)

    return _inv_call


def _adopt(copy: Any, tracker: RecorderTracker) -> None:
    copy.__dict__[_TRACKER_ATTR] = tracker
    copy.__class__ = _tracked_class(type(copy))


def track_recorder(recorder: Any) -> RecorderTracker:
    """Track which copy of ``recorder`` counts the next frame; return the shared tracker.

    Copies torchrl made before this call (a macro action that already stepped) are
    adopted when they still share the recorder's frame list: the frames they keep are
    in the video. Tracking a tracked recorder returns its tracker.
    """
    tracker = recorder.__dict__.get(_TRACKER_ATTR)
    if tracker is not None:
        return tracker
    tracker = RecorderTracker(recorder)
    _adopt(recorder, tracker)
    for copy in torchrl_compat.recorder_copies(recorder):
        if copy.obs is recorder.obs and copy.__dict__.get(_TRACKER_ATTR) is None:
            _adopt(copy, tracker)
    return tracker
