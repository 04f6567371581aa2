"""Which code made what an earlier example filled in a lazily built cache
(:func:`docsaccel.cache.counting.filling_code`): a later example reading the cache
depends on it as on code it ran."""

from __future__ import annotations

import ast

from docsaccel.cache.counting import filling_code
from docsaccel.cache.pieces import MODULE_BODY, split

SHAPES = """
class Shape:
    _sides = {}

    @classmethod
    def sides(cls, name):
        if name not in cls._sides:
            cls._sides[name] = cls._count(name)
        return cls._sides[name]

    @staticmethod
    def _count(name):
        return _measure(name)

    @classmethod
    def label(cls):
        return cls.__name__.lower()


def _measure(name):
    return len(name)


def fill(name, how):
    getattr(Shape, how)(name)
    return Shape._sides
"""
FACTS = {"shapes.py": split(ast.parse(SHAPES))}


def test_the_code_reading_the_cache_and_what_it_calls_made_the_fill() -> None:
    ran = {"shapes.py": {MODULE_BODY, "Shape.sides", "Shape._count", "_measure", "Shape.label"}}
    found = filling_code("_sides", ran, FACTS)
    # Not the module body (every user counts it) nor a method that ran beside it.
    assert found == {"shapes.py": {"Shape.sides", "Shape._count", "_measure"}}


def test_when_in_doubt_all_the_code_the_filler_ran_counts() -> None:
    ran = {"shapes.py": {"Shape.label", "_measure"}}
    # No code it ran names the cache (C code filled it): all it ran.
    assert filling_code("_sides", ran, FACTS) == {"shapes.py": {"Shape.label", "_measure"}}
    # Code reading it reaches names it computes (any method): all it ran.
    ran = {"shapes.py": {"fill", "Shape.sides", "Shape.label"}}
    assert filling_code("_sides", ran, FACTS) == ran


COUNTER = """
def describe(obj, name):
    return getattr(obj, name)


class Counter:
    __count = 0
    kind = describe(object, "__name__")

    @classmethod
    def next(cls):
        cls.__count += 1
        return cls.__count


def other():
    return Counter.kind
"""
COUNTER_FACTS = {"counter.py": split(ast.parse(COUNTER))}


def test_a_private_name_a_class_mangles_is_found_as_its_code_writes_it() -> None:
    # The snapshot sees _Counter__count; the class's code reads __count. Its class body
    # names it too, but only declares it: neither it nor what it reads (describe, which
    # computes names) made the fill.
    ran = {"counter.py": {MODULE_BODY, "describe", "Counter", "Counter.next", "other"}}
    found = filling_code("_Counter__count", ran, COUNTER_FACTS)
    assert found == {"counter.py": {"Counter.next"}}
