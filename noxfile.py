"""nox sessions: what CI runs. Install pins come from constraints.txt, as in the Makefile.

- ``tests``: the test suite.
- ``docs``: the CI docs build: fast path on, budgets enforced in fail mode, report written
  under ``docs/_build/html/docsaccel/``.
- ``lint``: ruff.

``make docs-fast`` runs the ``docs`` session in the project's ``.venv``
(``nox --no-venv --no-install``), so both paths build the same way.
"""

from __future__ import annotations

import nox

nox.options.sessions = ["tests", "docs", "lint"]
nox.options.reuse_venv = "yes"

CONSTRAINTS = ("-c", "constraints.txt")
DOCS_OUT = "docs/_build/html"


def install(session: nox.Session, extras: str) -> None:
    session.install(*CONSTRAINTS, "-e", f".[{extras}]")


@nox.session
def tests(session: nox.Session) -> None:
    install(session, "all")
    session.run("pytest", *session.posargs)


@nox.session
def docs(session: nox.Session) -> None:
    install(session, "mujoco,torchrl,docs,report")
    env = {"DOCSACCEL_FAST": "1", "DOCSACCEL_ON_OVERRUN": "fail"}
    session.run("sphinx-build", "-b", "html", "-W", "docs", DOCS_OUT, *session.posargs, env=env)


@nox.session
def lint(session: nox.Session) -> None:
    session.install(*CONSTRAINTS, "ruff")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
