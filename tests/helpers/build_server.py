"""Run ``python -m sphinx`` builds as forks of a process that has imported Sphinx,
sphinx-gallery, matplotlib and docsaccel once, instead of as fresh interpreters.

Most test builds spend their first second importing; forked from a server that did it,
they start at once (:mod:`helpers.build_server_main` is the server's side). A server is
started lazily, one per set of the variables its imports read
(:data:`STARTUP_PREFIXES`, :data:`STARTUP_NAMES`), and stopped at the end of the test
session. Tests whose subject is the process itself (signals, exits, a fresh
interpreter) start their builds with ``subprocess.Popen`` as before; :func:`run` is for
builds run to completion.

``FRESH_TEST_BUILDS=1`` makes every build a fresh process again (outside docsaccel's
own ``DOCSACCEL_`` names, which a build warns about when it does not know them).

Example::

    done = run([sys.executable, "-m", "sphinx", "-b", "html", src, out], env=child_env())
    done.returncode, done.stdout, done.stderr
"""

from __future__ import annotations

import contextlib
import json
import locale
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path

from helpers.build_server_main import Request

#: Set to 1: every build a fresh ``python -m sphinx`` process.
FRESH_ENV = "FRESH_TEST_BUILDS"
#: Variables read while Python starts or while the server's modules import (the
#: interpreter's, locale's, matplotlib's, MuJoCo's); builds differing in any of them get
#: different servers. ``PYTHONPATH`` is not one: the server's child sets ``sys.path``.
STARTUP_PREFIXES = ("PYTHON", "MPL", "MATPLOTLIB", "LC_", "XDG_", "SPHINX", "MUJOCO", "PYOPENGL")
STARTUP_NAMES = (
    "HOME",
    "LANG",
    "LANGUAGE",
    "TZ",
    "COVERAGE_PROCESS_START",
    "DOCSACCEL_CACHE_CHILD",
)
_MAIN = Path(__file__).with_name("build_server_main.py")
_SESSION_PATH = os.environ.get("PYTHONPATH", "")


def fresh_builds() -> bool:
    return os.environ.get(FRESH_ENV, "").strip() not in ("", "0")


def _startup_key(env: Mapping[str, str], cwd: str) -> tuple:
    names = sorted(
        name
        for name in env
        if name != "PYTHONPATH" and (name.startswith(STARTUP_PREFIXES) or name in STARTUP_NAMES)
    )
    # matplotlib reads a matplotlibrc in the working folder when it is imported.
    rc = os.path.join(cwd, "matplotlibrc")
    return (tuple((name, env[name]) for name in names), rc if os.path.exists(rc) else None)


class BuildServer:
    """One server process and the files its builds' output goes to."""

    def __init__(self, env: Mapping[str, str], cwd: str, folder: Path) -> None:
        self.folder = folder
        server_env = dict(env)
        server_env.pop("PYTHONPATH", None)
        if _SESSION_PATH:
            server_env["PYTHONPATH"] = _SESSION_PATH
        with (folder / "server.log").open("w") as log:
            self.process = subprocess.Popen(
                [sys.executable, str(_MAIN)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                env=server_env,
                cwd=cwd,
                text=True,
            )
        self.child: int | None = None
        self._answer()  # ready

    def _answer(self) -> dict:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            log = (self.folder / "server.log").read_text(errors="replace")
            raise RuntimeError(f"{_MAIN.name}: the build server ended: {log[-2000:]}")
        return json.loads(line)

    def build(self, request: Request) -> dict:
        """The server's answer to ``request`` (its exit code, a timeout, or ``fresh``)."""
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(asdict(request)) + "\n")
        self.process.stdin.flush()
        answer = self._answer()
        if "started" not in answer:
            return answer
        self.child = answer["started"]
        answer = self._answer()
        self.child = None
        return answer

    def stop(self) -> None:
        if self.child is not None:  # interrupted while a build ran
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.child, signal.SIGKILL)
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


_servers: dict[tuple, BuildServer] = {}
_folder: Path | None = None


def _output_folder() -> Path:
    global _folder
    if _folder is None:
        _folder = Path(tempfile.mkdtemp(prefix="docsaccel-build-server-"))
    return _folder


def stop_all() -> None:
    """Stop every server this process started (the end of the test session)."""
    global _folder
    while _servers:
        _, server = _servers.popitem()
        server.stop()
    if _folder is not None:
        shutil.rmtree(_folder, ignore_errors=True)
        _folder = None


def _decoded(path: Path) -> str:
    # As subprocess.run(text=True) reads a pipe: the locale's encoding, universal newlines.
    data = path.read_bytes().decode(locale.getpreferredencoding(False))
    return data.replace("\r\n", "\n").replace("\r", "\n")


def _routable(argv: Sequence[str], env: Mapping[str, str]) -> bool:
    if list(argv[:3]) != [sys.executable, "-m", "sphinx"]:
        return False
    # The server's packages come from the session's path; a build's own folders go first.
    path = env.get("PYTHONPATH", "")
    return not _SESSION_PATH or path == _SESSION_PATH or path.endswith(os.pathsep + _SESSION_PATH)


def run(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: str | os.PathLike[str] | None = None,
    timeout: float | None = None,
    address_space: int | None = None,
) -> subprocess.CompletedProcess[str]:
    """``subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True,
    timeout=timeout)`` for ``[sys.executable, "-m", "sphinx", ...]``, forked from a build
    server unless :data:`FRESH_ENV` is set (any other command: a fresh process).
    ``address_space``: ``RLIMIT_AS`` of the build's process, in bytes."""
    argv = [str(part) for part in argv]
    where = os.fspath(cwd) if cwd is not None else os.getcwd()
    if fresh_builds() or not _routable(argv, env):
        return _fresh(argv, env, where, timeout, address_space)
    key = _startup_key(env, where)
    server = _servers.get(key)
    if server is None or server.process.poll() is not None:
        server = _servers[key] = BuildServer(env, where, _output_folder())
    stdout, stderr = server.folder / "stdout", server.folder / "stderr"
    request = Request(argv, where, dict(env), str(stdout), str(stderr), timeout, address_space)
    try:
        answer = server.build(request)
    except BaseException:
        # Interrupted (a test's timeout): the server's state is unknown, start anew.
        _servers.pop(key, None)
        server.stop()
        raise
    if "fresh" in answer:
        return _fresh(argv, env, where, timeout, address_space)
    out, err = _decoded(stdout), _decoded(stderr)
    if answer.get("timeout"):
        raise subprocess.TimeoutExpired(argv, timeout or 0, output=out, stderr=err)
    return subprocess.CompletedProcess(argv, answer["returncode"], out, err)


def _fresh(
    argv: list[str],
    env: Mapping[str, str],
    cwd: str,
    timeout: float | None,
    address_space: int | None,
) -> subprocess.CompletedProcess[str]:
    limit: Callable[[], None] | None = None
    if address_space is not None:

        def limit() -> None:
            resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))

    return subprocess.run(
        argv,
        env=dict(env),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        preexec_fn=limit,
    )
