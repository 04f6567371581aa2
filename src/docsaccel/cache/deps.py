"""An example's dependencies: from what the recorder saw to fingerprints, and back.

:func:`collect` turns a :class:`~docsaccel.cache.recorder.Seen` into a :class:`Deps`;
:func:`changes` says which of those dependencies no longer hold. Paths are stored relative
to the project's root, so an entry made in one checkout is valid in a fresh copy of it.

The design, in full: the caching guide's *Design* section.

Example: an example that listed ``data/`` and read ``data/a.csv`` (what the recorder
would have seen), then a changed file and a new one.

>>> import tempfile
>>> from pathlib import Path
>>> from docsaccel.cache.recorder import Seen
>>> root = tempfile.TemporaryDirectory()
>>> project = Project(root.name, (root.name,))
>>> example, data = Path(root.name, "plot_a.py"), Path(root.name, "data")
>>> data.mkdir()
>>> _ = example.write_text("import glob\\nrows = [open(f).read() for f in glob.glob('data/*')]\\n")
>>> _ = (data / "a.csv").write_text("1\\n")
>>> seen = Seen(files={str(data / "a.csv")}, listings={str(data): ("a.csv",)})
>>> deps = collect(seen, project, str(example), granularity="module").to_json()
>>> deps["files"], deps["listings"]["data"]["names"], changes(deps, project, str(example))
({'data/a.csv': '...'}, ['a.csv'], [])
>>> _ = (data / "a.csv").write_text("1\\n2\\n")
>>> _ = (data / "b.csv").write_text("3\\n")
>>> for change in changes(deps, project, str(example)):
...     print(change.key, "|", change.reason)
file:data/a.csv | data/a.csv changed
listing:data | data/ listing changed (1 added)
>>> root.cleanup()
"""

from __future__ import annotations

import ast
import contextlib
import csv
import functools
import hashlib
import importlib.machinery
import importlib.metadata as metadata
import importlib.util
import json
import os
import re
import sys
import sysconfig
from collections.abc import Callable, Container, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from docsaccel import layout
from docsaccel.cache.carried import leaves_key
from docsaccel.cache.counting import FILLED, count, filling_code, named_in, read_as
from docsaccel.cache.fingerprint import code_digests, code_facts, file_digest, imported_names
from docsaccel.cache.pieces import MODULE_BODY, Facts, piece_of, reads_of
from docsaccel.cache.recorder import NOT_PROJECT, Seen, own_names

__all__ = [
    "CHILDREN_KEY",
    "Change",
    "Deps",
    "Listing",
    "Project",
    "ProjectRoots",
    "absent_changes",
    "absent_modules",
    "changes",
    "collect",
    "current_version",
    "dependency_key",
    "dependency_rows",
    "find_root",
    "findable",
    "is_under",
    "listing_changes",
    "listing_deps",
    "listings_from_json",
    "project_roots",
    "providers",
    "read_first_files",
    "written_files",
]

#: The key of an example's dependencies that says what of its child processes was followed
#: (``{"followed": count, "not_followed": [programs]}``, :mod:`.children`).
CHILDREN_KEY = "children"

_VCS_MARKERS = layout.VCS_MARKERS
_PROJECT_MARKERS = layout.PROJECT_MARKERS
#: A listing keeps its names (for ``changes`` to say which) up to this many; a larger one
#: keeps only their count and digest, so an entry stays small.
LISTING_NAMES_KEPT = 1000
find_root = layout.find_root
_marked_root = layout.marked_root


_noted: set[str] = set()


class ProjectRoots(NamedTuple):
    """Where a build's project is: ``root`` (paths are kept relative to it), the ``roots``
    whose files count, and a line for the build's log when no marker chose them (given
    once per process: the example cache and the Sphinx state both ask)."""

    root: str
    roots: tuple[str, ...]
    note: str | None


def project_roots(confdir: str | os.PathLike[str], chosen: Iterable[Any] | None) -> ProjectRoots:
    """The root (:func:`find_root`) and roots of a build, ``chosen`` (the
    ``docsaccel_cache_roots`` setting) or the root. Chosen roots above the root move it up:
    a stored path never leaves it.

    >>> project_roots("/nowhere/docs", ["/nowhere/docs", "/nowhere/data"])[:2]
    ('/nowhere', ('/nowhere/docs', '/nowhere/data'))
    """
    root = find_root(confdir)
    picked = tuple(os.path.normpath(os.path.abspath(r)) for r in chosen or ())
    if picked:
        return ProjectRoots(os.path.commonpath([root, *picked]), picked, None)
    note = None
    if _marked_root(confdir) is None and root not in _noted:
        _noted.add(root)
        note = (
            f"no {', '.join(_VCS_MARKERS + _PROJECT_MARKERS)} above {root}: the project's "
            "files are those under it, and Python source beside it that no distribution "
            "provides (set docsaccel_cache_roots to count others, a data folder beside it)"
        )
    return ProjectRoots(root, (root,), note)


@dataclass(frozen=True)
class Project:
    """Where the project's own files are: ``root`` (paths are stored relative to it), the
    ``roots`` whose files count (default: ``root``), and folders to ignore under them
    (build output, generated galleries, the cache itself)."""

    root: str
    roots: tuple[str, ...]
    excluded: tuple[str, ...] = ()

    def wants(self, path: str) -> bool:
        path = os.path.normpath(path)
        inside = any(is_under(path, r) for r in self.roots)
        if not inside or any(is_under(path, e) for e in self.excluded):
            return False
        parts = set(os.path.relpath(path, self.root).split(os.sep))
        return not parts.intersection(NOT_PROJECT)

    def owns_module(self, path: str | None, name: str) -> bool:
        """Whether the module ``name`` loaded from ``path`` counts by its source: it is
        under the roots, or Python source no distribution provides (:func:`_unpackaged`),
        so no version would stand for its edits."""
        if not path:
            return False
        return self.wants(path) or _unpackaged(os.path.normpath(path), name)

    def relative(self, path: str) -> str:
        return os.path.relpath(path, self.root).replace(os.sep, "/")

    def absolute(self, relative: str) -> str:
        return os.path.normpath(os.path.join(self.root, relative))


def is_under(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or inside it (both absolute and normalised)."""
    return path == folder or path.startswith(os.path.join(folder, ""))


def _module_file(module: Any) -> str | None:
    path = getattr(module, "__file__", None)
    if not isinstance(path, str) or not path:
        return None
    return os.path.normpath(os.path.abspath(path))


def _with_parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def _identifiers(source_file: str) -> set[str]:
    try:
        with open(source_file, "rb") as stream:
            tree = ast.parse(stream.read())
    except (OSError, SyntaxError, ValueError):
        return set()
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
    return found


@functools.cache
def _python_homes() -> tuple[str, ...]:
    """The folders of Python's own library, where no project code lives."""
    homes = {os.path.dirname(os.__file__)}
    for key in ("stdlib", "platstdlib"):
        with contextlib.suppress(KeyError):
            homes.add(sysconfig.get_paths()[key])
    homes |= {os.path.realpath(home) for home in homes}
    return tuple(os.path.normpath(home) for home in homes)


def _unpackaged(path: str, name: str) -> bool:
    """:func:`_is_unpackaged`, asked once per module and process: every example asks it
    of the modules the project imports. The answers go with the distributions read
    (:func:`_top_level_map` empties them when it reads them again)."""
    _top_level_map()
    known = _unpackaged_modules.get((path, name))
    if known is None:
        known = _unpackaged_modules[(path, name)] = _is_unpackaged(path, name)
    return known


_unpackaged_modules: dict[tuple[str, str], bool] = {}


def _is_unpackaged(path: str, name: str) -> bool:
    """Whether the module ``name`` at ``path`` is Python source that neither Python's own
    library nor an installed distribution provides: a folder on ``sys.path`` outside the
    roots (``sys.path.insert(0, "..")`` in ``conf.py`` when no ``.git`` or
    ``pyproject.toml`` marks the root, or a sibling checkout), or a distribution installed
    in editable mode from outside the roots (``pip install -e ../lib``). No version stands
    for its edits, so it counts by its file, else they would never re-run an example."""
    if not path.endswith(".py"):
        return False  # a compiled extension is built from source the example read
    parts = set(path.split(os.sep))
    if parts & {"site-packages", "dist-packages"}:
        return False
    top = name.partition(".")[0]
    providers = _top_level_map().get(top)
    if providers and (
        top not in _editable or any(_canonical(p) in _BUILD_TOOLS for p in providers)
    ):
        return False  # its version stands for it (a build tool's, even if editable)
    real = os.path.realpath(path)
    return not any(is_under(path, h) or is_under(real, h) for h in _python_homes())


def _project_modules(
    seen: Seen, project: Project, source_file: str, split_first: Container[str] = ()
) -> tuple[dict[str, str], set[str]]:
    """``({module name: file} of project modules, top-level names of other modules)``.

    Project modules are those under the roots, and Python source no distribution
    provides (:func:`_unpackaged`). Those in ``split_first`` are split
    (:func:`.fingerprint.code_facts`) before their imports are read."""
    loaded = dict(sys.modules)
    ours: dict[str, str] = {}
    theirs: set[str] = set()
    queue: list[str] = []

    def note(name: str) -> None:
        for part in _with_parents(name):
            if part in ours or part.partition(".")[0] in theirs:
                continue
            module = loaded.get(part)
            # A module only a child process loaded: by the file it was loaded from there.
            path = _module_file(module) if module is not None else seen.module_files.get(part)
            if module is None and path is None:
                continue
            if path is not None and project.owns_module(path, part):
                ours[part] = path
                queue.append(part)
            else:
                theirs.add(part.partition(".")[0])

    for name in seen.modules:
        note(name)
    # Loaded project submodules the example's code names, through a package it imported.
    mentioned = _identifiers(source_file)
    for name in loaded:
        head, _, last = name.rpartition(".")
        if head in ours and last in mentioned and name not in ours:
            note(name)
    while queue:
        name = queue.pop()
        path = ours[name]
        package = (
            name if os.path.basename(path).startswith("__init__.") else name.rpartition(".")[0]
        )
        if path in split_first:
            code_facts(path)
        for imported in imported_names(path, package):
            note(imported)
    return ours, theirs - set(sys.stdlib_module_names) - {"__main__", "builtins"}


@dataclass(frozen=True)
class Deps:
    """The dependencies of one example run (see the caching guide's design), as :func:`collect`
    found them. A cache entry stores :meth:`to_json` (its keys are the entry format's,
    :data:`.store.ENTRY_FORMAT`); the Sphinx state takes the parts a page's read needs.

    ``code``, ``why``, ``names`` and ``named`` are filled at ``function`` granularity
    only: there a Python module counts by the pieces that ran (``code``, and ``why``
    each counts), and by the pieces the example's code names (``named``, among
    ``names``; ``None``: any name). ``state`` and ``leaves`` are the globals earlier
    examples left that it reads, and those it leaves (:mod:`.carried`).
    """

    granularity: str
    source: str
    files: dict[str, str]
    dists: dict[str, str]
    absent: list[str]
    listings: dict[str, Listing]
    state: dict[str, list[str]]
    leaves: list[str]
    code: dict[str, dict[str, str]] = field(default_factory=dict)
    why: dict[str, dict[str, str]] = field(default_factory=dict)
    names: list[str] | None = None
    named: dict[str, list[str]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The stored form, in the order of the entry format's keys (unchanged by the
        record: an entry made before it reads the same)."""
        stored: dict[str, Any] = {
            "source": self.source,
            "files": self.files,
            "code": self.code,
            "dists": self.dists,
            "absent": self.absent,
            "listings": {name: listing.to_json() for name, listing in self.listings.items()},
        }
        if self.granularity == "function":
            stored["why"] = self.why
        stored["state"], stored["leaves"] = self.state, self.leaves
        if self.granularity == "function":
            stored["names"], stored["named"] = self.names, self.named
        return stored


def collect(seen: Seen, project: Project, source_file: str, granularity: str) -> Deps:
    """The dependencies of one example run (see the caching guide's design)."""
    source_file = os.path.normpath(source_file)
    # A module whose functions are watched is split below all the same: split first
    # (remembered by the file's stat), following its imports reads the statements
    # splitting found, without parsing the file again.
    split_first = seen.instrumented if granularity == "function" else {}
    modules, external = _project_modules(seen, project, source_file, split_first)
    module_files = set(modules.values())
    python_files = {p for p in module_files if p.endswith(".py")}
    imported: dict[str, set[str]] = {}
    ran: dict[str, set[str]] = {}
    if granularity == "function":
        # What ran while a module it uses was imported made that module's state.
        for module in module_files:
            for path, qualname in seen.import_code.get(module, ()):
                imported.setdefault(path, set()).add(piece_of(qualname))
        for path, qualname in seen.code:
            ran.setdefault(path, set()).add(piece_of(qualname))
        python_files |= set(ran) | set(imported)
    used = python_files | module_files
    opened = {os.path.normpath(p) for p in seen.files}
    for module in used:
        opened |= {os.path.normpath(p) for p in seen.carried_reads.get(module, ())}
    opened -= {os.path.normpath(p) for p in seen.written}
    watched: dict[str, Facts] = {}
    files: dict[str, str] = {}
    for path in sorted(opened | module_files | python_files):
        if path == source_file or not (project.wants(path) or path in module_files):
            continue
        by_piece = granularity == "function" and path in python_files
        # A file whose functions were not all watched can only count whole.
        facts = code_facts(path) if by_piece and path in seen.instrumented else None
        if facts is not None:
            watched[path] = facts
            continue
        with contextlib.suppress(OSError):  # a file the example deleted is no input
            files[project.relative(path)] = file_digest(path)
    files.update(read_first_files(seen, project))
    if granularity == "function":
        parts = _code_deps(seen, project, source_file, watched, ran, imported)
    else:
        parts = _module_state(seen, project, files)
    return Deps(
        granularity=granularity,
        source=file_digest(source_file),
        files=files,
        dists=distribution_versions(external),
        absent=absent_modules(seen, used),
        listings=listing_deps(seen, project, used),
        **parts,
    )


def _module_state(seen: Seen, project: Project, files: dict[str, str]) -> dict[str, Any]:
    """The ``state`` and ``leaves`` parts of a ``module`` entry: a module counts whole,
    so the example reads every global earlier examples left in a module it used."""
    state: dict[str, set[str]] = {}
    for (path, name), labels in seen.carried_state.items():
        relative = project.relative(path)
        if relative in files:
            for label in labels:
                state.setdefault(label, set()).add(leaves_key(relative, name))
    leaves = [leaves_key(project.relative(p), n) for p, n in seen.left_state if project.wants(p)]
    return {
        "state": {label: sorted(keys) for label, keys in sorted(state.items())},
        "leaves": sorted(leaves),
    }


def _code_deps(
    seen: Seen,
    project: Project,
    source_file: str,
    watched: dict[str, Facts],
    ran: dict[str, set[str]],
    imported: dict[str, set[str]],
) -> dict[str, Any]:
    """The ``code``, ``why``, ``state``, ``leaves``, ``names`` and ``named`` parts of a
    ``function`` entry."""
    try:
        with open(source_file, "rb") as stream:
            source_names, source_dynamic = reads_of(ast.parse(stream.read()))
    except (OSError, SyntaxError, ValueError):
        source_names, source_dynamic = set(), True
    left = {path: seen.instrumented[path] for path in watched}
    counted = count(watched, ran, imported, left, source_names, source_dynamic)
    code, why = {}, {}
    for path, pieces in sorted(counted.pieces.items()):
        digests = watched[path].digests
        relative = project.relative(path)
        code[relative] = {piece: digests[piece] for piece in sorted(pieces)}
        why[relative] = dict(sorted(pieces.items()))
    running = _names_run(watched, ran, source_names, source_dynamic)
    for path, pieces in _filling_code(seen, project, watched, running).items():
        relative = project.relative(path)
        for piece, (digest, filled) in pieces.items():
            code.setdefault(relative, {})[piece] = digest
            why.setdefault(relative, {}).setdefault(piece, filled)
    code = {relative: dict(sorted(pieces.items())) for relative, pieces in sorted(code.items())}
    why = {relative: dict(sorted(pieces.items())) for relative, pieces in sorted(why.items())}
    state: dict[str, set[str]] = {}
    reading = counted.names
    for (path, name), labels in seen.carried_state.items():
        if path in watched and (reading is None or name in reading):
            for label in labels:
                state.setdefault(label, set()).add(leaves_key(project.relative(path), name))
    leaves = [leaves_key(project.relative(p), n) for p, n in seen.left_state if p in watched]
    return {
        "code": code,
        "why": why,
        "state": {label: sorted(keys) for label, keys in sorted(state.items())},
        "leaves": sorted(leaves),
        "names": None if counted.names is None else sorted(counted.names),
        "named": {project.relative(p): names for p, names in sorted(counted.named.items())},
    }


def _names_run(
    watched: dict[str, Facts], ran: dict[str, set[str]], source: set[str], dynamic: bool
) -> frozenset[str] | None:
    """The names the example's source and the project code it ran read (``None``: any,
    when that code computes names). Not those of the classes its code names: a class
    body names the caches it holds (``_sides = {}``) without reading them."""
    names = set(source)
    for path, pieces in ran.items():
        facts = watched.get(path)
        for piece in pieces if facts is not None else ():
            if piece in facts.dynamic:
                return None
            names |= facts.reads.get(piece, frozenset())
    return None if dynamic else frozenset(names)


def _filling_code(
    seen: Seen, project: Project, watched: dict[str, Facts], reading: frozenset[str] | None
) -> dict[str, dict[str, tuple[str, str]]]:
    """``{file: {piece: (digest, why)}}`` of the code that filled the lazily built caches
    the example reads (``reading``: the names the code it ran reads, ``None``: any) in the
    modules it uses, when earlier examples in this process filled them: no state (a value
    any example would make the same), but made by that code, so an edit of it changes
    what the example read as an edit of the code it ran would
    (:func:`.counting.filling_code`)."""
    found: dict[str, dict[str, tuple[str, str]]] = {}
    for (path, name, holder), by in sorted(seen.carried_fills.items()):
        if path not in watched or (reading is not None and reading.isdisjoint(read_as(holder))):
            continue
        where = name if holder == name else f"{name}.{holder}"
        for label, code in sorted(by.items()):
            why = FILLED.format(example=label, name=where)
            for file, pieces in _filled_with(holder, code, project).items():
                for piece, digest in pieces.items():
                    found.setdefault(file, {}).setdefault(piece, (digest, why))
    return found


#: ``{(name, code, root): (facts of its files, found)}`` of :func:`_filled_with`: every
#: later example reading a cache asks for the same filler's code (the same ``code``
#: object, its hash kept); used while those files are as they were (the same facts).
_fillers: dict[
    tuple[str, frozenset[tuple[str, str]], str],
    tuple[dict[str, Facts], dict[str, dict[str, str]]],
] = {}
_FILLERS_KEPT = 4096


def _filled_with(
    holder: str, code: frozenset[tuple[str, str]], project: Project
) -> dict[str, dict[str, str]]:
    """``{file: {piece: digest}}`` of the code, among ``code`` (what an example ran:
    ``(file, qualified name)``), that made what it filled in the cache ``holder`` names."""
    key = (holder, code, project.root)
    known = _fillers.get(key)
    if known is not None and all(code_facts(f) is facts for f, facts in known[0].items()):
        return known[1]
    ran: dict[str, set[str]] = {}
    for file, qualname in code:
        if file.endswith(".py") and project.wants(file):
            ran.setdefault(file, set()).add(piece_of(qualname))
    facts = {file: each for file in ran if (each := code_facts(file)) is not None}
    found = {
        file: {piece: facts[file].digests[piece] for piece in pieces}
        for file, pieces in filling_code(holder, ran, facts).items()
    }
    if len(_fillers) >= _FILLERS_KEPT:
        _fillers.clear()
    _fillers[key] = (facts, found)
    return found


_top_level: dict[str, list[str]] | None = None
_provides: dict[str, set[str]] = {}
#: Top-level modules of distributions installed in editable mode (filled with _top_level).
_editable: set[str] = set()
_versions: dict[str, tuple[str, tuple[str, ...]] | None] = {}
_native: dict[str, bool] = {}
_HEADER_LINES = re.compile(r"\r\n|\r|\n")
_REQUIREMENT_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
#: The build's own programs. They are loaded, with everything they require, before any
#: example runs, and their code runs around every example (sphinx-gallery's scrapers after
#: each block; a Sphinx extension's ``setup`` a project module imports lazily), so being
#: loaded says nothing about what an example used. Their own version counts when an example
#: or the project's code reaches them (sphinx-gallery's is also part of the build context);
#: their requirements (themes, help builders, ``requests`` for link checks...) count only
#: when something else the example uses reaches them.
_BUILD_TOOLS = frozenset({"sphinx", "sphinx-gallery", "docsaccel"})
# A shared library loaded with ctypes or by the dynamic linker leaves no module in
# ``sys.modules``; a tagged extension module (``_core.cpython-311-x86_64-linux-gnu.so``)
# does, so only the former counts as a trace-less binary part.
_SHARED_LIBRARY = re.compile(r"\.(so|dylib|dll|pyd)(\.[0-9]+)*$", re.IGNORECASE)
_EXTENSION_MODULE = re.compile(r"\.(cpython|cp[0-9]+|abi3|pypy)[^/\\]*\.(so|pyd)$", re.IGNORECASE)


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _distribution(name: str) -> tuple[str, tuple[str, ...]] | None:
    """``(version, names of the distributions it requires)``, or ``None`` if not installed."""
    key = _canonical(name)
    if key not in _versions:
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            _versions[key] = None
        else:
            required = []
            for requirement in dist.requires or ():
                match = _REQUIREMENT_NAME.match(requirement)
                if match and "extra ==" not in requirement.replace('extra=="', 'extra == "'):
                    required.append(match.group(1))
            _versions[key] = (_version_of(dist), tuple(required))
    return _versions[key]


def _top_level_map() -> dict[str, list[str]]:
    """``{top-level module: [distributions providing it]}``, once per process."""
    global _top_level
    if _top_level is None:
        # ``metadata.packages_distributions()``, except that one installed distribution
        # with a RECORD it cannot parse does not make every example's dependencies fail.
        mapping: dict[str, list[str]] = {}
        _provides.clear()
        _editable.clear()
        _unpackaged_modules.clear()
        for dist in metadata.distributions():
            name = _header(dist, "Name")
            if not name:
                continue
            try:
                modules = (dist.read_text("top_level.txt") or "").split() or _record_modules(dist)
            except (OSError, ValueError, TypeError, csv.Error):
                modules = [_canonical(name).replace("-", "_")]  # a guess: record more
            editable = _is_editable(dist)
            for module in modules:
                mapping.setdefault(module, []).append(name)
                _provides.setdefault(_canonical(name), set()).add(module)
                if editable:
                    _editable.add(module)
        _top_level = mapping
    return _top_level


def _header(dist: metadata.Distribution, field: str) -> str | None:
    """A field of a distribution's metadata (``Name``, ``Version``), read from the header
    lines: ``dist.metadata`` runs the email parser over every header of every installed
    distribution, which a build pays once per process while an example waits.

    Read as that parser reads them: from ``METADATA``, else ``PKG-INFO``, else the file
    itself (an ``.egg-info`` file, as distutils installed); lines end at ``\n``, ``\r``
    or ``\r\n`` only (a form feed in a summary ends no line); a line starting with a
    space or tab continues the header above it (a folded ``Name:``); the headers end at
    the first blank line; the first header of that name wins."""
    try:
        text = dist.read_text("METADATA") or dist.read_text("PKG-INFO") or dist.read_text("")
    except (OSError, ValueError):
        return None
    prefix = field.lower() + ":"
    found: list[str] | None = None
    for line in _HEADER_LINES.split(text or ""):
        if not line.strip():
            break  # the headers end at the first blank line
        if line[0] in " \t":
            if found is not None:
                found.append(line.strip())
            continue
        if found is not None:
            break
        if line.lower().startswith(prefix):
            found = [line[len(prefix) :].strip()]
    return None if found is None else " ".join(part for part in found if part)


def _record_modules(dist: metadata.Distribution) -> set[str]:
    """The top-level modules a distribution's installed ``.py`` files make (``foo/x.py``
    -> ``foo``, ``bar.py`` -> ``bar``), from its file list (:func:`_record_paths`)."""
    found = set()
    for path in _record_paths(dist):
        if path.endswith(".py"):
            head, slash, _ = path.partition("/")
            found.add(head if slash else path[: -len(".py")])
    return found


def _record_paths(dist: metadata.Distribution) -> list[str]:
    """The paths a distribution installed, as its ``RECORD`` lists them, read as plain CSV
    rows rather than as ``dist.files`` objects; other file lists through ``dist.files``.

    Not ``dist.files`` for a ``RECORD``: since Python 3.12 it leaves out the files that
    are not on disk (what the distribution says it installed is what counts here), and
    checking each one is slow for a large distribution. Raises ``ValueError`` (or
    ``csv.Error``) when the list is missing or unreadable."""
    text = dist.read_text("RECORD")
    if text is None:
        files = dist.files
        if files is None:  # no file list at all (an .egg-info file): a guess is better
            raise ValueError("no RECORD or other file list")
        return [str(f) for f in files]
    rows = [row for row in csv.reader(text.splitlines()) if row]
    if any(len(row) != 3 for row in rows):  # path, hash, size: as dist.files refuses
        raise ValueError("RECORD rows are not path, hash, size")
    return [row[0] for row in rows]


def _is_editable(dist: metadata.Distribution) -> bool:
    """Whether a distribution was installed in editable mode (PEP 610's
    ``direct_url.json``): its modules are the source folder, edited in place."""
    try:
        direct = json.loads(dist.read_text("direct_url.json") or "{}")
    except (OSError, ValueError, TypeError):
        return False
    dir_info = direct.get("dir_info") if isinstance(direct, dict) else None
    return isinstance(dir_info, dict) and dir_info.get("editable") is True


def _ships_shared_library(name: str) -> bool:
    """Whether a distribution holds a native library that is not an extension module, or
    its file list is unknown (then it may hold one)."""
    key = _canonical(name)
    if key not in _native:
        try:
            names = [path.rpartition("/")[2] for path in _record_paths(metadata.distribution(name))]
        except metadata.PackageNotFoundError:
            names = []
        except (OSError, ValueError, TypeError, csv.Error):
            names = None  # no file list, or one it cannot read: it may hold one
        _native[key] = names is None or any(
            _SHARED_LIBRARY.search(n) and not _EXTENSION_MODULE.search(n) for n in names
        )
    return _native[key]


def _may_have_run(name: str, loaded: set[str]) -> bool:
    """Whether a distribution an imported one requires may have run in this process: one
    of its top-level modules is loaded, or it has none to load (data, or metadata that
    does not say: when in doubt, record more), or it holds a native library, which a
    loaded module may load without importing anything."""
    modules = _provides.get(_canonical(name), set())
    if not modules or modules & loaded:
        return True
    return _ships_shared_library(name)


def providers(top_level_name: str) -> tuple[dict[str, str], bool]:
    """``({distribution: version}, editable)`` of the installed distributions providing a
    top-level module, without their requirements (empty: none is installed); ``editable``
    when one is an editable install, whose files change without its version.

    >>> providers("no_such_module_anywhere")
    ({}, False)
    """
    found: dict[str, str] = {}
    for name in _top_level_map().get(top_level_name, ()):
        dist = _distribution(name)
        if dist is not None:
            found[_canonical(name)] = dist[0]
    return dict(sorted(found.items())), top_level_name in _editable


def distribution_versions(top_level_names: Iterable[str]) -> dict[str, str]:
    """``{distribution: version}`` (installed ones only) of the distributions providing
    these top-level modules, and of those they require, transitively, that may have run in
    this process (:func:`_may_have_run`): a distribution none of whose modules is loaded
    cannot have changed what the example did, even if a distribution it used requires it.
    The requirements of the build's own programs (:data:`_BUILD_TOOLS`) are not followed.

    Call it in the process the example ran in, right after it: ``sys.modules`` is the
    evidence."""
    top_level = _top_level_map()
    loaded = {name.partition(".")[0] for name in list(sys.modules)}
    versions: dict[str, str] = {}
    # (name, whether the example reached it directly rather than through a requirement)
    queue = [(dist, True) for name in top_level_names for dist in top_level.get(name, ())]
    while queue:
        name, direct = queue.pop()
        key = _canonical(name)
        if key in versions:
            continue
        found = _distribution(name)
        if found is None or not (direct or _may_have_run(name, loaded)):
            continue
        versions[key] = found[0]
        if key not in _BUILD_TOOLS:
            queue.extend((required, False) for required in found[1])
    return dict(sorted(versions.items()))


class Change(NamedTuple):
    """A dependency that no longer holds: its key (:func:`dependency_key`) and the
    reason, for people."""

    key: str
    reason: str


def dependency_key(kind: str, *parts: str) -> str:
    """The one spelling of a dependency's key: ``source``, ``file:<path>``,
    ``code:<path>:<piece>``, ``names:<path>``, ``dist:<name>``, ``absent:<module>``,
    ``listing:<folder>``."""
    return ":".join((kind, *parts))


class Row(NamedTuple):
    """One dependency of an entry, as ``cache explain`` lists it."""

    kind: str
    label: str
    key: str
    why: str = ""


def dependency_rows(deps: dict[str, Any], source: str) -> list[Row]:
    """Every dependency of an entry (``source``: the example's path, for its row), with
    why a piece of code counts at ``function`` granularity."""
    rows = [Row("source", source, dependency_key("source"))]
    rows += [Row("file", name, dependency_key("file", name)) for name in deps["files"]]
    why = deps.get("why", {})
    for name, pieces in deps["code"].items():
        for piece in pieces:
            label = f"{name}: {piece}"
            rows.append(
                Row(
                    "code",
                    label,
                    dependency_key("code", name, piece),
                    why.get(name, {}).get(piece, ""),
                )
            )
    for name, names in deps.get("named", {}).items():
        label = f"{name}: names {', '.join(names) or '(none)'}"
        rows.append(Row("names", label, dependency_key("names", name), "named by its code"))
    for earlier, keys in deps.get("state", {}).items():
        rows.append(
            Row(
                "state",
                f"{earlier} ({', '.join(keys)})",
                dependency_key("state", earlier),
                "state left by an earlier example",
            )
        )
    rows += [
        Row("dist", f"{name} {version}", dependency_key("dist", name))
        for name, version in deps["dists"].items()
    ]
    rows += [
        Row("absent", f"{name} (not found)", dependency_key("absent", name))
        for name in deps.get("absent", ())
    ]
    rows += [
        Row("listing", f"{name}/ ({listing['count']} names)", dependency_key("listing", name))
        for name, listing in deps["listings"].items()
    ]
    return rows


def changes(deps: dict[str, Any], project: Project, source_file: str) -> list[Change]:
    """What no longer holds of ``deps`` (empty: every dependency still holds).

    The order is the cheapest check first: the source, the files, the code, the versions.
    """
    found: list[Change] = []
    try:
        if file_digest(source_file) != deps["source"]:
            found.append(Change(dependency_key("source"), "source changed"))
    except OSError:
        found.append(Change(dependency_key("source"), "source unreadable"))
    for relative, digest in deps["files"].items():
        try:
            current = file_digest(project.absolute(relative))
        except OSError:
            found.append(Change(dependency_key("file", relative), f"{relative} removed"))
            continue
        if current != digest:
            found.append(Change(dependency_key("file", relative), f"{relative} changed"))
    for relative, pieces in deps["code"].items():
        current_code = code_digests(project.absolute(relative))
        for piece, digest in pieces.items():
            now = None if current_code is None else current_code.get(piece)
            if now != digest:
                what = "module body" if piece == MODULE_BODY else piece
                gone = "removed" if now is None else "changed"
                key = dependency_key("code", relative, piece)
                found.append(Change(key, f"{relative}: {what} {gone}"))
    found += _named_changes(deps, project)
    for name, version in deps["dists"].items():
        now = current_version(name)
        if now != version:
            reason = f"{name} {version} → {now or 'not installed'}"
            found.append(Change(dependency_key("dist", name), reason))
    found += absent_changes(deps.get("absent", ()))
    found += listing_changes(listings_from_json(deps.get("listings", {})), project)
    return found


def _named_changes(deps: dict[str, Any], project: Project) -> list[Change]:
    """Pieces the example's code names that appeared in or disappeared from a file (a
    function added that shadows the one it ran, a binding removed)."""
    found: list[Change] = []
    names = deps.get("names", [])
    reading = None if names is None else frozenset(names)
    for relative, before in deps.get("named", {}).items():
        facts = code_facts(project.absolute(relative))
        if facts is None:
            continue  # its pieces are missing: the code changes say so
        now = named_in(facts, reading)
        if now != before:
            added, removed = sorted(set(now) - set(before)), sorted(set(before) - set(now))
            parts = [f"{', '.join(added)} added"] if added else []
            parts += [f"{', '.join(removed)} removed"] if removed else []
            key = dependency_key("names", relative)
            found.append(Change(key, f"{relative}: {'; '.join(parts)}"))
    return found


def absent_modules(seen: Seen, modules: Iterable[str] = ()) -> list[str]:
    """The modules an import did not find while recording, and those the code of the
    module files ``modules`` did not find when it ran before (:attr:`.recorder.Seen.
    carried_absent`), but those loaded since (found after all: they count as modules)
    and the standard library's (``_winapi`` off Windows: the same for the same Python):
    what :func:`absent_changes` checks."""
    names = set(seen.absent)
    for module in modules:
        names |= seen.carried_absent.get(os.path.normpath(module), frozenset())
    return sorted(
        name
        for name in names
        if name not in sys.modules and name.partition(".")[0] not in sys.stdlib_module_names
    )


def findable(name: str) -> bool:
    """Whether an import of module ``name`` would find it now, without importing (nor
    running) anything: the top-level name by the import system's finders
    (:func:`importlib.util.find_spec`: ``sys.path``, an editable install's finder), each
    submodule in the folders of the package found before it.

    >>> findable("json.decoder"), findable("no_such_module_anywhere")
    (True, False)
    """
    parts = name.split(".")
    try:
        spec = importlib.util.find_spec(parts[0])
        for end in range(2, len(parts) + 1):
            folders = None if spec is None else spec.submodule_search_locations
            if folders is None:
                return False
            spec = importlib.machinery.PathFinder.find_spec(".".join(parts[:end]), list(folders))
    except (ImportError, ValueError, AttributeError, TypeError):
        return False  # a finder that fails finds nothing: as the import would
    return spec is not None


def absent_changes(names: Iterable[str], found: Callable[[str], bool] = findable) -> list[Change]:
    """Which modules an import did not find (:func:`absent_modules`) it would find now
    (``found``: :func:`findable`, or a cache of it)."""
    return [
        Change(dependency_key("absent", name), f"{name}: now importable")
        for name in names
        if found(name)
    ]


def current_version(name: str) -> str | None:
    """The installed version of distribution ``name`` as an entry records it, or ``None``."""
    try:
        return _version_of(metadata.distribution(name))
    except metadata.PackageNotFoundError:
        return None


def _version_of(dist: metadata.Distribution) -> str:
    """A distribution's version as an entry records it. Installed in editable mode, its
    modules count by their files; an entry made before that holds only the version, so
    the mode is part of it."""
    version = _header(dist, "Version") or dist.version
    return f"{version} (editable)" if _is_editable(dist) else version


def written_files(seen: Seen, project: Project) -> dict[str, str]:
    """``{path relative to the root: absolute path}`` of the files the example wrote that a
    later example may read (under the roots, counted by the project)."""
    return {
        project.relative(path): path
        for path in sorted(seen.written)
        if project.wants(path) and os.path.isfile(path)
    }


def read_first_files(seen: Seen, project: Project) -> dict[str, str]:
    """``{path relative to the root: digest}`` of the files the example read, then wrote:
    an input by what it held before (an earlier example may have written it)."""
    return {
        project.relative(path): digest
        for path, digest in sorted(seen.read_first.items())
        if project.wants(path)
    }


def _counted_names(
    folder: str, names: Iterable[str], project: Project, leave_out: Iterable[str]
) -> tuple[list[str], list[str]]:
    """``(names that count, names left out)`` of a listing of ``folder``."""
    skip = set(leave_out)
    counted, ignored = [], []
    for name in sorted(names):
        if name in skip:
            continue
        if name == "__pycache__" or not project.wants(os.path.join(folder, name)):
            ignored.append(name)
        else:
            counted.append(name)
    return counted, ignored


def _names_digest(names: list[str]) -> str:
    digest = hashlib.sha256()
    for name in names:
        digest.update(os.fsencode(name) + b"\0")
    return digest.hexdigest()


@dataclass(frozen=True)
class Listing:
    """A folder listed, by the names that count: their ``count`` and ``digest``, the
    ``names`` themselves up to :data:`LISTING_NAMES_KEPT` (else ``None``), the names left
    out as not the project's (``ignored``, left out again when checking, wherever that
    runs) and those of the files the example wrote there (``own``: restored with it, so
    never a change). Stored in a cache entry and in the Sphinx state's page records, in
    the JSON form :meth:`to_json` gives and :meth:`from_json` reads back."""

    count: int
    digest: str
    names: tuple[str, ...] | None
    ignored: tuple[str, ...]
    own: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """The stored form (the one place its keys are spelled, with :meth:`from_json`)."""
        stored: dict[str, Any] = {"count": self.count, "digest": self.digest}
        if self.names is not None:
            stored["names"] = list(self.names)
        stored["ignored"], stored["own"] = list(self.ignored), list(self.own)
        return stored

    @classmethod
    def from_json(cls, stored: Any) -> Listing:
        """The listing :meth:`to_json` stored; ``ValueError`` saying what is wrong when
        ``stored`` is not one (a hand-edited or foreign file)."""
        if not isinstance(stored, dict):
            raise ValueError(f"a listing is a JSON object, not {type(stored).__name__}")
        if not isinstance(stored.get("count"), int) or not isinstance(stored.get("digest"), str):
            raise ValueError("a listing needs an integer 'count' and a string 'digest'")
        lists = {}
        for key in ("names", "ignored", "own"):
            value = stored.get(key, None if key == "names" else [])
            if value is not None and not (
                isinstance(value, list) and all(isinstance(n, str) for n in value)
            ):
                raise ValueError(f"a listing's {key!r} is not a list of names: {value!r}")
            lists[key] = None if value is None else tuple(value)
        return cls(stored["count"], stored["digest"], **lists)


def listings_from_json(stored: Any) -> dict[str, Listing]:
    """``{folder: Listing}`` from their stored form (``{folder: listing.to_json()}``);
    ``ValueError`` naming the folder whose listing is malformed."""
    if not isinstance(stored, dict):
        raise ValueError(f"listings are a JSON object, not {type(stored).__name__}")
    found = {}
    for relative, listing in stored.items():
        try:
            found[relative] = Listing.from_json(listing)
        except ValueError as error:
            raise ValueError(f"{relative!r}: {error}") from None
    return found


def listing_deps(seen: Seen, project: Project, modules: Iterable[str] = ()) -> dict[str, Listing]:
    """``{folder relative to the root: listing}`` of the folders the example listed, and
    of those the code of the module files it used (``modules``) listed when it ran before
    (:attr:`.recorder.Seen.carried_listings`: a module body that globs a folder)."""
    written = {os.path.normpath(p) for p in seen.written}
    listed = dict(seen.listings)
    for module in sorted(modules):
        for folder, names in seen.carried_listings.get(os.path.normpath(module), {}).items():
            listed.setdefault(folder, names)
    found: dict[str, Listing] = {}
    for folder, names in sorted(listed.items()):
        folder = os.path.normpath(folder)
        if not project.wants(folder):
            continue
        own = sorted(own_names(folder, written))
        counted, ignored = _counted_names(folder, names, project, own)
        kept = tuple(counted) if len(counted) <= LISTING_NAMES_KEPT else None
        listing = Listing(len(counted), _names_digest(counted), kept, tuple(ignored), tuple(own))
        found[project.relative(folder)] = listing
    return found


def listing_changes(listings: Mapping[str, Listing], project: Project) -> list[Change]:
    """Which recorded listings (see :func:`listing_deps`) no longer hold."""
    found: list[Change] = []
    for relative, listing in listings.items():
        folder = project.absolute(relative)
        key = dependency_key("listing", relative)
        try:
            names = os.listdir(folder)
        except OSError:
            found.append(Change(key, f"{relative}/ removed"))
            continue
        leave_out = [*listing.ignored, *listing.own]
        counted, _ = _counted_names(folder, names, project, leave_out)
        if _names_digest(counted) == listing.digest:
            continue
        before = listing.names
        if before is None:
            detail = f"{listing.count} → {len(counted)} names"
        else:
            added, removed = set(counted) - set(before), set(before) - set(counted)
            parts = [f"{len(added)} added"] if added else []
            parts += [f"{len(removed)} removed"] if removed else []
            detail = ", ".join(parts) or "changed"
        found.append(Change(key, f"{relative}/ listing changed ({detail})"))
    return found
