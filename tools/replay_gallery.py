"""A real library's releases replayed through the example cache, with its own gallery.

``tools/bench_cache.py --part replay`` asks what the cache does for a library's own docs
over its history: networkx (pure Python, its sdist ships ``examples/``, a sphinx-gallery
of about 80 scripts) at a run of consecutive releases, downloaded from PyPI as sdists.
Each release is unpacked as a project of its own (its ``pyproject.toml`` marks the root,
the package and the gallery under it, as in its repository) with a small ``conf.py``
holding networkx's own ``sphinx_gallery_conf``. Every build starts from a fresh copy of
that tree, as a CI job does.

The gallery needs numpy, scipy, matplotlib and pandas, which the project's ``.venv``
does not hold: the builds run in a virtual environment of their own
(:func:`bench_python`), with Sphinx and sphinx-gallery pinned by ``constraints.txt``, and
docsaccel from a source folder on ``PYTHONPATH`` (this checkout's, or an older rule's).

:func:`pages` reads a build's gallery as the comparison with a build without the cache
sees it: each generated file's bytes with measured times masked (the "Total running
time" line, the execution-time table, sphinx-gallery's ``.cost.json``) and the build's
folder masked, a zip by what it holds, and without the plugin's note beside each example
(its own record of the run).

Example::

    python = bench_python(folder / "venv")
    tree = release_tree(fetch("3.4.2", folder / "sdists", python), folder / "trees")
    built = build(tree, folder / "copy", python, src=ROOT / "src", cache=None)
    built.executed, built.failed, len(built.pages)
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

from docsaccel.contract import CACHED, FAILED
from docsaccel.sg_compat import RUN_MARKER_SUFFIX

LIBRARY = "networkx"
#: Consecutive releases that run on the pinned numpy (2.x; 3.0 and 3.1 call functions
#: numpy 2 removed), minor and patch ones.
RELEASES = ("3.2", "3.2.1", "3.3", "3.4", "3.4.1", "3.4.2", "3.5", "3.6", "3.6.1")
#: What the gallery imports beyond the library (its ``requirements/default.txt``) and
#: what builds it; the pinned ones at ``constraints.txt``'s versions.
REQUIREMENTS = ("sphinx", "sphinx-gallery", "matplotlib", "numpy", "scipy", "pandas")
#: What the library's full docs (``doc/``) need beyond that: its ``requirements/doc.txt``.
DOC_REQUIREMENTS = (
    *REQUIREMENTS,
    "pydata-sphinx-theme",
    "numpydoc",
    "texext",
    "myst-nb",
    "intersphinx-registry",
    "pillow",
)
DOCS = "gallery-docs"
#: networkx's ``doc/conf.py`` order of gallery sections (those a release lacks are left out).
SECTIONS = (
    "basic",
    "drawing",
    "3d_drawing",
    "graphviz_layout",
    "graphviz_drawing",
    "graph",
    "algorithms",
    "advanced",
    "external",
    "geospatial",
    "subclass",
)
CONF = """
import os, sys
from sphinx_gallery.sorting import ExplicitOrder

# The library from this tree, as its own docs build uses it (imported here, as its
# conf.py does for the version).
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import networkx

extensions = ["sphinx_gallery.gen_gallery", "docsaccel.gallery"]
exclude_patterns = ["_build"]
sphinx_gallery_conf = {{
    "examples_dirs": "../examples",
    "subsection_order": ExplicitOrder({sections!r}),
    "within_subsection_order": "FileNameSortKey",
    "gallery_dirs": "auto_examples",
    "image_scrapers": ("matplotlib",),
    "matplotlib_animations": True,
    "reference_url": {{"sphinx_gallery": None}},
    "download_all_examples": False,
    "show_memory": False,
    # Examples needing what is not installed (graphviz, osmnx) or the network fail;
    # the replay leaves them out of its counts.
    "only_warn_on_example_error": True,
    "ignore_pattern": {ignore!r},
}}
docsaccel_cache_granularity = {granularity!r}
"""
#: The examples left out of the gallery: each runs for most of a minute (animations
#: rendered frame by frame, a process pool), as long as a dozen others together, and the
#: replay measures which examples run again, not how long they take.
LEFT_OUT = ("plot_3d_animation_basic", "plot_3d_animation_walk", "plot_parallel_betweenness")
INDEX = "Gallery\n=======\n\n.. toctree::\n\n   auto_examples/index\n"

_TIMES = (
    re.compile(rb"\d+ minutes \d+\.\d+ seconds"),
    re.compile(rb"\d\d:\d\d\.\d+"),
    re.compile(rb"\d+\.\d+ sec"),
)


def bench_python(
    venv: Path, constraints: Path, requirements: tuple[str, ...] = REQUIREMENTS
) -> Path:
    """The interpreter of the builds' own virtual environment with ``requirements``
    (the gallery's by default), made the first time and again when they change."""
    python = venv / "bin" / "python"
    stamp = venv / ".replay-installed"
    wanted = " ".join(requirements) + "\n" + constraints.read_text("utf-8")
    if stamp.is_file() and stamp.read_text("utf-8") == wanted:
        return python
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    _pip(python, "install", "--quiet", "-c", str(constraints), *requirements)
    stamp.write_text(wanted, "utf-8")
    return python


def _pip(python: Path, *args: str) -> None:
    """``pip`` in the builds' environment; a failure (PyPI unreachable, a release not
    found) ends the benchmark with pip's own words, not a traceback."""
    done = subprocess.run([str(python), "-m", "pip", *args], capture_output=True, text=True)
    if done.returncode != 0:
        words = (done.stderr or done.stdout).strip().splitlines()[-5:]
        sys.exit(
            f"replay: pip {args[0]} failed (exit {done.returncode}); the replay downloads "
            "from PyPI and needs the network:\n  " + "\n  ".join(words)
        )


def fetch(version: str, folder: Path, python: Path) -> Path:
    """The sdist of ``networkx==version`` in ``folder``, downloaded from PyPI if missing."""
    sdist = folder / f"{LIBRARY}-{version}.tar.gz"
    if not sdist.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        _pip(
            python,
            *("download", "--quiet", "--no-deps", "--no-binary", ":all:"),
            *("-d", str(folder), f"{LIBRARY}=={version}"),
        )
        if not sdist.is_file():
            sys.exit(f"replay: pip downloaded no {sdist.name} into {folder}")
    return sdist


def release_tree(sdist: Path, folder: Path) -> Path:
    """The release unpacked under ``folder`` with the gallery's docs folder added."""
    name = sdist.name.removesuffix(".tar.gz")
    tree = folder / name
    docs = tree / DOCS
    if not docs.is_dir():
        shutil.rmtree(tree, ignore_errors=True)
        folder.mkdir(parents=True, exist_ok=True)
        with tarfile.open(sdist) as archive:
            archive.extractall(folder, filter="data")
        docs.mkdir()
    if not (tree / ".git").exists():
        # Its own repository, as the library's checkout is: the root the cache finds.
        subprocess.run(["git", "init", "-q", str(tree)], check=True)
    sections = [f"../examples/{s}" for s in SECTIONS if (tree / "examples" / s).is_dir()]
    ignore = r"__init__\.py|" + "|".join(LEFT_OUT)
    (docs / "index.rst").write_text(INDEX, "utf-8")
    conf = CONF.format(sections=sections, granularity="module", ignore=ignore)
    (docs / "conf.py").write_text(conf, "utf-8")
    return tree


def library_files(tree: Path) -> dict[str, bytes]:
    """``{path: bytes}`` of the library's own Python files in a release tree."""
    package = tree / LIBRARY
    return {p.relative_to(tree).as_posix(): p.read_bytes() for p in sorted(package.rglob("*.py"))}


@dataclass(frozen=True)
class Built:
    """One build: its wall seconds, the examples it ran, restored and saw fail (by id),
    why each example it ran missed the cache, and its gallery as compared (:func:`pages`)."""

    seconds: float
    executed: frozenset[str]
    cached: frozenset[str]
    failed: frozenset[str]
    reasons: dict[str, str]
    pages: dict[str, bytes]
    #: ``{example id: its wall seconds}`` as its record says.
    example_seconds: dict[str, float]


def build(
    tree: Path,
    copy: Path,
    python: Path,
    src: Path,
    cache: Path | None,
    granularity: str = "module",
    env: dict[str, str] | None = None,
) -> Built:
    """Build a fresh copy of ``tree`` at ``copy`` with docsaccel from ``src``; the cache
    at ``cache`` (``None``: off); ``env`` added to the build's environment last (a tracer
    on ``PYTHONPATH``, say). The copy is removed afterwards, its log kept beside it."""
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(tree, copy)
    docs = copy / DOCS
    conf = (docs / "conf.py").read_text("utf-8")
    conf = conf.replace("docsaccel_cache_granularity = 'module'", "")
    (docs / "conf.py").write_text(conf + f"docsaccel_cache_granularity = {granularity!r}\n")
    added = env or {}
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DOCSACCEL", "PYTHON"))}
    env.update(
        PYTHONPATH=str(src),
        DOCSACCEL_CACHE=str(cache) if cache else "0",
        DOCSACCEL_ON_OVERRUN="warn",
        MPLBACKEND="agg",
    )
    env.update(added)
    outdir = copy / "html"
    log = copy.parent / f"{copy.name}.log"
    started = time.perf_counter()
    with log.open("w", encoding="utf-8") as stream:
        done = subprocess.run(
            [str(python), "-m", "sphinx", "-b", "html", "-q", str(docs), str(outdir)],
            env=env,
            stdout=stream,
            stderr=stream,
            check=False,
        )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"build of {copy} failed:\n{log.read_text('utf-8')[-3000:]}")
    report = json.loads((outdir / "docsaccel" / "report.json").read_text("utf-8"))
    records = report["examples"]
    built = Built(
        seconds,
        frozenset(r["id"] for r in records if r["status"] != CACHED and r["pid"] is not None),
        frozenset(r["id"] for r in records if r["status"] == CACHED),
        frozenset(r["id"] for r in records if r["status"] == FAILED),
        {r["id"]: (r.get("cache") or {}).get("reason", "") for r in records},
        pages(docs / "auto_examples", copy),
        {r["id"]: r.get("wall_seconds") or 0.0 for r in records},
    )
    shutil.rmtree(copy, ignore_errors=True)
    return built


def _masked(path: Path, copy: bytes) -> bytes:
    if path.name.startswith("sg_execution_times") or path.name.endswith(".cost.json"):
        return b"<measured times>"
    if path.suffix == ".zip":
        with zipfile.ZipFile(path) as archive:
            return repr(sorted((i.filename, archive.read(i)) for i in archive.infolist())).encode()
    data = path.read_bytes().replace(copy, b"<copy>")
    for pattern in _TIMES:
        data = pattern.sub(b"<time>", data)
    return data


def pages(gallery: Path, copy: Path) -> dict[str, bytes]:
    """``{path relative to the gallery: bytes as compared}`` (see the module docstring);
    the folder ``copy`` the build ran in is masked where a page prints it."""
    return {
        path.relative_to(gallery).as_posix(): _masked(path, os.fsencode(copy))
        for path in sorted(gallery.rglob("*"))
        if path.is_file() and not path.name.endswith(RUN_MARKER_SUFFIX)
    }


def differences(mine: dict[str, bytes], clean: dict[str, bytes]) -> list[str]:
    """The files present in one only, or with other bytes, sorted."""
    return sorted(n for n in set(mine) | set(clean) if mine.get(n) != clean.get(n))


def example_of(page: str) -> str:
    """The example a gallery file belongs to (``drawing/plot_a.rst`` and
    ``drawing/images/sphx_glr_plot_a_001.png`` -> ``drawing/plot_a``), else the file."""
    folder, _, name = page.rpartition("/")
    folder = folder.removesuffix("/images/thumb").removesuffix("/images")
    match = re.match(r"sphx_glr_(.+?)(?:_\d{3,}|_thumb)\.\w+$", name)
    stem = match.group(1) if match else name.split(".")[0]
    return f"{folder}/{stem}" if folder else stem
