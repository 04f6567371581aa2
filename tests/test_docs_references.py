"""Relative cross-references in the API reference's docstrings name one target each.

Sphinx resolves ``:mod:`.name``` first as a name inside the module the docstring belongs
to, then as a suffix of every documented name: when two documented modules end in
``.name`` (``docsaccel.memory`` and ``docsaccel.gallery.memory`` did), the reference is
ambiguous and the ``-W`` docs build fails. This finds such references without a build.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
API = ROOT / "docs" / "api.rst"
#: A relative reference: ``:role:`.target``` or ``:role:`~.target```.
RELATIVE_REFERENCE = re.compile(r":[a-z]+:`~?\.([A-Za-z_][A-Za-z0-9_.]*)`")


def documented_modules() -> list[str]:
    """The modules the API reference documents (its ``automodule`` directives)."""
    text = API.read_text(encoding="utf-8")
    return re.findall(r"^\.\. automodule:: (\S+)", text, flags=re.MULTILINE)


def _source(module: str) -> Path:
    """The file of ``module``, found without importing it."""
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None, module
    return Path(spec.origin)


def _top_level_names(module: str) -> set[str]:
    """The names ``module``'s file binds at its top level (read, not imported)."""
    tree = ast.parse(_source(module).read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def resolves(module: str, rest: list[str]) -> bool:
    """Whether ``rest`` names something inside ``module`` (a submodule or an attribute)."""
    try:
        target: object = importlib.import_module(module)
    except ImportError:
        # It needs an extra this Python lacks (torchrl on 3.12+): read its file instead.
        if not rest:
            return True
        submodule = importlib.util.find_spec(f"{module}.{rest[0]}") if _is_package(module) else None
        return submodule is not None or rest[0] in _top_level_names(module)
    for part in rest:
        if not hasattr(target, part):
            return False
        target = getattr(target, part)
    return True


def _is_package(module: str) -> bool:
    return _source(module).name == "__init__.py"


def modules_matching(target: str, modules: list[str]) -> set[str]:
    """The documented modules a relative ``target`` could go through, by suffix."""
    parts = target.split(".")
    found = set()
    for module in modules:
        for size in range(1, len(parts) + 1):
            name = ".".join(parts[:size])
            if module.endswith("." + name) and resolves(module, parts[size:]):
                found.add(module)
    return found


def ambiguous_references() -> list[str]:
    modules = documented_modules()
    problems = []
    for module in modules:
        source = _source(module)
        for target in RELATIVE_REFERENCE.findall(source.read_text(encoding="utf-8")):
            matching = modules_matching(target, modules)
            # A module under the docstring's own is found first, as ``module.target``.
            own = {m for m in matching if m.startswith(module + ".")}
            if len(matching) > 1 and not own:
                problems.append(f"{source.relative_to(ROOT)}: .{target} -> {sorted(matching)}")
    return problems


def test_relative_references_in_documented_modules_are_unambiguous() -> None:
    assert ambiguous_references() == []
