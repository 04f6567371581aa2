"""nox sessions: what CI runs. Install pins come from constraints.txt, as in the Makefile.

- ``tests-3.11``, ``tests-3.12``, ``tests-3.13``: the test suite on each Python the project
  supports (``-- -m "not slow"``: the fast lane). torch's CPU build installs only on
  3.11, so elsewhere the torchrl extra is left out and its tests skip (any other torch
  build would be the multi-GB CUDA one).
- ``compat``: one session per (Sphinx, sphinx-gallery) pair of :data:`COMPAT_PAIRS`, on
  Python 3.11 with every other pin: the plugin's real-build tests (:data:`COMPAT_TESTS`),
  then ``tools/sg_full_suite.py``, sphinx-gallery's own test suite with and without
  docsaccel (no difference allowed). ``pyproject.toml`` allows exactly the Sphinx and
  sphinx-gallery releases these pairs cover.
- ``docs``: the CI docs build: fast path on, budgets enforced in fail mode, report written
  under ``docs/_build/html/docsaccel/``.
- ``lint``: ruff.
- ``docs_shard -- --shards N --index I [--history FILE]``: the CI docs build of one shard:
  executes only its examples and keeps their gallery outputs and records in
  ``docs/_build/shard`` (the artifact of the job).
- ``docs_merge -- FOLDER``: builds the site from the shard artifacts under ``FOLDER``
  without executing any example again; one report of all the shards' records.

The docs sessions build the same way: fast path on, budgets in fail mode, ``-W``, and the
example cache in ``.docsaccel-cache`` (``DOCSACCEL_CACHE`` from the environment wins):
a tutorial whose inputs did not change since it last ran is restored, not run. The
``docs`` and ``docs_merge`` builds also restore and save Sphinx's state there, so they read
and write only the pages a change affects (``DOCSACCEL_CACHE_SPHINX=0`` turns that off);
a shard build does not (its pages are not the site's).

``make docs-fast`` runs the ``docs`` session in the project's ``.venv``
(``nox --no-venv --no-install``), so both paths build the same way.
"""

from __future__ import annotations

import os
import tarfile
import tempfile
from pathlib import Path

import nox

nox.options.sessions = ["tests", "docs", "lint"]
nox.options.reuse_venv = "yes"
# A Python the machine lacks is an error, never a download (CI reaches no such site).
nox.options.download_python = "never"
nox.options.error_on_missing_interpreters = True

CONSTRAINTS = ("-c", "constraints.txt")
#: The Pythons of the test matrix, as ``requires-python`` says.
PYTHONS = ["3.11", "3.12", "3.13"]
#: Where torch's CPU build installs (see constraints.txt): the torchrl extra only there.
TORCH_PYTHONS = ("3.11",)
#: ``(Sphinx, sphinx-gallery)``: every Sphinx minor release from 7.4 and every
#: sphinx-gallery one from 0.17, each at least once, newest with oldest at both ends.
#: The pins (Sphinx 9.0.4, sphinx-gallery 0.22.1) are the ``tests`` sessions'.
COMPAT_PAIRS = [
    ("7.4.7", "0.17.1"),
    ("8.1.3", "0.18.0"),
    ("8.0.2", "0.19.0"),
    ("8.2.3", "0.20.0"),
    ("9.0.4", "0.21.0"),
    ("7.4.7", "0.22.1"),
]
# session.create_tmp() points TMPDIR into .nox, a folder the example cache never counts as
# the project's: the tests' projects (in pytest's temporary folder) must not land there.
TEST_ENV = {"TMPDIR": tempfile.gettempdir()}
#: The tests that build galleries with the plugin, and the units of sphinx-gallery access.
COMPAT_TESTS = [
    "tests/test_gallery_units.py",
    "tests/test_gallery.py",
    "tests/test_sg_transparency.py",
    "tests/test_gallery_layouts.py",
    "tests/test_gallery_interrupt.py",
    "tests/test_build_safety.py",
    "tests/test_hostile_examples.py",
    "tests/test_progress.py",
    "tests/test_cache_build.py",
    "tests/test_shard.py",
    "tests/test_shard_merge.py",
    # The merge's JUnit XML and sg_execution_times.rst list the shards' times.
    "tests/test_shard_junit.py",
    # suppress_warnings silences sphinx-gallery's warning of same-named examples.
    "tests/test_gallery_same_names.py",
    # -W (with --keep-going before Sphinx 8.1: another attribute) fails the report.
    "tests/test_gate_sphinx_failure.py",
    "tests/test_cache_listing_machinery.py",
    "tests/test_recommender.py",
    "tests/test_sg_compat_guard.py",
    # What Sphinx derives from the report page (its copied source, the search index).
    "tests/test_report_page_derived.py",
    # The Sphinx state: on with the Sphinx series it is checked with (restore.CHECKED_SPHINX).
    "tests/test_incremental_build.py",
    "tests/test_incremental_doubt.py",
    "tests/test_incremental_faults.py",
    "tests/test_incremental_off.py",
]
DOCS_OUT = "docs/_build/html"
DOCS_EXTRAS = "mujoco,torchrl,docs,report"
# An absolute path: the shard sessions build copies of the project in other folders.
DOCS_CACHE = os.path.abspath(os.environ.get("DOCSACCEL_CACHE") or ".docsaccel-cache")
DOCS_ENV = {"DOCSACCEL_FAST": "1", "DOCSACCEL_ON_OVERRUN": "fail", "DOCSACCEL_CACHE": DOCS_CACHE}


def install(session: nox.Session, extras: str) -> None:
    session.install(*CONSTRAINTS, "-e", f".[{extras}]")


@nox.session(python=PYTHONS)
def tests(session: nox.Session) -> None:
    """``-- PYTEST_ARGS``: the suite, or what the arguments select (``-m "not slow"``)."""
    if session.python in TORCH_PYTHONS:
        install(session, "all")
    else:
        install(session, "mujoco,docs,report,test,dev")
    session.run("pytest", *session.posargs)


@nox.session(python="3.11")
@nox.parametrize(
    ("sphinx", "sphinx_gallery"),
    COMPAT_PAIRS,
    ids=[f"sphinx{s}-sg{g}" for s, g in COMPAT_PAIRS],
)
def compat(session: nox.Session, sphinx: str, sphinx_gallery: str) -> None:
    """``-- PYTEST_ARGS``: the plugin's real builds and sphinx-gallery's own suite on one pair."""
    tmp = Path(session.create_tmp())
    pins = _constraints_without(tmp, ("sphinx", "sphinx-gallery"))
    session.install("-c", str(pins), "-e", ".[mujoco,docs,report,test]")
    session.install("-c", str(pins), f"sphinx=={sphinx}", f"sphinx-gallery=={sphinx_gallery}")
    session.run(
        "pytest", "-p", "no:cacheprovider", *(session.posargs or COMPAT_TESTS), env=TEST_ENV
    )
    sdists = tmp / "sdist"
    session.run(
        "python", "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
        f"sphinx-gallery=={sphinx_gallery}", "-d", str(sdists),
    )  # fmt: skip
    with tarfile.open(sdists / f"sphinx_gallery-{sphinx_gallery}.tar.gz") as archive:
        archive.extractall(sdists, filter="data")
    deps = tmp / "sg-deps"
    session.run(
        "python", "tools/sg_full_suite.py", "--install-deps", str(deps), "--constraints", str(pins)
    )
    session.run(
        "python", "tools/sg_full_suite.py", str(sdists / f"sphinx_gallery-{sphinx_gallery}"),
        "--extra-path", str(deps), "--workdir", str(tmp / "sg-full"),
    )  # fmt: skip


def _constraints_without(folder: Path, names: tuple[str, ...]) -> Path:
    """constraints.txt without the pins of ``names`` (and torch's, which the pair needs not)."""
    dropped = {*names, "torch", "torchrl", "tensordict"}
    lines = Path("constraints.txt").read_text(encoding="utf-8").splitlines()
    kept = [line for line in lines if line.split("==")[0].strip().lower() not in dropped]
    path = folder / "constraints.txt"
    path.write_text("\n".join(kept) + "\n", encoding="utf-8")
    return path


@nox.session
def docs(session: nox.Session) -> None:
    install(session, DOCS_EXTRAS)
    session.run(
        "sphinx-build", "-b", "html", "-W", "docs", DOCS_OUT, *session.posargs, env=DOCS_ENV
    )


@nox.session
def docs_shard(session: nox.Session) -> None:
    """``-- --shards N --index I [--history FILE]``: execute one shard of the gallery."""
    install(session, DOCS_EXTRAS)
    session.run("docsaccel", "shard-build", "-W", "--docs", "docs", *session.posargs, env=DOCS_ENV)


@nox.session
def docs_merge(session: nox.Session) -> None:
    """``-- FOLDER``: build the site from the shard artifacts under FOLDER."""
    install(session, DOCS_EXTRAS)
    session.run("docsaccel", "shard-merge", "-W", "--docs", "docs", *session.posargs, env=DOCS_ENV)


@nox.session
def docs_local(session: nox.Session) -> None:
    """``-- --shards N [--history FILE]``: every shard in parallel on this machine, merged."""
    install(session, DOCS_EXTRAS)
    session.run("docsaccel", "shard-local", "-W", "--docs", "docs", *session.posargs, env=DOCS_ENV)


@nox.session
def lint(session: nox.Session) -> None:
    session.install(*CONSTRAINTS, "ruff")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
