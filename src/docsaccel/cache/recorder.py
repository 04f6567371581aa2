"""Watch a running example: the files it reads (and did not write), the modules it imports, and
(at ``function`` granularity) the code of the project it executes.

One :class:`Recorder` per process, installed on first use, does the watching with three
hooks:

- an audit hook (:func:`sys.addaudithook`) sees every ``open`` of a file (``open``,
  ``os.open``, the import system reading a module) and every first ``import`` of a module;
- a wrapper of :func:`builtins.__import__` sees every ``import`` statement, including
  those of a module an earlier example already imported, for which no import event fires;
  a wrapper of :func:`importlib.import_module` does the same for imports by name;
- at ``function`` granularity, the project's own code records each function it runs
  (:mod:`docsaccel.cache.instrument`); other code is not watched at all.

An audit hook cannot be removed and the import wrapper stays in place, so both first check
one flag: when no example is recording they cost one attribute read. Only paths under the
roots are kept, and only while recording; turning them into fingerprints is
:mod:`docsaccel.cache.deps`' job.

Example::

    recorder = Recorder.get()
    recorder.start(roots=["/repo"], excluded=["/repo/docs/_build"], code=project.wants)
    ...  # the example runs
    seen = recorder.stop()
    seen.files, seen.modules, seen.code, seen.instrumented
"""

from __future__ import annotations

import builtins
import contextlib
import importlib
import importlib.util
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from docsaccel.cache.instrument import Instrumenter, is_machinery

__all__ = ["Recorder", "Seen"]

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


@dataclass
class Seen:
    """What one example used: absolute file paths under the roots, module names (of any
    origin), and at ``function`` granularity ``(file, piece)`` of the project code it ran
    and the project files whose functions are watched (see
    :attr:`.instrument.Instrumenter.instrumented`; any other counts whole)."""

    files: set[str] = field(default_factory=set)
    modules: set[str] = field(default_factory=set)
    code: set[tuple[str, str]] = field(default_factory=set)
    instrumented: dict[str, frozenset[str]] = field(default_factory=dict)


class Recorder:
    """The process's one recorder; see the module docstring."""

    _instance: Recorder | None = None
    _lock = threading.Lock()

    def __init__(self) -> None:
        self.active = False
        self._roots: tuple[str, ...] = ()
        self._excluded: tuple[str, ...] = ()
        self._seen = Seen()
        self._written: set[str] = set()
        self._started_ns = 0
        self._instrumenter: Instrumenter | None = None

    @classmethod
    def get(cls) -> Recorder:
        """The process's recorder, installing its hooks the first time."""
        with cls._lock:
            if cls._instance is None:
                recorder = cls()
                sys.addaudithook(recorder._audit)
                builtins.__import__ = recorder._wrap_import(builtins.__import__)
                importlib.import_module = recorder._wrap_import_module(importlib.import_module)
                cls._instance = recorder
            return cls._instance

    def start(
        self,
        roots: Iterable[str],
        excluded: Iterable[str] = (),
        code: Callable[[str], bool] | None = None,
    ) -> None:
        """Start recording for one example (a recording in progress is dropped). With
        ``code`` (which project files to watch, by absolute path), also record the
        functions of those files the example runs."""
        self._roots = tuple(os.path.join(os.path.normpath(r), "") for r in roots)
        self._excluded = tuple(os.path.join(os.path.normpath(e), "") for e in excluded)
        self._seen = Seen()
        self._written = set()
        self._started_ns = time.time_ns()
        self._instrumenter = None if code is None else Instrumenter.install(code)
        if self._instrumenter is not None:
            self._instrumenter.ran.clear()
        self.active = True

    def stop(self) -> Seen:
        """Stop recording; return what the example used."""
        self.active = False
        seen, self._seen = self._seen, Seen()
        if self._instrumenter is not None:
            seen.code = self._instrumenter.ran.copy()
            seen.instrumented = dict(self._instrumenter.instrumented)
            self._instrumenter = None
        # A file the example wrote is its output, not an input, even if it read it back;
        # so is one modified since it started (written by a child process: ffmpeg).
        seen.files -= self._written
        seen.files = {path for path in seen.files if not self._modified_since_start(path)}
        return seen

    def _modified_since_start(self, path: str) -> bool:
        try:
            return os.stat(path).st_mtime_ns >= self._started_ns
        except OSError:
            return True  # gone: the example's own temporary file

    def wants(self, path: str) -> bool:
        """Whether a file (absolute, normalised) is under the roots and not excluded."""
        return (
            path.startswith(self._roots)
            and not path.startswith(self._excluded)
            and not is_machinery(path)
        )

    def _audit(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.active:
            return
        if event == "open":
            path, mode, flags = args
            if isinstance(path, int) or path is None:
                return
            if isinstance(mode, str):
                writing = any(c in mode for c in "wax+")
            else:
                writing = isinstance(flags, int) and bool(flags & _WRITE_FLAGS)
            path = os.path.abspath(os.fsdecode(path))
            if "__pycache__" not in path and self.wants(path):
                (self._written if writing else self._seen.files).add(path)
        elif event == "import":
            self._seen.modules.add(args[0])

    def _wrap_import(self, original: Any) -> Any:
        def recorded_import(
            name: str,
            globals: dict[str, Any] | None = None,
            locals: Any = None,
            fromlist: Any = (),
            level: int = 0,
        ) -> Any:
            if self.active:
                self._note_import(name, globals, fromlist, level)
            return original(name, globals, locals, fromlist, level)

        recorded_import.__wrapped__ = original  # type: ignore[attr-defined]
        return recorded_import

    def _wrap_import_module(self, original: Any) -> Any:
        def recorded_import_module(name: str, package: str | None = None) -> Any:
            if self.active:
                with contextlib.suppress(ImportError, ValueError, TypeError):
                    self._seen.modules.add(importlib.util.resolve_name(name, package))
            return original(name, package)

        recorded_import_module.__wrapped__ = original  # type: ignore[attr-defined]
        return recorded_import_module

    def _note_import(self, name: str, globals: Any, fromlist: Any, level: int) -> None:
        if level:
            package = (globals or {}).get("__package__") or ""
            try:
                name = importlib.util.resolve_name("." * level + name, package)
            except (ImportError, ValueError):
                return
        modules = self._seen.modules
        modules.add(name)
        for item in fromlist or ():
            if isinstance(item, str) and item != "*":
                modules.add(f"{name}.{item}")
