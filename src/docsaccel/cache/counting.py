"""Which pieces of the project's code an example counts at ``function`` granularity, and
why (the rule of :mod:`docsaccel.cache.pieces` applied to what the recorder saw).

The design, in full: the caching guide's *Design* section.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from docsaccel.cache.pieces import CLASS_BASES, DOC_READERS, DOCSTRINGS, MODULE_BODY, Facts

__all__ = [
    "AS_WRITTEN",
    "BODY",
    "CLASSES",
    "DOCS",
    "FILLED",
    "IMPORTED",
    "NAMED",
    "RAN",
    "Counted",
    "count",
    "filling_code",
    "named_in",
    "read_as",
]

#: Why a piece counts (as ``cache explain`` prints it).
FILLED = "made what {example} filled in {name}, which the example reads"
BODY = "module body"
IMPORTED = "ran while its module was imported"
RAN = "ran in the example"
NAMED = "named by code the example ran"
DOCS = "the example's code reads docstrings"
CLASSES = "the project runs code as a class is made"
AS_WRITTEN = "compiled by a JIT, not watched"


@dataclass
class Counted:
    """What :func:`count` found."""

    #: ``{file: {piece: why}}``.
    pieces: dict[str, dict[str, str]] = field(default_factory=dict)
    #: The names the counted code reads; ``None``: it computes names, so any.
    names: frozenset[str] | None = frozenset()
    #: ``{file: sorted pieces whose name the code reads}`` (:func:`named_in`).
    named: dict[str, list[str]] = field(default_factory=dict)


def named_in(facts: Facts, names: frozenset[str] | None) -> list[str]:
    """The pieces of a file (qualified: ``Cube.area``) that code reading ``names`` reaches
    by their short name (sorted). Qualified, so that a method added to another class
    under a name already read (one shadowing the inherited method the example ran) is a
    piece that appears."""
    return sorted(p for p, short in facts.short.items() if names is None or short in names)


def count(
    watched: Mapping[str, Facts],
    ran: Mapping[str, Iterable[str]],
    imported: Mapping[str, Iterable[str]],
    left: Mapping[str, Iterable[str]],
    source_names: Iterable[str],
    source_dynamic: bool,
) -> Counted:
    """The pieces of the ``watched`` files (``{file: facts}``) that count, given the
    pieces that ran in the example and while the modules it uses were imported, those
    left as written, and the names the example's own source reads."""
    counted = Counted()
    pieces = counted.pieces
    names = set(source_names)
    dynamic = source_dynamic

    def note(path: str, piece: str, why: str) -> bool:
        nonlocal dynamic
        facts = watched[path]
        piece = piece if piece in facts.digests else MODULE_BODY
        if piece in pieces.setdefault(path, {}):
            return False
        pieces[path][piece] = why
        names.update(facts.reads.get(piece, ()))
        dynamic = dynamic or piece in facts.dynamic
        return True

    for path in watched:
        note(path, MODULE_BODY, BODY)
    for why, found in ((IMPORTED, imported), (RAN, ran), (AS_WRITTEN, left)):
        for path, each in found.items():
            for piece in each if path in watched else ():
                note(path, piece, why)
    changed = True
    while changed:  # the names a counted piece reads count the pieces they name
        changed = False
        for path, facts in watched.items():
            owners = {_owner(p) for p in pieces[path]} & facts.by_name
            for piece in facts.by_name:
                if piece in pieces[path]:
                    continue
                if dynamic or piece in owners or facts.short.get(piece) in names:
                    changed |= note(path, piece, NAMED)
    counted.names = None if dynamic else frozenset(names)
    reads_docs = dynamic or not DOC_READERS.isdisjoint(names)
    hooks = any(facts.hooks for facts in watched.values())
    for path, facts in watched.items():
        if reads_docs:
            note(path, DOCSTRINGS, DOCS)
        if hooks:
            note(path, CLASS_BASES, CLASSES)
        counted.named[path] = named_in(facts, counted.names)
    return counted


def read_as(name: str) -> frozenset[str]:
    """The names code reads for the attribute ``name``: itself and, for a private name a
    class mangles (``_argmap__count``), the name its class's code writes (``__count``)."""
    mangled = _MANGLED.match(name)
    if mangled is None or name.endswith("__"):
        return frozenset({name})
    return frozenset({name, mangled.group(1)})


_MANGLED = re.compile(r"_[^_].*?(__.+)$")


def filling_code(
    name: str, ran: Mapping[str, Iterable[str]], facts: Mapping[str, Facts]
) -> dict[str, set[str]]:
    """The pieces, among those an earlier example ran (``{file: pieces}``; ``facts`` of
    those files), that made what it filled in a cache the project fills lazily, held
    under ``name`` (``_sides``, read as :func:`read_as` says): the functions whose code
    reads that name, and the pieces they reach by the names their code reads, in turn. A
    later example reading the cache reads what they made, not what its own code would.
    All it ran when that code computes names or no function reads the name (C code
    filled it): when in doubt, more. Module bodies are left out: every user of a module
    counts its body already. A class body or binding reached counts, but is not followed:
    it names the caches it holds (``_sides = {}``) without filling them, and what it reads
    ran with its module's body."""
    pieces = [
        (path, piece)
        for path, each in ran.items()
        if path in facts
        for piece in each
        if piece != MODULE_BODY and piece in facts[path].digests
    ]
    by_short: dict[str, list[tuple[str, str]]] = {}
    for path, piece in pieces:
        short = facts[path].short.get(piece)
        if short is not None:
            by_short.setdefault(short, []).append((path, piece))
    names = read_as(name)
    todo = [
        (path, piece)
        for path, piece in pieces
        if piece not in facts[path].by_name
        and not names.isdisjoint(facts[path].reads.get(piece, ()))
    ]
    found = set(todo)
    while todo:
        path, piece = todo.pop()
        if piece in facts[path].dynamic:
            todo, found = [], set(pieces)
            break
        for read in facts[path].reads.get(piece, ()):
            fresh = [p for p in by_short.get(read, ()) if p not in found]
            found.update(fresh)
            todo.extend(p for p in fresh if p[1] not in facts[p[0]].by_name)
    grouped: dict[str, set[str]] = {}
    for path, piece in found or pieces:
        grouped.setdefault(path, set()).add(piece)
    return grouped


def _owner(piece: str) -> str:
    """The class a method belongs to (``Box.area`` -> ``Box``), else the piece itself."""
    head, _, _ = piece.rpartition(".")
    return head if head and "<locals>" not in piece else piece
