"""Images of one file name are numbered in ``_images`` as a clean build numbers them.

Sphinx copies every image into ``_images`` under its file name, and names the second one
of a name it meets ``<stem>1<suffix>`` (``env.images``, a ``FilenameUniqDict``): two
galleries' examples of one file name have thumbnails of one name. A clean build meets
them in the documents' sorted order. A restored environment keeps the numbers of the
builds that made it: once one of two such images is gone, or its documents were read
in another order, the kept number is not the clean build's, and the pages show, and
``_images`` holds, another file name.

So, once the documents are read (``env-updated``), the numbers are compared with those
a clean serial build gives (the images in the order of the first document showing each,
and of that document's image nodes); the
documents showing an image of a name numbered otherwise are read again, purged first and
then read in sorted order, as a clean serial build reads them, and written.

The design, in full: the caching guide's *Design* section.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Mapping
from pathlib import PurePath

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.util import logging

from docsaccel.incremental.sphinxext import exports
from docsaccel.incremental.sphinxext.reading import read_again
from docsaccel.incremental.sphinxext.state_build import current

__all__ = ["clean_names", "misnumbered", "on_env_updated", "shown_images"]

logger = logging.getLogger(__name__)


def _numbered(name: str, existing: set[str]) -> str:
    """The name Sphinx gives an image of file name ``name`` (``FilenameUniqDict.add_file``)."""
    path = PurePath(name)
    unique, i = path.name, 0
    while unique in existing:
        i += 1
        unique = f"{path.stem}{i}{path.suffix}"
    return unique


def _suspects(images: Mapping[str, tuple[set[str], str]]) -> set[str]:
    """The images whose name may depend on the order Sphinx met them: a file name another
    image has too, or a name Sphinx numbered, or one another image's number took."""
    by_name: dict[str, set[str]] = {}
    for image, (_, unique) in images.items():
        for name in {PurePath(image).name, unique}:
            by_name.setdefault(name, set()).add(image)
    return {image for group in by_name.values() if len(group) > 1 for image in group} | {
        image for image, (_, unique) in images.items() if unique != PurePath(image).name
    }


def clean_names(
    images: Mapping[str, tuple[set[str], str]], shown_in: Callable[[str], list[str]]
) -> dict[str, str]:
    """``{image: name in _images}`` as a clean serial build gives them: the images in the
    order of the first document (sorted) showing each, and within that document in the
    order it shows them (``shown_in(docname)``, asked only of the documents that first show
    an image whose name may depend on that order)."""
    suspects = _suspects(images)
    shown: dict[str, list[str]] = {}

    def place(image: str, first: str, position: int) -> int:
        if image not in suspects:
            return position
        if first not in shown:
            shown[first] = shown_in(first)
        order = shown[first]
        # Not found in the document (unreadable): after those found, as it was added.
        return order.index(image) if image in order else len(order) + position

    order = sorted(
        (min(docs), place(image, min(docs), position), image)
        for position, (image, (docs, _)) in enumerate(images.items())
        if docs
    )
    existing: set[str] = set()
    names = {}
    for _, _, image in order:
        names[image] = _numbered(image, existing)
        existing.add(names[image])
    return names


def misnumbered(
    images: Mapping[str, tuple[set[str], str]], shown_in: Callable[[str], list[str]]
) -> set[str]:
    """The images whose name differs from a clean build's, with every image it may share
    a name with (the same file name, or one of the names at stake)."""
    clean = clean_names(images, shown_in)
    wrong = {image for image, (_, name) in images.items() if clean.get(image, name) != name}
    if not wrong:
        return set()
    names = {n for image in wrong for n in (PurePath(image).name, images[image][1], clean[image])}
    grown = True
    while grown:
        # Every image whose file name or number meets a name at stake: reading the
        # documents of some of them but not all would number them against the others.
        sharing = {
            image
            for image, (_, name) in images.items()
            if image not in wrong and ({PurePath(image).name, name, clean.get(image)} & names)
        }
        grown = bool(sharing)
        wrong |= sharing
        names |= {n for image in sharing for n in (PurePath(image).name, images[image][1])}
    return wrong


def shown_images(env: BuildEnvironment, docname: str) -> list[str]:
    """The images a document shows, in the order Sphinx adds them to ``env.images``
    (its doctree's image nodes, each node's candidates in turn)."""
    try:
        doctree = env.get_doctree(docname)
    except (OSError, EOFError, pickle.UnpicklingError):
        return []  # no doctree to ask: the image is placed as it was added
    found: list[str] = []
    for node in doctree.findall(nodes.image):
        for path in (node.get("candidates") or {}).values():
            if path not in found:
                found.append(path)
    return found


def on_env_updated(app: Sphinx, env: BuildEnvironment) -> list[str]:
    """Read again, in sorted order, the documents showing images Sphinx numbered otherwise
    than a clean build would; they are then written too (returned)."""
    build = current(app)
    if build is None:
        return []
    images = env.images
    wrong = misnumbered(images, lambda docname: shown_images(env, docname))
    if not wrong:
        return []
    again = sorted({doc for image in wrong for doc in images[image][0]} & set(env.all_docs))
    if not again:
        return []
    reading = set(build.reading.docnames)
    build.reading.exports_before.update(exports.offers(env, set(again) - reading))
    for docname in again:
        reason = "it shows an image whose name in _images is numbered by the documents' order"
        build.reading.reasons.setdefault(docname, []).append(reason)
        logger.info(f"docsaccel: {env.doc2path(docname, False)}: {reason}")
    read_again(app, env, again)
    build.reading.docnames.extend(d for d in again if d not in reading)
    return again
