"""Run sphinx-gallery's own end-to-end suite with and without docsaccel.gallery, side by side.

docsaccel must not change what sphinx-gallery does: its ``tests/test_full.py`` builds the
"tinybuild" project (several galleries, sub-galleries, non-Python examples, failing
examples, duplicate file names) and checks every output. This tool runs that suite twice
on copies of an unpacked sphinx-gallery sdist: as it is, and with ``docsaccel.gallery``
added to the tinybuild's extensions. It prints each test's outcome on both sides, the
tests whose outcomes differ, and pytest's result line of each run; it exits 1 when an
outcome differs.

Example::

    pip download --no-deps --no-binary :all: sphinx-gallery==0.22.1 -d /tmp/sgsrc
    tar xzf /tmp/sgsrc/sphinx_gallery-0.22.1.tar.gz -C /tmp/sgsrc
    PYTHONPATH=$PWD/src python tools/sg_full_suite.py /tmp/sgsrc/sphinx_gallery-0.22.1

The suite needs ``lxml`` and ``jupyterlite_sphinx`` (with ``nbformat``) and an
``ffmpeg``; without them pytest skips or fails the whole module on both sides.
``--extra-path`` adds a folder holding the packages to the children's ``PYTHONPATH``,
after docsaccel's source; without ``ffmpeg`` on ``PATH``, imageio-ffmpeg's is used.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

TINYBUILD_CONF = Path("sphinx_gallery/tests/tinybuild/doc/conf.py")
EXTENSION_LINE = '    "sphinx_gallery.gen_gallery",\n'
PYTEST_INI = """[pytest]
markers =
    add_conf: Configuration file.
    add_file: Add file to src.
norecursedirs = build _build auto_examples gen_modules sphinx_gallery/tests/tinybuild
"""


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


def run(side: Path, tests: list[str], extra_path: list[str], keyword: str | None) -> str:
    """Run pytest in ``side``; return its result line. Outcomes go to ``side/junit.xml``."""
    env = dict(os.environ)
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p] + extra_path
    env["PYTHONPATH"] = os.pathsep.join(paths)
    ffmpeg = _ffmpeg_folder(side.parent)
    if ffmpeg:
        env["PATH"] = os.pathsep.join([ffmpeg, env.get("PATH", "")])
    env.setdefault("MPLBACKEND", "agg")
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rN"]
    command += [f"--junitxml={side / 'junit.xml'}", *tests]
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="an unpacked sphinx-gallery sdist")
    parser.add_argument("--tests", nargs="+", default=["sphinx_gallery/tests/test_full.py"])
    parser.add_argument("--extra-path", action="append", default=[], metavar="DIR")
    parser.add_argument("-k", dest="keyword", help="pytest -k expression, for both runs")
    parser.add_argument("--workdir", type=Path, help="where the copies go (default: a temp dir)")
    args = parser.parse_args(argv)
    if not (args.source / TINYBUILD_CONF).is_file():
        parser.error(f"{args.source}: not an unpacked sphinx-gallery sdist (no {TINYBUILD_CONF})")
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="sg-full-"))
    results = {}
    for label, with_docsaccel in (("without", False), ("with", True)):
        side = workdir / label
        shutil.rmtree(side, ignore_errors=True)
        prepare(args.source, side, with_docsaccel)
        summary = run(side, args.tests, args.extra_path, args.keyword)
        results[label] = (summary, outcomes(side / "junit.xml"))
    without, with_ = results["without"][1], results["with"][1]
    width = max((len(name) for name in without | with_), default=10)
    print(f"{'test':<{width}}  {'without':<8}  with docsaccel.gallery")
    differ = []
    for name in sorted(without | with_):
        a, b = without.get(name, "-"), with_.get(name, "-")
        print(f"{name:<{width}}  {a:<8}  {b}{'   <- differs' if a != b else ''}")
        if a != b:
            differ.append(name)
    print(f"\nwithout docsaccel.gallery: {results['without'][0]}")
    print(f"with docsaccel.gallery:    {results['with'][0]}")
    print(f"outcomes that differ: {len(differ)} (logs: {workdir}/*/pytest.log)")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
