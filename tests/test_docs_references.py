"""Relative cross-references in the API reference's docstrings name one target each.

Sphinx resolves ``:mod:`.name``` first as a name inside the module the docstring belongs
to, then as a suffix of every documented name: when two documented modules end in
``.name`` (``docsaccel.memory`` and ``docsaccel.gallery.memory``), the reference is
ambiguous and the ``-W`` docs build fails. This finds such references without a build.
"""

from __future__ import annotations

import importlib
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


def resolves(module: str, rest: list[str]) -> bool:
    """Whether ``rest`` names something inside ``module`` (a submodule or an attribute)."""
    target: object = importlib.import_module(module)
    for part in rest:
        if not hasattr(target, part):
            return False
        target = getattr(target, part)
    return True


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
        source = Path(importlib.import_module(module).__file__)
        for target in RELATIVE_REFERENCE.findall(source.read_text(encoding="utf-8")):
            matching = modules_matching(target, modules)
            # A module under the docstring's own is found first, as ``module.target``.
            own = {m for m in matching if m.startswith(module + ".")}
            if len(matching) > 1 and not own:
                problems.append(f"{source.relative_to(ROOT)}: .{target} -> {sorted(matching)}")
    return problems


def test_relative_references_in_documented_modules_are_unambiguous() -> None:
    assert ambiguous_references() == []
