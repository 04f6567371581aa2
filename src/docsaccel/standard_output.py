"""The command line's standard output, whose write errors are told apart from any other.

``docsaccel check report.json > /dev/full`` failed to write its verdict: that is neither
a verdict (exit 1 is "over budget") nor a crash of the command, but an output that cannot
be written, the one line and exit 2 the reports guide documents for ``-o``. Writes
through :func:`guarded` raise :class:`StandardOutputError` for it; a closed pipe stays
``BrokenPipeError`` (``| head``), and an output closed before the start (``>&-``) takes
what is said as ``print`` does then: nowhere.

>>> import io
>>> with guarded(io.StringIO()) as out:
...     print("ok", file=out)
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import IO, Any

__all__ = ["StandardOutputError", "guarded"]


class StandardOutputError(Exception):
    """Writing to the standard output failed (a full disk, an I/O error): the reason."""


class _Guarded:
    """``stream`` whose ``write`` and ``flush`` raise :class:`StandardOutputError` for any
    ``OSError`` but a closed pipe; everything else is the stream's own."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        return self._call(self._stream.write, text)

    def flush(self) -> None:
        self._call(self._stream.flush)

    def _call(self, function: Any, *args: Any) -> Any:
        try:
            return function(*args)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise StandardOutputError(exc.strerror or str(exc)) from exc

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.contextmanager
def guarded(stream: IO[str] | None = None) -> Iterator[IO[str]]:
    """Make ``sys.stdout`` (or ``stream``) a guarded one while the block runs, and put
    back what was there after it. With no standard output at all, writes go nowhere."""
    before = sys.stdout
    target = stream if stream is not None else before
    opened = None
    if target is None:  # closed before the start: print() would say nothing either
        target = opened = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115
    sys.stdout = _Guarded(target)  # type: ignore[assignment]
    try:
        yield sys.stdout
    finally:
        sys.stdout = before
        if opened is not None:
            opened.close()
