"""What ``conf.py`` does beyond its settings, and what the build's own libraries are.

The design, in full: the caching guide's *Design* section.

Example: editing ``html_title`` keeps the state, a handler connected in ``setup()``
does not.

>>> import tempfile
>>> from pathlib import Path
>>> folder = tempfile.TemporaryDirectory()
>>> conf = Path(folder.name, "conf.py")
>>> _ = conf.write_text("project = 'pkg'\\nhtml_title = 'Pkg'\\n")
>>> first = conf_code(str(conf), {"project", "html_title"})
>>> _ = conf.write_text("project = 'pkg'\\nhtml_title = 'Pkg docs'\\n")
>>> conf_code(str(conf), {"project", "html_title"}) == first
True
>>> _ = conf.write_text("project = 'pkg'\\ndef setup(app):\\n    pass\\n")
>>> conf_code(str(conf), {"project", "html_title"}) == first
False
>>> docutils_conf(folder.name)
'none'
>>> folder.cleanup()
"""

from __future__ import annotations

import ast
import contextlib
import os
import re
import sys
from collections.abc import Collection, Iterable
from importlib import metadata
from pathlib import PurePath
from typing import Any

from docsaccel.formats import context_key

__all__ = [
    "COMPARED",
    "conf_code",
    "conf_data",
    "docutils_conf",
    "helper_code",
    "overrides",
    "sphinx_libraries",
]

#: The ``rebuild`` kinds of configuration values some rule compares: Sphinx reads every
#: document again when an ``env`` one changed, the write side writes every page when an
#: ``html`` one did.
COMPARED = frozenset({"env", "html"})
#: Folders of installed distributions (a virtual environment inside the checkout).
_INSTALLED = frozenset({"site-packages", "dist-packages"})
_DATA = (str, int, float, bool, type(None), list, tuple, dict, set, frozenset, PurePath)


def _assigned_names(node: ast.stmt) -> list[str] | None:
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        targets = [node.target]
    else:
        return None
    if not all(isinstance(t, ast.Name) for t in targets):
        return None
    return [t.id for t in targets if isinstance(t, ast.Name)]


def conf_code(path: str, compared: Collection[str]) -> str:
    """The digest of ``conf.py``'s code but the top-level assignments of ``compared``
    names (``"unreadable"`` when it cannot be parsed: a change of it is then not seen
    by this rule, and Sphinx itself fails on such a file)."""
    try:
        with open(path, "rb") as stream:
            tree = ast.parse(stream.read(), path)
    except (OSError, SyntaxError, ValueError):
        return "unreadable"
    kept = []
    for node in tree.body:
        names = _assigned_names(node)
        if names and all(name in compared for name in names):
            continue
        kept.append(node)
    return context_key({"code": ast.dump(ast.Module(body=kept, type_ignores=[]))})


def conf_data(config: Any, root: str) -> str:
    """The digest of what ``conf.py`` left in its namespace that is data and no
    configuration value."""
    from docsaccel.incremental.sphinxext.writing import setting_text

    raw = getattr(config, "_raw_config", None) or {}
    values = {}
    for name, value in sorted(raw.items()):
        if name.startswith("_") or name in config or not isinstance(value, _DATA):
            continue
        values[name] = setting_text(value, root)
    return context_key({"data": values})


def overrides(config: Any, compared: Collection[str], root: str) -> str:
    """The digest of the command line's settings but the ``compared`` ones."""
    from docsaccel.incremental.sphinxext.writing import setting_text

    given = getattr(config, "_overrides", None) or {}
    values = {
        str(name): setting_text(value, root)
        for name, value in sorted(given.items(), key=lambda item: str(item[0]))
        if str(name).partition(".")[0] not in compared
    }
    return context_key({"overrides": values})


def helper_code(
    confdir: str, root: str, counted: Collection[str], handlers: Iterable[Any] = ()
) -> str:
    """The digest of the files of the loaded modules under ``confdir`` but ``counted``
    (files some other rule counts: the extensions' own), and of the modules under
    ``root`` defining one of ``handlers`` (what ``conf.py`` names or connects: a
    ``linkcode_resolve`` or an ``autodoc-skip-member`` handler from the project's own
    package). With ``conf.py`` at the project root, only its single-file modules: the
    packages there are the documented ones, whose files count for the pages showing
    them."""
    from docsaccel.cache.fingerprint import file_digest

    folder = os.path.join(os.path.abspath(confdir), "")
    at_root = os.path.abspath(confdir) == os.path.abspath(root)
    skip = {os.path.abspath(p) for p in counted}
    files = set()
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if not isinstance(path, str) or not path.endswith(".py"):
            continue
        path = os.path.abspath(path)
        if not path.startswith(folder):
            continue
        if at_root and (hasattr(module, "__path__") or "." in getattr(module, "__name__", "")):
            continue
        files.add(path)
    inside = os.path.join(os.path.abspath(root), "")
    for handler in handlers:
        module = sys.modules.get(getattr(handler, "__module__", None) or "")
        path = getattr(module, "__file__", None)
        if not isinstance(path, str) or not os.path.abspath(path).startswith(inside):
            continue
        if _INSTALLED.isdisjoint(os.path.normpath(path).split(os.sep)):
            files.add(os.path.abspath(path))
    digests = {}
    for path in sorted(files - skip):
        with contextlib.suppress(OSError):
            digests[os.path.relpath(path, root).replace(os.sep, "/")] = file_digest(path)
    return context_key({"helpers": digests})


def docutils_conf(confdir: str) -> str:
    """The digest of ``confdir/docutils.conf``, ``"none"`` without one."""
    from docsaccel.cache.fingerprint import file_digest

    try:
        return file_digest(os.path.join(confdir, "docutils.conf"))
    except OSError:
        return "none"


def sphinx_libraries() -> dict[str, str]:
    """``{distribution: version}`` of what Sphinx requires, installed."""
    found: dict[str, str] = {}
    try:
        requirements = metadata.requires("sphinx") or []
    except metadata.PackageNotFoundError:
        return found
    for requirement in requirements:
        if "extra ==" in requirement:
            continue
        name = re.split(r"[\s<>=!~;\[(]", requirement.strip(), maxsplit=1)[0]
        try:
            found[name.lower()] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return dict(sorted(found.items()))
