"""Content fingerprints of the files and the code an example depended on.

Three kinds, all SHA-256 hex digests, memoised per process by the file's ``stat`` (so a
module every example imports is hashed once per process, not once per example):

- :func:`file_digest`: the bytes of a file (data files, modules at ``module`` granularity);
- :func:`code_digests`: per piece of a Python module, for ``function`` granularity: each
  function (by qualified name, as code objects name it: ``Class.method``,
  ``outer.<locals>.inner``; definitions sharing a name, a property's getter and setter,
  are one piece) and ``<module>``, the module body: every statement outside
  function bodies, so a changed constant, default argument or decorator still counts.
  Digests are of the code as :func:`ast.unparse` prints it, so comments and formatting do
  not count;
- :func:`imported_names`: the absolute module names a Python file imports (relative
  imports resolved), for following a module's imports without running it.

Example: three versions of a module, one restyled, one with a new constant.

>>> import tempfile
>>> from pathlib import Path
>>> folder = tempfile.TemporaryDirectory()
>>> old, styled, new = (Path(folder.name, name) for name in ("old.py", "styled.py", "new.py"))
>>> _ = old.write_text("RATE = 2\\ndef scale(x):\\n    return x * RATE\\n")
>>> _ = styled.write_text("RATE = 2  # per step\\ndef scale(x):\\n    return x*RATE\\n")
>>> _ = new.write_text("RATE = 3\\ndef scale(x):\\n    return x * RATE\\n")
>>> len(file_digest(old)), file_digest(old) == file_digest(styled)
(64, False)
>>> sorted(code_digests(old)), code_digests(old) == code_digests(styled)
(['<module>', 'scale'], True)
>>> code_digests(new)["scale"] == code_digests(old)["scale"]
True
>>> code_digests(new)[MODULE_BODY] == code_digests(old)[MODULE_BODY]
False
>>> folder.cleanup()
"""

from __future__ import annotations

import ast
import hashlib
import os
from collections.abc import Iterator
from typing import Any

__all__ = [
    "MODULE_BODY",
    "code_digests",
    "file_digest",
    "functions",
    "imported_names",
    "piece_of",
    "sha256_of",
]

#: The name of a module's body among its :func:`code_digests`.
MODULE_BODY = "<module>"

_StatKey = tuple[int, int, int, int]
_digests: dict[str, tuple[_StatKey, str]] = {}
_code: dict[str, tuple[_StatKey, dict[str, str] | None]] = {}
_imports: dict[tuple[str, str], tuple[_StatKey, tuple[str, ...]]] = {}


def _stat_key(path: str) -> _StatKey:
    info = os.stat(path)
    return (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def _memoised(cache: dict[Any, tuple[_StatKey, Any]], key: Any, path: str, compute: Any) -> Any:
    """``compute(path)``, remembered in ``cache[key]`` while the file's stat is the same.

    Raises :class:`OSError` when the file cannot be stat'ed.
    """
    stat = _stat_key(path)
    known = cache.get(key)
    if known is not None and known[0] == stat:
        return known[1]
    value = compute(path)
    cache[key] = (stat, value)
    return value


def _parsed(path: str) -> ast.Module | None:
    """The file's syntax tree; ``None`` when it cannot be read or parsed."""
    try:
        with open(path, "rb") as stream:
            return ast.parse(stream.read(), filename=path)
    except (OSError, SyntaxError, ValueError):
        return None


def sha256_of(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of the file's bytes as they are now; raises :class:`OSError` when it
    cannot be read. For checking a copy; :func:`file_digest` for dependencies."""
    with open(path, "rb") as stream:
        return hashlib.file_digest(stream, "sha256").hexdigest()


def file_digest(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of the file's bytes, remembered while its stat is the same; raises
    :class:`OSError` when it cannot be read."""
    path = os.fspath(path)
    return _memoised(_digests, path, path, sha256_of)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def code_digests(path: str | os.PathLike[str]) -> dict[str, str] | None:
    """``{qualified name: digest}`` of the functions of a Python file, and its body.

    ``None`` when the file cannot be read or parsed (then only its bytes can count).
    """
    path = os.fspath(path)

    def digests(path: str) -> dict[str, str] | None:
        tree = _parsed(path)
        return None if tree is None else _digests_of(tree)

    try:
        return _memoised(_code, path, path, digests)
    except OSError:
        return None


FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


def functions(tree: ast.AST) -> Iterator[tuple[str, FunctionNode]]:
    """Every function definition in ``tree`` with its piece name: the ``co_qualname`` its
    code object gets (``Class.method``, ``outer.<locals>.inner``), outer ones first.

    The one naming rule of pieces: :func:`code_digests` and the instrumentation of
    :mod:`docsaccel.cache.instrument` both follow it.
    """

    def visit(node: ast.AST, prefix: str) -> Iterator[tuple[str, FunctionNode]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                yield name, child
                yield from visit(child, f"{name}.<locals>.")
            elif isinstance(child, ast.ClassDef):
                yield from visit(child, f"{prefix}{child.name}.")
            else:
                yield from visit(child, prefix)

    return visit(tree, "")


def _digests_of(tree: ast.Module) -> dict[str, str]:
    # Several definitions can share one name (a property's getter and setter, the ``_``
    # implementations of a ``singledispatch`` function, ``if``/``else`` variants): their
    # code objects record the same piece, so the piece is all of them.
    texts: dict[str, list[str]] = {}
    for name, node in functions(tree):
        texts.setdefault(name, []).append(ast.unparse(node))
    digests = {name: _sha("\n\0".join(parts)) for name, parts in texts.items()}
    digests[MODULE_BODY] = _sha(ast.unparse(_HollowFunctions().visit(tree)))
    return digests


class _HollowFunctions(ast.NodeTransformer):
    """The module with every function body replaced by ``...``: what importing it runs."""

    def visit_FunctionDef(self, node: ast.FunctionDef) -> Any:
        return _hollow(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> Any:
        return _hollow(node)


def _hollow(node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST:
    copy = type(node)(**{field: getattr(node, field, None) for field in node._fields})
    copy.body = [ast.Expr(ast.Constant(...))]
    return ast.copy_location(copy, node)


def piece_of(qualname: str) -> str:
    """The piece of :func:`code_digests` that holds a code object's ``co_qualname``.

    Lambdas, comprehensions and generator expressions belong to the function (or module
    body) they are written in: ``f.<locals>.<lambda>`` -> ``f``, ``<listcomp>`` ->
    ``<module>``. A class body belongs to the module body.
    """
    parts = qualname.split(".")
    kept: list[str] = []
    for index, part in enumerate(parts):
        if part.startswith("<") and part != "<locals>":
            break
        if part == "<locals>" and index + 1 < len(parts) and parts[index + 1].startswith("<"):
            break
        kept.append(part)
    name = ".".join(kept)
    return name or MODULE_BODY


def imported_names(path: str | os.PathLike[str], package: str) -> tuple[str, ...]:
    """Absolute names a Python file imports: ``import a.b`` -> ``a.b``; ``from a import b``
    -> ``a`` and ``a.b`` (``b`` may be a submodule). ``package``: the file's package, to
    resolve relative imports. Empty when the file cannot be parsed."""
    path = os.fspath(path)

    def names(path: str) -> tuple[str, ...]:
        tree = _parsed(path)
        return () if tree is None else tuple(sorted(_names_in(tree, package)))

    try:
        return _memoised(_imports, (path, package), path, names)
    except OSError:
        return ()


def _names_in(tree: ast.AST, package: str) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".") if package else []
                if node.level - 1 > len(parts):
                    continue
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join([*parts, base] if base else parts)
            if not base:
                continue
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
    return names
