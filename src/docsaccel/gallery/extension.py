"""The gallery plugin's ``setup``: what loading ``docsaccel.gallery`` does to a Sphinx app.

It notes that a build of the output folder started (:func:`docsaccel.layout.note_build_started`),
loads sphinx-gallery and :mod:`docsaccel.video`, declares every ``docsaccel_*``
setting from the one table of settings (:mod:`docsaccel.settings`), connects the event
handlers (:mod:`.events`), and sets up how this process ends (:mod:`.process_end`):
nothing of this happens when a module is merely imported.
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx
from sphinx.util import logging

import docsaccel
from docsaccel import layout, sg_compat
from docsaccel.gallery import events, process_end
from docsaccel.settings import config_values, read_overrides

__all__ = ["ENV_VERSION", "setup"]

#: The version of what the plugin keeps in Sphinx's environment (the fast-path note's
#: metadata): bumped when that changes, so Sphinx reads every document again.
ENV_VERSION = 1

logger = logging.getLogger(__name__)


def setup(app: Sphinx) -> dict[str, Any]:
    # First, before anything can fail: a build that fails before config-inited (an
    # extension listed after this one that does not import) removes no report, and this
    # note tells the readers that the report left is an earlier build's.
    layout.note_build_started(app.outdir, app.srcdir)
    for folder in events.junit_folders(app):
        layout.note_build_writes_in(folder, app.outdir)
    app.setup_extension("sphinx_gallery.gen_gallery")
    unchecked = sg_compat.unchecked_release()
    if unchecked is not None:
        logger.warning(unchecked, type="docsaccel", subtype="sphinx_gallery")
    app.setup_extension("docsaccel.video")
    app.setup_extension("docsaccel.incremental.sphinxext")
    for key, default, types in config_values():
        app.add_config_value(key, default, "", types=frozenset(types))
    # Before Sphinx reads them (it shows every value when config-inited is emitted): a
    # ``-D`` text Sphinx cannot convert would be a warning or a crash report; one docsaccel
    # cannot is refused in one line at config-inited.
    read_overrides(app.config, refuse=False)
    events.connect(app)
    process_end.install()
    return {
        "version": docsaccel.__version__,
        "env_version": ENV_VERSION,
        "parallel_read_safe": True,
        "parallel_write_safe": True,
    }
