"""What the site's report and report pages say while a sharded build has not finished or
after it stopped before its merge build wrote them: never an earlier build's verdict, so
a gate reading the site folder refuses it, naming the shard command.

The design, in full: the sharding guide's *Design* section.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docsaccel
from docsaccel import layout
from docsaccel.contract import (
    SHARD_COMMAND,
    InputError,
    ended_by,
    read_json,
    shard_command_text,
)
from docsaccel.formats import write_json
from docsaccel.process_stat import start_time
from docsaccel.records import build_report, now_iso
from docsaccel.shard.plan import ShardError
from docsaccel.shard.sphinx_runs import DEFAULT_BUILDER

__all__ = ["ShowUnfinished", "SitePages"]

#: Puts a report into the report pages published in an output folder, as a build that
#: did not finish (:func:`docsaccel.gallery.report_page.show_unfinished_site`):
#: ``(source folder, output folder, docsaccel_report_page, report, builder name)``. Given
#: by the caller: the gallery plugin, which owns the pages, is above this layer.
ShowUnfinished = Callable[[Path, Path, str | None, dict[str, Any], str], Any]


@dataclass(frozen=True)
class SitePages:
    """The report and report pages of the site a sharded build makes in ``outdir``."""

    docs: Path
    outdir: Path
    #: ``docsaccel_report_page`` of the project (``None``: off; the pages earlier builds
    #: published are still shown unfinished).
    wanted: str | None
    fast: bool
    show: ShowUnfinished | None
    #: The shard command building the site (``"shard-local"``), which the reasons name.
    command: str = "shard-local"
    #: The Sphinx builder of the site (``--builder``), which names its pages' files.
    builder: str = DEFAULT_BUILDER

    def started(self) -> None:
        """Before the shards run, in place of what an earlier build left in ``outdir``
        (:func:`docsaccel.layout.forget_build`): a report saying this build has not
        finished. A sharded build killed outright leaves no handler to say so, and a gate
        would read the last build's report or journals as this one's. Refused when
        another build writes into ``outdir`` now."""
        holder = layout.forget_build(self.outdir)
        if holder is not None:
            raise ShardError(
                f"{self.outdir}: a build (process {holder}) is writing into it now; "
                "run this once it ends"
            )
        pid, at = os.getpid(), now_iso()
        self._show(
            ended_because=shard_command_text(self.command, pid, at, None),
            **{
                SHARD_COMMAND: {
                    "command": self.command,
                    "pid": pid,
                    "started_at": at,
                    "process_start": start_time(pid),
                }
            },
        )

    def still_started(self) -> bool:
        """Whether the site's report is still the one :meth:`started` wrote, or is gone:
        no build took it over (the merge build, interrupted, writes its own)."""
        try:
            report = read_json(layout.report_path(self.outdir), "report")
        except InputError:
            return True
        build = report.get("build") if isinstance(report, dict) else None
        shard = build.get(SHARD_COMMAND) if isinstance(build, dict) else None
        return isinstance(shard, dict) and shard.get("pid") == os.getpid()

    def interrupted(self, signum: int) -> None:
        """The shards were stopped by ``signum`` (Ctrl-C, ``SIGTERM``) before the merge
        build: said in the words a serial build stopped so uses."""
        self._show(
            ended_because=(
                f"docsaccel {self.command} ended before its shards were merged: {ended_by(signum)}"
            )
        )

    def failed(self, report: dict[str, Any] | None, errors: Sequence[str]) -> None:
        """A shard failed, so no merge build writes the pages: they show ``report``, what
        the shards ran (else the shards' ``errors``)."""
        if report is not None:
            self._put(report)
        else:
            self._show(sphinx_failed=f"a shard's build failed: {'; '.join(errors)}")

    def ended(self, error: str) -> None:
        """The command ended on ``error`` after :meth:`started` (a merge refused a gallery
        folder another build holds, its build failed before writing a report): said in
        its place, so it never reads as a command killed outright."""
        self._show(ended_because=f"docsaccel {self.command} failed: {error}")

    def _show(self, **why: Any) -> None:
        build = {
            "wall_seconds": 0.0,
            "fast": self.fast,
            "complete": False,
            "docsaccel": docsaccel.__version__,
            "shard": {"role": "merge", "examples": 0},
            "source_dir": str(self.docs),
            **why,
        }
        report = build_report(self.outdir, [], build, records={})
        path = layout.report_path(self.outdir)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json(path, report)
        self._put(report)

    def _put(self, report: dict[str, Any]) -> None:
        if self.show is not None:
            self.show(self.docs, self.outdir, self.wanted, report, self.builder)
