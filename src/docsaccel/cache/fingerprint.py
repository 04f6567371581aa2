"""Content fingerprints of the files and the code an example depended on.

The design, in full: the caching guide's *Design* section.

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
(['<classes>', '<docstrings>', '<module>', 'RATE', 'scale'], True)
>>> changed = code_digests(new)
>>> sorted(piece for piece, digest in changed.items() if code_digests(old)[piece] != digest)
['RATE']
>>> sorted(code_facts(old).reads["scale"])  # the names scale's code reads
['RATE', 'x']
>>> folder.cleanup()
"""

from __future__ import annotations

import ast
import hashlib
import os
from typing import Any

from docsaccel.cache.pieces import Facts, every_statement, split

__all__ = [
    "code_digests",
    "code_facts",
    "file_digest",
    "imported_names",
    "modified_ns",
    "sha256_of",
]

_StatKey = tuple[int, int, int, int]
_digests: dict[str, tuple[_StatKey, str]] = {}
_code: dict[str, tuple[_StatKey, Facts | None]] = {}
_imports: dict[tuple[str, str], tuple[_StatKey, tuple[str, ...]]] = {}
#: ``(module, level, names)``: one import statement (``module`` ``None`` for ``import``).
_ImportRow = tuple[str | None, int, tuple[str, ...]]
_rows: dict[str, tuple[_StatKey, tuple[_ImportRow, ...] | None]] = {}


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


def modified_ns(path: str | os.PathLike[str]) -> int:
    """The file's modification time on the ``time.time_ns()`` scale, 0 when it is not there:
    a digest taken later than the run that used the file is of what that run used only when
    the file was not modified since."""
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0


def file_digest(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of the file's bytes, remembered while its stat is the same; raises
    :class:`OSError` when it cannot be read."""
    path = os.fspath(path)
    return _memoised(_digests, path, path, sha256_of)


def code_facts(path: str | os.PathLike[str]) -> Facts | None:
    """The pieces of a Python file (:func:`docsaccel.cache.pieces.split`): their digests,
    the names each reads. ``None`` when the file cannot be read or parsed (then only its
    bytes can count)."""
    path = os.fspath(path)

    def facts(path: str) -> Facts | None:
        stat = _stat_key(path)
        tree = _parsed(path)
        if tree is None:
            return None
        # Kept for imported_names, which would parse the file again: splitting changes
        # the tree, so they are read first.
        _rows[path] = (stat, _import_rows(tree))
        return split(tree)

    try:
        return _memoised(_code, path, path, facts)
    except OSError:
        return None


def code_digests(path: str | os.PathLike[str]) -> dict[str, str] | None:
    """``{piece: digest}`` of a Python file (see :mod:`docsaccel.cache.pieces`); ``None``
    when it cannot be read or parsed."""
    facts = code_facts(path)
    return None if facts is None else facts.digests


def imported_names(path: str | os.PathLike[str], package: str) -> tuple[str, ...]:
    """Absolute names a Python file imports: ``import a.b`` -> ``a.b``; ``from a import b``
    -> ``a`` and ``a.b`` (``b`` may be a submodule). ``package``: the file's package, to
    resolve relative imports. Empty when the file cannot be parsed."""
    path = os.fspath(path)

    def rows(path: str) -> tuple[_ImportRow, ...] | None:
        tree = _parsed(path)
        return None if tree is None else _import_rows(tree)

    def names(path: str) -> tuple[str, ...]:
        found = _memoised(_rows, path, path, rows)
        return () if found is None else tuple(sorted(_names_in(found, package)))

    try:
        return _memoised(_imports, (path, package), path, names)
    except OSError:
        return ()


def _import_rows(tree: ast.AST) -> tuple[_ImportRow, ...]:
    """``(module, level, names)`` of each import statement: ``import a, b`` ->
    ``(None, 0, ("a", "b"))``; ``from ..a import b`` -> ``("a", 2, ("b",))``."""
    found: list[_ImportRow] = []
    for node in every_statement(tree):  # an import is a statement
        if isinstance(node, ast.Import):
            found.append((None, 0, tuple(alias.name for alias in node.names)))
        elif isinstance(node, ast.ImportFrom):
            found.append((node.module or "", node.level, tuple(a.name for a in node.names)))
    return tuple(found)


def _names_in(rows: tuple[_ImportRow, ...], package: str) -> set[str]:
    names: set[str] = set()
    for module, level, imported in rows:
        if module is None:
            names.update(imported)
            continue
        base = module
        if level:
            parts = package.split(".") if package else []
            if level - 1 > len(parts):
                continue
            parts = parts[: len(parts) - (level - 1)]
            base = ".".join([*parts, base] if base else parts)
        if not base:
            continue
        names.add(base)
        names.update(f"{base}.{name}" for name in imported if name != "*")
    return names
