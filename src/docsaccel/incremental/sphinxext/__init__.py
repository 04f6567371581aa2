"""The Sphinx side of whole-build incrementality: a build in a fresh checkout reads and
writes only what its change affects, and never publishes a stale page.

The design, in full: the caching guide's *Design* section.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx

import docsaccel

__all__ = ["MARKER", "PAGES_ATTR", "setup"]

#: The environment's attribute holding the page records (see
#: :mod:`docsaccel.incremental.pages`). Here rather than in :mod:`.state_build`: every build
#: asks for it at env-purge-doc, and most builds need nothing else of the state.
PAGES_ATTR = "docsaccel_pages"
#: Beside the doctrees: which state a finished build left there, and its write-side facts
#: (:mod:`.state_build` reads and writes it). Here too: every build without the state
#: deletes it (:func:`_forget_kept_state`), and needs nothing else of the state.
MARKER = "docsaccel-state.json"


def _cache_on(app: Sphinx) -> bool:
    """Whether this build may keep a Sphinx state: the example cache is on (and it is no
    shard's build). Asked of the gallery plugin's settings, read just before."""
    settings = getattr(getattr(app, "_docsaccel_gallery", None), "settings", None)
    return settings is not None and settings.cache is not None and settings.shard_examples is None


def _cache_given(app: Sphinx) -> bool:
    """Whether this build was given an example cache, writable or not."""
    gallery = getattr(app, "_docsaccel_gallery", None)
    return getattr(gallery, "settings", None) is not None and (
        gallery.settings.cache is not None or gallery.read_only_cache is not None
    )


def _forget_kept_state(app: Sphinx) -> None:
    """This build keeps no Sphinx state, yet writes the doctree and output folders: the
    record a finished build with the state left beside the doctrees no longer says what
    they hold (an environment and pages of documents removed since), so the next build
    with the state does not start from them; the output folder's record of the user's
    files goes on. Not for a build docsaccel refused: it never touched the folders."""
    if getattr(getattr(app, "_docsaccel_gallery", None), "settings", None) is None:
        return
    with contextlib.suppress(OSError):  # none there, or not this build's to remove
        (Path(app.doctreedir) / MARKER).unlink()
    from docsaccel.incremental.sphinxext import output_record

    # Which files of the output folder are the user's outlives a build without the state.
    output_record.carry(app)


def _on_config_inited(app: Sphinx, config: Any) -> None:
    # Without the cache (the default) nothing of the state is imported or connected: a
    # plain build pays for none of it.
    if not _cache_given(app):
        _forget_kept_state(app)
        return
    from docsaccel.incremental.sphinxext import sources

    if not _cache_on(app):
        # A read-only cache: no state, but what the build generates is still known to the
        # next build in these folders (kept beside the output).
        sources.on_config_inited(app, state_on=False)
        _forget_kept_state(app)
        return
    from docsaccel.incremental.sphinxext import reading, restore, viewcode, warnings
    from docsaccel.incremental.sphinxext.state_build import current

    _connect(app)
    restore.on_config_inited(app, config)
    build = current(app)
    # Before sphinx-gallery and autosummary generate their sources (builder-inited), the
    # Sphinx state kept or not: the next build may keep it.
    sources.on_config_inited(app, state_on=build is not None)
    if build is None:
        _forget_kept_state(app)
        return
    # What the project's modules read when the build imports them before the documents
    # are read (autosummary's generation, the examples): the pages showing them depend on
    # it. Until the reading starts (:func:`.outdated.on_before_read_docs`).
    from docsaccel.cache.recorder import Recorder

    Recorder.get().carried.count_readers(build.project.owns_module)
    Recorder.get().phases.watch_between(build.project.roots, build.project.excluded)
    warnings.install(app)
    if "sphinx.ext.autodoc" in app.extensions:
        # Late: the object as the other handlers leave it.
        app.connect("autodoc-process-docstring", reading.on_autodoc_docstring, priority=900)
        app.connect("autodoc-process-signature", reading.on_autodoc_signature, priority=900)
    if viewcode.EXTENSION in app.extensions:
        app.connect("viewcode-find-source", reading.on_viewcode_find_source, priority=1)
        app.connect("env-updated", viewcode.on_env_updated, priority=980)


def _on_report(app: Sphinx, exception: BaseException | None) -> None:
    from docsaccel.incremental.sphinxext import save
    from docsaccel.incremental.sphinxext.state_build import current

    build, gallery = current(app), getattr(app, "_docsaccel_gallery", None)
    if build is not None and gallery is not None:
        gallery.sphinx_state = save.summary(build)


def _connect(app: Sphinx) -> None:
    """The handlers of a build that may keep a state, in the order of the caching guide's design."""
    from docsaccel.incremental.sphinxext import (
        duplicates,
        image_names,
        order,
        outdated,
        reading,
        save,
        writing,
    )

    # After sphinx-gallery (500) and the gallery plugin (900) wrote the generated pages.
    app.connect("builder-inited", writing.install, priority=950)
    app.connect("env-get-outdated", outdated.on_env_get_outdated, priority=1)
    app.connect("env-before-read-docs", outdated.on_before_read_docs, priority=900)
    app.connect("env-before-read-docs", order.on_before_read_docs, priority=950)
    app.connect("env-before-read-docs", duplicates.on_before_read_docs, priority=999)
    app.connect("source-read", reading.on_source_read, priority=1)
    app.connect("doctree-read", reading.on_doctree_read, priority=999)
    # Before the reading's end is noted: it may read a few documents again.
    app.connect("env-updated", duplicates.on_env_updated, priority=0)
    # After the duplicates' handler: the documents it reads again may show numbered images.
    app.connect("env-updated", image_names.on_env_updated, priority=0)
    app.connect("env-updated", reading.on_env_updated, priority=1)
    # After every extension's env-updated: the data as a clean build orders it.
    app.connect("env-updated", order.on_env_updated, priority=990)
    app.connect("env-merge-info", reading.on_merge_info)
    # After the toctree collector has numbered the sections (500).
    app.connect("env-get-updated", writing.on_env_get_updated, priority=900)
    app.connect("write-started", writing.on_write_started)
    app.connect("doctree-resolved", writing.on_doctree_resolved, priority=1)
    app.connect("doctree-resolved", writing.on_doctree_resolved_last, priority=999)
    app.connect("html-page-context", writing.on_page_context, priority=1)
    app.connect("html-collect-pages", writing.on_collect_pages)
    # The report is written at 100; the state is saved after sphinx-gallery edited pages.
    app.connect("build-finished", _on_report, priority=90)
    app.connect("build-finished", save.on_build_finished, priority=850)


def _on_purge_doc(app: Sphinx, env: Any, docname: str) -> None:
    # In every build, the cache on or off: a document read again by a build without the
    # state must not keep its record in the environment a later build with it restores.
    if not getattr(env, PAGES_ATTR, None):
        return  # no record in the environment to drop: the reading side is not imported
    from docsaccel.incremental.sphinxext import reading

    reading.on_purge_doc(app, env, docname)


def _on_merge_info(app: Sphinx, env: Any, docnames: set[str], other: Any) -> None:
    if not _cache_on(app):  # with the cache on, _connect connected the full handler
        from docsaccel.incremental.sphinxext import reading

        reading.on_merge_info(app, env, docnames, other)


def _on_env_get_outdated(
    app: Sphinx, env: Any, added: set[str], changed: set[str], removed: set[str]
) -> list[str]:
    # In every build, the state kept or not: Sphinx itself never deletes these pages.
    from docsaccel.incremental.sphinxext import removed_pages

    return removed_pages.on_env_get_outdated(app, env, added, changed, removed)


def setup(app: Sphinx) -> dict[str, Any]:
    # Its setting, docsaccel_cache_sphinx, is registered with the others (docsaccel.settings).
    # After the gallery plugin has locked the output folder and read its settings (20).
    app.connect("config-inited", _on_config_inited, priority=30)
    app.connect("env-purge-doc", _on_purge_doc)
    app.connect("env-merge-info", _on_merge_info)
    app.connect("env-get-outdated", _on_env_get_outdated)
    return {
        "version": docsaccel.__version__,
        "parallel_read_safe": True,
        "parallel_write_safe": True,
    }
