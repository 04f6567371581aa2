"""Declared = tested: what ``pyproject.toml`` allows is what the test matrix runs.

The matrix is ``noxfile.py``'s: the Pythons of the ``tests`` sessions and the
(Sphinx, sphinx-gallery) pairs of the ``compat`` session; ``sg_compat`` names the
sphinx-gallery series it was checked against and ``torchrl_compat`` the torchrl one. The
other extras are tested at the pins of ``constraints.txt`` only, so each allows the pinned
release series and newer. Read from the files (no nox, no torchrl needed to run this).
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

from docsaccel import sg_compat

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _noxfile_value(name: str):
    tree = ast.parse((ROOT / "noxfile.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return ast.literal_eval(node.value)
    raise AssertionError(f"noxfile.py defines no {name}")


def _requirements() -> dict[str, Requirement]:
    found = {}
    for extra, items in PYPROJECT["project"]["optional-dependencies"].items():
        for item in items:
            requirement = Requirement(item)
            if requirement.name != "docsaccel":
                # In two extras (matplotlib: docs and report), with the same range.
                same = found.setdefault(requirement.name, requirement)
                assert same.specifier == requirement.specifier, (same, requirement)
            else:
                assert extra == "all", item
    return found


def _pins() -> dict[str, Version]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.split("==")
            pins[name.strip().lower()] = Version(version.strip())
    return pins


def _series(version: str) -> tuple[int, int]:
    major, minor = Version(version).release[:2]
    return major, minor


def _bounds(requirement: Requirement) -> tuple[str | None, str | None]:
    floor = next((s.version for s in requirement.specifier if s.operator == ">="), None)
    ceiling = next((s.version for s in requirement.specifier if s.operator == "<"), None)
    return floor, ceiling


def _next_minor(series: tuple[int, int]) -> Version:
    return Version(f"{series[0]}.{series[1] + 1}")


def test_requires_python_is_the_matrix_pythons() -> None:
    pythons = sorted(_noxfile_value("PYTHONS"), key=Version)
    floor, ceiling = pythons[0], _next_minor(_series(pythons[-1]))
    assert PYPROJECT["project"]["requires-python"] == f">={floor},<{ceiling}"
    classifiers = set(PYPROJECT["project"]["classifiers"])
    assert {f"Programming Language :: Python :: {p}" for p in pythons} <= classifiers


def test_sphinx_and_sphinx_gallery_ranges_are_the_pairs_tested() -> None:
    pins = _pins()
    pairs = [*_noxfile_value("COMPAT_PAIRS"), (str(pins["sphinx"]), str(pins["sphinx-gallery"]))]
    requirements = _requirements()
    for index, name in enumerate(("sphinx", "sphinx-gallery")):
        tested = sorted({_series(pair[index]) for pair in pairs})
        floor, ceiling = _bounds(requirements[name])
        assert Version(floor) == Version("{}.{}".format(*tested[0])), name
        assert Version(ceiling) == _next_minor(tested[-1]), name
        assert all(requirements[name].specifier.contains(pair[index]) for pair in pairs)
    # Every series sg_compat was checked against is built by a pair, and no other.
    built = {".".join(map(str, _series(pair[1]))) for pair in pairs}
    assert built == set(sg_compat.CHECKED_SPHINX_GALLERY)


def test_torchrl_range_is_the_series_torchrl_compat_checks() -> None:
    # Read from the source: importing torchrl_compat needs torchrl, which 3.12 and 3.13 lack.
    source = (ROOT / "src/docsaccel/render/torchrl_compat.py").read_text(encoding="utf-8")
    checked = re.search(r'^CHECKED_TORCHRL = "([\d.]+)"$', source, re.MULTILINE).group(1)
    floor, ceiling = _bounds(_requirements()["torchrl"])
    assert (Version(floor), Version(ceiling)) == (
        Version(checked),
        _next_minor(_series(checked)),
    )


def test_every_other_extra_allows_its_pinned_series_and_no_older() -> None:
    pins = _pins()
    requirements = _requirements()
    others = set(requirements) - {"sphinx", "sphinx-gallery", "torchrl"}
    assert others, requirements
    for name in sorted(others):
        floor, _ = _bounds(requirements[name])
        assert name in pins, f"{name}: in an extra, not pinned in constraints.txt"
        assert floor is not None and _series(floor) == _series(str(pins[name])), (
            f"{name}: {requirements[name].specifier} but the matrix tests {pins[name]}"
        )
        assert requirements[name].specifier.contains(pins[name]), name


def test_the_readme_states_the_ranges_pyproject_declares() -> None:
    # The front door says what the matrix passes: a widened range must reach it too.
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    pythons = sorted(_noxfile_value("PYTHONS"), key=Version)
    said = [f"Python {pythons[0]} to {pythons[-1]}"]
    requirements = _requirements()
    for name, shown in (("sphinx", "Sphinx"), ("sphinx-gallery", "sphinx-gallery")):
        floor, ceiling = _bounds(requirements[name])
        newest = sorted(
            {_series(pair[name == "sphinx-gallery"]) for pair in _noxfile_value("COMPAT_PAIRS")}
            | {_series(str(_pins()[name]))}
        )[-1]
        assert _next_minor(newest) == Version(ceiling), name
        said.append(f"{shown} {Version(floor)} to {newest[0]}.{newest[1]}")
    for text in said:
        assert text in readme, text
