"""nox sessions: what CI runs. Install pins come from constraints.txt, as in the Makefile.

- ``tests``: the test suite.
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

import nox

nox.options.sessions = ["tests", "docs", "lint"]
nox.options.reuse_venv = "yes"

CONSTRAINTS = ("-c", "constraints.txt")
DOCS_OUT = "docs/_build/html"
DOCS_EXTRAS = "mujoco,torchrl,docs,report"
# An absolute path: the shard sessions build copies of the project in other folders.
DOCS_CACHE = os.path.abspath(os.environ.get("DOCSACCEL_CACHE") or ".docsaccel-cache")
DOCS_ENV = {"DOCSACCEL_FAST": "1", "DOCSACCEL_ON_OVERRUN": "fail", "DOCSACCEL_CACHE": DOCS_CACHE}


def install(session: nox.Session, extras: str) -> None:
    session.install(*CONSTRAINTS, "-e", f".[{extras}]")


@nox.session
def tests(session: nox.Session) -> None:
    install(session, "all")
    session.run("pytest", *session.posargs)


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
