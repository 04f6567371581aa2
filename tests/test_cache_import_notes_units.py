"""The recorder's subscriber of import events (docsaccel.cache.import_notes), fed events
by hand: no import runs, no build."""

from __future__ import annotations

import os

from docsaccel.cache.carried_reads import CarriedReads
from docsaccel.cache.import_notes import BUILT_IN, ImportNotes
from docsaccel.cache.recorder import Seen
from docsaccel.intercept import ModuleImported, ModuleNotFound

PROJECT = os.path.abspath("/proj") + os.sep


def notes(carried: CarriedReads | None = None) -> ImportNotes:
    return ImportNotes(Seen(), lambda path: path.startswith(PROJECT), carried or CarriedReads())


def statement(name, fromlist=(), level=0, package=None) -> ModuleImported:
    return ModuleImported(name, package, level, fromlist, True)


def test_a_statement_notes_its_module_and_each_name_imported_from_it() -> None:
    noted = notes()
    noted.imported(statement("email", ["mime", "*", 3]))  # a list, as C callers give
    noted.imported(statement("sub", ("x",), level=1, package="pkg"))
    assert noted.seen.modules == {"email", "email.mime", "pkg.sub", "pkg.sub.x"}


def test_what_names_no_module_is_not_noted() -> None:
    noted = notes()
    noted.imported(statement("sub", level=2, package="pkg"))  # above the top package
    noted.imported(statement("sub", level=1, package=None))  # relative, with no package
    noted.imported(statement(next(iter(BUILT_IN))))
    assert noted.seen.modules == set()


def test_an_import_by_name_notes_the_module_resolved() -> None:
    noted = notes()
    noted.imported(ModuleImported("stats", "pkg", 1, (), False))  # import_module(".stats", "pkg")
    noted.imported(ModuleImported("stats", None, 1, (), False))  # resolves to nothing
    assert noted.seen.modules == {"pkg.stats"}


def test_a_statement_is_noted_once_per_recording() -> None:
    # Run again (in a function called in a loop), it has nothing new to note: what was
    # taken out after it was noted stays out. A new recording notes it again.
    first = notes()
    first.imported(statement("email", ("mime",)))
    first.seen.modules.clear()
    first.imported(statement("email", ["mime"]))
    assert first.seen.modules == set()
    again = notes()
    again.imported(statement("email", ("mime",)))
    assert again.seen.modules == {"email", "email.mime"}


def test_a_fromlist_that_cannot_be_a_key_is_noted_every_time() -> None:
    noted = notes()
    noted.imported(statement("email", [["not", "names"], "mime"]))
    noted.seen.modules.clear()
    noted.imported(statement("email", [["not", "names"], "mime"]))
    assert noted.seen.modules == {"email", "email.mime"}


def test_a_module_not_found_is_absent_and_carried_by_the_project_module_that_asked() -> None:
    carried = CarriedReads()
    noted = notes(carried)
    importer = os.path.join(PROJECT, "pkg", "mod.py")
    noted.not_found(ModuleNotFound("optdep", importer, "pkg.mod"))
    noted.not_found(ModuleNotFound("other", "/site-packages/lib.py", "lib"))
    noted.not_found(ModuleNotFound("unknown_caller", None, None))
    assert noted.seen.absent == {"optdep", "other", "unknown_caller"}
    assert carried.absent() == {importer: frozenset({"optdep"})}


def test_a_module_outside_the_roots_carries_what_it_did_not_find_when_it_counts() -> None:
    carried = CarriedReads()
    carried.count_readers(lambda path, module: module == "beside")
    noted = notes(carried)
    beside = os.path.abspath("/elsewhere/beside.py")
    noted.not_found(ModuleNotFound("optdep", beside, "beside"))
    noted.not_found(ModuleNotFound("optdep", os.path.abspath("/elsewhere/lib.py"), "lib"))
    assert carried.absent() == {beside: frozenset({"optdep"})}


def test_a_module_not_found_is_noted_once_per_importer_and_recording() -> None:
    # A failing import raises through every enclosing import: noted the first time only.
    noted = notes()
    importer = os.path.join(PROJECT, "mod.py")
    noted.not_found(ModuleNotFound("optdep", importer, "mod"))
    noted.seen.absent.clear()
    noted.not_found(ModuleNotFound("optdep", importer, "mod"))
    assert noted.seen.absent == set()
    noted.not_found(ModuleNotFound("optdep", os.path.join(PROJECT, "other.py"), "other"))
    assert noted.seen.absent == {"optdep"}
