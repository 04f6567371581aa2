"""The oracle of every rule of the Sphinx state: a clean build of the same tree.

:func:`output_files` reads a build's output folder as the comparison sees it: each file's
bytes with measured times masked (sphinx-gallery's "Total running time" and its
execution-time table, whose rows are in the order of the times), a zip by what it holds
(a zip records its files' modification times), and without what the gallery plugin writes
anew in every build (``docsaccel/``: its report, records and lock) or Sphinx's doctrees.
:func:`differences` names the files that differ. The test suite and
``tools/bench_incremental.py`` compare every incremental build with a clean one so.

Example::

    assert differences(output_files(incremental), output_files(clean)) == []
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Mapping
from pathlib import Path

__all__ = ["differences", "output_files"]

_TIMES = (
    re.compile(rb"\d+ minutes \d+\.\d+ seconds"),
    re.compile(rb"\d\d:\d\d\.\d+"),
    re.compile(rb"\d+\.\d+ sec"),
)
_LEFT_OUT = ("docsaccel/", ".doctrees/")


def _masked(path: Path) -> bytes:
    if "sg_execution_times" in path.name:
        return b"<measured times>"
    if path.suffix == ".zip":
        with zipfile.ZipFile(path) as archive:
            return repr(sorted((i.filename, archive.read(i)) for i in archive.infolist())).encode()
    data = path.read_bytes()
    for pattern in _TIMES:
        data = pattern.sub(b"<time>", data)
    return data


def output_files(outdir: Path) -> dict[str, bytes]:
    """``{path relative to outdir: bytes as compared}`` (see the module docstring)."""
    found = {}
    for path in sorted(Path(outdir).rglob("*")):
        relative = path.relative_to(outdir).as_posix()
        if path.is_file() and not relative.startswith(_LEFT_OUT):
            found[relative] = _masked(path)
    return found


def differences(mine: Mapping[str, bytes], clean: Mapping[str, bytes]) -> list[str]:
    """The files present in one only, or with other bytes, sorted."""
    return sorted(n for n in set(mine) | set(clean) if mine.get(n) != clean.get(n))
