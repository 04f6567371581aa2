"""What the project's modules' code read, process-wide (:mod:`docsaccel.cache.carried_reads`),
fed directly, without a recording."""

from __future__ import annotations

import threading

from docsaccel.cache.carried_reads import CarriedReads


def test_noted_reads_listings_and_absent_modules_are_carried_by_module() -> None:
    carried = CarriedReads()
    carried.note_read("/p/mylib/data.py", "/p/data/a.csv")
    carried.note_read("/p/mylib/data.py", "/p/data/b.csv")
    carried.note_listing("/p/mylib/data.py", "/p/data", ("a.csv", "b.csv"))
    carried.note_absent("/p/mylib/opt.py", "optdep")
    assert carried.reads() == {"/p/mylib/data.py": frozenset({"/p/data/a.csv", "/p/data/b.csv"})}
    assert carried.listings() == {"/p/mylib/data.py": {"/p/data": ("a.csv", "b.csv")}}
    assert carried.absent() == {"/p/mylib/opt.py": frozenset({"optdep"})}
    assert carried.unknown == frozenset()


def test_a_folder_keeps_the_names_of_its_first_listing() -> None:
    # What the module body saw; a later listing (after an example added a file) is not it.
    carried = CarriedReads()
    carried.note_listing("/p/mylib/data.py", "/p/data", ("a.csv",))
    carried.note_listing("/p/mylib/data.py", "/p/data", ("a.csv", "new.csv"))
    carried.carry({}, listings={"/p/mylib/data.py": {"/p/data": ["z.csv"]}})
    assert carried.listings() == {"/p/mylib/data.py": {"/p/data": ("a.csv",)}}


def test_carried_from_another_process_is_normalised_and_merged() -> None:
    carried = CarriedReads()
    carried.note_read("/p/mylib/data.py", "/p/data/a.csv")
    carried.carry(
        {"/p/mylib/../mylib/data.py": ["/p/data/./b.csv"]},
        unknown=["/p/mylib//old.py"],
        listings={"/p/mylib/conf.py": {"/p/conf/": ["b.toml", "a.toml"]}},
        absent={"/p/mylib/opt.py": ["optdep"]},
    )
    carried.carry({}, unknown=["/p/mylib/other.py"])
    assert carried.reads() == {"/p/mylib/data.py": frozenset({"/p/data/a.csv", "/p/data/b.csv"})}
    assert carried.listings() == {"/p/mylib/conf.py": {"/p/conf": ("a.toml", "b.toml")}}
    assert carried.absent() == {"/p/mylib/opt.py": frozenset({"optdep"})}
    assert carried.unknown == frozenset({"/p/mylib/old.py", "/p/mylib/other.py"})


def test_what_it_hands_out_are_copies() -> None:
    carried = CarriedReads()
    carried.note_listing("/p/mylib/data.py", "/p/data", ("a.csv",))
    carried.listings()["/p/mylib/data.py"]["/p/other"] = ()
    carried.note_read("/p/mylib/data.py", "/p/data/a.csv")
    reads = carried.reads()
    carried.note_read("/p/mylib/data.py", "/p/data/b.csv")
    assert reads == {"/p/mylib/data.py": frozenset({"/p/data/a.csv"})}
    assert carried.listings() == {"/p/mylib/data.py": {"/p/data": ("a.csv",)}}


def test_the_count_grows_with_each_new_note_only() -> None:
    carried = CarriedReads()
    marks = [carried.count()]
    carried.note_read("/p/m.py", "/p/a.csv")
    marks.append(carried.count())
    carried.note_read("/p/m.py", "/p/a.csv")  # known: no progress
    marks.append(carried.count())
    carried.note_listing("/p/m.py", "/p/data", ())
    marks.append(carried.count())
    carried.note_absent("/p/m.py", "optdep")
    marks.append(carried.count())
    assert marks == [0, 1, 1, 2, 3]


def test_no_code_outside_the_roots_is_owned_until_a_predicate_is_set() -> None:
    carried = CarriedReads()
    assert not carried.counting
    assert not carried.owned("/elsewhere/beside.py", "beside")
    carried.count_readers(lambda path, module: module == "beside")
    assert carried.counting
    assert carried.owned("/elsewhere/beside.py", "beside")
    assert not carried.owned("/elsewhere/other.py", "other")


def test_a_thread_asking_the_predicate_is_not_asked_again() -> None:
    # The predicate reads installed metadata: those reads must not ask it again.
    carried = CarriedReads()
    during: list[tuple[bool, bool]] = []
    elsewhere: list[bool] = []

    def owns(path: str, module: str) -> bool:
        during.append((carried.asking(), carried.owned(path, module)))
        other = threading.Thread(target=lambda: elsewhere.append(carried.asking()))
        other.start()
        other.join()
        return True

    carried.count_readers(owns)
    assert carried.owned("/elsewhere/beside.py", "beside")
    assert during == [(True, False)]
    assert elsewhere == [False]
    assert not carried.asking()
