"""The output folder's record of its last finished build: what builds wrote there, and
which of its files are the user's.

Kept in the output folder itself (the plugin's folder, never deleted nor saved as state),
not beside the doctrees: a build of that folder finds it whatever its doctree folder (a
shard merge keeps its doctrees elsewhere) and whatever kind it is (the cache on or off,
the Sphinx state on or off). Every build that finishes there leaves one, so a file a
finished build found there and did not write stays the user's however many builds, of
whatever kind, it outlives (:mod:`.untrusted_output` deletes by it).

A build notes when it starts; the record keeps the last finished build's facts, so a
later build tells what a build that did not finish wrote (newer than its start) from
what the user added before it.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docsaccel import layout
from docsaccel.contract import InputError, read_json
from docsaccel.formats import Format, write_json
from docsaccel.incremental.sphinxext.untrusted_output import (
    FOREIGN,
    FinishedBuild,
    foreign_files,
    own_folders,
)
from docsaccel.incremental.state_store import files_under

if TYPE_CHECKING:
    from sphinx.application import Sphinx

__all__ = ["RECORD_FORMAT", "carry", "finished", "last_finished", "started"]

RECORD_FORMAT = Format("docsaccel.output-folder", 1, "output folder record")


def _names(value: Any) -> frozenset[str] | None:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return frozenset(value)
    return None


def _nanoseconds(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def last_finished(outdir: str | os.PathLike[str]) -> FinishedBuild | None:
    """The last build that finished in ``outdir``, as its record tells (``None``: no record
    this docsaccel reads: no build with the Sphinx state ran there since one wrote it;
    :meth:`FinishedBuild.none` where builds started there and none finished)."""
    path = layout.output_record_path(outdir)
    try:
        record = read_json(path, RECORD_FORMAT.what)
        RECORD_FORMAT.check(record, path)
    except InputError:
        return None
    ended, wrote, foreign = (
        _nanoseconds(record.get("ended_ns")),
        _names(record.get("wrote")),
        _names(record.get(FOREIGN)),
    )
    if ended is None or wrote is None or foreign is None:
        return None
    since = _nanoseconds(record.get("unfinished_since_ns"))
    return FinishedBuild(ended, wrote, foreign, since)


def _write(outdir: str | os.PathLike[str], build: FinishedBuild) -> None:
    record = {
        **RECORD_FORMAT.header(),
        "ended_ns": build.ended_ns,
        "wrote": sorted(build.wrote),
        FOREIGN: sorted(build.foreign),
        "unfinished_since_ns": build.unfinished_since_ns,
    }
    path = layout.output_record_path(outdir)
    # Without it, the next build here deletes what it cannot tell from a killed build's.
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json(path, record, indent=None)


def started(outdir: str | os.PathLike[str], last: FinishedBuild, at_ns: int) -> None:
    """Note that a build of ``outdir`` started at ``at_ns`` after ``last`` (the folder's
    last finished build, :meth:`FinishedBuild.none` where none did): until it finishes,
    what is newer than the first unfinished build's start is no user's."""
    since = at_ns if last.unfinished_since_ns is None else min(last.unfinished_since_ns, at_ns)
    _write(outdir, FinishedBuild(last.ended_ns, last.wrote, last.foreign, since))


def finished(outdir: str | os.PathLike[str], wrote: Iterable[str], foreign: Iterable[str]) -> None:
    """Record that a build of ``outdir`` finished, having written ``wrote`` and found the
    user's ``foreign`` (relative, posix)."""
    _write(outdir, FinishedBuild(time.time_ns(), frozenset(wrote), frozenset(foreign)))


def carry(app: Sphinx) -> None:
    """For a build keeping no Sphinx state (the cache off, the state off): note its start
    and, when it finishes, record the user's files it found, so a later build with the
    state keeps them. Only where a record is there: a folder no build with the cache
    used has nothing to carry, and a plain build pays for nothing more."""
    outdir = Path(app.outdir)
    last = last_finished(outdir)
    if last is None:
        return
    found = files_under(outdir, own_folders(outdir, Path(app.doctreedir)))
    made = [relative for relative, path in found.items() if last.made(str(outdir), str(path))]
    users = foreign_files(found, made)
    started(outdir, last, time.time_ns())

    def on_build_finished(app: Sphinx, exception: BaseException | None) -> None:
        if exception is None:
            finished(outdir, (), [u for u in users if (outdir / u).is_file()])

    app.connect("build-finished", on_build_finished)
