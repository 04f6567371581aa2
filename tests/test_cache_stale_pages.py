"""Pages the cache once served stale, each a class of bug, in real builds from fresh copies
sharing a cache: after an edit, every page equals the one a build without the cache makes.

- a method added between an instance's class and the class whose method ran (it shadows
  the one that ran), a class attribute doing so, a new base class;
- a method a class generates (``@dataclass``'s ``__repr__``, ``__eq__``) replaced by one
  written in the class body: the generated one's code is in no project file;
- state an earlier example leaves (a global it sets) read by an example that runs again
  while the earlier one would be restored: the earlier one runs too, before it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.cache_project import ALL, FILES, Build, Project, differing, example_source

pytestmark = pytest.mark.slow

SHAPES = '''"""Shapes."""
from dataclasses import dataclass


class Box:
    def __init__(self, w):
        self.w = w

    def area(self):
        return self.w * self.w


class Mid(Box):
    pass


class Cube(Mid):
    pass


@dataclass
class Rect:
    w: float
    h: float = 2.0

    def area(self):
        return self.w * self.h
'''
STATS = '''"""Statistics."""
_OFFSET = 0


def set_offset(value):
    global _OFFSET
    _OFFSET = value


def mean(xs):
    return sum(xs) / len(xs) + _OFFSET
'''
EXAMPLES = {
    "plot_a_cube.py": "from mylib.shapes import Cube\n\nprint('cube', Cube(3).area())\n",
    "plot_b_rect.py": (
        "from mylib.shapes import Rect\n\nprint('rect', Rect(2), Rect(2) == Rect(2.0))\n"
    ),
    "plot_c0_setoff.py": "from mylib.stats import set_offset\n\nset_offset(7)\nprint('set')\n",
    "plot_c1_mean.py": "from mylib.stats import mean\n\nprint('mean', mean([1, 2, 3, 4]))\n",
}


def _project(tmp_path: Path, granularity: str, parallel: int = 0) -> Project:
    project = Project(tmp_path)
    for name in ALL:
        (project.pristine / "docs" / "examples" / name).unlink()
    order = '"within_subsection_order": "FileNameSortKey",'
    if parallel:
        order += f' "parallel": {parallel},'
    conf = FILES["docs/conf.py"].replace('"show_memory": False,', f'"show_memory": False, {order}')
    project.write("docs/conf.py", conf + f"docsaccel_cache_granularity = {granularity!r}\n")
    project.write("mylib/shapes.py", SHAPES)
    project.write("mylib/stats.py", STATS)
    for name, body in EXAMPLES.items():
        project.write(f"docs/examples/{name}", example_source(name, body))
    first = project.build()
    assert first.returncode == 0, first.output
    assert project.build().executed() == set()
    return project


@pytest.fixture
def function_project(tmp_path: Path) -> Project:
    return _project(tmp_path, "function")


def _edited(project: Project, relative: str, old: str, new: str, base: str) -> Build:
    assert old in base
    project.write(relative, base.replace(old, new))
    built = project.build()
    assert built.returncode == 0, built.output
    clean = project.build(env={"DOCSACCEL_CACHE": "0"})
    assert clean.returncode == 0, clean.output
    assert differing(built.gallery_files(), clean.gallery_files()) == []
    return built


def _page(build: Build, name: str) -> str:
    return (build.outdir / "auto_examples" / name.replace(".py", ".html")).read_text("utf-8")


@pytest.mark.parametrize(
    ("old", "new", "shown"),
    [
        # A method of the instance's own class shadowing the inherited one that ran.
        (
            "class Cube(Mid):\n    pass",
            "class Cube(Mid):\n    def area(self):\n        return -1",
            "cube -1",
        ),
        # One in a class between them, reached through the MRO.
        (
            "class Mid(Box):\n    pass",
            "class Mid(Box):\n    def area(self):\n        return -2",
            "cube -2",
        ),
        # A class attribute shadowing it.
        ("class Mid(Box):\n    pass", "class Mid(Box):\n    area = lambda self: -3", "cube -3"),
        # A new __getattribute__.
        (
            "class Mid(Box):\n    pass",
            "class Mid(Box):\n    def __getattribute__(self, name):\n"
            "        found = object.__getattribute__(self, name)\n"
            "        return (lambda: -4) if name == 'area' else found",
            "cube -4",
        ),
        # A new base class providing it.
        (
            "class Mid(Box):",
            "class Other:\n    def area(self):\n        return -5\n\n\nclass Mid(Other, Box):",
            "cube -5",
        ),
    ],
    ids=["own-method", "mro-method", "class-attribute", "getattribute", "new-base"],
)
def test_a_method_shadowing_the_one_that_ran_reruns(
    function_project: Project, old: str, new: str, shown: str
) -> None:
    again = _edited(function_project, "mylib/shapes.py", old, new, SHAPES)
    assert "plot_a_cube.py" in again.executed()
    assert shown in _page(again, "plot_a_cube.py")


@pytest.mark.parametrize(
    ("new", "shown"),
    [
        (
            '    def __repr__(self):\n        return f"R({self.w}x{self.h})"\n\n',
            "rect R(2x2.0) True",
        ),
        ("    def __eq__(self, other):\n        return False\n\n", "rect Rect(w=2, h=2.0) False"),
    ],
    ids=["repr", "eq"],
)
def test_a_method_replacing_a_generated_one_reruns(
    function_project: Project, new: str, shown: str
) -> None:
    again = _edited(
        function_project,
        "mylib/shapes.py",
        "    def area(self):\n        return self.w * self.h",
        new + "    def area(self):\n        return self.w * self.h",
        SHAPES,
    )
    assert "plot_b_rect.py" in again.executed()
    assert shown in _page(again, "plot_b_rect.py")


@pytest.mark.parametrize("granularity", ["function", "module"])
def test_the_example_leaving_the_state_a_rerun_reads_runs_before_it(
    tmp_path: Path, granularity: str
) -> None:
    project = _project(tmp_path, granularity)
    source = example_source("plot_c1_mean.py", EXAMPLES["plot_c1_mean.py"])
    again = _edited(
        project, "docs/examples/plot_c1_mean.py", "[1, 2, 3, 4]", "[1, 2, 3, 4, 5]", source
    )
    assert {"plot_c0_setoff.py", "plot_c1_mean.py"} <= again.executed()
    reason = again.records["plot_c0_setoff.py"]["cache"]["reason"]
    assert reason.startswith("examples/plot_c1_mean.py reads the state it leaves"), reason
    assert "mean 10.0" in _page(again, "plot_c1_mean.py")
    # And the other way round: the example leaving it runs again, so its reader does.
    setoff = example_source("plot_c0_setoff.py", EXAMPLES["plot_c0_setoff.py"])
    later = _edited(project, "docs/examples/plot_c0_setoff.py", "(7)", "(8)", setoff)
    assert {"plot_c0_setoff.py", "plot_c1_mean.py"} <= later.executed()
    assert "mean 11.0" in _page(later, "plot_c1_mean.py")


def test_in_a_parallel_build_an_example_reading_state_runs_every_example(
    tmp_path: Path,
) -> None:
    # Which examples share a worker is decided as they run: only a build running every
    # example has the pages of a build without the cache.
    project = _project(tmp_path, "function", parallel=2)
    source = example_source("plot_c1_mean.py", EXAMPLES["plot_c1_mean.py"])
    project.write("docs/examples/plot_c1_mean.py", source.replace("[1, 2, 3, 4]", "[1, 2]"))
    again = project.build()
    assert again.returncode == 0, again.output
    assert again.executed() == set(EXAMPLES)
    reason = again.records["plot_a_cube.py"]["cache"]["reason"]
    assert reason.startswith("a parallel build: examples/plot_c1_mean.py reads the state"), reason
