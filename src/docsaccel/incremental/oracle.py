"""The oracle of every rule of the Sphinx state: a clean build of the same tree.

The design, in full: the caching guide's *Design* section.

>>> differences({"index.html": b"a", "old.html": b""}, {"index.html": b"b", "new.html": b""})
['index.html', 'new.html', 'old.html']
"""

from __future__ import annotations

import json
import re
import zipfile
from collections.abc import Mapping
from pathlib import Path

from docsaccel import sg_compat

__all__ = ["differences", "output_files"]

_TIMES = (
    re.compile(rb"\d+ minutes \d+\.\d+ seconds"),
    re.compile(rb"\d\d:\d\d\.\d+"),
    re.compile(rb"\d+\.\d+ sec"),
)
_LEFT_OUT = ("docsaccel/", ".doctrees/")
_SEARCH_INDEX = "searchindex.js"
#: What an empty folder is compared as.
EMPTY_FOLDER = b"<empty folder>"


def _masked(path: Path, relative: str) -> bytes:
    # By its path: under ``dirhtml`` the page is ``sg_execution_times/index.html``.
    if "sg_execution_times" in relative or sg_compat.is_measurement_file(relative):
        return b"<measured times>"
    if path.suffix == ".zip":
        with zipfile.ZipFile(path) as archive:
            return repr(sorted((i.filename, archive.read(i)) for i in archive.infolist())).encode()
    data = path.read_bytes()
    for pattern in _TIMES:
        data = pattern.sub(b"<time>", data)
    return data


def _masked_search_index(data: bytes, timed: set[str]) -> bytes:
    """The search index with every all-digit word left out of the pages in ``timed``
    (paths of pages showing a measured time: ``0.019 seconds`` makes the word ``019``)."""
    text = data.decode("utf-8")
    start, end = text.find("("), text.rfind(")")
    try:
        index = json.loads(text[start + 1 : end])
        docnames = index["docnames"]
        terms = index["terms"]
    except (ValueError, KeyError, TypeError):
        return data  # not an index this reads: compared as it is
    masked = {
        i
        for i, name in enumerate(docnames)
        if isinstance(name, str) and {f"{name}.html", f"{name}/index.html"} & timed
    }
    for word in [w for w in terms if w.isdigit()]:
        pages = terms[word] if isinstance(terms[word], list) else [terms[word]]
        kept = [page for page in pages if page not in masked]
        if kept:
            terms[word] = kept if len(kept) > 1 else kept[0]
        else:
            del terms[word]
    return json.dumps(index, sort_keys=True).encode()


def output_files(outdir: Path) -> dict[str, bytes]:
    """``{path relative to outdir: bytes as compared}`` (see the caching guide's design)."""
    found = {}
    timed = set()
    for path in sorted(Path(outdir).rglob("*")):
        relative = path.relative_to(outdir).as_posix()
        if relative.startswith(_LEFT_OUT) or f"{relative}/" in _LEFT_OUT:
            continue
        if path.is_file():
            found[relative] = _masked(path, relative)
            if path.suffix == ".html" and found[relative] != path.read_bytes():
                timed.add(relative)
        elif path.is_dir() and not any(path.iterdir()):
            found[f"{relative}/"] = EMPTY_FOLDER
    if _SEARCH_INDEX in found:
        search_index = Path(outdir) / _SEARCH_INDEX
        found[_SEARCH_INDEX] = _masked_search_index(search_index.read_bytes(), timed)
    return found


def differences(mine: Mapping[str, bytes], clean: Mapping[str, bytes]) -> list[str]:
    """The files present in one only, or with other bytes, sorted."""
    return sorted(n for n in set(mine) | set(clean) if mine.get(n) != clean.get(n))
