"""Where an example's outputs go, as an entry keeps it and as this build decides it.

The design, in full: the caching guide's *Design* section.

Example:

>>> conf = {"examples_dirs": ["examples"], "gallery_dirs": ["auto_examples"]}
>>> made = placement("/p/docs/auto_examples/plot_a.py", "/p/docs", conf)
>>> made
{'target': 'auto_examples/plot_a.py', 'gallery_dirs': ['auto_examples']}
>>> files = ["auto_examples/plot_a.rst", "auto_examples/images/sphx_glr_plot_a_001.png"]
>>> misplaced(made, files, made) is None
True
>>> conf["gallery_dirs"] = ["gallery"]
>>> renamed = placement("/p/docs/gallery/plot_a.py", "/p/docs", conf)
>>> misplaced(made, files, renamed)
'gallery folder changed: auto_examples → gallery'

A file in another gallery's folder, which this build no longer uses:

>>> one = {"examples_dirs": ["examples"], "gallery_dirs": ["auto_examples"]}
>>> two = {"examples_dirs": ["examples", "more"], "gallery_dirs": ["auto_examples", "auto_more"]}
>>> made = placement("/p/docs/auto_examples/plot_a.py", "/p/docs", two)
>>> now = placement("/p/docs/auto_examples/plot_a.py", "/p/docs", one)
>>> misplaced(made, [*files, "auto_more/table.csv"], now)
'auto_more/table.csv is in auto_more/, a gallery folder this build does not use'
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from docsaccel import sg_compat

__all__ = ["misplaced", "placement"]


def placement(
    target_file: str | os.PathLike[str],
    srcdir: str | os.PathLike[str],
    gallery_conf: dict[str, Any],
) -> dict[str, Any]:
    """Where this build puts the example whose copy is ``target_file``: that copy and the
    build's gallery folders, ``/``-separated paths relative to ``srcdir``."""
    return {
        "target": _relative(target_file, srcdir),
        "gallery_dirs": sorted(
            {
                _relative(Path(srcdir, gallery), srcdir)
                for _, gallery in sg_compat.gallery_dirs(gallery_conf)
            }
        ),
    }


def misplaced(made: Mapping[str, Any], files: Iterable[str], now: Mapping[str, Any]) -> str | None:
    """Why an entry made with placement ``made`` and holding ``files`` (paths inside the
    source dir) cannot be restored in a build with placement ``now``; ``None`` when it
    can."""
    target, galleries = made.get("target"), made.get("gallery_dirs")
    if not isinstance(target, str) or not (
        isinstance(galleries, list) and all(isinstance(g, str) for g in galleries)
    ):
        return "its gallery folder is not known"
    if target != now["target"]:
        old, new = PurePosixPath(target), PurePosixPath(now["target"])
        if old.name == new.name:
            return f"gallery folder changed: {old.parent} → {new.parent}"
        return f"output place changed: {old} → {new}"
    unused = [g for g in galleries if g not in now["gallery_dirs"]]
    for relative in files:
        left = next((g for g in unused if _under(relative, g)), None)
        if left is not None and not any(_under(relative, g) for g in now["gallery_dirs"]):
            return f"{relative} is in {left}/, a gallery folder this build does not use"
    return None


def _relative(path: str | os.PathLike[str], srcdir: str | os.PathLike[str]) -> str:
    return Path(
        os.path.relpath(os.path.normpath(os.path.abspath(path)), os.path.abspath(srcdir))
    ).as_posix()


def _under(relative: str, folder: str) -> bool:
    return folder == "." or relative == folder or relative.startswith(f"{folder}/")
