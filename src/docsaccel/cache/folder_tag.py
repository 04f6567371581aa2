"""What tells a docsaccel cache folder: the tag every build writes at its top, and the
one way the folder and its subfolders are made (never a parent of the folder).

Kept apart from the store because every build looks for cache folders in its source
folder, the cache on or off, and that look must not load the store.

>>> is_cache_folder(Path("/no/such/place"))
False
"""

from __future__ import annotations

from pathlib import Path

from docsaccel.contract import InputError

__all__ = [
    "LAST_BUILD",
    "TAG_FILE",
    "TAG_TEXT",
    "CacheFolderError",
    "is_cache_folder",
    "make_cache_subfolder",
    "tag_cache_folder",
]

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


class CacheFolderError(InputError):
    """The cache folder cannot be made: its parent is gone."""


def tag_cache_folder(folder: Path) -> None:
    """Make ``folder`` if needed, and tag it as a docsaccel cache.

    The folder itself only, never its parents: the setting's check refuses a folder whose
    parent is missing, and a parent removed since is refused here rather than remade, so
    no build makes a chain of folders the user did not ask for."""
    try:
        folder.mkdir(exist_ok=True)
    except FileNotFoundError:
        raise CacheFolderError(
            f"{folder}: its parent folder {folder.parent} does not exist; a build makes "
            "only the cache folder itself"
        ) from None
    tag = folder / TAG_FILE
    if not is_cache_folder(folder):
        tag.write_text(TAG_TEXT, encoding="utf-8")


def make_cache_subfolder(root: Path, folder: Path) -> Path:
    """Make ``folder`` inside the cache folder ``root``: the one way the cache's
    subfolders are made. ``root`` is made and tagged first when it is gone (removed
    since the build began), never its parents (:func:`tag_cache_folder` refuses them in
    one line); then each folder below it, one at a time, so a root removed meanwhile is
    refused rather than remade untagged with its parents."""
    tag_cache_folder(root)
    made = root
    for part in folder.relative_to(root).parts:
        made = made / part
        try:
            made.mkdir(exist_ok=True)
        except FileNotFoundError:
            raise CacheFolderError(
                f"{folder}: the cache folder {root} was removed while it was written; "
                "not made again"
            ) from None
    return folder
