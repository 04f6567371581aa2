"""The build server's own process: Sphinx, sphinx-gallery, matplotlib and docsaccel
imported once, then one forked child per ``python -m sphinx`` build asked of it.

Run as a script by :mod:`helpers.build_server`, which owns the protocol's other end and
decides which builds may come here. A request is one JSON line on standard input
(:class:`Request`'s fields); the answer is JSON lines on standard output: the forked
child's ``{"started": pid}``, then ``{"returncode": n}`` or ``{"timeout": true}``; or,
alone, ``{"fresh": why}`` (the build needs an interpreter of its own, which the client
then starts).

Why each reset in :func:`_become_build` is there: a forked child inherits everything
the server holds, where ``python -m sphinx`` would start from nothing. The server does
nothing after its imports but read requests and fork, so what its imports left is what
a fresh interpreter would hold after the same imports; the rest (environment, folder,
standard streams, ``sys.path``, ``__main__``, signals, import caches) is made again
from the request (``random`` and numpy reseed themselves at a fork). Single-threaded on
purpose: a fork copies one thread only.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import io
import json
import os
import posix
import resource
import runpy
import select
import signal
import sys
import threading
import traceback
import types
from dataclasses import dataclass

#: The interpreter's own run of the exit handlers, as ``Py_FinalizeEx`` calls it: a build
#: may replace the module's name (docsaccel does, for an example calling it mid-build).
_RUN_EXIT_HANDLERS = atexit._run_exitfuncs

#: What the builds import anyway, at about one second of start-up per process. Each
#: reads no request-dependent variable at import but those :mod:`helpers.build_server`
#: keys its servers by; ``docsaccel.video`` is left out (its scraper keeps the time of
#: its import).
PRELOADED = (
    "numpy",
    "matplotlib",
    "matplotlib.pyplot",
    "sphinx.cmd.build",
    "sphinx.application",
    "sphinx.builders.html",
    "sphinx_gallery.gen_gallery",
    "docsaccel.gallery",
)
#: ``sys.path[0]`` is this script's folder, which no build has.
_BASE_PATH_START = 1


@dataclass(frozen=True)
class Request:
    """One build: ``argv`` as for ``subprocess.run`` (``[python, "-m", "sphinx", ...]``)."""

    argv: list[str]
    cwd: str
    env: dict[str, str]
    stdout: str
    stderr: str
    timeout: float | None = None
    address_space: int | None = None


def _python_path(env: dict[str, str]) -> list[str]:
    return [entry for entry in env.get("PYTHONPATH", "").split(os.pathsep) if entry]


# Taken before any import, as the interpreter set them up for this process.
_SERVER_PATH = _python_path(dict(os.environ))
_BASE_PATH = sys.path[_BASE_PATH_START + len(_SERVER_PATH) :]
_STDIO = {
    name: (getattr(sys, name).encoding, getattr(sys, name).errors)
    for name in ("stdin", "stdout", "stderr")
}
_UNBUFFERED = sys.stdout.write_through


def _shadowed(path: list[str]) -> str | None:
    """A preloaded top-level package that a folder the build puts first would replace."""
    loaded = {name for name in sys.modules if "." not in name}
    for folder in path:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for entry in names:
            stem = entry.split(".")[0]
            if stem in loaded and getattr(sys.modules[stem], "__file__", None):
                return f"{os.path.join(folder, entry)} would replace {stem}"
    return None


def _reset_signals() -> None:
    # As a fresh interpreter sets them: Python's SIGINT handler, SIGPIPE and SIGXFSZ
    # ignored, every other signal at its default, none blocked.
    for number in signal.valid_signals():
        if number in (signal.SIGKILL, signal.SIGSTOP):
            continue
        handler = signal.SIG_DFL
        if number == signal.SIGINT:
            handler = signal.default_int_handler
        elif number in (signal.SIGPIPE, signal.SIGXFSZ):
            handler = signal.SIG_IGN
        with contextlib.suppress(OSError, ValueError):
            signal.signal(number, handler)
    signal.pthread_sigmask(signal.SIG_SETMASK, set())


def _redirect(request: Request) -> None:
    stdin = os.open(os.devnull, os.O_RDONLY)
    stdout = os.open(request.stdout, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    if request.stderr == request.stdout:
        stderr = os.dup(stdout)
    else:
        stderr = os.open(request.stderr, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    for fd, target in ((stdin, 0), (stdout, 1), (stderr, 2)):
        os.dup2(fd, target)
        os.close(fd)
    # Python's -u (PYTHONUNBUFFERED, part of the server's key) shows in its stdout.
    unbuffered = _UNBUFFERED
    streams = {}
    for fd, name in enumerate(("stdin", "stdout", "stderr")):
        encoding, errors = _STDIO[name]
        raw = io.FileIO(fd, "rb" if fd == 0 else "wb", closefd=False)
        binary = (
            raw if unbuffered and fd else (io.BufferedReader if fd == 0 else io.BufferedWriter)(raw)
        )
        streams[name] = io.TextIOWrapper(
            binary,
            encoding=encoding,
            errors=errors,
            line_buffering=not unbuffered and (fd == 2 or (fd == 1 and os.isatty(1))),
            write_through=bool(unbuffered and fd),
        )
    for name, stream in streams.items():
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def _become_build(request: Request, protocol: tuple[int, int]) -> None:
    """Make this forked child the process ``python -m sphinx ARGS`` would have started."""
    for fd in protocol:
        os.close(fd)
    _reset_signals()
    os.environ.clear()
    os.environ.update(request.env)
    os.chdir(request.cwd)
    if request.address_space is not None:
        resource.setrlimit(resource.RLIMIT_AS, (request.address_space, request.address_space))
    _redirect(request)
    sys.path[:] = [os.getcwd(), *_python_path(request.env), *_BASE_PATH]
    sys.path_importer_cache.clear()
    importlib.invalidate_caches()
    sys.argv = ["-m", *request.argv[3:]]
    sys.orig_argv = list(request.argv)
    main = sys.modules["__main__"] = types.ModuleType("__main__")
    if "__mp_main__" in sys.modules:
        # multiprocessing names __main__ so when imported; here it named the server's.
        sys.modules["__mp_main__"] = main


def _exit_code(error: SystemExit) -> int:
    code = error.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _run_build(request: Request, protocol: tuple[int, int]) -> None:
    """In the forked child: the build, then an interpreter's way out. Never returns."""
    code = 1
    try:
        try:
            _become_build(request, protocol)
        except BaseException:
            # Before the build's streams, or while setting them: to the server's log.
            os.write(2, traceback.format_exc().encode())
            raise
        try:
            runpy._run_module_as_main("sphinx", alter_argv=True)  # type: ignore[attr-defined]
            code = 0
        except SystemExit as error:
            code = _exit_code(error)
        except BaseException as error:
            # As the interpreter does for an exception nothing caught (PyErr_Print): what
            # the build's exit handlers read to tell a crash from another exit.
            sys.last_type, sys.last_value, sys.last_traceback = sys.exc_info()
            if sys.version_info >= (3, 12):
                sys.last_exc = error
            sys.excepthook(*sys.exc_info())
            code = 1
        # Py_FinalizeEx's order: wait for the threads, the exit handlers, the streams.
        threading._shutdown()  # type: ignore[attr-defined]
        _RUN_EXIT_HANDLERS()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                code = 120
    finally:
        # posix._exit, not os._exit: a build may have wrapped the latter.
        posix._exit(code & 0xFF)


def _wait(pid: int, timeout: float | None) -> dict:
    handle = os.pidfd_open(pid)
    try:
        ready, _, _ = select.select([handle], [], [], timeout)
        if not ready:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return {"timeout": True}
        _, status = os.waitpid(pid, 0)
        return {"returncode": os.waitstatus_to_exitcode(status)}
    finally:
        os.close(handle)


def serve() -> None:
    # The protocol moves off fds 0 and 1, which then hold nothing, so that nothing an
    # import prints can reach the client as an answer.
    requests_fd, answers_fd = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    for name in PRELOADED:
        importlib.import_module(name)
    requests = os.fdopen(requests_fd, "r", encoding="utf-8")
    answers = os.fdopen(answers_fd, "w", encoding="utf-8")
    answers.write(json.dumps({"ready": os.getpid()}) + "\n")
    answers.flush()
    for line in requests:
        request = Request(**json.loads(line))
        shadowed = _shadowed([request.cwd, *_python_path(request.env)])
        if shadowed is not None:
            answer = {"fresh": shadowed}
        else:
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                _run_build(request, (requests_fd, answers_fd))
            # Said first, so that a client interrupted while waiting can end the build.
            answers.write(json.dumps({"started": pid}) + "\n")
            answers.flush()
            answer = _wait(pid, request.timeout)
        answers.write(json.dumps(answer) + "\n")
        answers.flush()


if __name__ == "__main__":
    serve()
