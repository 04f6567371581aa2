"""Only the project's state crosses examples, in real builds from fresh copies sharing a
cache: an example is not counted as changing state because it touched another library's
shared objects (logging's loggers, typing's caches) a project global holds, nor because
it filled a cache the project fills lazily. So an edit re-runs the edited example alone,
and an example that fails in every build (never stored) runs alone when nothing changed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.cache_project import ALL, FILES, Build, Project, differing, example_source

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
    assert again.records["plot_c_fails.py"]["cache"]["reason"] == (
        "no entry: it failed in the last build (a failed example is never stored)"
    )
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


SHAPES = '''

class Shape:
    """Works out and keeps each shape's sides the first time it is asked."""

    _sides = {}

    @classmethod
    def sides(cls, name):
        if name not in cls._sides:
            cls._sides[name] = _count(name)
        return cls._sides[name]


def _count(name):
    return len(name)


def peek(name):
    """What an earlier call of Shape.sides worked out, without working it out."""
    return Shape._sides[name]
'''

#: How plot_b reads the entry plot_a filled: neither runs _count or Shape.sides.
READERS = {
    "attribute": "print('b', Shape._sides['square'])",
    "function": "from mylib.shapes import peek\n\nprint('b', peek('square'))",
}


def _fillers(reader: str) -> dict[str, str]:
    """plot_a fills Shape._sides['square'], plot_b reads that entry (``reader``), plot_c
    fills an entry of its own, plot_d only uses the class."""
    head = "from mylib.shapes import Shape\n\n"
    return {
        "plot_a.py": head + "print('a', Shape.sides('square'))\n",
        "plot_b.py": head + READERS[reader] + "\n",
        "plot_c.py": head + "print('c', Shape.sides('circle'))\n",
        "plot_d.py": head + "print('d', type(Shape()).__name__)\n",
    }


def _shapes(tmp_path: Path, granularity: str, reader: str = "attribute") -> Project:
    """The four examples of :func:`_fillers`, built and stored at ``granularity``."""
    project = Project(tmp_path)
    project.write("mylib/shapes.py", SHAPES)
    _project(tmp_path, _fillers(reader), project=project)
    if granularity != "function":
        conf = (project.pristine / "docs" / "conf.py").read_text("utf-8")
        project.write("docs/conf.py", conf.replace("'function'", repr(granularity)))
        assert project.build().returncode == 0
    assert project.build().executed() == set()
    return project


def _page(build: Build, name: str) -> str:
    return (build.outdir / "auto_examples" / name.replace(".py", ".html")).read_text("utf-8")


@pytest.mark.parametrize("reader", sorted(READERS))
@pytest.mark.parametrize(
    "body",
    [
        # What _count returns changes: a clean build's pages of a, b and c change.
        "return len(name) + 1",
        # The same results by other code: the cache cannot know, so the same ones run.
        "count = len(name)\n    return count",
    ],
    ids=["result-changed", "same-result"],
)
def test_an_edit_of_the_code_filling_a_lazy_cache_runs_its_readers(
    tmp_path: Path, body: str, reader: str
) -> None:
    # plot_b reads what plot_a's run of _count made, so it runs with plot_a; plot_d
    # only uses the class, so it stays restored. A filled cache is still no state: a
    # change of plot_a's text alone re-runs plot_a alone.
    project = _shapes(tmp_path, "function", reader)
    project.write("mylib/shapes.py", SHAPES.replace("return len(name)", body))
    again = project.build()
    assert again.returncode == 0, again.output
    assert again.executed() == {"plot_a.py", "plot_b.py", "plot_c.py"}
    assert again.cached() == {"plot_d.py"}
    reason_b = again.records["plot_b.py"]["cache"]["reason"]
    assert reason_b == "mylib/shapes.py: _count changed", reason_b
    if body.endswith("+ 1"):
        assert "b 7" in _page(again, "plot_b.py")
    edited = _fillers(reader)["plot_a.py"].replace("'a'", "'a, edited'")
    project.write("docs/examples/plot_a.py", example_source("plot_a.py", edited))
    last = project.build()
    assert last.returncode == 0, last.output
    assert last.executed() == {"plot_a.py"}


def test_at_module_granularity_an_edit_of_the_filling_code_runs_every_user(
    tmp_path: Path,
) -> None:
    # The file counts whole: every example using it runs, the class's users too.
    project = _shapes(tmp_path, "module")
    project.write("mylib/shapes.py", SHAPES.replace("return len(name)", "return len(name) + 1"))
    again = project.build()
    assert again.returncode == 0, again.output
    assert again.executed() == {"plot_a.py", "plot_b.py", "plot_c.py", "plot_d.py"}
    assert again.records["plot_b.py"]["cache"]["reason"] == "mylib/shapes.py changed"


def test_an_example_removing_a_file_it_did_not_write_runs_in_every_build(
    tmp_path: Path,
) -> None:
    # plot_a takes a file of the checkout away; plot_b lists the folder after it. A
    # restore puts back what a run wrote, never takes a user's file away: restored,
    # plot_a would leave the file there, and plot_b's page would list it.
    examples = {
        "plot_a.py": "import os\n\nos.remove(os.path.join('data', 'gone.txt'))\nprint('a')\n",
        "plot_b.py": "import os\n\nprint('b', sorted(os.listdir('data')))\n",
    }
    project = Project(tmp_path)
    project.write("docs/examples/data/gone.txt", "x\n")
    project.write("docs/examples/data/kept.txt", "y\n")
    project = _project(tmp_path, examples, project=project)
    again = project.build()
    assert again.returncode == 0, again.output
    # plot_b lists the folder as the checkout has it before plot_a runs: it runs too.
    assert again.executed() == {"plot_a.py", "plot_b.py"}, again.records["plot_b.py"]["cache"]
    reason = again.records["plot_a.py"]["cache"]["reason"]
    assert reason == (
        "no entry: the last build did not store it (it removed docs/examples/data/gone.txt, "
        "which it did not write, and a restore would not)"
    ), reason
    clean = project.build(env={"DOCSACCEL_CACHE": "0"})
    assert differing(again.gallery_files(), clean.gallery_files()) == []
    assert "'kept.txt']" in (again.docs / "auto_examples" / "plot_b.rst").read_text("utf-8")
