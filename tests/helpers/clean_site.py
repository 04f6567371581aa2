"""Compare a built site with a clean build of the same tree, for the tests of build
sequences: whatever the builds before left, a build publishes what a fresh copy of the
author's files builds to (measured times masked, :mod:`docsaccel.incremental.oracle`).

Example::

    put(src, "plot_b.py")
    assert clean_differences(src, tmp_path) == []
"""

from __future__ import annotations

import shutil
from pathlib import Path

from docsaccel.incremental.oracle import differences, output_files
from helpers.gallery_build import build


def example(name: str, raises: bool = False) -> str:
    """The text of a tiny example titled after ``name``; ``raises``: it fails."""
    title = Path(name).stem
    body = 'raise RuntimeError("broken on purpose")' if raises else f'print("{title}")'
    return f'"""\n{title}\n{"=" * len(title)}\n\nAn example.\n"""\n\n{body}\n'


def put(src: Path, name: str, raises: bool = False) -> None:
    """Write the example ``name`` (:func:`example`) into ``src``'s gallery."""
    (src / "examples" / name).write_text(example(name, raises), encoding="utf-8")


def clean_differences(src: Path, tmp_path: Path) -> list[str]:
    """The output files of ``src`` that differ from a clean build's of the same tree (a
    fresh copy of what the author wrote, no cache)."""
    clean = tmp_path / "clean"
    shutil.rmtree(clean, ignore_errors=True)
    clean.mkdir()
    shutil.copy(src / "conf.py", clean / "conf.py")
    shutil.copy(src / "index.rst", clean / "index.rst")
    shutil.copytree(
        src / "examples", clean / "examples", ignore=shutil.ignore_patterns("child_pids.txt")
    )
    reference = build(clean)
    assert reference.returncode == 0, reference.output
    return differences(output_files(src / "_build" / "html"), output_files(reference.outdir))
