"""What the site's report pages say while a sharded build has not finished or after it
stopped before its merge build wrote them: never an earlier build's verdict.

The design, in full: the sharding guide's *Design* section.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docsaccel
from docsaccel.contract import started_not_finished
from docsaccel.records import build_report, now_iso

__all__ = ["ShowUnfinished", "SitePages"]

#: Puts a report into the report pages published in an output folder, as a build that
#: did not finish (:func:`docsaccel.gallery.report_page.show_unfinished_site`):
#: ``(source folder, output folder, docsaccel_report_page, report)``. Given by the
#: caller: the gallery plugin, which owns the pages, is above this layer.
ShowUnfinished = Callable[[Path, Path, str | None, dict[str, Any]], Any]


@dataclass(frozen=True)
class SitePages:
    """The report pages of the site a sharded build makes in ``outdir``."""

    docs: Path
    outdir: Path
    #: ``docsaccel_report_page`` of the project (``None``: off; the pages earlier builds
    #: published are still shown unfinished).
    wanted: str | None
    fast: bool
    show: ShowUnfinished | None

    def started(self) -> None:
        """Before the shards run: a sharded build killed outright leaves no handler to
        say so, and its site's page would read the last verdict as current."""
        self._show(ended_because=started_not_finished(now_iso()))

    def interrupted(self) -> None:
        """The shards were stopped (Ctrl-C, ``SIGTERM``) before the merge build."""
        self._show(ended_because="it was interrupted before its shards were merged")

    def failed(self, report: dict[str, Any] | None, errors: Sequence[str]) -> None:
        """A shard failed, so no merge build writes the pages: they show ``report``, what
        the shards ran (else the shards' ``errors``)."""
        if report is not None:
            self._put(report)
        else:
            self._show(sphinx_failed=f"a shard's build failed: {'; '.join(errors)}")

    def _show(self, **why: str) -> None:
        build = {
            "wall_seconds": 0.0,
            "fast": self.fast,
            "complete": False,
            "docsaccel": docsaccel.__version__,
            "shard": {"role": "merge", "examples": 0},
            "source_dir": str(self.docs),
            **why,
        }
        self._put(build_report(self.outdir, [], build, records={}))

    def _put(self, report: dict[str, Any]) -> None:
        if self.show is not None:
            self.show(self.docs, self.outdir, self.wanted, report)
