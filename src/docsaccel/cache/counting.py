"""Which pieces of the project's code an example counts at ``function`` granularity, and
why (the rule of :mod:`docsaccel.cache.pieces` applied to what the recorder saw).

For each watched file the example used, it counts:

- the module body (:data:`BODY`), and what ran while the module was imported
  (:data:`IMPORTED`: a function the body called, a decorator that registered something):
  its state is every user's;
- the functions it ran (:data:`RAN`);
- the classes and module-level bindings whose name the code it counted reads
  (:data:`NAMED`), following the names their own code reads in turn; a class also counts
  when one of its methods does. Code that reaches names it computes (``getattr(m, name)``,
  ``vars()``) reads every name;
- the docstrings, when that code reads docstrings (:data:`DOCS`, names in
  :data:`~.pieces.DOC_READERS`), and the class headers when the project runs code as a
  class is made (:data:`CLASSES`);
- the functions a JIT compiles, which no recorder sees run (:data:`AS_WRITTEN`).

It also returns the names that code reads (``None``: any name) and, per file, those of
them the file defines, so that a later build sees a piece the example names appear or
disappear (:func:`named_in`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from docsaccel.cache.pieces import CLASS_BASES, DOC_READERS, DOCSTRINGS, MODULE_BODY, Facts

__all__ = [
    "AS_WRITTEN",
    "BODY",
    "CLASSES",
    "DOCS",
    "IMPORTED",
    "NAMED",
    "RAN",
    "Counted",
    "count",
    "named_in",
]

#: Why a piece counts (as ``cache explain`` prints it).
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


def _owner(piece: str) -> str:
    """The class a method belongs to (``Box.area`` -> ``Box``), else the piece itself."""
    head, _, _ = piece.rpartition(".")
    return head if head and "<locals>" not in piece else piece
