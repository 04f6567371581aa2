"""What tells a docsaccel cache folder: the tag every build writes at its top.

Kept apart from the store because every build looks for cache folders in its source
folder, the cache on or off, and that look must not load the store.

>>> is_cache_folder(Path("/no/such/place"))
False
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["LAST_BUILD", "TAG_FILE", "TAG_TEXT", "is_cache_folder"]

#: The summary of the last build that wrote the cache, at the top of its folder.
LAST_BUILD = "last-build.json"
#: The tag every build writes at the top of its cache folder: it tells a docsaccel cache
#: from a folder of the user's (a build refuses to write into one that is neither empty
#: nor tagged) and wherever it lies in a source folder, a build leaves it out of the
#: documents. The Cache Directory Tagging format, so backup tools skip the folder too.
TAG_FILE = "CACHEDIR.TAG"
TAG_TEXT = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by docsaccel (the example cache).\n"
)


def is_cache_folder(folder: Path) -> bool:
    """Whether ``folder`` is a docsaccel cache: it carries docsaccel's tag, or (a cache
    made before the tag) the summary its builds write at its top. Another tool's tag
    (``.pytest_cache`` has one) does not count."""
    try:
        return "docsaccel" in (folder / TAG_FILE).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return (folder / LAST_BUILD).is_file()
