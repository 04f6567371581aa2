"""A tiny project for the example cache's real builds, each from a fresh copy, as CI does.

A local package ``mylib/``, a data file and a gallery; every build copies the pristine
tree into a new folder and builds it with one shared cache folder; a fake installed
distribution (``fakedist``, a ``*.dist-info`` folder outside the project) stands in for a
dependency whose version changes.

Example::

    project = Project(tmp_path)
    first, second = project.build(), project.build()
    second.executed()      # set(): every example restored from the cache
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

from docsaccel import layout, sg_compat
from docsaccel.schema import load_report
from helpers import build_server
from helpers.gallery_build import child_env
from helpers.slow import require_slow

__all__ = [
    "ALL",
    "CONF",
    "FILES",
    "Build",
    "Project",
    "differing",
    "example_source",
    "times_masked",
]


CONF = """
import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.environ["FAKE_SITE"])
import mylib.alpha  # imported before any example: no import event fires for it later

extensions = ["sphinx_gallery.gen_gallery", "docsaccel.gallery"]
exclude_patterns = ["_build", "examples"]
sphinx_gallery_conf = {
    "examples_dirs": ["examples"],
    "gallery_dirs": ["auto_examples"],
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "show_memory": False,
}
docsaccel_cache = "../../../cache"  # the folder shared by every copy
"""


_MEASURED = re.compile(rb"\d\d:\d\d\.\d\d\d|^(\s+- )[\d.]+$", re.MULTILINE)
#: The run note's flag that a build with the cache made the outputs (``"cache": true``).
_CACHE_FLAG = re.compile(rb'"cache":\s*true,?\s*')
_RUNNING_TIME = re.compile(rb"\(\d+ minutes \d+\.\d+ seconds\)|\"time\": [0-9.e+-]+")


def times_masked(files: dict[str, bytes]) -> dict[str, bytes]:
    """The gallery's files with the measured times and memory masked: those in
    ``sg_execution_times.rst``, its rows in a fixed order (they are sorted by time;
    sphinx-gallery before 0.22 reports an example it skipped as unchanged with zeros,
    restored by the cache or not), and each page's running time (and its ``.cost.json``)."""
    masked = {name: _RUNNING_TIME.sub(b"(T)", _unzipped(data)) for name, data in files.items()}
    times = masked.get("sg_execution_times.rst")
    if times is not None:
        lines = _MEASURED.sub(lambda m: (m.group(1) or b"") + b"#", times).splitlines()
        masked["sg_execution_times.rst"] = b"\n".join(sorted(lines))
    return masked


def _unzipped(data: bytes) -> bytes:
    """A zip archive by its members' names and contents (not their times), else ``data``."""
    if not data.startswith(b"PK\x03\x04"):
        return data
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return repr(sorted((n, archive.read(n)) for n in archive.namelist())).encode()


def differing(files: dict[str, bytes], other: dict[str, bytes]) -> list[str]:
    """The names of the gallery files that differ between two builds, times masked, and
    the note of whether a build with the cache made an example's outputs (the one
    difference between a build with the cache and one without, by design)."""
    a, b = _cache_flag_masked(times_masked(files)), _cache_flag_masked(times_masked(other))
    return sorted(n for n in a.keys() | b.keys() if a.get(n) != b.get(n))


def _cache_flag_masked(files: dict[str, bytes]) -> dict[str, bytes]:
    return {
        name: _CACHE_FLAG.sub(b"", data) if name.endswith(sg_compat.RUN_MARKER_SUFFIX) else data
        for name, data in files.items()
    }


def example_source(title: str, body: str) -> str:
    """The source of a gallery example titled ``title``."""
    return f'"""\n{title}\n{"=" * len(title)}\n"""\n{body}'


FILES = {
    "pyproject.toml": '[project]\nname = "tinyproj"\nversion = "0"\n',
    "mylib/__init__.py": (
        "import os\n\nDATA = os.path.join(os.path.dirname(__file__), '..', 'data', 'table.csv')\n"
    ),
    "mylib/alpha.py": (
        "FACTOR = 2\n\n\ndef scale(x):\n    return FACTOR * x\n\n\ndef unused():\n    return 0\n"
    ),
    "mylib/beta.py": "def name():\n    return 'beta'\n",
    "data/table.csv": "a,b\n1,2\n",
    "docs/conf.py": CONF,
    "docs/index.rst": "Tiny\n====\n\n.. toctree::\n\n   auto_examples/index\n",
    "docs/examples/README.rst": "Examples\n========\n",
    "docs/examples/plot_a_alpha.py": example_source(
        "Alpha", 'import mylib.alpha\n\nprint("alpha", mylib.alpha.scale(21))\n'
    ),
    "docs/examples/plot_b_beta.py": example_source(
        "Beta", 'from mylib import beta\n\nprint("beta", beta.name())\n'
    ),
    "docs/examples/plot_c_data.py": example_source(
        "Data",
        "from mylib import DATA\n\nwith open(DATA) as f:\n"
        '    print("rows", len(f.read().splitlines()))\n',
    ),
    "docs/examples/plot_d_dist.py": example_source(
        "Dist", 'import fakedist\n\nprint("dist", fakedist.VALUE)\n'
    ),
    "docs/examples/plot_e_figure.py": example_source(
        "Figure",
        'import matplotlib\nmatplotlib.use("agg")\nimport matplotlib.pyplot as plt\n\n'
        "plt.plot([1, 3, 2])\nplt.title('figure')\n",
    ),
}
ALL = ["plot_a_alpha.py", "plot_b_beta.py", "plot_c_data.py", "plot_d_dist.py", "plot_e_figure.py"]


class Project:
    """The tiny project's pristine tree, the shared cache and fake site, and its builds."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.pristine = root / "pristine"
        self.cache = root / "cache"
        self.site = root / "site"
        self.count = 0
        #: Variables every build of this project gets.
        self.env: dict[str, str] = {}
        for relative, text in FILES.items():
            self.write(relative, text)
        self.set_dist_version("1.0")

    def write(self, relative: str, text: str) -> None:
        path = self.pristine / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text) if relative.endswith(".toml") else text, "utf-8")

    def set_dist_version(self, version: str) -> None:
        shutil.rmtree(self.site, ignore_errors=True)
        info = self.site / f"fakedist-{version}.dist-info"
        info.mkdir(parents=True)
        (self.site / "fakedist.py").write_text("VALUE = 7\n", "utf-8")
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: fakedist\nVersion: {version}\n", "utf-8"
        )
        (info / "top_level.txt").write_text("fakedist\n", "utf-8")

    def build(self, *args: str, env: dict[str, str] | None = None) -> Build:
        """Copy the project into a new folder (next to the cache) and build it."""
        self.count += 1
        copy = self.root / f"build{self.count}"
        shutil.copytree(self.pristine, copy / "proj")
        return self._build(copy, args, env)

    def build_again(self, *args: str, env: dict[str, str] | None = None) -> Build:
        """Build the last copy again, in place, as a developer's checkout is: what the
        builds generated in it stays, the pristine tree's files (edits since) are copied
        over it."""
        copy = self.root / f"build{self.count}"
        shutil.copytree(self.pristine, copy / "proj", dirs_exist_ok=True)
        return self._build(copy, args, env)

    def built_then_beta_edited(self) -> tuple[Build, Build]:
        """Build, edit ``mylib/beta.py`` and build a fresh copy: the second build runs
        ``plot_b_beta.py``, the one example importing it, and restores the others."""
        first = self.build()
        assert first.returncode == 0, first.output
        self.write("mylib/beta.py", "def name():\n    return 'beta two'\n")
        second = self.build()
        assert second.returncode == 0, second.output
        assert second.executed() == {"plot_b_beta.py"}, second.records
        assert second.cached() == set(ALL) - {"plot_b_beta.py"}, second.records
        return first, second

    def shards_then_merge(self, name: str) -> Build:
        """Two shard builds and their merge in a fresh copy (folder ``name``), as the CI
        jobs run them, with the shared cache."""
        require_slow()
        proj = self.root / name / "proj"
        shutil.copytree(self.pristine, proj)
        env = {k: v for k, v in os.environ.items() if not k.startswith("DOCSACCEL")}
        env.update(FAKE_SITE=str(self.site), MPLBACKEND="agg", DOCSACCEL_CACHE=str(self.cache))
        env.update(self.env)
        artifacts = self.root / name / "artifacts"

        def docsaccel(*args: str) -> None:
            done = subprocess.run(
                [sys.executable, "-m", "docsaccel.cli", *args, "--docs", "docs"],
                cwd=proj, env=env, capture_output=True, text=True, timeout=300, check=False,
            )  # fmt: skip
            assert done.returncode == 0, done.stdout + done.stderr

        for index in range(2):
            shard = f"{artifacts}/docs-shard-{index}"
            docsaccel("shard-build", "--shards", "2", "--index", str(index), "--artifact", shard)
        docsaccel("shard-merge", str(artifacts))
        report = proj / "docs" / "_build" / "html" / "docsaccel" / "report.json"
        return Build(0, "", proj / "docs", report.parent.parent)

    def _build(self, copy: Path, args: tuple[str, ...], env: dict[str, str] | None) -> Build:
        docs = copy / "proj" / "docs"
        outdir = copy / "html"
        require_slow()
        environment = child_env(
            {"FAKE_SITE": str(self.site), "MPLBACKEND": "agg", **self.env, **(env or {})}
        )
        done = build_server.run(
            [sys.executable, "-m", "sphinx", "-b", "html", "-q", *args, str(docs), str(outdir)],
            env=environment,
            timeout=300,
        )
        return Build(done.returncode, done.stdout + done.stderr, docs, outdir)


class Build:
    def __init__(self, returncode: int, output: str, docs: Path, outdir: Path) -> None:
        self.returncode, self.output, self.docs, self.outdir = returncode, output, docs, outdir
        self.report = load_report(layout.report_path(outdir))
        self.records = {r["name"]: r for r in self.report["examples"]}

    def executed(self) -> set[str]:
        return {
            name
            for name, r in self.records.items()
            if r["pid"] is not None and r["status"] != "cached"
        }

    def cached(self) -> set[str]:
        return {name for name, r in self.records.items() if r["status"] == "cached"}

    def gallery_files(self) -> dict[str, bytes]:
        folder = self.docs / "auto_examples"
        return {
            p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.name.startswith(".")
        }
