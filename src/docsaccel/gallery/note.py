"""The note on an example's page in fast builds: which knobs took their fast values.

The design, in full: the fast path guide's *Design* section.

Example:

>>> fast_note_text({"fast": True, "knobs": {"rollouts": {"value": 1, "fast": 1, "full": 4}}})
'Built with the CI fast path: rollouts = 1 (full build: 4)'
>>> fast_note_text({"fast": False, "knobs": {"rollouts": {"value": 4, "fast": 1, "full": 4}}})
''
"""

from __future__ import annotations

from typing import Any

from docutils import nodes

from docsaccel.fast import knob_picks, show_value

__all__ = ["METADATA_KEY", "NOTE_CLASS", "add_fast_note", "fast_note_text"]

NOTE_CLASS = "docsaccel-fast-note"
METADATA_KEY = "docsaccel_fast_note"
_TITLE = "Built with the CI fast path"


def fast_note_text(record: dict[str, Any] | None) -> str:
    """The note for ``record``; ``""`` for full builds and examples without knobs."""
    if not record or not record.get("fast") or not record.get("knobs"):
        return ""
    knobs = [
        f"{name} = {show_value(pick['value'])} (full build: {show_value(pick['full'])})"
        for name, pick in knob_picks(record["knobs"])
    ]
    return f"{_TITLE}: {', '.join(knobs)}"


def add_fast_note(doctree: nodes.document, text: str) -> bool:
    """Insert the note under the first section title of ``doctree``; False if none."""
    if not text:  # every example page of every full build: no need to search the doctree
        return False
    section = next(iter(doctree.findall(nodes.section)), None)
    if section is None:
        return False
    heading, _, body = text.partition(": ")
    note = nodes.admonition("", classes=["note", NOTE_CLASS])
    note += nodes.title(heading, heading)
    note += nodes.paragraph(body, body)
    index = 1 if section.children and isinstance(section[0], nodes.title) else 0
    section.insert(index, note)
    return True
