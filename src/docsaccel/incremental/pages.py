"""What each document was read from, and which documents must be read again.

The design, in full: the caching guide's *Design* section.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from docsaccel.cache.deps import (
    Project,
    absent_changes,
    current_version,
    findable,
    listing_changes,
    listings_from_json,
)
from docsaccel.cache.fingerprint import file_digest, modified_ns
from docsaccel.incremental.pysource import MODULE_BODY, Delta, compare, module_pieces

__all__ = ["Checker", "Place", "Tables", "empty_record"]


def empty_record(source: str) -> dict[str, Any]:
    """A page record with no dependency yet but its source (a key of :class:`Place`)."""
    return {
        "source": source,
        "files": [],
        "downloads": [],
        "created": {},
        "modules": {},
        "dynamic": False,
        "dists": [],
        "absent": [],
        "listings": {},
        "refs": [],
        "toctree": [],
        "numref": False,
        "domains": [],
        "placeholders": {},
        "reread": None,
    }


#: How far above the root a path is still the checkout's: a package beside a ``docs``
#: folder that is the root (no ``.git`` or ``pyproject.toml`` marks one above it) and put on
#: ``sys.path`` by ``conf.py``, a gallery's ``examples_dirs = ["../examples"]``.
ANCESTORS = 2


@dataclass(frozen=True)
class Place:
    """Where paths are relative to: the project root (absolute, normalised)."""

    root: str

    def anchors(self) -> list[tuple[str, str]]:
        """``[(folder, its key)]``: the root (``"."``) and up to :data:`ANCESTORS` folders
        above it (``".."``, ``"../.."``), never the file system's root or a folder right
        under it (``/home``, ``/tmp``: no checkout's)."""
        found = [(self.root, ".")]
        folder, key = self.root, "."
        for _ in range(ANCESTORS):
            parent = os.path.dirname(folder)
            top = os.path.dirname(parent)
            if parent == folder or top == os.path.dirname(top):
                break
            folder, key = parent, ".." if key == "." else f"{key}/.."
            found.append((folder, key))
        return found

    def key(self, path: str | os.PathLike[str]) -> str:
        """``path`` (absolute) as a key: relative to the root when under it or under an
        anchor above it (``../src/pkg/stats.py``), else absolute (an installed theme).

        A key beside the root is relative, so it is found again beside a checkout that
        moved, never in the folder the state was made in, which may still hold old files."""
        path = os.path.normpath(os.path.abspath(path))
        for folder, _key in self.anchors():
            if path == folder or path.startswith(os.path.join(folder, "")):
                return os.path.relpath(path, self.root).replace(os.sep, "/")
        return path

    def path(self, key: str) -> str:
        return key if os.path.isabs(key) else os.path.normpath(os.path.join(self.root, key))


@dataclass
class Tables:
    """The digests the records were checked against: ``files`` (key: SHA-256), ``modules``
    (key: piece table or ``None``), ``dists`` (name: version or ``None``)."""

    files: dict[str, str | None] = field(default_factory=dict)
    modules: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    dists: dict[str, str | None] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"files": self.files, "modules": self.modules, "dists": self.dists}

    @classmethod
    def from_json(cls, data: Any) -> Tables:
        if not isinstance(data, Mapping):
            return cls()
        parts = [data.get(k) for k in ("files", "modules", "dists")]
        return cls(*(dict(p) if isinstance(p, Mapping) else {} for p in parts))

    def forget_edited(self, place: Place, modules_since_ns: int, files_since_ns: int) -> list[str]:
        """Leave out the digests of the files modified after the build used them, and
        return their keys: the digests are taken after the documents were read, so they
        would vouch for content no read saw (a module edited after it was imported).

        A project module counts from ``modules_since_ns`` (the build began: it may have
        been imported any time after), any other file from ``files_since_ns`` (the
        documents began to be read). A key left without a digest never matches a file,
        so every document using it is read again next time."""
        edited: list[str] = []
        for key in sorted(self.files):
            since = modules_since_ns if key in self.modules else files_since_ns
            if since > 0 and modified_ns(place.path(key)) >= since:
                self.files[key] = None
                if key in self.modules:
                    self.modules[key] = None
                edited.append(key)
        return edited


def _digest(path: str) -> str | None:
    try:
        return file_digest(path)
    except OSError:
        return None


class Checker:
    """Compares :class:`Tables` with the files as they are now (each file read once)."""

    def __init__(self, tables: Tables, root: str, moved: bool = False) -> None:
        self.tables = tables
        self.place = Place(os.path.normpath(os.path.abspath(root)))
        #: The records were made in another checkout: an absolute key (a file far from the
        #: root) may name that checkout's file, not the one this build uses.
        self.moved = moved
        self._now: dict[str, str | None] = {}
        self._deltas: dict[str, Delta] = {}
        self._versions: dict[str, str | None] = {}
        self._found: dict[str, bool] = {}

    def digest(self, key: str) -> str | None:
        if key not in self._now:
            self._now[key] = _digest(self.place.path(key))
        return self._now[key]

    def changed(self, key: str) -> str | None:
        """``"changed"``/``"removed"`` when the file is not as the tables hold it."""
        now = self.digest(key)
        if key in self.tables.files and now == self.tables.files[key]:
            return None
        return "removed" if now is None else "changed"

    def delta(self, key: str) -> Delta:
        if key not in self._deltas:
            old = self.tables.modules.get(key)
            self._deltas[key] = compare(old, module_pieces(self.place.path(key)))
        return self._deltas[key]

    def version(self, name: str) -> str | None:
        if name not in self._versions:
            self._versions[name] = current_version(name)
        return self._versions[name]

    def found(self, name: str) -> bool:
        """Whether an import would find module ``name`` now (:func:`.deps.findable`),
        asked once per check."""
        if name not in self._found:
            self._found[name] = findable(name)
        return self._found[name]

    def reasons(self, record: Mapping[str, Any]) -> list[str]:
        """Why the page must be read again (empty: it need not), cheapest checks first.

        A malformed record is a reason too: when in doubt, read again.
        """
        try:
            return self._reasons(record)
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            return [f"its record is malformed ({exc!r})"]

    def _reasons(self, record: Mapping[str, Any]) -> list[str]:
        found: list[str] = []
        if record.get("reread"):
            found.append(str(record["reread"]))
        source = record["source"]
        how = self.changed(source)
        if how:
            found.append(f"source {how}")
        if self.moved:
            keys = [*record["files"], *record["modules"], *record.get("downloads", ())]
            keys += record.get("created", {})
            far = sorted(k for k in keys if os.path.isabs(k))
            if far:
                found.append(f"the checkout moved, and {far[0]} is far from its root")
        for key in record["files"]:
            how = self.changed(key)
            if how:
                found.append(f"{key} {how}")
        for key in record.get("downloads", ()):
            if not os.path.isfile(self.place.path(key)):
                found.append(f"{key} removed")
        for key, digest in record.get("created", {}).items():
            now = self.digest(key)
            if now is not None and now != digest:
                found.append(f"{key} changed")
        for key, use in record["modules"].items():
            if self.changed(key) is None:
                continue
            why = self.module_reason(key, use, bool(record["dynamic"]))
            if why:
                found.append(why)
        for name in record["dists"]:
            before, now = self.tables.dists.get(name), self.version(name)
            if name not in self.tables.dists or before != now:
                found.append(f"{name} {before or 'not installed'} → {now or 'not installed'}")
        found += [change.reason for change in absent_changes(record["absent"], self.found)]
        project = Project(root=self.place.root, roots=(self.place.root,))
        listings = listings_from_json(record["listings"])
        found += [change.reason for change in listing_changes(listings, project)]
        return found

    def module_reason(self, key: str, use: Mapping[str, Any], dynamic: bool) -> str | None:
        """Why a page that uses module ``key`` so (``{"shown": [...], "whole": ...}``) must
        be read again, or ``None`` when what it takes from the module is unchanged."""
        if self.digest(key) is None:
            return f"{key} removed"
        delta = self.delta(key)
        if use.get("whole") or delta.unknown:
            return f"{key} changed"
        if delta.code:
            return f"{key}: {_names(delta.code)} changed"
        old = self.tables.modules.get(key) or {}
        new = module_pieces(self.place.path(key)) or {}
        known = set(old.get("texts", {})) | set(new.get("texts", {}))
        shown = set(use.get("shown", ()))
        touched = (shown & delta.texts) | (shown - known)
        if touched:
            return f"{key}: {_names(touched)} changed"
        if dynamic and delta.docs:
            return f"{key}: docstring of {_names(delta.docs)} changed"
        return None

    def current_tables(self, records: Iterable[Mapping[str, Any]]) -> Tables:
        """Tables of the files the records use, as they are now (for the next build)."""
        tables = Tables()
        for record in records:
            try:
                keys = [record["source"], *record["files"], *record["modules"]]
                dists = list(record["dists"])
            except (KeyError, TypeError):
                continue
            for key in keys:
                if key not in tables.files:
                    tables.files[key] = self.digest(key)
            for key in record["modules"]:
                if key in tables.modules:
                    continue
                if self.tables.files.get(key) == tables.files[key] and key in self.tables.modules:
                    tables.modules[key] = self.tables.modules[key]  # unchanged: not parsed again
                else:
                    tables.modules[key] = module_pieces(self.place.path(key))
            for name in dists:
                tables.dists.setdefault(name, self.version(name))
        return tables


def _names(names: Iterable[str]) -> str:
    ordered = sorted(names, key=lambda n: (n == MODULE_BODY, n))
    shown = ", ".join("module body" if n == MODULE_BODY else n for n in ordered[:3])
    return shown + (f" (and {len(ordered) - 3} more)" if len(ordered) > 3 else "")
