"""What the project's modules read while they were imported before docsaccel watched.

The design, in full: the caching guide's *Design* section.

Example: a module beside the project, imported before the recorder watched, reads a
file under the roots; the child's import sees the read.

>>> import sys, tempfile
>>> from pathlib import Path
>>> from docsaccel.cache.deps import Project
>>> top = Path(tempfile.mkdtemp())
>>> (top / "docs").mkdir()
>>> _ = (top / "docs" / "intro.txt").write_text("Hello.")
>>> _ = (top / "early_mod.py").write_text(
...     "import pathlib\\n"
...     "__doc__ = (pathlib.Path(__file__).parent / 'docs' / 'intro.txt').read_text()\\n"
... )
>>> sys.path.insert(0, str(top))
>>> import early_mod
>>> project = Project(str(top / "docs"), (str(top / "docs"),))
>>> reads, why, *_ = early_reads(project, ["early_mod"], str(top))
>>> why, reads == {str(top / "early_mod.py"): {str(top / "docs" / "intro.txt")}}
(None, True)
>>> sys.path.remove(str(top)); del sys.modules["early_mod"]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

from docsaccel.cache.deps import Project
from docsaccel.cache.instrument import PACKAGE_DIR
from docsaccel.cache.recorder import Recorder

__all__ = ["EarlyReads", "carry_early_reads", "early_reads", "loaded_project_modules"]

#: How long the child may take to import the modules again before their reads count as
#: unknown.
IMPORT_SECONDS = 300

_CHILD = """
import importlib, json, os, sys
spec = json.load(open(sys.argv[1], encoding="utf-8"))
sys.path[:] = spec["path"]
from docsaccel.cache.deps import Project
from docsaccel.cache.recorder import Recorder
from docsaccel.contract import opens_for_writing
from docsaccel.intercept import listen
project = Project(spec["root"], tuple(spec["roots"]), tuple(spec["excluded"]))
under = tuple(os.path.join(r, "") for r in project.roots)

def refuse_writes(event, args):
    if args[0] is None or isinstance(args[0], int):
        return
    path, mode, flags = args
    path = os.path.abspath(os.fsdecode(path))
    if opens_for_writing(mode, flags) and path.startswith(under) and "__pycache__" not in path:
        raise PermissionError(f"{path} would be written a second time")

listen({"open"}, refuse_writes)  # for the life of the child
recorder = Recorder.get()
recorder.carried.count_readers(project.owns_module)
recorder.phases.watch_prelude(project.roots, project.excluded)
failed = []
conf_failed = None
if spec["conf"]:
    import sphinx.application  # noqa: F401  (loaded in the build when conf.py ran)
    from sphinx.util.tags import Tags
    # As every supported Sphinx runs it: in its folder, with __file__ and tags.
    namespace = {"__file__": spec["conf"], "tags": Tags(spec["tags"])}
    os.chdir(os.path.dirname(spec["conf"]))
    try:
        with open(spec["conf"], "rb") as source:
            exec(compile(source.read(), spec["conf"], "exec"), namespace)
    except BaseException as exc:
        conf_failed = f"{type(exc).__name__}: {exc}"
for name in spec["modules"]:
    if name in sys.modules:
        continue
    try:
        importlib.import_module(name)
    except BaseException as exc:
        failed.append(f"{name}: {type(exc).__name__}: {exc}")
        break
seen = recorder.stop()
reads = {path: sorted(files) for path, files in seen.carried_reads.items()}
absent = {path: sorted(names) for path, names in seen.carried_absent.items()}
result = {"reads": reads, "listings": seen.carried_listings, "absent": absent, "failed": failed}
with open(sys.argv[2], "w", encoding="utf-8") as out:
    json.dump({**result, "conf_failed": conf_failed}, out)
"""

_OWN = os.path.join(PACKAGE_DIR, "")

#: ``{roots: why the reads are unknown, or None}``: once per process (the example cache
#: and the Sphinx state both ask; the first says why).
_carried: dict[tuple[str, ...], str | None] = {}


def loaded_project_modules(project: Project) -> list[str]:
    """The names of the loaded modules the project owns (:meth:`.Project.owns_module`),
    in the order they were loaded, but docsaccel's own."""
    found = []
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if not isinstance(path, str) or not path or name == "__main__":
            continue
        path = os.path.normpath(os.path.abspath(path))
        if not path.startswith(_OWN) and project.owns_module(path, name):
            found.append(name)
    return found


class EarlyReads(NamedTuple):
    """What :func:`early_reads` found: ``{module file: files its code read}``; why those
    reads are unknown (``None``: they are known); why ``conf.py`` could not run again
    (``None``: it ran), when the modules were then imported by name instead; and
    ``{module file: {folder: names}}`` of the folders their code listed, and ``{module
    file: names}`` of the modules their code's imports did not find."""

    reads: dict[str, set[str]]
    unknown: str | None = None
    conf_failed: str | None = None
    listings: Mapping[str, dict[str, list[str]]] = MappingProxyType({})
    absent: Mapping[str, list[str]] = MappingProxyType({})


def early_reads(
    project: Project,
    modules: Iterable[str],
    cwd: str,
    conf: str | None = None,
    tags: Iterable[str] = (),
) -> EarlyReads:
    """What running ``conf`` (its file, with Sphinx's ``tags``) and importing ``modules``
    again in a child Python started in ``cwd`` read (:class:`EarlyReads`). A ``conf.py``
    that cannot run again (it writes a file under the roots, as one generating pages
    does) leaves the modules to be imported by name, as they were loaded."""
    modules = list(modules)
    if not modules:
        return EarlyReads({})
    with tempfile.TemporaryDirectory(prefix="docsaccel-early-") as folder:
        spec_file, out_file = os.path.join(folder, "spec.json"), os.path.join(folder, "out.json")
        spec = {
            "path": [os.path.abspath(p) if p else cwd for p in sys.path],
            "root": project.root,
            "roots": list(project.roots),
            "excluded": list(project.excluded),
            "modules": modules,
            "conf": conf,
            "tags": sorted(tags),
        }
        with open(spec_file, "w", encoding="utf-8") as stream:
            json.dump(spec, stream)
        try:
            done = subprocess.run(
                [sys.executable, "-c", _CHILD, spec_file, out_file],
                cwd=cwd,
                capture_output=True,
                text=True,
                timeout=IMPORT_SECONDS,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return EarlyReads({}, f"importing {modules[0]} again took over {IMPORT_SECONDS} s")
        except OSError as exc:
            return EarlyReads({}, f"no child Python could start ({exc})")
        try:
            with open(out_file, encoding="utf-8") as stream:
                result: dict[str, Any] = json.load(stream)
        except (OSError, ValueError):
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
            return EarlyReads(
                {}, f"the child importing them again exited with {done.returncode}: {tail[0]}"
            )
    conf_failed = result.get("conf_failed")
    if result["failed"]:
        return EarlyReads({}, f"importing them again failed ({result['failed'][0]})", conf_failed)
    reads = {path: set(files) for path, files in result["reads"].items()}
    listings, absent = dict(result.get("listings") or {}), dict(result.get("absent") or {})
    return EarlyReads(reads, None, conf_failed, listings, absent)


def carry_early_reads(project: Project, confdir: str, tags: Iterable[str] = ()) -> str | None:
    """Carry what the project's modules loaded so far read when they were imported (see
    the caching guide's design), once per process and project; ``None``, or a sentence for the
    build's log (given once): why those reads are unknown (what uses those modules then
    runs, or is read, in every build), or that ``conf.py`` could not run again and the
    modules were imported by name."""
    key = project.roots
    if key in _carried:
        return None
    modules = loaded_project_modules(project)
    conf = os.path.join(confdir, "conf.py")
    reads, why, conf_failed, listings, absent = early_reads(
        project, modules, confdir, conf if os.path.isfile(conf) else None, tags
    )
    unknown = [] if why is None else [_file_of(name) for name in modules]
    Recorder.get().carried.carry(reads, [f for f in unknown if f], listings, absent)
    if why is not None:
        why = (
            "what the project's modules read when conf.py (or an extension before"
            f" docsaccel) imported them is unknown, {why}: the examples and pages using"
            f" {_named(modules)} run or are read in every build"
        )
    elif conf_failed is not None:
        why = (
            f"conf.py could not run again to see what the project's modules read when it"
            f" imported them ({conf_failed}): found by importing {_named(modules)} by name"
        )
    _carried[key] = why
    return why


def _file_of(name: str) -> str | None:
    path = getattr(sys.modules.get(name), "__file__", None)
    return os.path.normpath(os.path.abspath(path)) if isinstance(path, str) and path else None


def _named(modules: list[str]) -> str:
    tops = sorted({name.partition(".")[0] for name in modules})
    shown = ", ".join(tops[:3])
    return shown + (f" and {len(tops) - 3} more" if len(tops) > 3 else "")
