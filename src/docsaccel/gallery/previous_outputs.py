"""What of the last build's examples must go from the gallery folders before
sphinx-gallery runs, cache on or off.

sphinx-gallery never removes what it generated for an example: once the example's source
is gone, its page (which Sphinx reads as a document), copy, notebook, zip and images stay
in the gallery folder, and every later build publishes them, where a clean build of the
same tree has none. The records of the last build in the output folder name its examples;
of those, an example whose source is gone, or is no longer built (now matched by
sphinx-gallery's ``ignore_pattern``: it reads the copy's page all the same), leaves
nothing, and neither does a run the
last build never finished (its process ended mid-run without removing what it wrote:
sphinx-gallery would take that for the example's outputs).

The records are not a whole memory of the gallery folders: a killed build's journal names
only the examples it started, and an output folder can be deleted while the gallery
folders stay. So the gallery folders are read too: a page sphinx-gallery generated for an
example (its header says so) whose source is in none of the example extensions is an
orphan, and its outputs go as well. A gallery's index, the execution times page and a
page the user wrote in a gallery folder have no such header and stay.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

from sphinx.util import logging

from docsaccel import sg_compat
from docsaccel.contract import is_stopped_hard, is_unfinished
from docsaccel.examples import Planner

__all__ = ["drop_expected_failure_marks", "drop_previous_outputs"]

logger = logging.getLogger(__name__)


def drop_previous_outputs(
    planner: Planner,
    previous: Mapping[str, Mapping[str, Any]],
    extensions: Iterable[str] = (".py",),
    built: Collection[str] | None = None,
) -> None:
    """Remove the gallery-folder outputs (:func:`.sg_compat.output_files`) of each example
    of ``previous`` (the last build's records) whose source no longer exists or is not in
    ``built`` (the sources this build's sphinx-gallery builds; None: every one that
    exists), or whose run the last build never finished, and of each orphan page of the
    gallery folders (:func:`_orphans`; ``extensions``: sphinx-gallery's
    ``example_extensions``)."""
    kept = _builds(built)
    removed = _orphans(planner, tuple(extensions), kept)
    for record in previous.values():
        gallery, name = str(record.get("gallery")), str(record.get("name"))
        source = os.path.join(planner.srcdir, gallery, name)
        unfinished = is_unfinished(record) or is_stopped_hard(record)
        if not unfinished and kept(source):
            continue
        target = planner.target_of(gallery, name)
        if target is not None and _removable(planner, target, source):
            removed.append(target)
    for target in removed:
        sg_compat.remove_outputs(target)
    # The times page of a folder that lost an example's outputs may name its page, and
    # sphinx-gallery rewrites it as a clean build would only when there is none.
    for folder in sorted({os.path.dirname(target) for target in removed}):
        with contextlib.suppress(OSError):  # none written, or not this process's to remove
            sg_compat.execution_times_page(folder).unlink()


def drop_expected_failure_marks(gallery_conf: dict[str, Any], srcdir: str) -> None:
    """Remove the ``.md5`` files an earlier sharded build left beside expected failures
    (:func:`.sg_compat.remove_expected_failure_marks`), saying so in one line: a clean
    build runs those examples. Not for a merge build, whose marks they are."""
    said = sg_compat.remove_expected_failure_marks(gallery_conf, srcdir)
    if said is not None:
        logger.info(f"docsaccel: {said}")


def _builds(built: Collection[str] | None) -> Callable[[str], bool]:
    """Whether this build builds the example of a source path."""
    if built is None:
        return os.path.lexists
    sources = {os.path.normpath(path) for path in built}
    return lambda source: os.path.normpath(source) in sources


def _orphans(
    planner: Planner, extensions: tuple[str, ...], kept: Callable[[str], bool]
) -> list[str]:
    """The copies (existing or not) of the examples whose page sphinx-gallery generated in
    a gallery folder or one of its sub-gallery folders (the depth it writes to) and whose
    source ``kept`` holds in none of ``extensions``."""
    found = []
    for _, gallery_dir in planner.galleries:
        folder = Path(planner.srcdir, gallery_dir)
        for page in sorted([*folder.glob("*.rst"), *folder.glob("*/*.rst")]):
            if page.name == "index.rst" or page.stem in sg_compat.ROOT_PAGES:
                continue  # sphinx-gallery writes these for every build, never for an example
            target = sg_compat.generated_page_target(page)
            source = None if target is None else planner.source_of(str(target))
            if target is None or source is None:
                continue
            stem = os.path.splitext(source)[0]
            if any(kept(stem + extension) for extension in extensions):
                continue
            if _removable(planner, str(target), source):
                found.append(str(target))
    return found


def _removable(planner: Planner, target: str, source: str) -> bool:
    """Whether ``target`` is a copy in a gallery folder and not the source itself (a
    gallery folder that is its examples folder holds the sources only)."""
    resolved = Path(target).resolve()
    if resolved == Path(source).resolve():
        return False
    folders = [Path(planner.srcdir, gallery_dir).resolve() for _, gallery_dir in planner.galleries]
    return any(folder in resolved.parents for folder in folders)
