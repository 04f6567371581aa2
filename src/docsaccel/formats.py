"""docsaccel's file formats: the header every file carries, checked one way; atomic writes.

The design, in full: the videos guide's *Design* section.

Example:

>>> RECORD = Format("docsaccel.example", 2, "example file")
>>> RECORD.header()
{'schema': 'docsaccel.example', 'version': 2}
>>> RECORD.check({"schema": "docsaccel.example", "version": 1}, "a.json")
1
>>> RECORD.check({"schema": "docsaccel.example", "version": 3}, "a.json")
Traceback (most recent call last):
...
docsaccel.contract.InputError: a.json: version is 3; this docsaccel reads example file ...
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docsaccel.contract import InputError

__all__ = [
    "ABANDONED_SECONDS",
    "Format",
    "context_key",
    "encode_json",
    "replace_atomically",
    "write_all",
    "write_json",
]


#: What a cache store's ``tmp/`` (the example cache's, the Sphinx state's) has held for
#: longer than this, a write that takes seconds, was left by a killed build: ``docsaccel
#: cache prune`` removes it.
ABANDONED_SECONDS = 3600


@dataclass(frozen=True)
class Format:
    """One file format: its schema name, the newest version, and what to call it."""

    schema: str
    version: int
    #: How messages name a file of this format ("report", "cache entry").
    what: str

    def header(self) -> dict[str, Any]:
        """The keys a file of this format starts with."""
        return {"schema": self.schema, "version": self.version}

    def check(
        self,
        data: Any,
        where: str | os.PathLike[str],
        error: type[Exception] = InputError,
        key_prefix: str = "",
        missing_version: int | None = None,
    ) -> int:
        """The version of ``data`` if it is a file of this format; raise ``error`` if not.

        ``key_prefix`` names where the header sits inside the file (``"examples[3]."``).
        ``missing_version``: the version of files written before they carried one (None:
        the key is required).
        """
        if not isinstance(data, dict):
            raise error(f"{where}: not a {self.what}: expected a JSON object, got {data!r:.60}")
        schema = data.get("schema")
        if schema != self.schema:
            raise error(
                f"{where}: not a {self.what}: {key_prefix}schema is {schema!r:.60}, "
                f"expected {self.schema!r}"
            )
        version = data.get("version", missing_version)
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise error(
                f"{where}: {key_prefix}version is {version!r:.40}; versions are whole "
                "numbers from 1"
            )
        if version > self.version:
            raise error(
                f"{where}: {key_prefix}version is {version!r}; this docsaccel reads "
                f"{self.what} versions 1 to {self.version}"
            )
        return version


def encode_json(data: Any, indent: int | None = 2) -> bytes:
    """``data`` as UTF-8 JSON with sorted keys and a final newline; NaN is refused."""
    text = json.dumps(data, indent=indent, sort_keys=True, allow_nan=False)
    return (text + "\n").encode("utf-8")


def context_key(context: Any) -> str:
    """A short digest (16 hex digits) of a JSON value: the key a build context is stored
    under, the example cache's and the Sphinx state's alike (part of an entry's or a
    state's folder name), and of the smaller facts hashed into the Sphinx state's."""
    text = json.dumps(context, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def write_json(path: str | os.PathLike[str], data: Any, indent: int | None = 2) -> None:
    """Write ``data`` as JSON to ``path`` atomically (temporary file + rename).

    ``indent=None`` writes one line with the C encoder (records); reports keep their
    indentation for readers.
    """
    replace_atomically(os.fspath(path), encode_json(data, indent))


def write_all(handle: int, payload: bytes) -> None:
    """Write every byte of ``payload`` to the file descriptor ``handle``."""
    view = memoryview(payload)
    while view:
        view = view[os.write(handle, view) :]


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# The mode an ordinary new file gets (0644 under the usual umask). mkstemp makes its file
# private (0600), which a web server serving the built site as another user cannot read.
_FILE_MODE = 0o666 & ~_umask()


def replace_atomically(path: str | os.PathLike[str], payload: bytes) -> None:
    """Make ``path`` hold ``payload``: written beside it, then renamed over it."""
    directory, name = os.path.split(os.fspath(path))
    directory = directory or "."
    try:
        handle, temporary = tempfile.mkstemp(dir=directory, prefix=f".{name}.", suffix=".tmp")
    except FileNotFoundError:
        Path(directory).mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=directory, prefix=f".{name}.", suffix=".tmp")
    try:
        try:
            os.fchmod(handle, _FILE_MODE)
            write_all(handle, payload)
        finally:
            os.close(handle)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
