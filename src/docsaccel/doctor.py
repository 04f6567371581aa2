"""``docsaccel doctor``: what docsaccel will run with on this machine, and in a project.

Prints the versions of the libraries docsaccel works with, which of its extras are
installed, the headless OpenGL backend MuJoCo will render with (when the ``mujoco`` extra
is installed), and, given the Sphinx conf folder, whether ``conf.py`` loads the plugin
with valid ``docsaccel_*`` settings and whether its budget file loads and matches the
examples. A missing optional extra is information, never a failure: a ``[docs]`` install
without MuJoCo is healthy. What the build warns of is a warning here too, and what it
refuses a failure. Each line starts with ``ok``, ``info``, ``warn`` or ``FAIL``.
"""

from __future__ import annotations

import importlib.util
import platform
import re
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from types import SimpleNamespace

from docsaccel import __version__
from docsaccel.counts import counted
from docsaccel.headless import HeadlessGLError, ensure_headless_gl

LIBRARIES = ("sphinx", "sphinx-gallery", "gymnasium", "mujoco", "torch", "torchrl", "imageio")
#: The extras a user installs docsaccel with for a capability (``pyproject.toml`` lists
#: their distributions); the test and development extras are the project's own.
CAPABILITIES = {
    "docs": "build Sphinx docs with the gallery plugin",
    "mujoco": "render MuJoCo videos",
    "torchrl": "record torchrl environments",
    "report": "draw the report's chart",
}
OK, INFO, WARN, FAIL = "ok  ", "info", "warn", "FAIL"
#: The modules of the ``docs`` extra that reading ``conf.py`` and building need.
DOCS_MODULES = ("sphinx", "sphinx_gallery")
INSTALL_DOCS = 'pip install "docsaccel[docs]"'
#: What a command that reads ``conf.py``, lists a gallery or builds says on a plain install.
DOCS_EXTRA_NEEDED = f"needs Sphinx and sphinx-gallery: {INSTALL_DOCS}"


@dataclass(frozen=True)
class Check:
    """One line of the doctor's answer: ``ok``, ``info`` (nothing to fix), ``warn`` (what
    the build warns of: it still passes) or ``FAIL``."""

    level: str
    text: str

    def line(self) -> str:
        return f"{self.level} {self.text}"


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


#: ``extra == "name"`` in a requirement's environment marker (PEP 508).
_EXTRA_MARKER = re.compile(r"""\bextra\s*==\s*(['"])([^'"]+)\1""")
#: A requirement's distribution name: what the requirement starts with (PEP 508).
_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def extra_distributions(extra: str) -> list[str]:
    """The distributions docsaccel's ``extra`` installs, read from its own metadata.

    Read with plain string handling, not the ``packaging`` library: docsaccel depends on
    nothing, so a plain ``pip install docsaccel`` has no ``packaging`` to import. Only the
    ``extra == "..."`` part of a marker is read: docsaccel's extras use no other marker.
    """
    try:
        requirements = metadata.requires("docsaccel") or []
    except metadata.PackageNotFoundError:  # run from a source tree that is not installed
        return []
    found = []
    for text in requirements:
        spec, _, marker = text.partition(";")
        name = _NAME.match(spec)
        extras = {match.group(2) for match in _EXTRA_MARKER.finditer(marker)}
        if name is not None and extra in extras:
            found.append(name.group(1))
    return found


def check_extra(extra: str) -> Check:
    """Whether the distributions of ``extra`` are installed: never a failure, since an
    extra is optional; a partial one says what is missing."""
    wanted = extra_distributions(extra)
    missing = [name for name in wanted if _version(name) == "not installed"]
    hint = f'pip install "docsaccel[{extra}]" to {CAPABILITIES[extra]}'
    if not missing:
        return Check(OK, f"extra {extra}: installed")
    # A present one that another installed package needs (numpy, under matplotlib) does
    # not show the extra was installed: "partly" would send the user after the wrong cause.
    present = [name for name in wanted if name not in missing]
    if not [name for name in present if not _required_by_others(name)]:
        return Check(INFO, f"extra {extra}: not installed ({hint})")
    return Check(INFO, f"extra {extra}: partly installed, missing {', '.join(missing)} ({hint})")


def _required_by_others(distribution: str) -> bool:
    """Whether an installed distribution other than docsaccel requires ``distribution``
    (whatever the marker: an over-count here only says "not installed" for an extra
    whose own packages are all missing)."""
    wanted = _normal(distribution)
    for dist in metadata.distributions():
        name = dist.metadata["Name"] or ""
        if _normal(name) in {"docsaccel", wanted}:
            continue
        for text in dist.requires or []:
            match = _NAME.match(text)
            if match is not None and _normal(match.group(1)) == wanted:
                return True
    return False


def _normal(name: str) -> str:
    """A distribution name as PEP 503 compares them (``Sphinx_Gallery`` is ``sphinx-gallery``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def gl_status() -> tuple[bool, str]:
    """Whether MuJoCo can render here, and a one-line explanation.

    A missing ``mujoco`` package is named first: probing the system's OpenGL libraries
    without it would blame them for what ``pip install`` fixes.
    """
    if importlib.util.find_spec("mujoco") is None:
        return False, (
            "not checked: the Python package mujoco is not installed; "
            'pip install "docsaccel[mujoco]"'
        )
    try:
        backend = ensure_headless_gl()
    except HeadlessGLError as exc:
        return False, str(exc)
    if backend is None:
        return True, "unset (a display exists: MuJoCo's default applies)"
    return True, f"{backend} (rendering works)"


def docs_extra_missing() -> bool:
    """Whether the Sphinx side of the ``docs`` extra is missing: reading ``conf.py`` and
    building need Sphinx and sphinx-gallery, which a plain install lacks."""
    return any(importlib.util.find_spec(name) is None for name in DOCS_MODULES)


def check_gl() -> Check:
    """MuJoCo's rendering: a failure only where the mujoco package is installed."""
    ok, text = gl_status()
    if importlib.util.find_spec("mujoco") is None:
        return Check(INFO, f"MUJOCO_GL {text}")
    return Check(OK if ok else FAIL, f"MUJOCO_GL {text}")


def check_project(docs: Path) -> list[Check]:
    """``<docs>/conf.py``: it runs, loads the plugin, its ``docsaccel_*`` names and values
    are settings the build accepts; then its budget file (see :func:`check_budgets`)."""
    conf_file = docs / "conf.py"
    if docs_extra_missing():
        return [Check(FAIL, f"{conf_file}: not checked: {INSTALL_DOCS} first")]
    from docsaccel.settings import read_settings, setting_errors, unknown_settings
    from docsaccel.shard.build import ShardError, read_conf

    try:
        namespace = read_conf(docs)
    except ShardError as exc:
        return [Check(FAIL, str(exc))]
    # The build warns of a name that is no setting and runs all the same: so does this.
    checks = [Check(WARN, f"{conf_file}: {message}") for message in unknown_settings(namespace)]
    if "docsaccel.gallery" not in (namespace.get("extensions") or ()):
        message = "extensions does not list docsaccel.gallery: its settings do nothing"
        checks.append(Check(FAIL, f"{conf_file}: {message}"))
    config = SimpleNamespace(**namespace)
    refused = setting_errors(config, docs)
    if refused:
        return [*checks, *(Check(FAIL, f"{conf_file}: {message}") for message in refused)]
    settings = read_settings(config, docs)
    if not any(check.level == FAIL for check in checks):
        checks.append(Check(OK, f"{conf_file}: loads docsaccel.gallery; settings valid"))
    if settings.budgets is None:
        return [*checks, Check(INFO, f"{conf_file}: no docsaccel_budgets file")]
    return [*checks, *check_budgets(settings.budgets, docs, namespace)]


def check_budgets(path: Path, docs: Path, namespace: dict) -> list[Check]:
    """The budget file and the examples' own budgets, read as the build reads them
    (:meth:`docsaccel.examples.Planner.plan_checked`) for the galleries ``conf.py``
    declares: what the build refuses fails, what it warns of is a warning."""
    from docsaccel import sg_compat
    from docsaccel.budgets import BudgetError, load_budgets
    from docsaccel.examples import Planner
    from docsaccel.memory_sizes import machine_bytes

    gallery_conf = namespace.get("sphinx_gallery_conf")
    try:
        table = load_budgets(path, memory_at_most=machine_bytes())
        if not isinstance(gallery_conf, dict):
            return [Check(OK, f"{path}: loads ({counted(len(table.entries), 'pattern')})")]
        gallery_conf = sg_compat.with_defaults(gallery_conf)
        planner = Planner.for_build(docs, gallery_conf, table, fast=False)
        examples, warned = planner.plan_checked(gallery_conf)
    except BudgetError as exc:
        return [Check(FAIL, str(exc))]
    checks = [Check(WARN, message) for message in warned]
    return checks or [
        Check(
            OK,
            f"{path}: {counted(len(table.entries), 'pattern')}, "
            f"{counted(len(examples), 'example')}",
        )
    ]


def docs_problem(docs: str | Path) -> str | None:
    """Why ``--docs`` names no Sphinx conf folder, if it does not: a wrong argument (exit
    status 2, as for every command), not a check of the project that fails.

    >>> docs_problem("/no/such/folder")
    "--docs '/no/such/folder': no such folder; give the Sphinx conf folder (holding conf.py)"
    """
    folder = Path(docs)
    if (folder / "conf.py").is_file():
        return None
    if not folder.exists():
        what = "no such folder"
    elif not folder.is_dir():
        what = "a file, not a folder"
    else:
        what = "holds no conf.py"
    return f"--docs {str(docs)!r}: {what}; give the Sphinx conf folder (holding conf.py)"


def describe(docs: str | Path | None = None) -> tuple[str, bool]:
    """The doctor's text, and whether everything installed (and the project in ``docs``,
    when given) works."""
    checks = [*versions()]
    checks += [check_extra(extra) for extra in CAPABILITIES]
    checks.append(check_gl())
    if docs is not None:
        checks += check_project(Path(docs))
    return "\n".join(check.line() for check in checks), all(check.level != FAIL for check in checks)


def versions() -> list[Check]:
    """The versions in use, as ``info`` lines: every line of the doctor starts with its
    word, so a CI log is searched for ``FAIL`` and read by one shape; a library not
    installed is information too (its extra's line says whether that matters)."""
    found = [("docsaccel", __version__), ("python", platform.python_version())]
    found += [(name, _version(name)) for name in LIBRARIES]
    return [Check(INFO, f"{name} {version}") for name, version in found]
