"""The record a finished build leaves for the next one: which documents warned, how its
pages were written and what files they made (beside the doctrees and in the stored state).
Free of Sphinx: ``docsaccel cache explain`` reads it too.

A record of another :data:`VERSION` (or none, or a malformed one) reads as no record: the
next build is a clean one, never a crash.

>>> LastBuild.from_json(LastBuild(warned_read=["intro"]).to_json()).warned_read
['intro']
>>> LastBuild.from_json({"version": 0, "warned_read": ["intro"]}) is None
True
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

__all__ = ["OTHER_VERSION", "VERSION", "LastBuild"]

#: The version of :class:`LastBuild`'s stored form; raise it when a field changes meaning.
VERSION = 1
#: Why a build that finds a record of another version reads every document (its log and
#: ``docsaccel cache explain`` say it alike).
OTHER_VERSION = "the stored state's record of its build is of another version"


@dataclass
class LastBuild:
    """What the last finished build decided and wrote, as the next one compares with it.

    The write side's fields stay empty when that build wrote no page (a non-HTML builder,
    or no write context)."""

    #: Documents that warned while read, and while their page was written (read or
    #: written again, so the warning is given again).
    warned_read: list[str] = field(default_factory=list)
    warned_write: list[str] = field(default_factory=list)
    #: The intersphinx inventories' digest as the documents were read.
    intersphinx: str | None = None
    #: How the pages were written (configuration, tags, template files), see
    #: :mod:`.writing`; empty: no record of it.
    write: dict[str, Any] = field(default_factory=dict)
    #: ``{docname: files of the output folder its page made}``.
    outputs: dict[str, list[str]] = field(default_factory=dict)
    #: ``{docname: files its page links (images, downloads)}``.
    linked_files: dict[str, list[str]] = field(default_factory=dict)
    #: ``{docname: classes of the placeholders filled when its page was written}``.
    filled_late: dict[str, list[str]] = field(default_factory=dict)
    #: ``{page: file}`` of the pages the HTML builder writes that are no document's.
    builder_pages: dict[str, str] = field(default_factory=dict)
    #: Files Sphinx copied for the pages, and the static and extra files of the site.
    sphinx_files: list[str] = field(default_factory=list)
    site_files: list[str] = field(default_factory=list)
    #: ``{file the pages link as CSS or JavaScript: whether it was there}``.
    assets: dict[str, bool] = field(default_factory=dict)
    #: The general index's entries (see :func:`.writing.index_entries`).
    index_entries: dict[str, list[list[Any]]] | None = None

    def to_json(self) -> dict[str, Any]:
        """The stored form: the fields and :data:`VERSION`."""
        return {"version": VERSION, **dataclasses.asdict(self)}

    @classmethod
    def from_json(cls, data: Any) -> LastBuild | None:
        """The record stored as ``data`` (other keys beside it are ignored); ``None`` when
        ``data`` is no record of this :data:`VERSION`."""
        if not isinstance(data, dict) or data.get("version") != VERSION:
            return None
        values = {f.name: data[f.name] for f in dataclasses.fields(cls) if f.name in data}
        if not all(_fits(cls.__dataclass_fields__[k], v) for k, v in values.items()):
            return None
        return cls(**values)


def _fits(declared: dataclasses.Field[Any], value: Any) -> bool:
    """Whether ``value`` is of the kind the field holds (a list, a mapping, a string or
    ``None``): a record written otherwise is not this version's."""
    if declared.default_factory is not dataclasses.MISSING:
        return type(value) is type(declared.default_factory())
    return value is None or (isinstance(value, (str, dict)) and not isinstance(value, bool))
