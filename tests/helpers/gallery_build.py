"""Build a tiny real Sphinx gallery in a temporary folder, for the gallery plugin tests.

The examples and ``conf.py`` live in ``tests/gallery_fixtures``; a test picks the examples
it needs and adds ``conf.py`` lines. Builds run ``python -m sphinx`` in a process of
their own (:mod:`helpers.build_server`): sphinx-gallery caches modules, so builds in the
test process would interfere.

Example::

    src = make_project(tmp_path, ["plot_quick.py"], budgets='default = "1m"\\n')
    built = build(src)
    built.report["examples"][0]["status"]   # 'ok'
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from docsaccel import layout
from docsaccel.contract import CI_ENV
from docsaccel.records import read_records
from docsaccel.schema import STATUSES, load_report, validate_record
from docsaccel.settings import environment_variables
from helpers import build_server
from helpers.slow import require_slow

FIXTURES = Path(__file__).parents[1] / "gallery_fixtures"
#: What a test build must not inherit from the shell that runs the tests.
SCRUBBED = (*environment_variables(), CI_ENV)


@dataclass
class Built:
    returncode: int
    output: str
    outdir: Path

    @property
    def report_path(self) -> Path:
        return layout.report_path(self.outdir)

    @property
    def report(self) -> dict:
        return load_report(self.report_path)

    def record(self, name: str) -> dict:
        return next(r for r in self.report["examples"] if r["name"] == name)

    def page(self, name: str) -> str:
        return (self.outdir / "auto_examples" / f"{Path(name).stem}.html").read_text("utf-8")


def make_project(
    tmp_path: Path, examples: list[str], conf: str = "", budgets: str | None = None
) -> Path:
    src = tmp_path / "src"
    (src / "examples").mkdir(parents=True)
    for name in ("conf.py", "index.rst"):
        shutil.copy(FIXTURES / name, src / name)
    for name in ["README.rst", *examples]:
        shutil.copy(FIXTURES / "examples" / name, src / "examples" / name)
    if budgets is not None:
        (src / "budgets.toml").write_text(budgets, encoding="utf-8")
        conf = f'docsaccel_budgets = "budgets.toml"\n{conf}'
    with (src / "conf.py").open("a", encoding="utf-8") as stream:
        stream.write(conf)
    return src


def printing_example(stem: str, where: str) -> str:
    """An example titled ``<stem> of <where>`` that prints ``printed by <where>``."""
    title = f"{stem} of {where}"
    return f'"""\n{title}\n{"=" * len(title)}\n"""\n\nprint("printed by {where}")\n'


#: Two galleries holding an example of one file name, and the folders they build into.
SAME_NAME_GALLERIES = {"examples": "auto_examples", "tutorials": "auto_tutorials"}
#: The ``conf.py`` of :func:`make_same_name_galleries`' project, to which a test adds its
#: lines; sphinx-gallery warns about the shared name unless it adds :data:`SUPPRESS_SAME_NAMES`.
SAME_NAME_CONF = """
extensions = ["sphinx_gallery.gen_gallery", "docsaccel.gallery"]
exclude_patterns = ["_build", "examples", "tutorials"]
sphinx_gallery_conf = {
    "examples_dirs": ["examples", "tutorials"],
    "gallery_dirs": ["auto_examples", "auto_tutorials"],
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "show_memory": False,
}
"""
SUPPRESS_SAME_NAMES = 'suppress_warnings = ["sphinx_gallery.duplicate_filename"]\n'


def make_same_name_galleries(src: Path, name: str, conf: str) -> Path:
    """A project ``src`` (with ``conf.py`` text ``conf``) of two galleries, ``examples/``
    and ``tutorials/``, each holding an example ``name`` that prints which gallery it is
    in, under a title naming its gallery."""
    stem = name.removeprefix("plot_").removesuffix(".py").capitalize()
    for gallery in SAME_NAME_GALLERIES:
        (src / gallery).mkdir(parents=True)
        (src / gallery / "README.rst").write_text(f"{gallery}\n{'=' * len(gallery)}\n")
        (src / gallery / name).write_text(printing_example(stem, gallery), encoding="utf-8")
    (src / "conf.py").write_text(conf, encoding="utf-8")
    toctree = "".join(f"   {folder}/index\n" for folder in SAME_NAME_GALLERIES.values())
    (src / "index.rst").write_text(f"Same names\n==========\n\n.. toctree::\n\n{toctree}")
    return src


def make_doc_layout(root: Path, gallery_dirs: list[str], conf: str = "", **gallery: object) -> Path:
    """A project laid out as matplotlib's docs are: ``conf.py`` in ``root/doc``, the
    galleries ``../examples`` and ``../tutorials`` beside it (their files are the
    caller's), built into ``gallery_dirs``, with sphinx-gallery's JUnit XML; ``gallery``
    adds to ``sphinx_gallery_conf``, ``conf`` to ``conf.py``. Returns ``doc``."""
    settings = {
        "examples_dirs": ["../examples", "../tutorials"],
        "gallery_dirs": gallery_dirs,
        "filename_pattern": r"/plot_",
        "download_all_examples": False,
        "show_memory": False,
        "junit": "junit.xml",
        **gallery,
    }
    doc = root / "doc"
    doc.mkdir()
    (doc / "conf.py").write_text(
        'extensions = ["sphinx_gallery.gen_gallery", "docsaccel.gallery"]\n'
        'exclude_patterns = ["_build"]\n'
        f"sphinx_gallery_conf = {settings!r}\n{conf}",
        encoding="utf-8",
    )
    toctree = "".join(f"   {folder}/index\n" for folder in gallery_dirs)
    (doc / "index.rst").write_text(f"Docs\n====\n\n.. toctree::\n\n{toctree}", encoding="utf-8")
    return doc


def child_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """This process's environment without docsaccel's variables and ``CI``, plus ``env``."""
    child = {k: v for k, v in os.environ.items() if k not in SCRUBBED}
    child.update(env or {})
    return child


def sphinx_command(src: Path, outdir: Path, *args: str, quiet: bool = True) -> list[str]:
    quiet_args = ["-q"] if quiet else []
    return [sys.executable, "-m", "sphinx", "-b", "html", *quiet_args, *args, str(src), str(outdir)]


def run_cli(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``docsaccel ARGS`` as a CI step runs it: a process of its own, output captured;
    ``cwd``: the folder it runs in (this process's by default)."""
    return subprocess.run(
        [sys.executable, "-m", "docsaccel.cli", *args],
        capture_output=True,
        text=True,
        check=False,
        env=child_env(env),
        cwd=cwd,
    )


def build(
    src: Path,
    *args: str,
    env: dict[str, str] | None = None,
    outdir: Path | None = None,
    address_space: int | None = None,
    quiet: bool = True,
    cwd: Path | None = None,
) -> Built:
    """Build ``src``; ``address_space``: the most virtual memory (bytes) each process of
    the build may map (``RLIMIT_AS``), so a test of memory limits cannot take the machine's
    memory whatever goes wrong; ``quiet=False``: the log keeps the progress lines;
    ``cwd``: the folder the build runs in (``make html`` runs in the source folder)."""
    require_slow()
    outdir = outdir or src / "_build" / "html"
    done = build_server.run(
        sphinx_command(src, outdir, *args, quiet=quiet),
        env=child_env(env),
        cwd=cwd,
        timeout=300,
        address_space=address_space,
    )
    return Built(done.returncode, done.stdout + done.stderr, outdir)


def assert_records_complete(built: Built, names: list[str]) -> None:
    """The build recorded exactly ``names``, each whole and valid, on disk and in the report."""
    report = built.report
    assert sorted(r["name"] for r in report["examples"]) == sorted(names)
    records_dir = layout.records_dir(built.outdir)
    on_disk = read_records(records_dir)
    assert sorted(r["name"] for r in on_disk.values()) == sorted(names)
    assert all(record["status"] in STATUSES for record in on_disk.values())
    # Every journal line is a whole, valid record; no file was left half-written.
    for journal in records_dir.glob("journal-*.jsonl"):
        for line in journal.read_text("utf-8").splitlines():
            validate_record(json.loads(line), journal)
    assert not list(records_dir.glob("*.tmp")), "a record was left half-written"
