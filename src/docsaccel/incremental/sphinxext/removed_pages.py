"""The pages of documents no longer in the project leave the output folder, in every build.

Sphinx never deletes what it wrote for a document once the document is gone (an example
deleted, a page removed from the sources): a rebuild in the same folders publishes it,
where a clean build of the same tree has none. Sphinx names the removed documents when it
compares its environment with the sources (``env-get-outdated``); their pages and their
copied sources are removed then, whether the Sphinx state is kept or not. Only the files
Sphinx writes for a document are: nothing else of the output folder is touched.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.builders.html import StandaloneHTMLBuilder
from sphinx.builders.singlehtml import SingleFileHTMLBuilder

__all__ = ["on_env_get_outdated", "page_files"]


def page_files(builder: StandaloneHTMLBuilder, docname: str) -> list[Path]:
    """The files ``builder`` writes for ``docname``: its page, and its copied source under
    ``_sources`` for each source suffix it may have had."""
    outdir = Path(builder.outdir)
    files = [Path(builder.get_outfilename(docname))]
    config = builder.config
    if config.html_copy_source:
        for suffix in config.source_suffix:
            name = docname + suffix + config.html_sourcelink_suffix
            files.append(outdir / "_sources" / name)
    return files


def _remove(files: Iterable[Path], outdir: Path) -> None:
    """Delete ``files`` (inside ``outdir`` only, never a symbolic link), with the folders
    this empties up to ``outdir``."""
    root = os.path.abspath(outdir)
    for path in files:
        absolute = os.path.abspath(path)
        if os.path.commonpath([root, absolute]) != root or os.path.islink(absolute):
            continue
        with contextlib.suppress(OSError):  # never written, or not this build's to remove
            os.unlink(absolute)
        folder = os.path.dirname(absolute)
        while folder != root and os.path.commonpath([root, folder]) == root:
            try:
                os.rmdir(folder)  # only an empty one
            except OSError:
                break
            folder = os.path.dirname(folder)


def on_env_get_outdated(
    app: Sphinx, env: Any, added: set[str], changed: set[str], removed: set[str]
) -> list[str]:
    """Remove the pages of the ``removed`` documents from an HTML builder's output folder."""
    builder = app.builder
    # A single page builder writes no page per document.
    per_document = not isinstance(builder, SingleFileHTMLBuilder)
    if removed and isinstance(builder, StandaloneHTMLBuilder) and per_document:
        # A removed document's name taken again by another source is no removal.
        gone = sorted(set(removed) - set(env.found_docs))
        _remove([path for name in gone for path in page_files(builder, name)], builder.outdir)
    return []
