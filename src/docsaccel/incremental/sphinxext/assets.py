"""The ``?v=`` checksums of a page's CSS and JavaScript files, as a clean build writes them.

Sphinx links a page's CSS and JavaScript files with a checksum of the file as the output
folder holds it when the page is written (``_file_checksum``), none when it is not there
yet. Extensions that copy their file once the pages are written (matplotlib's
plot_directive and MyST-NB, at ``build-finished``) get none in a clean build. A restored
output folder already holds that file, so a page written again would link it with one,
and differ from a clean build's.

The design, in full: the caching guide's *Design* section.

:func:`.writing.install` calls :func:`watch` at ``builder-inited`` and :func:`unwatch` at
``build-finished``; between them ``build.writing.assets`` maps each linked file to whether its
pages were written with a checksum.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx

from docsaccel.incremental.sphinxext.state_build import IncrementalBuild

__all__ = ["assets_facts", "present_assets", "unwatch", "watch"]


def _linked_files(builder: Any) -> list[str]:
    """The output files every page links as CSS or JavaScript (relative, as added)."""
    found = []
    for asset in [*getattr(builder, "_css_files", ()), *getattr(builder, "_js_files", ())]:
        name = os.fspath(getattr(asset, "filename", asset) or "")
        # A URL, or a query Sphinx keeps as it is: no checksum either way.
        if name and "://" not in name and "?" not in name:
            found.append(name)
    return found


def present_assets(builder: Any, build: IncrementalBuild) -> dict[str, bool]:
    """``{file the pages link: whether a clean build has it when the pages are written}``
    (see the caching guide's design), asked once the builder copied its assets."""
    outdir = Path(builder.outdir)
    before = build.restored.previous.assets
    copied = build.writing.site_copies.files if build.writing.site_copies is not None else set()
    found = {}
    for name in _linked_files(builder):
        path = outdir / name
        there = path.is_file()
        if there and build.restored.origin and build.restored.left_as_it_was(path):
            # Restored, not written by this build: there as the last build's pages saw it.
            there = os.path.normpath(path) in copied or before.get(name) is not False
        found[name] = there
    return found


def watch(app: Sphinx, build: IncrementalBuild) -> None:
    """Decide :func:`present_assets` right after the builder copies its assets, and
    have the pages of a restored build link the files a clean build has not written yet
    without a checksum."""
    import sphinx.builders.html as html_module

    builder = app.builder
    copy_assets = getattr(builder, "copy_assets", None)
    checksum = getattr(html_module, "_file_checksum", None)
    if copy_assets is None or checksum is None:
        return

    def copy_then_look(*args: Any, **kwargs: Any) -> Any:
        result = copy_assets(*args, **kwargs)
        build.writing.assets = present_assets(builder, build)
        return result

    def clean_checksum(outdir: Any, filename: Any) -> str:
        if (
            build.writing.assets is not None
            and build.writing.assets.get(os.fspath(filename)) is False
        ):
            return ""  # not there yet in a clean build
        return checksum(outdir, filename)

    builder.copy_assets = copy_then_look
    if build.restored.origin:
        html_module._file_checksum = clean_checksum
        build.writing.unwatch_assets = lambda: setattr(html_module, "_file_checksum", checksum)


def unwatch(build: IncrementalBuild) -> None:
    """Give Sphinx back its own checksum (idempotent)."""
    undo, build.writing.unwatch_assets = build.writing.unwatch_assets, None
    if undo is not None:
        undo()


def assets_facts(build: IncrementalBuild) -> dict[str, bool]:
    """What :attr:`.last_build.LastBuild.assets` keeps: this build's answer, the last
    build's when no page was written (the builder copied no asset)."""
    if build.writing.assets is None:
        return dict(build.restored.previous.assets)
    return dict(sorted(build.writing.assets.items()))
