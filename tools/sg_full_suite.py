"""Run sphinx-gallery's own end-to-end suite with and without docsaccel.gallery, side by side.

docsaccel must not change what sphinx-gallery does: its ``tests/test_full.py`` builds the
"tinybuild" project (several galleries, sub-galleries, non-Python examples, failing
examples, duplicate file names, JUnit output, rebuilds, parallel reads) and checks every
output. This tool runs that suite twice on copies of an unpacked sphinx-gallery sdist: as
it is, and with ``docsaccel.gallery`` added to the tinybuild's extensions. It prints each
test's outcome on both sides, pytest's result line of each run, then compares what the
two tinybuild builds left behind: the files of their sources and outputs (docsaccel's own
``docsaccel/`` output folder and its note beside each example's outputs aside) and the
objects in their ``objects.inv``. It also
checks that docsaccel did run on its side (its report lists the tinybuild's examples), so
"no difference" cannot come from a plugin that was never loaded.

Exit status: 0 when outcomes, files and objects are the same on both sides; 1 when any
differs; 2 when the comparison shows nothing (no test passed without docsaccel, no
docsaccel report, or ``--extra-path`` holds copies of packages the interpreter has).

The suite needs packages the project does not install, and an ``ffmpeg`` (without one on
``PATH``, imageio-ffmpeg's is used). Put them in a folder of their own, never in the
project's environment, then run the comparison (several minutes: the tinybuild is built a
dozen times on each side)::

    pip download --no-deps --no-binary :all: sphinx-gallery==0.22.1 -d /tmp/sgsrc
    tar xzf /tmp/sgsrc/sphinx_gallery-0.22.1.tar.gz -C /tmp/sgsrc
    PYTHONPATH=$PWD/src python tools/sg_full_suite.py --install-deps /tmp/sgdeps
    PYTHONPATH=$PWD/src python tools/sg_full_suite.py /tmp/sgsrc/sphinx_gallery-0.22.1 \\
        --extra-path /tmp/sgdeps --workdir /tmp/sg-full

``--install-deps DIR`` runs ``pip install --target DIR -c constraints.txt`` (or the
``--constraints`` file: ``nox -s compat`` gives its pins) with :data:`DEPENDENCIES`,
then removes from ``DIR`` every distribution the interpreter already has: ``--target``
installs the whole dependency tree, and a second Sphinx, docutils or Jinja2 there would
come first on ``PYTHONPATH`` and replace the project's pinned ones. A run refuses an
``--extra-path`` that still holds such copies. ``--extra-path`` folders go on the
children's ``PYTHONPATH`` (after docsaccel's source) and their ``bin`` on ``PATH``.

Offline: ``jupyter lite build`` (which jupyterlite_sphinx runs at the end of every
tinybuild build) needs no network: jupyterlite-core's wheel holds the JupyterLite site it
copies, and the tinybuild asks for no kernel. Some tests do need the network, which of
them depends on the release: for the intersphinx inventories of numpy and matplotlib
that the tinybuild links to, and (before 0.22) for the 404 its ``reference_url`` that is
wrong on purpose answers (offline the fetch fails with a URLError). They fail on both
sides without it and are marked in the output (:data:`NETWORK_TESTS`).

``--workdir`` keeps everything for a look afterwards: ``<workdir>/<side>/`` (the sdist
copy, ``pytest.log``, ``junit.xml``) and ``<workdir>/<side>-tmp/`` (pytest's temporary
folder of that side: ``root_html/doc`` is the tinybuild as the last test left it).
"""

from __future__ import annotations

import argparse
import csv
import importlib.machinery
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zlib
from importlib.metadata import distributions
from pathlib import Path

from docsaccel.sg_compat import RUN_MARKER_SUFFIX

TINYBUILD_CONF = Path("sphinx_gallery/tests/tinybuild/doc/conf.py")
EXTENSION_LINE = '    "sphinx_gallery.gen_gallery",\n'
PYTEST_INI = """[pytest]
markers =
    add_conf: Configuration file.
    add_file: Add file to src.
norecursedirs = build _build auto_examples gen_modules sphinx_gallery/tests/tinybuild
"""
CONSTRAINTS = Path(__file__).resolve().parents[1] / "constraints.txt"
#: What sphinx-gallery 0.22.1's test_full.py and its tinybuild need beyond the project's
#: own environment (the rest of their dependencies come along).
DEPENDENCIES = (
    "lxml==6.1.3",
    "nbformat==5.11.1",
    "sphinxcontrib-video==0.4.2",
    "jupyterlite-sphinx==0.23.0",
    "jupyterlite-core==0.8.6",
    "jupyter-server==2.21.1",
    "jupyterlab-server==2.28.1",
)
#: Tests that fail without the network, on both sides, and why.
NETWORK_TESTS = {
    "sphinx_gallery.tests.test_full::test_embed_links_and_styles": "intersphinx inventories",
    "sphinx_gallery.tests.test_full::test_backreferences_dirhtml": "intersphinx inventories",
    "sphinx_gallery.tests.test_full::test_run_sphinx": "the 404 of a reference_url",
}
#: The tinybuild builds whose files are compared, in pytest's temporary folder.
BUILDS = ("root_html", "root_dirhtml")


def prepare(source: Path, side: Path, with_docsaccel: bool) -> None:
    """Copy the sdist to ``side``; add docsaccel.gallery to the tinybuild when asked."""
    shutil.copytree(source, side, ignore=shutil.ignore_patterns("_build", "__pycache__"))
    # The sdist's pytest settings want pytest-cov; only the markers and folders matter.
    (side / "pyproject.toml").unlink(missing_ok=True)
    (side / "pytest.ini").write_text(PYTEST_INI, encoding="utf-8")
    if with_docsaccel:
        conf = side / TINYBUILD_CONF
        text = conf.read_text(encoding="utf-8")
        if EXTENSION_LINE not in text:
            raise SystemExit(f"{conf}: cannot find {EXTENSION_LINE.strip()!r} to add docsaccel")
        text = text.replace(EXTENSION_LINE, EXTENSION_LINE + '    "docsaccel.gallery",\n', 1)
        conf.write_text(text, encoding="utf-8")


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _installed(exclude: Path) -> set[str]:
    """Normalized names of the distributions the interpreter has outside ``exclude``."""
    path = [p for p in sys.path if Path(p or ".").resolve() != exclude.resolve()]
    return {_norm(d.metadata["Name"]) for d in distributions(path=path) if d.metadata["Name"]}


def install_deps(folder: Path, constraints: Path = CONSTRAINTS) -> None:
    """``pip install --target`` :data:`DEPENDENCIES`, less what the interpreter has."""
    command = [sys.executable, "-m", "pip", "install", "--target", str(folder)]
    command += ["-c", str(constraints), *DEPENDENCIES]
    if subprocess.run(command, check=False).returncode != 0:
        raise SystemExit(f"pip could not install the suite's dependencies into {folder}")
    have = _installed(folder)
    for info in sorted(folder.glob("*.dist-info")):
        if _norm(info.name.removesuffix(".dist-info").split("-", 1)[0]) not in have:
            continue
        print(f"{folder}: removing {info.name} (the interpreter has its own)")
        for row in csv.reader((info / "RECORD").read_text(encoding="utf-8").splitlines()):
            # Scripts are recorded as ../../bin/NAME, and go to DIR/bin/NAME.
            parts = [part for part in Path(row[0]).parts if part != ".."] if row else []
            if parts and (folder / Path(*parts)).is_file():
                (folder / Path(*parts)).unlink()
        shutil.rmtree(info, ignore_errors=True)
    for entry in sorted(folder.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        if entry.is_dir() and not any(entry.iterdir()):
            entry.rmdir()


def shadowed(folder: Path) -> list[str]:
    """Top-level modules in ``folder`` that the interpreter also finds elsewhere."""
    path = [p for p in sys.path if Path(p or ".").resolve() != folder.resolve()]
    suffixes = tuple(importlib.machinery.all_suffixes())
    found = []
    for entry in sorted(folder.iterdir()):
        if entry.is_dir() and (entry / "__init__.py").is_file():
            name = entry.name  # a package; namespace packages merge, so they shadow nothing
        elif entry.is_file() and entry.name.endswith(suffixes):
            name = entry.name.split(".", 1)[0]
        else:
            continue
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.origin is not None:
            found.append(name)
    return found


def _ffmpeg_folder(workdir: Path) -> str | None:
    """A folder with an ``ffmpeg`` (imageio-ffmpeg's) when none is on ``PATH``."""
    if shutil.which("ffmpeg"):
        return None
    try:
        import imageio_ffmpeg
    except ImportError:
        return None
    folder = workdir / "bin"
    folder.mkdir(parents=True, exist_ok=True)
    link = folder / "ffmpeg"
    if not link.exists():
        link.symlink_to(imageio_ffmpeg.get_ffmpeg_exe())
    return str(folder)


def run(
    side: Path, basetemp: Path, tests: list[str], extra_path: list[str], keyword: str | None
) -> str:
    """Run pytest in ``side``; return its result line. Outcomes go to ``side/junit.xml``."""
    env = dict(os.environ)
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p] + extra_path
    env["PYTHONPATH"] = os.pathsep.join(paths)
    # jupyterlite_sphinx runs `python -m jupyter lite build`, and jupyter finds its
    # `jupyter-lite` subcommand on PATH: a `pip install --target` folder keeps it in `bin`.
    folders = [str(Path(p) / "bin") for p in extra_path if (Path(p) / "bin").is_dir()]
    ffmpeg = _ffmpeg_folder(side.parent)
    if ffmpeg:
        folders.append(ffmpeg)
    if folders:
        env["PATH"] = os.pathsep.join([*folders, env.get("PATH", "")])
    env.setdefault("MPLBACKEND", "agg")
    # A temporary folder of its own: pytest prunes the shared one's old runs, which may be
    # another run's, and this one is kept for a look at the builds.
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rN"]
    command += [f"--basetemp={basetemp}", f"--junitxml={side / 'junit.xml'}", *tests]
    if keyword:
        command += ["-k", keyword]
    done = subprocess.run(command, cwd=side, env=env, capture_output=True, text=True)
    (side / "pytest.log").write_text(done.stdout + done.stderr, encoding="utf-8")
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    return lines[-1] if lines else f"(no output, exit {done.returncode}; see {side}/pytest.log)"


def outcomes(junit: Path) -> dict[str, str]:
    """``{test id: passed|failed|error|skipped}`` from pytest's JUnit XML."""
    if not junit.is_file():
        return {}
    found = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        kinds = {child.tag for child in case}
        outcome = next((k for k in ("failure", "error", "skipped") if k in kinds), "passed")
        found[name] = {"failure": "failed"}.get(outcome, outcome)
    return found


def inventory(path: Path) -> set[str]:
    """``"domain:role name"`` of every object in a Sphinx ``objects.inv``."""
    data = path.read_bytes()
    body = data.split(b"\n", 4)[4]  # four header lines, then the zlib-compressed entries
    found = set()
    for line in zlib.decompress(body).decode("utf-8").splitlines():
        match = re.match(r"(.+?)\s+(\S+:\S+)\s+-?\d+\s", line)
        if match:
            found.add(f"{match.group(2)} {match.group(1)}")
    return found


def build_contents(basetemp: Path) -> dict[str, set[str]]:
    """What each tinybuild build left: its files (``build:path``) and documented objects."""
    found: dict[str, set[str]] = {"files": set(), "objects": set()}
    for build in BUILDS:
        doc = basetemp / build / "doc"
        if not doc.is_dir():
            continue
        for path in doc.rglob("*"):
            relative = path.relative_to(doc)
            # The plugin's own outputs (its folder, its note beside each example's outputs)
            # are what it adds; what sphinx-gallery makes must match.
            ours = "docsaccel" in relative.parts[:3] or path.name.endswith(RUN_MARKER_SUFFIX)
            if path.is_file() and not ours:
                found["files"].add(f"{build}:{relative.as_posix()}")
        for inv in sorted((doc / "_build").glob("*/objects.inv")):
            found["objects"] |= {f"{build}: {entry}" for entry in inventory(inv)}
    return found


def docsaccel_report(basetemp: Path) -> str | None:
    """A line saying what docsaccel recorded in the tinybuild's HTML build, or None."""
    path = basetemp / "root_html" / "doc" / "_build" / "html" / "docsaccel" / "report.json"
    if not path.is_file():
        return None
    examples = json.loads(path.read_text(encoding="utf-8")).get("examples") or []
    statuses: dict[str, int] = {}
    for record in examples:
        statuses[record.get("status")] = statuses.get(record.get("status"), 0) + 1
    counts = ", ".join(f"{n} {status}" for status, n in sorted(statuses.items()))
    return f"{len(examples)} examples ({counts}) in {path}" if examples else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, nargs="?", help="an unpacked sphinx-gallery sdist")
    parser.add_argument("--tests", nargs="+", default=["sphinx_gallery/tests/test_full.py"])
    parser.add_argument("--extra-path", action="append", default=[], metavar="DIR")
    parser.add_argument("--install-deps", type=Path, metavar="DIR", help="see the docstring")
    parser.add_argument(
        "--constraints",
        type=Path,
        default=CONSTRAINTS,
        help="pip constraints for --install-deps (default: the project's constraints.txt)",
    )
    parser.add_argument("-k", dest="keyword", help="pytest -k expression, for both runs")
    parser.add_argument("--workdir", type=Path, help="where the copies go (default: a temp dir)")
    args = parser.parse_args(argv)
    if args.install_deps is not None:
        install_deps(args.install_deps, args.constraints)
        if args.source is None:
            return 0
    if args.source is None:
        parser.error("give an unpacked sphinx-gallery sdist (or --install-deps DIR)")
    if not (args.source / TINYBUILD_CONF).is_file():
        parser.error(f"{args.source}: not an unpacked sphinx-gallery sdist (no {TINYBUILD_CONF})")
    # The children run in the copies: a relative folder would point inside them.
    args.extra_path = [str(Path(folder).resolve()) for folder in args.extra_path]
    for folder in map(Path, args.extra_path):
        if not folder.is_dir():
            parser.error(f"--extra-path {folder}: no such folder")
        if clash := shadowed(folder):
            print(f"--extra-path {folder} holds copies of what the interpreter has, which")
            print(f"would replace its own: {', '.join(clash)}; remove them (see the docstring)")
            return 2
    workdir = (args.workdir or Path(tempfile.mkdtemp(prefix="sg-full-"))).resolve()
    results = {}
    for label, with_docsaccel in (("without", False), ("with", True)):
        side, basetemp = workdir / label, workdir / f"{label}-tmp"
        shutil.rmtree(side, ignore_errors=True)
        shutil.rmtree(basetemp, ignore_errors=True)
        prepare(args.source, side, with_docsaccel)
        summary = run(side, basetemp, args.tests, args.extra_path, args.keyword)
        results[label] = (summary, outcomes(side / "junit.xml"), build_contents(basetemp))
    without, with_ = results["without"][1], results["with"][1]
    width = max((len(name) for name in without | with_), default=10)
    print(f"{'test':<{width}}  {'without':<8}  with docsaccel.gallery")
    differ = []
    for name in sorted(without | with_):
        a, b = without.get(name, "-"), with_.get(name, "-")
        note = f"   (needs the network: {NETWORK_TESTS[name]})" if name in NETWORK_TESTS else ""
        print(f"{name:<{width}}  {a:<8}  {b}{'   <- differs' if a != b else ''}{note}")
        if a != b:
            differ.append(name)
    contents = []
    for kind in ("files", "objects"):
        before, after = results["without"][2][kind], results["with"][2][kind]
        for entry in sorted(before - after):
            contents.append(f"only without docsaccel.gallery ({kind}): {entry}")
        for entry in sorted(after - before):
            contents.append(f"only with docsaccel.gallery ({kind}): {entry}")
    print("", *contents, sep="\n")
    print(f"without docsaccel.gallery: {results['without'][0]}")
    print(f"with docsaccel.gallery:    {results['with'][0]}")
    sizes = {kind: len(results["without"][2][kind]) for kind in ("files", "objects")}
    print(f"tinybuild files compared: {sizes['files']}, documented objects: {sizes['objects']}")
    report = docsaccel_report(workdir / "with-tmp")
    print(f"docsaccel recorded: {report or 'nothing (no report.json in the tinybuild)'}")
    print(f"outcomes that differ: {len(differ)}; files or objects that differ: {len(contents)}")
    print(f"(logs: {workdir}/*/pytest.log, builds: {workdir}/*-tmp/)")
    if differ or contents:
        return 1
    if "passed" not in without.values() or report is None:
        print("the comparison shows nothing: see the logs")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
