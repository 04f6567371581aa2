"""What a page can take from a Python module, piece by piece: its code, its docstrings, the
text of each definition.

The design, in full: the caching guide's *Design* section.

Example: the docstring of ``mean`` is edited, its code is not.

>>> import tempfile
>>> from pathlib import Path
>>> folder = tempfile.TemporaryDirectory()
>>> stats = Path(folder.name, "stats.py")
>>> code = '    return sum(xs) / len(xs)\\n'
>>> _ = stats.write_text('def mean(xs):\\n    "The mean."\\n' + code)
>>> before = module_pieces(stats)
>>> _ = stats.write_text('def mean(xs):\\n    "The arithmetic mean."\\n' + code)
>>> delta = compare(before, module_pieces(stats))
>>> delta.code, sorted(delta.docs), sorted(delta.texts)
((), ['mean'], ['mean'])
>>> folder.cleanup()
"""

from __future__ import annotations

import ast
import copy
import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from docsaccel.cache.pieces import MODULE_BODY, DefinitionNode, definitions, functions

__all__ = ["MODULE_BODY", "Delta", "compare", "docstring_of", "module_pieces"]

_DIGEST_CHARS = 16
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_StatKey = tuple[int, int, int, int]
_cache: dict[str, tuple[_StatKey, dict[str, Any] | None]] = {}
_docstrings: dict[str, tuple[_StatKey | None, dict[str, str]]] = {}


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:_DIGEST_CHARS]


def _has_docstring(node: ast.AST) -> bool:
    body = getattr(node, "body", None)
    return bool(
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    )


class _WithoutDocstrings(ast.NodeTransformer):
    """The tree with every docstring removed (a body left empty gets ``...``)."""

    def generic_visit(self, node: ast.AST) -> ast.AST:
        node = super().generic_visit(node)
        if isinstance(node, (ast.Module, *_DEFINITIONS)) and _has_docstring(node):
            node.body = node.body[1:] or [ast.Expr(ast.Constant(...))]
        return node


def _code_pieces(tree: ast.Module) -> dict[str, str]:
    """Digests of the tree without docstrings: per function, and ``<module>`` for the module
    with every function body hollowed (what importing it runs)."""
    pieces: dict[str, list[str]] = {}
    for name, node in functions(tree):
        pieces.setdefault(name, []).append(ast.dump(node))
    digests = {name: _sha("\n\0".join(parts)) for name, parts in pieces.items()}
    hollow = _Hollow().visit(copy.deepcopy(tree))
    digests[MODULE_BODY] = _sha(ast.dump(hollow))
    return digests


class _Hollow(ast.NodeTransformer):
    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        return _hollowed(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AST:
        return _hollowed(node)


def _hollowed(node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST:
    hollow = type(node)(**{name: getattr(node, name, None) for name in node._fields})
    hollow.body = [ast.Expr(ast.Constant(...))]
    return hollow


def _own_lines(node: ast.AST, lines: list[str], inner: list[DefinitionNode]) -> str:
    """The source lines of ``node`` (a module or class; decorators included) without those
    of the definitions directly inside it."""
    first = getattr(node, "lineno", 1)
    decorators = getattr(node, "decorator_list", ())
    first = min([first, *(d.lineno for d in decorators)])
    last = getattr(node, "end_lineno", len(lines)) or len(lines)
    skipped: set[int] = set()
    for child in inner:
        start = min([child.lineno, *(d.lineno for d in child.decorator_list)])
        skipped.update(range(start, (child.end_lineno or child.lineno) + 1))
    kept = [lines[i - 1] for i in range(first, last + 1) if i not in skipped and i <= len(lines)]
    return f"{first}\n" + "".join(kept)


def _direct_definitions(node: ast.AST) -> list[DefinitionNode]:
    found: list[DefinitionNode] = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, _DEFINITIONS):
            found.append(child)
        elif not isinstance(child, ast.expr):
            found.extend(_direct_definitions(child))
    return found


def _texts(tree: ast.Module, source: str) -> dict[str, str]:
    lines = source.splitlines(keepends=True)
    texts = {MODULE_BODY: _sha(_own_lines(tree, lines, _direct_definitions(tree)))}
    for name, node in definitions(tree):
        if isinstance(node, ast.ClassDef):
            text = _own_lines(node, lines, _direct_definitions(node))
        else:
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            text = f"{start}\n" + "".join(lines[start - 1 : node.end_lineno])
        texts[name] = _sha(text)
    return texts


def _docs(tree: ast.Module) -> dict[str, str]:
    docs = {MODULE_BODY: _sha(ast.get_docstring(tree, clean=False) or "")}
    for name, node in definitions(tree):
        docs[name] = _sha(ast.get_docstring(node, clean=False) or "")
    return docs


def _read(path: str) -> tuple[str, ast.Module] | None:
    try:
        with open(path, "rb") as stream:
            data = stream.read()
        tree = ast.parse(data, filename=path)
        return data.decode("utf-8", "surrogateescape"), tree
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return None


def module_pieces(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The piece table of a Python file (see the caching guide's design), remembered while its
    ``stat`` is the same; ``None`` when it cannot be read or parsed."""
    path = os.fspath(path)
    key = _stat_key(path)
    if key is None:
        return None
    known = _cache.get(path)
    if known is not None and known[0] == key:
        return known[1]
    read = _read(path)
    table = None
    if read is not None:
        source, tree = read
        texts, docs = _texts(tree, source), _docs(tree)
        stripped = _WithoutDocstrings().visit(tree)
        table = {
            "code": _sha(ast.dump(stripped)),
            "code_pieces": _code_pieces(stripped),
            "docs": docs,
            "texts": texts,
        }
    _cache[path] = (key, table)
    return table


def _stat_key(path: str) -> tuple[int, int, int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def _cleaned_docstrings(path: str) -> dict[str, str]:
    key = _stat_key(path)
    known = _docstrings.get(path)
    if known is not None and known[0] == key:
        return known[1]
    read = _read(path) if key is not None else None
    found: dict[str, str] = {}
    if read is not None:
        tree = read[1]
        for name, node in [(MODULE_BODY, tree), *definitions(tree)]:
            doc = ast.get_docstring(node)
            if doc is not None:
                found.setdefault(name, doc)
    _docstrings[path] = (key, found)
    return found


def docstring_of(path: str | os.PathLike[str], qualname: str) -> str | None:
    """The docstring of the definition ``qualname`` (``<module>``: the module's) in the
    file, cleaned as :func:`inspect.cleandoc` does; ``None`` when it has none or the file
    cannot be parsed. Remembered while the file's ``stat`` is the same."""
    return _cleaned_docstrings(os.fspath(path)).get(qualname)


@dataclass(frozen=True)
class Delta:
    """What changed between two piece tables of one file: the functions (or ``<module>``)
    whose code changed, and the names whose docstring or own text changed.
    ``unknown``: one of the tables is missing (the file was unreadable): anything may have."""

    code: tuple[str, ...] = ()
    docs: frozenset[str] = frozenset()
    texts: frozenset[str] = frozenset()
    unknown: bool = False

    @property
    def code_changed(self) -> bool:
        return self.unknown or bool(self.code)


def _differing(old: Mapping[str, str], new: Mapping[str, str]) -> set[str]:
    return {name for name in set(old) | set(new) if old.get(name) != new.get(name)}


def compare(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> Delta:
    """The :class:`Delta` between two tables of :func:`module_pieces`."""
    if not old or not new:
        return Delta(unknown=True)
    code: tuple[str, ...] = ()
    if old.get("code") != new.get("code"):
        # Name what changed; a change only the whole digest sees (a statement moved
        # between functions) is the module's.
        code = tuple(sorted(_differing(old["code_pieces"], new["code_pieces"]))) or (MODULE_BODY,)
    return Delta(
        code=code,
        docs=frozenset(_differing(old["docs"], new["docs"])),
        texts=frozenset(_differing(old["texts"], new["texts"])),
    )
