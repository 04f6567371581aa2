"""What of the last build's examples must go from the gallery folders before
sphinx-gallery runs, cache on or off.

sphinx-gallery never removes what it generated for an example: once the example's source
is gone, its page (which Sphinx reads as a document), copy, notebook, zip and images stay
in the gallery folder, and every later build publishes them, where a clean build of the
same tree has none. The records of the last build in the output folder name its examples;
of those, an example whose source is gone leaves nothing, and neither does a run the
last build never finished (its process ended mid-run without removing what it wrote:
sphinx-gallery would take that for the example's outputs).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from docsaccel import sg_compat
from docsaccel.contract import is_stopped_hard, is_unfinished
from docsaccel.examples import Planner

__all__ = ["drop_previous_outputs"]


def drop_previous_outputs(planner: Planner, previous: Mapping[str, Mapping[str, Any]]) -> None:
    """Remove the gallery-folder outputs (:func:`.sg_compat.output_files`) of each example
    of ``previous`` (the last build's records) whose source no longer exists, or whose
    run the last build never finished."""
    for record in previous.values():
        gallery, name = str(record.get("gallery")), str(record.get("name"))
        source = os.path.join(planner.srcdir, gallery, name)
        unfinished = is_unfinished(record) or is_stopped_hard(record)
        if not unfinished and os.path.lexists(source):
            continue
        target = planner.target_of(gallery, name)
        if target is not None and _removable(planner, target, source):
            sg_compat.remove_outputs(target)


def _removable(planner: Planner, target: str, source: str) -> bool:
    """Whether ``target`` is a copy in a gallery folder and not the source itself (a
    gallery folder that is its examples folder holds the sources only)."""
    resolved = Path(target).resolve()
    if resolved == Path(source).resolve():
        return False
    folders = [Path(planner.srcdir, gallery_dir).resolve() for _, gallery_dir in planner.galleries]
    return any(folder in resolved.parents for folder in folders)
