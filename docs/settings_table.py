"""The ``docsaccel-settings`` directive: the site's table of every setting.

The table is made from the settings' one declaration (:func:`docsaccel.settings.settings_rst`),
so the docs list exactly the settings the plugin registers, with their defaults,
variables and help, and never drift from them.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from docsaccel import settings
from docsaccel.settings import settings_rst


class SettingsTable(SphinxDirective):
    """``.. docsaccel-settings::``: the table of every docsaccel setting."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        container = nodes.container()
        lines = StringList(settings_rst().splitlines(), source="docsaccel.settings")
        self.state.nested_parse(lines, self.content_offset, container)
        # The table changes with the declaration, not with this page.
        self.env.note_dependency(settings.__file__)
        return container.children


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("docsaccel-settings", SettingsTable)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
