"""When the recorder records outside the examples (:mod:`docsaccel.cache.phases`), driven
with a stand-in recording, without a Sphinx build."""

from __future__ import annotations

import os
from collections.abc import Iterable

import pytest

from docsaccel.cache.phases import PRELUDE, PhaseWatch


class _Recording:
    """One recording at a time, as the recorder: a log of what was started and stopped."""

    def __init__(self) -> None:
        self.active = False
        self.label = ""
        self.log: list[str] = []
        self.phases = PhaseWatch(self)

    def start(self, roots: Iterable[str], excluded: Iterable[str] = (), label: str = "") -> None:
        self.active, self.label = True, label
        self.log.append(f"start {label} {sorted(roots)} {sorted(excluded)}")

    def stop(self) -> None:
        self.active = False
        self.log.append(f"stop {self.label}")
        self.phases.stopped()


def test_the_prelude_runs_until_ended_or_an_example_takes_over() -> None:
    recording = _Recording()
    recording.phases.watch_prelude(["/p"], ["/p/docs/_build"])
    recording.phases.end_prelude()
    recording.phases.watch_prelude(["/p"])
    recording.start(["/p"], label="plot_a.py")  # drops the prelude's
    recording.phases.end_prelude()  # not its recording: left alone
    recording.stop()
    assert recording.log == [
        f"start {PRELUDE} ['/p'] ['/p/docs/_build']",
        f"stop {PRELUDE}",
        f"start {PRELUDE} ['/p'] []",
        "start plot_a.py ['/p'] []",
        "stop plot_a.py",
    ]
    assert not recording.active


def test_between_resumes_after_each_recording_until_ended() -> None:
    recording = _Recording()
    recording.phases.watch_between(["/p"])
    recording.start(["/p"], label="plot_a.py")
    recording.stop()
    assert (recording.active, recording.label) == (True, PRELUDE)
    recording.phases.end_between()
    assert not recording.active
    recording.start(["/p"], label="plot_b.py")
    recording.stop()
    assert not recording.active
    assert recording.log[-4:] == [
        f"start {PRELUDE} ['/p'] []",
        f"stop {PRELUDE}",
        "start plot_b.py ['/p'] []",
        "stop plot_b.py",
    ]


def test_between_waits_for_a_recording_in_progress() -> None:
    recording = _Recording()
    recording.start(["/p"], label="plot_a.py")
    recording.phases.watch_between(["/p"])
    assert recording.label == "plot_a.py"
    recording.stop()
    assert (recording.active, recording.label) == (True, PRELUDE)


def test_a_forked_child_does_not_resume_the_parents_between_watch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A pool worker forked meanwhile records its tasks; what it does after is not the
    # build's between examples.
    recording = _Recording()
    recording.phases.watch_between(["/p"])
    recording.start(["/p"], label="plot_a.py")
    monkeypatch.setattr(os, "getpid", lambda: -1)
    recording.stop()
    assert not recording.active
