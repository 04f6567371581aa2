"""Inside a child process of an example: record what it runs, write it for the parent.

The design, in full: the caching guide's *Design* section.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import os
import sys
from collections.abc import Callable
from typing import Any

from docsaccel.cache.children import (
    CHILD_ENV,
    EXITED,
    FORK,
    MULTIPROCESSING,
    RECORD_FORMAT,
    RUNNING,
    SUBPROCESS,
    Children,
    Control,
    Launches,
    encode_seen,
    ensure_hooks,
    file_signature,
    merge_seen,
    read_control,
    start_recording,
)
from docsaccel.cache.recorder import Recorder, Seen
from docsaccel.contract import MULTIPROCESSING_HELPERS, fork_safe_lock, free_locks_in_child
from docsaccel.formats import encode_json, replace_atomically
from docsaccel.intercept import Patch, patch

__all__ = ["after_fork", "before_fork", "leave", "note_launch", "startup"]

#: ``sys.orig_argv`` words of the workers ``multiprocessing`` and loky start afresh.
_WORKERS = ("--multiprocessing-fork", "loky.backend.popen_loky_posix")
#: Where ``multiprocessing`` forks a worker (from its process, or from the fork server).
_FORKING = (
    os.path.join("multiprocessing", "popen_fork.py"),
    os.path.join("multiprocessing", "forkserver.py"),
)
#: Where ``subprocess`` forks a child that runs ``preexec_fn``, then becomes the program
#: (imageio's ffmpeg): no Python child, the program is what counts.
_EXEC_FORK = "_execute_child"


class _Child:
    """This process as a child of an example's process (see the caching guide's design)."""

    def __init__(
        self, control_path: str, control: Control, kind: str, signature: Any = None
    ) -> None:
        self.control_path = control_path
        self.control = control
        self.kind = kind
        self.pid = os.getpid()
        #: The control file's as ``control`` was read (given by a parent that knows it).
        self.signature = signature or file_signature(control_path)
        #: What it saw and started, made by :meth:`begin` (read only while active).
        self.seen = _NOTHING_SEEN
        self.launches = _NO_LAUNCHES
        self.active = False
        self._last: bytes | None = None
        self._path = ""
        self._noted: tuple[int, ...] | None = None
        #: Forked while its parent recorded the example it records (counted there).
        self.forked = False

    def begin(self, forked: bool = False) -> None:
        """Record for the example the control names (nothing between examples);
        ``forked``: just forked, going on with the parent's recording when it was one of
        that example at ``module`` granularity (:meth:`.Recorder.forked`)."""
        self.active = False
        example = self.control.example
        if example is None:
            return
        # At module granularity the record holds what the recording noted (peek); only
        # at function granularity are the stretches of the recording added up here.
        function = self.control.granularity != "module"
        self.seen = Seen() if function else _NOTHING_SEEN
        self.launches, self._last, self._path = Launches(), None, ""
        self.forked = forked
        if not (forked and self.control.granularity == "module" and Recorder.get().forked(example)):
            start_recording(self.control, self.control.granularity, example)
        self._noted = self._mark()
        self.active = True
        if self.kind != MULTIPROCESSING:
            with contextlib.suppress(OSError):
                self._write(RUNNING)

    def flush(self, state: str = RUNNING) -> None:
        """Write the record if the process noted something since the last one."""
        with _LOCK:
            if not self.active:
                return
            mark = self._mark()
            quiet = state == RUNNING or self.kind == MULTIPROCESSING
            if mark is not None and mark == self._noted and quiet:
                # Nothing noted since the last record (a worker sending its next result):
                # it would write what it wrote.
                self.active = state != EXITED
                return
            if mark is None:
                # Only stopping measures the state the functions left: what each stretch
                # of the recording saw is added up, the next one started below.
                merge_seen(self.seen, Recorder.get().stop())
            else:
                self.seen = Recorder.get().peek()  # all it noted since it started
            try:
                self._write(state)
            except OSError:
                pass  # the record stays as it was: the parent finds it incomplete
            finally:
                if state == EXITED:
                    self.active = False
                elif mark is None:
                    control = self.control
                    start_recording(control, control.granularity, str(control.example))
                # The mark before the record was read: what was noted since is written next.
                self._noted = mark

    def _mark(self) -> tuple[int, ...] | None:
        """What changes whenever this process notes something for its record; ``None`` at
        ``function`` granularity, where the functions that ran and the state they left
        change with no such mark."""
        if self.control.granularity != "module":
            return None
        launches = self.launches
        counts = (launches.python, len(launches.not_followed), len(launches.unfollowable))
        return (*Recorder.get().progress(), *counts)

    def _write(self, state: str) -> None:
        record = {
            **RECORD_FORMAT.header(),
            "example": self.control.example,
            "pid": os.getpid(),
            "ppid": os.getppid(),
            "kind": self.kind,
            "forked": self.forked,
            "state": state,
            "command": " ".join(getattr(sys, "orig_argv", sys.argv))[:200],
            "launches": self.launches.to_json(),
            # The caches earlier examples filled are the parent's: it knows them.
            "seen": encode_seen(dataclasses.replace(self.seen, carried_fills={})),
            "module_files": _module_files(self.seen.modules),
        }
        # A worker's state tells its parent nothing (a pool may end it with SIGTERM at any
        # time): one that only exited since its last record writes nothing more.
        compared = dict(record, state=None) if self.kind == MULTIPROCESSING else record
        key = encode_json(compared, None)
        if key != self._last:
            if not self._path:
                # Its own name: the same process may record again (a new image after exec).
                name = f"{os.getpid()}-{os.urandom(6).hex()}.json"
                self._path = os.path.join(self.control.records, name)
            replace_atomically(self._path, encode_json(record, None))
            self._last = key

    def check_control(self) -> None:
        """A new task: record it for the example the parent runs now."""
        signature = file_signature(self.control_path)
        if signature == self.signature:
            return
        self.signature = signature
        control = read_control(self.control_path)
        if control is None or control.epoch == self.control.epoch:
            return
        self.flush(EXITED)  # done with the example it worked for
        self.control = control
        self.begin()


#: What a record of nothing holds (never changed: what is noted goes into new ones).
_NOTHING_SEEN = Seen()
_NO_LAUNCHES = Launches()
_state: _Child | None = None
_helper = False
_patched: set[str] = set()
#: Guards a child's record (one per process), free in every forked child.
_LOCK = fork_safe_lock()
#: What a process forking now records for, taken before the fork, in it
#: (:func:`before_fork`): ``(control, its file, its signature, kind, from the recording
#: process)``. Read in the child, where every object touched costs a copy of its memory.
_forking: tuple[Control, str, Any, str, bool] | None = None


def _module_files(names: set[str]) -> dict[str, str]:
    """``{module: file}`` of the modules (and their packages) loaded here: the parent
    may never load them, and finds them by name."""
    found: dict[str, str] = {}
    for name in names:
        parts = name.split(".")
        for index in range(1, len(parts) + 1):
            part = ".".join(parts[:index])
            module = sys.modules.get(part)
            path = (getattr(module, "__dict__", None) or {}).get("__file__")
            if isinstance(path, str) and path:
                found[part] = os.path.abspath(path)
    return found


def _kind(argv: list[str]) -> str | None:
    """What a process started afresh is: a worker, a plain Python, or a helper (None)."""
    text = " ".join(argv)
    if any(helper in text for helper in MULTIPROCESSING_HELPERS):
        return None
    if any(word in text for word in _WORKERS):
        return MULTIPROCESSING
    return SUBPROCESS


def _forker() -> str:
    """What the process about to fork makes (called in it, before the fork): a
    ``multiprocessing`` worker, a ``subprocess`` child that becomes a program, or a plain
    ``fork``. The nearest forker on the stack decides (the stack of a process a worker
    forks goes on below with the frames that forked the worker)."""
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_filename.endswith(_FORKING):
            return MULTIPROCESSING
        if code.co_name == _EXEC_FORK and code.co_filename.endswith("subprocess.py"):
            return SUBPROCESS
        frame = frame.f_back
    return FORK


def startup() -> None:
    """A Python started afresh by an example (see the caching guide's design)."""
    global _state, _helper
    path = os.environ.get(CHILD_ENV)
    if not path or _state is not None:
        return
    ensure_hooks()
    kind = _kind(list(getattr(sys, "orig_argv", sys.argv)))
    if kind is None:
        _helper = True  # records nothing; what it forks does
        return
    control = read_control(path)
    if control is None:
        return
    _state = _Child(path, control, kind)
    _patch(kind)
    _state.begin()


def before_fork() -> None:
    """In a process about to fork (a recording process, a child, a helper): what the
    child will record for (:data:`_forking`)."""
    global _forking
    _forking = None
    parent = Children._instance
    recording = parent is not None and parent.control is not None and bool(parent.control_path)
    if parent is not None and recording:
        control, path, signature = parent.control, str(parent.control_path), parent.signature
    elif _state is not None:
        control, path, signature = _state.control, _state.control_path, _state.signature
    elif _helper:
        path = os.environ.get(CHILD_ENV) or ""
        control = read_control(path) if path else None
        signature = file_signature(path) if path else None
    else:
        return
    if control is not None:
        kind = MULTIPROCESSING if _helper else _forker()
        if kind == MULTIPROCESSING and "multiprocessing.connection" in sys.modules:
            _patch_connection()  # here once, not in each worker: the workers inherit it
        _forking = (control, path, signature, kind, recording)
        if parent is not None and parent.recording and kind != SUBPROCESS:
            parent.forks += 1


def after_fork() -> None:
    """In a child forked from a recording process, from a child, or from a helper."""
    global _state, _forking
    free_locks_in_child()
    if _state is not None and _state.pid == os.getpid():
        return  # made already, by this same hook registered twice
    forking, _forking, _state = _forking, None, None
    if forking is None:
        return
    control, path, signature, kind, from_recording = forking
    if from_recording:
        Children._instance = None  # a copy of the recording process does not record
    if kind == SUBPROCESS:
        return
    state = _Child(path, control, kind, signature)
    _patch(kind)
    state.begin(forked=True)
    _state = state


def leave() -> None:
    """This process records examples itself now: it is nobody's child any more."""
    global _state
    state, _state = _state, None
    if state is not None and state.active:
        with contextlib.suppress(Exception):
            state.flush(EXITED)


def note_launch(event: str, args: tuple[Any, ...]) -> None:
    """A program this child starts (see :class:`~docsaccel.cache.children.Launches`); one
    it becomes (``os.exec*``) ends what it ran as Python."""
    state = _state
    if state is not None and state.active:
        with contextlib.suppress(Exception):
            state.launches.note(event, args)
        if event == "os.exec":
            _flush(EXITED)


def _flush(state: str) -> None:
    current = _state
    if current is not None and current.active:
        with contextlib.suppress(Exception):
            current.flush(state)


def _patch(kind: str) -> None:
    """Write at exit, and (a worker) before each message sent; check for a new example
    after each message received. Once per process."""
    if "exit" not in _patched:
        _patched.add("exit")
        patch(os, "_exit", _flushing_exit)
        atexit.register(_flush, EXITED)
    if kind == MULTIPROCESSING:
        _patch_connection()


def _patch_connection() -> None:
    """A ``multiprocessing`` worker writes its record before each message it sends, and
    looks for a new example after each it receives (in any other process, where no record
    is kept, both do nothing). Once per process, inherited by the processes it forks."""
    if "connection" not in _patched:
        _patched.add("connection")
        connection = sys.modules.get("multiprocessing.connection")
        if connection is None:  # a worker started afresh, before multiprocessing loaded
            from multiprocessing import connection

        patch(connection.Connection, "_send_bytes", _flushing_send)
        patch(connection.Connection, "_recv_bytes", _checking_receive)


def _flushing_exit(replaced: Patch) -> Callable[[int], Any]:
    """``os._exit`` that writes the record first (an exit skips the ``atexit`` one)."""

    def _exit(status: int) -> Any:
        _flush(EXITED)
        replaced.original(status)

    return _exit


def _flushing_send(replaced: Patch) -> Callable[..., Any]:
    """``Connection._send_bytes`` that writes the record before each message."""

    def _send_bytes(self: Any, buf: Any) -> Any:
        _flush(RUNNING)
        return replaced.original(self, buf)

    return _send_bytes


def _checking_receive(replaced: Patch) -> Callable[..., Any]:
    """``Connection._recv_bytes`` that looks for a new example after each message."""

    def _recv_bytes(self: Any, maxsize: Any = None) -> Any:
        data = replaced.original(self, maxsize)
        current = _state
        if current is not None:
            with contextlib.suppress(Exception):
                current.check_control()
        return data

    return _recv_bytes
