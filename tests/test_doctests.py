"""The runnable examples in docsaccel's docstrings (``>>>``) run, and hold."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import docsaccel


def _modules_with_examples() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(docsaccel.__path__, prefix="docsaccel."):
        spec = importlib.util.find_spec(info.name)
        origin = spec.origin if spec else None
        if origin and Path(origin).read_text(encoding="utf-8").find(">>>") != -1:
            names.append(info.name)
    return sorted(names)


MODULES = _modules_with_examples()
#: A docstring's literal block introduced as an example, with or without a note on where.
LITERAL_EXAMPLE = re.compile(r"(Examples?|For example|Usage)\b.*::$")


def test_some_modules_have_runnable_examples() -> None:
    assert "docsaccel.contract" in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0


def test_no_example_left_unrun() -> None:
    """An example written as a literal block (``Example::``, ``Example (conf.py)::``) is
    never run, so it goes
    stale unseen: every example in a docstring is a ``>>>`` one, which the test above
    runs."""
    package = Path(docsaccel.__file__).parent
    literal = [
        f"{path.relative_to(package.parent)}:{number}"
        for path in sorted(package.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if LITERAL_EXAMPLE.match(line.strip())
    ]
    assert literal == []
