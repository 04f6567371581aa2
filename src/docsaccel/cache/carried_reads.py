"""What the project's modules' own code read, listed and did not find, process-wide.

A module body runs once per process: an example (or a page) that uses a module later
depends on what its body read when an earlier example, or the build before the
examples, imported it. The recorder notes each read here under the module file whose code
did it; every recording then reports all of it (:attr:`.recorder.Seen.carried_reads`).

The design, in full: the caching guide's *Design* section.

Example: a module body reads a data file; a child process saw another module read one.

>>> carried = CarriedReads()
>>> carried.note_read("/repo/mylib/data.py", "/repo/data/table.csv")
>>> carried.carry({"/repo/mylib/conf.py": ["/repo/conf/a.toml"]}, unknown=["/repo/mylib/old.py"])
>>> sorted(carried.reads())
['/repo/mylib/conf.py', '/repo/mylib/data.py']
>>> carried.unknown
frozenset({'/repo/mylib/old.py'})
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Mapping

__all__ = ["CarriedReads"]


class CarriedReads:
    """What each module file's code read (files), listed (folders, with their names when
    it first listed each) and did not find (modules) so far in this process, the module
    files whose reads are unknown, and which code outside the roots counts as the
    project's (:meth:`count_readers`). One per process, held by the recorder: it outlives
    every recording."""

    def __init__(self) -> None:
        self._read_by: dict[str, set[str]] = {}
        self._listed_by: dict[str, dict[str, tuple[str, ...]]] = {}
        self._absent_by: dict[str, set[str]] = {}
        #: The module files imported before any recorder watched whose reads a fresh
        #: import could not show (:mod:`.early`).
        self.unknown: frozenset[str] = frozenset()
        #: Which code outside the roots carries what it reads (``(file, module name)``).
        self._owns: Callable[[str, str], bool] | None = None
        #: The threads asking :attr:`_owns` (:meth:`owned`).
        self._asking: set[int] = set()

    def count_readers(self, owns: Callable[[str, str], bool]) -> None:
        """Code outside the roots that ``owns(file, module name)`` counts carries what it
        reads too (a module beside the roots in no distribution, whose body reads a data
        file under them: :meth:`.deps.Project.owns_module`); the roots alone decide until
        this is called."""
        self._owns = owns

    @property
    def counting(self) -> bool:
        """Whether code outside the roots may carry reads (:meth:`count_readers` was
        called): the recorder asks :meth:`owned` only then."""
        return self._owns is not None

    def owned(self, path: str, module: str) -> bool:
        """Whether the module ``module`` at ``path`` is the project's (:meth:`count_readers`).
        False for a thread already asking: the answer reads installed metadata, which may
        be under the roots (``pkg.egg-info`` beside ``pkg``); seen, each read would ask the
        same question again, until a RecursionError."""
        owns, thread = self._owns, threading.get_ident()
        if owns is None or thread in self._asking:
            return False
        self._asking.add(thread)
        try:
            return owns(path, module)
        finally:
            self._asking.discard(thread)

    def asking(self) -> bool:
        """Whether this thread is inside :meth:`owned`: what it reads there is not the
        example's."""
        return bool(self._asking) and threading.get_ident() in self._asking

    def note_read(self, module: str, path: str) -> None:
        """``module``'s code (its file) read the file ``path``."""
        self._read_by.setdefault(module, set()).add(path)

    def note_listing(self, module: str, folder: str, names: tuple[str, ...]) -> None:
        """``module``'s code listed ``folder``, which held ``names`` (kept from the first
        listing: what the module body saw)."""
        self._listed_by.setdefault(module, {}).setdefault(folder, names)

    def note_absent(self, module: str, name: str) -> None:
        """``module``'s code did not find the module ``name``."""
        self._absent_by.setdefault(module, set()).add(name)

    def carry(
        self,
        reads: Mapping[str, Iterable[str]],
        unknown: Iterable[str] = (),
        listings: Mapping[str, Mapping[str, Iterable[str]]] | None = None,
        absent: Mapping[str, Iterable[str]] | None = None,
    ) -> None:
        """Carry ``{module file: files its code read}``, ``{module file: {folder: names}}``
        of the folders it listed and ``{module file: modules its code did not find}`` as if
        this process had seen them, and the module files whose reads are ``unknown`` (the
        modules imported before it watched: :mod:`.early`). Paths are normalised here:
        they come from another process's report."""
        for module, files in reads.items():
            self._read_by.setdefault(os.path.normpath(module), set()).update(
                os.path.normpath(f) for f in files
            )
        for module, listed in (listings or {}).items():
            mine = self._listed_by.setdefault(os.path.normpath(module), {})
            for folder, names in listed.items():
                mine.setdefault(os.path.normpath(folder), tuple(sorted(names)))
        self.unknown |= {os.path.normpath(m) for m in unknown}
        for module, names in (absent or {}).items():
            self._absent_by.setdefault(os.path.normpath(module), set()).update(names)

    def reads(self) -> dict[str, frozenset[str]]:
        """``{module file: files its code read}`` so far (a copy)."""
        return {module: frozenset(read) for module, read in self._read_by.items()}

    def listings(self) -> dict[str, dict[str, tuple[str, ...]]]:
        """``{module file: {folder: names}}`` its code listed so far (a copy)."""
        return {module: dict(listed) for module, listed in self._listed_by.items()}

    def absent(self) -> dict[str, frozenset[str]]:
        """``{module file: modules its code did not find}`` so far (a copy)."""
        return {module: frozenset(names) for module, names in self._absent_by.items()}

    def count(self) -> int:
        """How many reads, listings and modules not found are noted: it grows with every
        new one (nothing noted is ever taken back), so a recording's progress mark can
        include it."""
        noted = sum(len(files) for files in self._read_by.values())
        noted += sum(len(folders) for folders in self._listed_by.values())
        return noted + sum(len(names) for names in self._absent_by.values())
