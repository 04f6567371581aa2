"""What one recording notes of the imports an example runs: the modules it asks for and
those an import did not find. A subscriber of :mod:`docsaccel.intercept`'s import events,
fed by the recorder while it records; a plain object, so it is tested with events alone.

The design, in full: the caching guide's *Design* section.

Example: an import statement, then a probe that found nothing in a project module.

>>> from docsaccel.cache.carried_reads import CarriedReads
>>> from docsaccel.cache.recorder import Seen
>>> from docsaccel.intercept import ModuleImported, ModuleNotFound
>>> seen = Seen()
>>> notes = ImportNotes(seen, lambda path: path.startswith("/proj/"), CarriedReads())
>>> notes.imported(ModuleImported("email", None, 0, ("mime",), True))
>>> notes.not_found(ModuleNotFound("optdep", "/proj/pkg/mod.py", "pkg.mod"))
>>> sorted(seen.modules), seen.absent
(['email', 'email.mime'], {'optdep'})
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from docsaccel.cache.instrument import is_machinery
from docsaccel.intercept import ModuleImported, ModuleNotFound

if TYPE_CHECKING:
    from docsaccel.cache.carried_reads import CarriedReads
    from docsaccel.cache.recorder import Seen

__all__ = ["BUILT_IN", "ImportNotes"]

#: Modules compiled into the interpreter: no file, no distribution, so never a dependency
#: (nor a name of the project's: they are found first). Not noted from an import
#: statement: a pool worker imports ``builtins`` again for each task it unpickles.
BUILT_IN = frozenset(sys.builtin_module_names)


class ImportNotes:
    """The imports of one recording, noted into its :class:`~.recorder.Seen`: the modules
    asked for (``modules``) and those not found (``absent``), and for the project's
    modules whose code asked, what they did not find (``carried``, as a file they read).

    ``wants(path)`` says whether a file is the project's (under the roots, not excluded).
    """

    def __init__(self, seen: Seen, wants: Callable[[str], bool], carried: CarriedReads) -> None:
        self.seen, self.wants, self.carried = seen, wants, carried
        #: The import statements noted (name, package, fromlist, level).
        self._statements: set[tuple[Any, ...]] = set()
        #: ``(name, importer's file)`` of the imports not found noted.
        self._absent: set[tuple[str, str | None]] = set()

    def imported(self, event: ModuleImported) -> None:
        """Note the modules an import asked for: by name, the module; by statement, the
        module and each name after ``import`` as a possible submodule, once per statement
        (one run again, in a function, has nothing new to note), built-in modules left
        out."""
        if not event.statement:
            name = event.absolute()
            if name is not None:
                self.seen.modules.add(name)
            return
        try:
            # A list from C callers (pickle's PyImport_Import passes one).
            fromlist = tuple(event.fromlist) if event.fromlist else ()
            key = (event.name, event.package, fromlist, event.level)
            if key in self._statements:
                return
            self._statements.add(key)
        except TypeError:  # not names: noted as they come
            pass
        name = event.absolute()
        if name is None or name in BUILT_IN:
            return
        modules = self.seen.modules
        modules.add(name)
        for item in event.fromlist or ():
            if isinstance(item, str) and item != "*":
                modules.add(f"{name}.{item}")

    def not_found(self, event: ModuleNotFound) -> None:
        """Note a module an import did not find and, when the importer is a project file,
        for that module's code (as a file it reads). Each once per recording: a failing
        import raises through every enclosing import, and code may try it in every call."""
        key = (event.name, event.importer_file)
        if key in self._absent:
            return
        self._absent.add(key)
        self.seen.absent.add(event.name)
        if event.importer_file is None:
            return
        path = os.path.normpath(os.path.abspath(event.importer_file))
        carried, module = self.carried, event.importer_name
        if self.wants(path) or (
            carried.counting
            and module is not None
            and not is_machinery(path)
            and carried.owned(path, module)
        ):
            carried.note_absent(path, event.name)
