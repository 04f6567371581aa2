"""Which globals an example leaves changed (:mod:`docsaccel.cache.module_state`): the project's
state only, not another library's objects it reaches, nor caches filled lazily."""

from __future__ import annotations

import logging
import re
import textwrap
import types
import typing

import pytest

from docsaccel.cache.module_state import LeftState, changed, compare, snapshot

LIB = '''
import functools
import logging
import re
from typing import Literal

logger = logging.getLogger("stateunits.mylib")
Kind = Literal["x", "y"]
_MEMO = {}
_OFFSET = 0
ROWS = []


class Shape:
    _registry = {}
    verbose = False

    @classmethod
    def sides(cls, name):
        if name not in cls._registry:
            cls._registry[name] = len(name)
        return cls._registry[name]


class Layout:
    """Callable, with a signature it works out the first time it is called."""

    def __init__(self):
        self._sig = None

    def __call__(self, x):
        if self._sig is None:
            self._sig = ("x",)
        return x


spring = Layout()


@functools.cache
def load(name):
    return name.upper()


def once():
    if not hasattr(once, "_value"):
        once._value = 1
    return once._value


def memo(x):
    if x not in _MEMO:
        _MEMO[x] = x * 2
    return _MEMO[x]


def work():
    logger.debug("working")
    return 1


def set_offset(value):
    global _OFFSET
    _OFFSET = value
'''


@pytest.fixture
def lib() -> types.ModuleType:
    module = types.ModuleType("stateunits_mylib")
    module.__file__ = "/project/mylib.py"
    exec(compile(textwrap.dedent(LIB), module.__file__, "exec"), module.__dict__)
    return module


def _left(lib: types.ModuleType, action: typing.Callable[[], object]) -> set[str]:
    modules = [(lib.__file__, lib)]
    before = snapshot(modules)
    action()
    return {name for _, name in changed(before, snapshot(modules))}


def test_another_librarys_shared_objects_are_not_the_projects_state(lib) -> None:
    # logging's manager and its loggers' caches, typing's cache behind Literal.
    assert _left(lib, lambda: logging.getLogger("stateunits.other")) == set()
    assert _left(lib, lib.work) == set()
    assert _left(lib, lambda: typing.Literal["p", "q"]) == set()
    # The logger's own public settings are.
    assert _left(lib, lambda: lib.logger.setLevel(logging.DEBUG)) == {"logger"}


def test_caches_filled_lazily_are_not_state(lib) -> None:
    assert _left(lib, lambda: lib.load("a")) == set()
    assert _left(lib, lambda: lib.memo(3)) == set()
    assert _left(lib, lambda: lib.Shape.sides("square")) == set()
    assert _left(lib, lambda: lib.spring(1)) == set()
    # A function a module gains at run time (a decorator compiling code).
    assert _left(lib, lambda: setattr(lib, "compiled_1", lambda: 0)) == set()


def test_state_set_is_state(lib) -> None:
    assert _left(lib, lambda: lib.set_offset(5)) == {"_OFFSET"}
    assert _left(lib, lambda: lib.ROWS.append(1)) == {"ROWS"}
    assert _left(lib, lambda: setattr(lib.Shape, "verbose", True)) == {"Shape"}
    assert _left(lib, lambda: lib._MEMO.update({3: -1})) == set()  # an entry added
    assert _left(lib, lambda: lib._MEMO.update({3: 0})) == {"_MEMO"}  # one replaced
    assert _left(lib, lambda: lib._MEMO.clear()) == {"_MEMO"}


def test_deeper_than_read_a_container_counts_by_its_size(lib) -> None:
    lib.NESTED = {"a": {"b": {"c": []}}}
    assert _left(lib, lambda: lib.NESTED["a"]["b"]["c"].append(1)) == {"NESTED"}


def test_a_class_met_deep_in_one_snapshot_and_as_a_global_in_another_is_unchanged() -> None:
    # networkx: a snapshot reads a class where it first meets it; once an example has
    # imported more, the modules are read in another order, and the class that was met
    # deep down (by identity) is met as a global (its attributes): not a change.
    owner = types.ModuleType("stateunits_owner")
    owner.__file__ = "/project/owner.py"
    exec("class Graph:\n    kind = 'plain'\n", owner.__dict__)
    holder = types.ModuleType("stateunits_holder")
    holder.__file__ = "/project/holder.py"
    holder.DEEP = {"a": {"b": {"c": owner.Graph}}}
    holder.compiled = types.FunctionType(
        compile("def f():\n    return x\n", "<argmap>", "exec").co_consts[0], {}, "f", None, ()
    )
    deep_first = [(holder.__file__, holder), (owner.__file__, owner)]
    global_first = [(owner.__file__, owner), (holder.__file__, holder)]
    assert changed(snapshot(deep_first), snapshot(global_first)) == set()
    assert changed(snapshot(global_first), snapshot(deep_first)) == set()
    # Nor a filled cache: nothing is seen filled in it (naming it made every example
    # reading Graph depend on all the code an earlier one ran).
    assert compare(snapshot(deep_first), snapshot(global_first))[1] == {}
    assert compare(snapshot(global_first), snapshot(deep_first))[1] == {}
    # A function made at run time and met deep down first is no state either.
    owner.argmap_1 = holder.DEEP["a"]["b"]["fn"] = lambda: 0
    before = snapshot(deep_first)
    owner.argmap_2 = holder.DEEP["a"]["b"]["fn2"] = lambda: 1
    assert changed(before, snapshot(deep_first)) == set()
    # Where it is read in both, a change of the class still shows.
    before = snapshot(global_first)
    owner.Graph.kind = "other"
    assert ("/project/owner.py", "Graph") in changed(before, snapshot(global_first))


def _filled(lib: types.ModuleType, action: typing.Callable[[], object]) -> dict[str, set[str]]:
    modules = [(lib.__file__, lib)]
    before = snapshot(modules)
    action()
    left, filled = compare(before, snapshot(modules))
    assert left == set()
    return {name: set(holders) for (_, name), holders in filled.items()}


def test_a_cache_filled_lazily_is_named_by_what_holds_it(lib) -> None:
    # What a later example's code would name to read it: the class attribute, the memo,
    # the functools.cache.
    assert _filled(lib, lambda: lib.Shape.sides("square")) == {"Shape": {"_registry"}}
    assert _filled(lib, lambda: lib.memo(2)) == {"_MEMO": {"_MEMO"}}
    assert _filled(lib, lambda: lib.load("a")) == {"load": {"load"}}
    # Used without filling anything: nothing.
    assert _filled(lib, lambda: lib.Shape.__name__) == {}


def test_what_a_function_or_callable_object_fills_in_itself_is_its_own(lib) -> None:
    # A callable object's signature, a function's first attribute on itself: read by
    # every call of it (decorator machinery fills them in every function), not a cache
    # other code reads. Still no state.
    assert _filled(lib, lambda: lib.spring(1)) == {}
    assert _filled(lib, lib.once) == {}


def test_a_private_attribute_rebound_names_its_holder(lib) -> None:
    # A class's private attribute now holding another object (read by identity): the
    # attribute's name, whatever the tokens look like.
    lib.Shape._pattern = re.compile("a")
    assert _filled(lib, lambda: setattr(lib.Shape, "_pattern", re.compile("b"))) == {
        "Shape": {"_pattern"}
    }


def test_left_state_is_reported_by_the_examples_that_left_it() -> None:
    left = LeftState()
    assert (left.left(), left.fills()) == ({}, {})
    ran_a = frozenset({("/p/mylib/stats.py", "set_offset")})
    left.note("a.py", {("/p/mylib/stats.py", "_OFFSET")}, {}, ran_a)
    reported = left.left()  # what the next example's recording says, before it adds its own
    ran_b = frozenset({("/p/mylib/stats.py", "mean")})
    memo = {("/p/mylib/stats.py", "_MEMO"): frozenset({"_MEMO", "_MEMO[k]"})}
    left.note("b.py", {("/p/mylib/stats.py", "_OFFSET")}, memo, ran_b)
    assert reported == {("/p/mylib/stats.py", "_OFFSET"): frozenset({"a.py"})}
    assert left.left() == {("/p/mylib/stats.py", "_OFFSET"): frozenset({"a.py", "b.py"})}
    assert left.fills() == {
        ("/p/mylib/stats.py", "_MEMO", "_MEMO"): {"b.py": ran_b},
        ("/p/mylib/stats.py", "_MEMO", "_MEMO[k]"): {"b.py": ran_b},
    }


def test_a_cache_filled_again_keeps_the_code_of_each_example() -> None:
    left = LeftState()
    key = ("/p/mylib/stats.py", "_MEMO")
    left.note("a.py", (), {key: frozenset({"_MEMO"})}, frozenset({("/p/f.py", "f")}))
    left.note("b.py", (), {key: frozenset({"_MEMO"})}, frozenset({("/p/g.py", "g")}))
    left.fills()[(*key, "_MEMO")].clear()  # a copy
    assert left.fills() == {
        (*key, "_MEMO"): {
            "a.py": frozenset({("/p/f.py", "f")}),
            "b.py": frozenset({("/p/g.py", "g")}),
        }
    }


def test_an_entry_missing_from_the_later_snapshot_names_its_holder() -> None:
    # The holder's entries compared as filled, one of them absent from the later snapshot
    # (read to another depth there): the holder is named, never a KeyError.
    from docsaccel.cache.module_state import _Entries, _fill_names

    before = _Entries(((("str", "a"), 1), (("str", "b"), 2)))
    after = _Entries(((("str", "a"), 1), (("str", "c"), 3)))
    assert _fill_names(before, after, "table") == {"table"}
