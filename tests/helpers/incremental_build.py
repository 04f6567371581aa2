"""Build a small API-reference project again and again from fresh copies, as CI does.

The project (``tests/incremental_fixtures/project``) has a package documented with
autosummary ``:recursive:`` and autodoc, narrative pages with an include, an image and
cross-references, a sphinx-gallery example whose "examples using" file an API page
includes, and a class inheriting from a library installed outside the project
(``tests/incremental_fixtures/site``, put on ``PYTHONPATH``).

A :class:`Workspace` copies the project into the same folder for every build (every
file gets a new modification time, as in a fresh checkout), builds it with a cache
folder, and compares the output with a clean build of the same tree file by file
(measured times masked). The clean build of a tree is made once per test session (in
``REFERENCE_BUILDS``, keyed by a digest of the tree and the build's arguments) and reused
by every comparison of that tree.

Example::

    ws = Workspace(tmp_path)
    first = ws.build(cache="warm")                 # fills the cache
    ws.fresh_copy(edit=lambda p: ...)              # the same tree, one change
    built = ws.build(cache="warm")
    built.read, built.written                       # what the build read and wrote
    assert ws.differences(built) == []             # against a clean build of that tree
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest
import sphinx

from docsaccel.incremental.oracle import differences, output_files
from docsaccel.incremental.sphinxext.restore import CHECKED_SPHINX, CHECKED_SPHINX_GALLERY_FOR_STATE
from docsaccel.sg_compat import series
from helpers import build_server
from helpers.gallery_build import child_env
from helpers.slow import require_slow

FIXTURES = Path(__file__).parent.parent / "incremental_fixtures"
_SERIES = "{}.{}".format(*sphinx.version_info[:2])
#: For the tests of what the Sphinx state does: they skip with a Sphinx it is off with.
needs_state = pytest.mark.skipif(
    _SERIES not in CHECKED_SPHINX or series() not in CHECKED_SPHINX_GALLERY_FOR_STATE,
    reason=f"the Sphinx state is off with Sphinx {_SERIES}, sphinx-gallery {series()}",
)
#: Before Sphinx 8.2, Sphinx writes the root document's page whenever it writes any page.
WRITTEN_WITH_ANY = {"index"} if sphinx.version_info < (8, 2) else set()
#: The test session's folder of clean reference builds (``tests/conftest.py`` sets it):
#: one subfolder per :meth:`Workspace.reference_key`, its ``output`` and a marker file.
REFERENCE_BUILDS: Path | None = None
_COMPLETE = "complete"


def reference_folder() -> Path:
    """The session's folder of clean reference builds; a temporary one without a session."""
    global REFERENCE_BUILDS
    if REFERENCE_BUILDS is None:
        REFERENCE_BUILDS = Path(tempfile.mkdtemp(prefix="docsaccel-reference-builds-"))
    return REFERENCE_BUILDS


def _digest_tree(digest: hashlib._Hash, folder: Path) -> None:
    """Add every file under ``folder`` (its relative path and bytes) to ``digest``."""
    for path in sorted(folder.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())


@dataclass
class Built:
    returncode: int
    output: str
    report: dict

    @property
    def state(self) -> dict:
        return self.report["build"].get("sphinx_state") or {}

    @property
    def read(self) -> set[str]:
        return set(self.state.get("read", {}))

    @property
    def written(self) -> set[str]:
        return set(self.state.get("written_pages", []))

    @property
    def ran(self) -> set[str]:
        """The examples that ran (not restored from the cache)."""
        examples = self.report.get("examples", [])
        return {e["id"] for e in examples if not (e.get("cache") or {}).get("hit")}


class Workspace:
    """A project copied into ``root/project``, its cache in ``root/cache``."""

    def __init__(self, root: Path, jobs: int = 1, doctrees_beside: bool = False) -> None:
        self.root = root
        #: Whether the doctrees are beside the HTML folder (``_build/doctrees``, as
        #: ``make html`` puts them) rather than in it (sphinx-build's default).
        self.doctrees_beside = doctrees_beside
        self.project = root / "project"
        self.cache = root / "cache"
        self.jobs = jobs
        self.site = root / "site"
        self.edits: list[Callable[[Path], None]] = []
        shutil.copytree(FIXTURES / "site", self.site)
        self.fresh_copy()

    @property
    def docs(self) -> Path:
        return self.project / "docs"

    @property
    def outdir(self) -> Path:
        return self.docs / "_build" / "html"

    def fresh_copy(self, edit: Callable[[Path], None] | None = None) -> None:
        """The project anew, with every edit so far (and ``edit``) applied."""
        if edit is not None:
            self.edits.append(edit)
        shutil.rmtree(self.project, ignore_errors=True)
        shutil.copytree(FIXTURES / "project", self.project)
        for change in self.edits:
            change(self.project)

    def edit(self, edit: Callable[[Path], None]) -> None:
        """``edit`` made in place, as between two builds in the same folders (and kept for
        every fresh copy, the clean build's too)."""
        self.edits.append(edit)
        edit(self.project)

    def command(self, cache: Path | None, args: tuple[str, ...], env: dict | None):
        # The library outside the project, before what the tests run with (a compat
        # session's docsaccel).
        path = os.pathsep.join(p for p in (str(self.site), os.environ.get("PYTHONPATH")) if p)
        extra = {"PYTHONPATH": path, "DOCSACCEL_CACHE": str(cache or self.cache)}
        extra.update(env or {})
        command = [sys.executable, "-m", "sphinx", "-b", "html", "-j", str(self.jobs), *args]
        if self.doctrees_beside:
            command += ["-d", str(self.docs / "_build" / "doctrees")]
        return [*command, str(self.docs), str(self.outdir)], child_env(extra)

    def build(self, cache: Path | None = None, *args: str, env: dict | None = None) -> Built:
        require_slow()
        command, child = self.command(cache, args, env)
        done = build_server.run(command, env=child, timeout=600)
        return self.result(done.returncode, done.stdout + done.stderr)

    def start(self, cache: Path | None = None, *args: str) -> subprocess.Popen:
        """A build in the background (its output to ``build.log`` beside the project)."""
        require_slow()
        command, child = self.command(cache, args, None)
        log = (self.root / "build.log").open("w")
        return subprocess.Popen(command, env=child, stdout=log, stderr=subprocess.STDOUT)

    def result(self, returncode: int, output: str) -> Built:
        report_path = self.outdir / "docsaccel" / "report.json"
        report = json.loads(report_path.read_text("utf-8")) if report_path.is_file() else {}
        return Built(returncode, output, report)

    def clean_output(self) -> dict[str, bytes]:
        """The output of a clean build of the current tree (a fresh copy, no state).

        A clean build is a pure function of the tree and the build's arguments, so it is
        made once per test session and reused by every comparison of the same tree
        (:meth:`reference_key`). A build's output does not depend on the folder it is
        made in, so a reference made in another test's folder serves as well.
        """
        keep = self.root / "kept-output"
        shutil.rmtree(keep, ignore_errors=True)
        shutil.copytree(self.outdir, keep)
        kept_project = self.root / "kept-project"
        shutil.rmtree(kept_project, ignore_errors=True)
        shutil.move(self.project, kept_project)
        try:
            self.fresh_copy()
            stored = reference_folder() / self.reference_key()
            if not (stored / _COMPLETE).is_file():
                self._clean_build(stored)
        finally:
            shutil.rmtree(self.project, ignore_errors=True)
            shutil.move(kept_project, self.project)
            shutil.rmtree(self.outdir, ignore_errors=True)
            shutil.move(keep, self.outdir)
        # Kept for a failing test to show.
        shutil.rmtree(self.root / "clean-output", ignore_errors=True)
        shutil.copytree(stored / "output", self.root / "clean-output")
        return output_files(stored / "output")

    def reference_key(self) -> str:
        """A digest of what a clean build's output depends on: the project's files (a
        fresh copy's), the library outside it, and how the build runs."""
        command, _ = self.command(None, (), None)
        digest = hashlib.sha256()
        # Every argument but the folders (sphinx-build's, the jobs), and the outer path.
        if self.doctrees_beside:
            command = [*command[:-4], "doctrees beside", *command[-2:]]
        for part in (*command[:-2], os.environ.get("PYTHONPATH", "")):
            digest.update(part.encode() + b"\0")
        for folder in (self.project, self.site):
            _digest_tree(digest, folder)
        return digest.hexdigest()[:32]

    def _clean_build(self, stored: Path) -> None:
        """A clean build of the fresh copy in the project's folder, with an empty cache;
        its output kept in ``stored``."""
        clean_cache = self.root / "clean-cache"
        shutil.rmtree(clean_cache, ignore_errors=True)
        clean = self.build(clean_cache)
        assert clean.returncode == 0, clean.output
        shutil.rmtree(stored, ignore_errors=True)
        shutil.copytree(self.outdir, stored / "output")
        (stored / _COMPLETE).touch()

    def differences(self, mask: Callable[[str, bytes], bytes] | None = None) -> list[str]:
        """The output files (relative paths) that differ from a clean build's; ``mask``,
        given a file's path and content, returns what of it both builds must agree on."""
        mine, clean = output_files(self.outdir), dict(self.clean_output())
        if mask is not None:
            for files in (mine, clean):
                for name, content in files.items():
                    files[name] = mask(name, content)
        return differences(mine, clean)


def built_with(
    root: Path,
    edits: Iterable[Callable[[Path], None]] = (),
    jobs: int = 1,
    doctrees_beside: bool = False,
) -> tuple[Workspace, Built]:
    """A workspace in ``root`` whose project has ``edits``, built once (its cache filled):
    the base a test module's scenarios restore from. The build must pass."""
    ws = Workspace(root, jobs=jobs, doctrees_beside=doctrees_beside)
    for edit in edits:
        ws.fresh_copy(edit)
    built = ws.build()
    assert built.returncode == 0, built.output
    return ws, built


def from_cache(
    cache: Path,
    root: Path,
    edits: Iterable[Callable[[Path], None]] = (),
    jobs: int = 1,
    doctrees_beside: bool = False,
) -> Workspace:
    """A workspace in ``root`` with a copy of ``cache``, its project with ``edits``."""
    ws = Workspace(root, jobs=jobs, doctrees_beside=doctrees_beside)
    for edit in edits:
        ws.fresh_copy(edit)
    shutil.copytree(cache, ws.cache)
    return ws


def replace(relative: str, old: str, new: str) -> Callable[[Path], None]:
    """An edit of the project: ``old`` becomes ``new`` in one file (which must hold it)."""

    def edit(project: Path) -> None:
        path = project / relative
        text = path.read_text("utf-8")
        assert old in text, (relative, old)
        path.write_text(text.replace(old, new), "utf-8")

    return edit


def write(relative: str, text: str) -> Callable[[Path], None]:
    def edit(project: Path) -> None:
        path = project / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")

    return edit


__all__ = [
    "WRITTEN_WITH_ANY",
    "Built",
    "Workspace",
    "extension",
    "from_cache",
    "local_extension",
    "needs_state",
    "replace",
    "write",
]


def extension(name: str) -> Callable[[Path], None]:
    """An edit: ``conf.py`` loads the extension ``name`` after the gallery plugin."""
    return replace(
        "docs/conf.py", '    "docsaccel.gallery",\n', f'    "docsaccel.gallery",\n    "{name}",\n'
    )


def local_extension(name: str, source: str) -> list[Callable[[Path], None]]:
    """Edits: the project's own extension ``docs/_ext/<name>.py``, its folder on
    ``sys.path`` (as ``conf.py`` puts it there) and the extension loaded."""
    return [
        write(f"docs/_ext/{name}.py", source),
        replace(
            "docs/conf.py",
            'sys.path.insert(0, os.path.abspath("../src"))',
            'sys.path.insert(0, os.path.abspath("../src"))\n'
            'sys.path.insert(0, os.path.abspath("_ext"))',
        ),
        extension(name),
    ]
