"""Only the project's state crosses examples, in real builds from fresh copies sharing a
cache: an example is not counted as changing state because it touched another library's
shared objects (logging's loggers, typing's caches) a project global holds, nor because
it filled a cache the project fills lazily. So an edit re-runs the edited example alone,
and an example that fails in every build (never stored) runs alone when nothing changed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.cache_project import ALL, FILES, Project, example_source

pytestmark = pytest.mark.slow

LIBRARY = '''"""A library holding other libraries' objects and caches it fills lazily."""
import functools
import logging
from typing import Literal

logger = logging.getLogger("mylib")
Kind = Literal["x", "y"]


def area(kind: Kind = "x"):
    logger.debug("area of %s", kind)
    return {"x": 1, "y": 2}[kind]


class Shape:
    """Works out and keeps each shape's sides the first time it is asked."""

    _sides = {}

    @classmethod
    def sides(cls, name):
        if name not in cls._sides:
            cls._sides[name] = len(name)
        return cls._sides[name]


class Layout:
    """Callable; works out its signature the first time it is called."""

    def __init__(self):
        self._sig = None

    def __call__(self, n):
        if self._sig is None:
            self._sig = ("n",)
            globals()[f"compiled_{n}"] = lambda: n  # code made at run time
        return [n] * n


layout = Layout()


@functools.cache
def table(n):
    return tuple(range(n))
'''


def _project(
    tmp_path: Path, examples: dict[str, str], conf: str = "", project: Project | None = None
) -> Project:
    project = project or Project(tmp_path)
    for name in ALL:
        (project.pristine / "docs" / "examples" / name).unlink()
    order = '"show_memory": False, "within_subsection_order": "FileNameSortKey",' + conf
    text = FILES["docs/conf.py"].replace('"show_memory": False,', order)
    project.write("docs/conf.py", text + "docsaccel_cache_granularity = 'function'\n")
    project.write("mylib/__init__.py", FILES["mylib/__init__.py"] + LIBRARY)
    for name, body in examples.items():
        project.write(f"docs/examples/{name}", example_source(name, body))
    first = project.build()
    assert first.returncode == 0, first.output
    return project


SHARED = {
    # The logger mylib holds: logging's manager and every logger's cache are shared.
    "logger": "import logging\n\nlogging.getLogger('x').info('hi')\nprint('a')\n",
    # The Literal alias mylib holds: typing caches every Literal[...] made.
    "literal": "from typing import Literal\n\nprint('a', Literal['p', 'q'])\n",
}


@pytest.mark.parametrize("touch", sorted(SHARED))
def test_another_librarys_shared_objects_are_no_state_of_the_project(
    tmp_path: Path, touch: str
) -> None:
    reader = "import mylib\n\nprint('b', mylib.area('y'))\n"
    project = _project(tmp_path, {"plot_a.py": SHARED[touch], "plot_b.py": reader})
    assert project.build().executed() == set()
    edited = reader.replace("'b'", "'b, edited'")
    project.write("docs/examples/plot_b.py", example_source("plot_b.py", edited))
    again = project.build()
    assert again.returncode == 0, again.output
    assert again.executed() == {"plot_b.py"}
    assert again.records["plot_b.py"]["cache"]["reason"] == "source changed"


def test_an_example_failing_in_every_build_runs_alone(tmp_path: Path) -> None:
    # The earlier examples fill mylib's caches (a class-level dict, a callable's
    # signature, a functools.cache, a function compiled at run time); the failing one
    # reads them all, and is never stored, so it has no entry to say what it reads.
    uses = (
        "from mylib import Shape, layout, table\n\nprint(Shape.sides('{0}'), layout(3), table(4))\n"
    )
    examples = {
        "plot_a.py": uses.format("square"),
        "plot_b.py": uses.format("triangle"),
        "plot_c_fails.py": uses.format("circle") + "raise RuntimeError('always')\n",
        "plot_d.py": uses.format("hexagon"),
    }
    project = _project(tmp_path, examples, ' "only_warn_on_example_error": True,')
    again = project.build()
    assert again.returncode == 0, again.output
    assert again.records["plot_c_fails.py"]["status"] == "failed"
    assert again.executed() == {"plot_c_fails.py"}
    assert again.cached() == {"plot_a.py", "plot_b.py", "plot_d.py"}


STATS = """
_OFFSET = 0


def set_offset(value):
    global _OFFSET
    _OFFSET = value


def mean(xs):
    return sum(xs) / len(xs) + _OFFSET
"""


def test_reasons_name_the_chain_back_to_what_changed(tmp_path: Path) -> None:
    # plot_b reads the offset plot_a sets, and a data file. The data file changes: plot_b
    # runs for it, and plot_a for plot_b; neither for the other alone (no circle).
    examples = {
        "plot_a.py": "from mylib.stats import set_offset\n\nset_offset(7)\n",
        "plot_b.py": "from mylib import DATA\nfrom mylib.stats import mean\n\n"
        "with open(DATA) as f:\n    print(len(f.read().splitlines()), mean([1, 2]))\n",
    }
    project = Project(tmp_path)
    project.write("mylib/stats.py", STATS)
    _project(tmp_path, examples, project=project)
    project.write("data/table.csv", FILES["data/table.csv"] + "3,4\n")
    again = project.build()
    assert again.returncode == 0, again.output
    assert again.executed() == {"plot_a.py", "plot_b.py"}
    reason_b = again.records["plot_b.py"]["cache"]["reason"]
    assert reason_b.startswith("data/table.csv"), reason_b
    reason_a = again.records["plot_a.py"]["cache"]["reason"]
    assert reason_a == (
        "examples/plot_b.py reads the state it leaves (mylib/stats.py:_OFFSET) and runs: "
        + reason_b
    )
