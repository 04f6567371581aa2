"""Why an example that ran made no cache entry: the record its run leaves in place of
its dependency list, written while it ran and read when the build stores entries.

One record, one file (``<slug>.not-stored.json`` beside the dependency list), so the
dependency list never carries a sentinel key; its stored form has a version number, and a
record of another version reads as no record (the example then makes no entry, quietly).

Example: an example whose run removed a user's file runs in every build.

>>> import tempfile
>>> folder = tempfile.TemporaryDirectory()
>>> why = NotStored(RUNS_EVERY_BUILD, ("it removed data.csv",))
>>> why.write(f"{folder.name}/plot_a.py.not-stored.json")
>>> read(f"{folder.name}/plot_a.py.not-stored.json") == why
True
>>> why.message("plot_a.py")
'docsaccel cache: not storing plot_a.py: it removed data.csv; it runs in every build'
>>> folder.cleanup()
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from typing import Any

from docsaccel.contract import InputError, read_json
from docsaccel.formats import write_json

__all__ = ["KINDS", "RUNS_EVERY_BUILD", "SUFFIX", "UNSTORABLE", "VERSION", "NotStored", "read"]

#: The run went wrong for the cache (a child process it could not follow, a dependency
#: edited while it ran): a warning, and the example runs again next time.
UNSTORABLE = "unstorable"
#: Nothing went wrong, but no entry could restore the run: what modules it uses read is
#: unknown (:attr:`.recorder.Seen.unknown_reads`), or it removed a file it did not write
#: (:attr:`.recorder.Seen.removed`), which a restore would leave in place. Said quietly.
RUNS_EVERY_BUILD = "runs_every_build"
KINDS = frozenset({UNSTORABLE, RUNS_EVERY_BUILD})
#: The version of the stored form; a record of any other one reads as no record.
VERSION = 1
#: The file name's ending, after the example's slug.
SUFFIX = ".not-stored.json"

#: What the build's log says after the reasons, by kind.
_NEXT = {RUNS_EVERY_BUILD: "it runs in every build", UNSTORABLE: "it runs again next time"}


@dataclass(frozen=True)
class NotStored:
    """Why one example's run makes no entry: ``kind`` (:data:`UNSTORABLE` or
    :data:`RUNS_EVERY_BUILD`) and the ``reasons``, each a sentence users read."""

    kind: str
    reasons: tuple[str, ...]

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind {self.kind!r} is not one of {sorted(KINDS)}")

    @property
    def why(self) -> str:
        """The reasons in one line, as the log and ``cache explain`` give them."""
        return "; ".join(self.reasons)

    @property
    def quiet(self) -> bool:
        """Whether the build says it as information rather than a warning: a run that
        cannot be restored is no fault of the run."""
        return self.kind == RUNS_EVERY_BUILD

    def message(self, example_id: str) -> str:
        """What the build logs as it declines to store the example."""
        return f"docsaccel cache: not storing {example_id}: {self.why}; {_NEXT[self.kind]}"

    def to_json(self) -> dict[str, Any]:
        """The stored form (the one place its keys are spelled, with :meth:`from_json`)."""
        return {"version": VERSION, "kind": self.kind, "reasons": list(self.reasons)}

    @classmethod
    def from_json(cls, stored: Any) -> NotStored | None:
        """The record :meth:`to_json` stored, or ``None`` for anything else: another
        version, a kind this version does not know, a hand-edited file."""
        if not isinstance(stored, dict) or stored.get("version") != VERSION:
            return None
        kind, reasons = stored.get("kind"), stored.get("reasons")
        if kind not in KINDS or not isinstance(reasons, list):
            return None
        return cls(kind, tuple(map(str, reasons)))

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write the record to ``path`` (atomically)."""
        write_json(path, self.to_json(), indent=None)


def read(path: str | os.PathLike[str]) -> NotStored | None:
    """The record at ``path``; ``None`` when there is none or it cannot be read."""
    if not os.path.isfile(path):
        return None
    with contextlib.suppress(InputError, ValueError):
        return NotStored.from_json(read_json(path, "reason an example was not stored"))
    return None
