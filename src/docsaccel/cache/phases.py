"""Watch the build's phases outside the examples: before the first one (the prelude), and,
for the Sphinx state, whenever no example's recording runs until the documents are read.

A module body runs once per process: what the project's modules read while the build
imports them outside any example (autosummary's generation, another extension's handler)
is carried to every later example and page that uses them
(:mod:`docsaccel.cache.carried_reads`). So the recorder records those phases too, under
the label :data:`PRELUDE`; an example's recording takes over from it, and while the
between-watch is on, the prelude's recording starts again as each example's stops.

The design, in full: the caching guide's *Design* section.

Example, with a stand-in for the recorder:

>>> class Recording:
...     active, label = False, ""
...     def start(self, roots, excluded=(), label=""):
...         self.active, self.label = True, label
...     def stop(self):
...         self.active = False
...         phases.stopped()
>>> recording = Recording()
>>> phases = PhaseWatch(recording)
>>> phases.watch_between(["/repo"])
>>> recording.label == PRELUDE
True
>>> recording.start(["/repo"], label="plot_a.py")  # an example's takes over
>>> recording.stop()  # ... and the prelude's goes on after it
>>> recording.active, recording.label == PRELUDE
(True, True)
>>> phases.end_between()
>>> recording.active
False
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any, Protocol

__all__ = ["PRELUDE", "PhaseWatch", "Recording"]

#: The label of the recording outside the examples (:meth:`PhaseWatch.watch_prelude`).
PRELUDE = "(before the examples)"


class Recording(Protocol):
    """What :class:`PhaseWatch` needs of the recorder: one recording at a time."""

    #: Whether a recording runs.
    active: bool

    @property
    def label(self) -> str:
        """The label of the recording that runs (or ran last)."""
        ...

    def start(self, roots: Iterable[str], excluded: Iterable[str] = (), label: str = "") -> None:
        """Start a recording (dropping one in progress)."""
        ...

    def stop(self) -> Any:
        """Stop the recording, calling :meth:`PhaseWatch.stopped` last."""
        ...


class PhaseWatch:
    """When the recorder records outside the examples. One per recorder; it starts and
    stops that recorder's recordings labelled :data:`PRELUDE`, never another's."""

    def __init__(self, recording: Recording) -> None:
        self._recording = recording
        #: ``(roots, excluded)`` while :meth:`watch_between` watches between recordings.
        self._between: tuple[tuple[str, ...], tuple[str, ...]] | None = None
        #: The process that asked for it: not a child forked meanwhile (a pool worker).
        self._between_pid = 0

    def watch_prelude(self, roots: Iterable[str], excluded: Iterable[str] = ()) -> None:
        """Record what the project's modules read while the build imports them before the
        first example. The first example's recording ends it, or :meth:`end_prelude`."""
        self._recording.start(roots, excluded, label=PRELUDE)

    def end_prelude(self) -> None:
        """End the recording :meth:`watch_prelude` started, unless an example's took over
        (or :meth:`watch_between` keeps it going)."""
        recording = self._recording
        if recording.active and recording.label == PRELUDE:
            recording.stop()

    def watch_between(self, roots: Iterable[str], excluded: Iterable[str] = ()) -> None:
        """Until :meth:`end_between`, watch as the prelude does whenever no other recording
        runs: what the project's modules read while the build imports them between
        examples or after them (autosummary's generation after the gallery's) is carried
        too, for the documents read later (the Sphinx state)."""
        self._between = (tuple(roots), tuple(excluded))
        self._between_pid = os.getpid()
        if not self._recording.active:
            self.watch_prelude(*self._between)

    def end_between(self) -> None:
        """Stop watching between recordings, and end the prelude's recording if it runs."""
        self._between = None
        self.end_prelude()

    def stopped(self) -> None:
        """A recording stopped: the between-watch, when on in this process, resumes."""
        if self._between is not None and self._between_pid == os.getpid():
            self.watch_prelude(*self._between)
