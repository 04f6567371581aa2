"""The per-process registry of per-example facts."""

from __future__ import annotations

import pytest

from docsaccel import registry

pytestmark = pytest.mark.usefixtures("clean_registry")


class LiveCounter:
    def __init__(self) -> None:
        self.count = 0

    def as_dict(self) -> dict:
        return {"count": self.count}


def test_live_objects_are_read_at_snapshot_time() -> None:
    counter = LiveCounter()
    registry.publish("render", "env#1", counter)
    counter.count = 7
    assert registry.snapshot() == {"render": {"env#1": {"count": 7}}}


def test_take_removes_only_its_section() -> None:
    registry.publish("videos", "/a.mp4", {"path": "/a.mp4"})
    registry.publish("knobs", "steps", {"value": 1})
    assert registry.take("videos") == {"/a.mp4": {"path": "/a.mp4"}}
    assert registry.take("videos") == {}
    assert registry.snapshot() == {"knobs": {"steps": {"value": 1}}}


def test_clear_and_bad_names() -> None:
    registry.publish("knobs", "steps", 1)
    registry.clear()
    assert registry.snapshot() == {}
    with pytest.raises(ValueError, match="registry section must be a non-empty string, got ''"):
        registry.publish("", "k", 1)
    with pytest.raises(ValueError, match="registry key must be a non-empty string, got None"):
        registry.publish("s", None, 1)
