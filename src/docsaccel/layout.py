"""Where docsaccel keeps its files in a Sphinx output folder: ``<outdir>/docsaccel/``.

The gallery plugin writes there, sharding and the example cache read and write there, and
the CLI and CI scripts are pointed there, so the layout is stated once:

==========================================  ===============================================
``<outdir>/docsaccel/report.json``          the build's report (:mod:`docsaccel.schema`)
``<outdir>/docsaccel/records/``             one record per example, and the journals
                                            (``journal-<pid>.jsonl``, one per process)
``<outdir>/docsaccel/cache-deps/``          what each executed example depended on, until
                                            the example cache stores it
``<outdir>/docsaccel/build.lock``           held while a build writes into the folder
==========================================  ===============================================

Example:

>>> from pathlib import Path
>>> report_path(Path("_build/html")).as_posix()
'_build/html/docsaccel/report.json'
>>> records_dir("_build/html").as_posix()
'_build/html/docsaccel/records'
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = [
    "FOLDER_NAME",
    "JOURNAL_PREFIX",
    "cache_deps_dir",
    "journals",
    "lock_path",
    "records_dir",
    "report_path",
]

#: The folder of docsaccel's files inside an output folder.
FOLDER_NAME = "docsaccel"
#: How the journal of each process that runs examples is named: ``journal-<pid>.jsonl``.
JOURNAL_PREFIX = "journal-"


def _under(outdir: str | os.PathLike[str], *parts: str) -> Path:
    return Path(outdir, FOLDER_NAME, *parts)


def report_path(outdir: str | os.PathLike[str]) -> Path:
    """The build's report."""
    return _under(outdir, "report.json")


def records_dir(outdir: str | os.PathLike[str]) -> Path:
    """The folder of the build's records, one per example."""
    return _under(outdir, "records")


def cache_deps_dir(outdir: str | os.PathLike[str]) -> Path:
    """The dependencies the example cache recorded for each example the build ran."""
    return _under(outdir, "cache-deps")


def lock_path(outdir: str | os.PathLike[str]) -> Path:
    """The lock a build holds on its output folder."""
    return _under(outdir, "build.lock")


def journals(records: str | os.PathLike[str]) -> list[Path]:
    """The journals in a records folder (one per process that ran examples), sorted."""
    return sorted(Path(records).glob(f"{JOURNAL_PREFIX}*.jsonl"))
