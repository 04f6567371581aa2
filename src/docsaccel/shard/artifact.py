"""What marks a folder as a shard artifact: its manifest, of the shard manifest format.

Told by that mark alone, so any build can keep every artifact out of its documents
wherever it lies (a CI job downloads them into the project), and a merge finds them.
"""

from __future__ import annotations

import json
from pathlib import Path

from docsaccel.formats import Format

__all__ = ["MANIFEST", "MANIFEST_FORMAT", "is_artifact"]

MANIFEST = "manifest.json"
MANIFEST_FORMAT = Format("docsaccel.shard", 1, "shard manifest")


def is_artifact(folder: Path) -> bool:
    """Whether ``folder`` holds a shard manifest (one that does not read is not one): its
    ``files/`` are copies of a shard's pages, never documents of the project."""
    manifest = Path(folder) / MANIFEST
    if not manifest.is_file():
        return False
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return isinstance(data, dict) and data.get("schema") == MANIFEST_FORMAT.schema
