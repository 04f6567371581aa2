"""The instrumentation that records which project functions an example ran
(``function`` granularity), in this process: modules imported after it is installed, and
modules loaded before."""

from __future__ import annotations

import importlib
import json
import sys
import traceback
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from docsaccel.cache.deps import Project, collect
from docsaccel.cache.fingerprint import code_digests
from docsaccel.cache.instrument import Instrumenter, is_machinery
from docsaccel.cache.pieces import MODULE_BODY
from docsaccel.cache.recorder import Recorder

LIB = '''\
"""A module of the project."""

SCALE = [lambda x: 2 * x]


def njit(function):
    return function


class Base:
    def name(self):
        return "base"


class Child(Base):
    """A child."""

    def name(self):
        """Calls super() without arguments."""
        return "child of " + super().name()


def outer(n):
    def inner():
        return n + 1

    return inner, (lambda: n * 3)


def counting(n):
    yield from range(n)


def fails():
    value = 1
    raise ValueError(value)


@njit
def compiled(x):
    def twice(y):
        return 2 * y

    return twice(x) // 2


def never():
    return 0
'''


@pytest.fixture
def lib(tmp_path: Path) -> Iterator[tuple[Path, Project]]:
    root = tmp_path / "proj"
    (root / "instlib").mkdir(parents=True)
    (root / "instlib" / "__init__.py").write_text("", "utf-8")
    (root / "instlib" / "mod.py").write_text(LIB, "utf-8")
    sys.path.insert(0, str(root))
    yield root, Project(str(root), (str(root),))
    sys.path.remove(str(root))
    for name in ("instlib", "instlib.mod"):
        sys.modules.pop(name, None)
    Instrumenter.uninstall()


def _codes(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def _exercise(mod) -> None:
    assert mod.Child().name() == "child of base"
    inner, tripled = mod.outer(1)
    assert inner() == 2 and tripled() == 3
    assert list(mod.counting(3)) == [0, 1, 2]
    assert mod.SCALE[0](2) == 4
    assert mod.compiled(5) == 5


EXPECTED = {
    "Child.name",
    "Base.name",
    "outer",
    "outer.<locals>.inner",
    "counting",
    MODULE_BODY,
}


def test_a_module_imported_after_install_records_the_functions_that_ran(lib) -> None:
    root, project = lib
    instrumenter = Instrumenter.install(project.wants)
    instrumenter.begin()
    mod = importlib.import_module("instlib.mod")
    path = str(root / "instlib" / "mod.py")
    instrumenter.begin()
    _exercise(mod)
    assert {piece for file, piece in instrumenter.ran if file == path} == EXPECTED
    # The lambda made in outer() counts as outer, even when called on its own.
    instrumenter.begin()
    tripled = mod.outer(2)[1]
    instrumenter.begin()
    assert tripled() == 6
    assert instrumenter.ran == {(path, "outer")}
    # Every recorded piece is one code_digests knows; the JIT-compiled one is left as
    # written and counted whenever the file counts.
    assert {p for _, p in instrumenter.ran} <= set(code_digests(path))
    assert instrumenter.instrumented[path] == {"compiled", "compiled.<locals>.twice"}
    assert all("__docsaccel_note__" not in c.co_names for c in _codes(mod.compiled.__code__))
    assert "__docsaccel_note__" not in vars(mod)  # no name added to the module
    # Docstrings and tracebacks are those of the source.
    assert mod.Child.__doc__ == "A child." and mod.Child.name.__doc__.startswith("Calls")
    with pytest.raises(ValueError) as raised:
        mod.fails()
    line = traceback.extract_tb(raised.tb)[-1]
    assert line.lineno == LIB.splitlines().index("    raise ValueError(value)") + 1


def test_a_module_loaded_before_install_gets_its_live_functions_instrumented(lib) -> None:
    root, project = lib
    mod = importlib.import_module("instlib.mod")
    inner_made_before, _ = mod.outer(1)
    instrumenter = Instrumenter.install(project.wants)
    path = str(root / "instlib" / "mod.py")
    assert path in instrumenter.instrumented
    instrumenter.begin()
    _exercise(mod)
    # The module body ran before: only the lambda written in it records MODULE_BODY.
    assert {piece for file, piece in instrumenter.ran if file == path} == EXPECTED
    instrumenter.begin()
    assert inner_made_before() == 2
    assert instrumenter.ran == {(path, "outer.<locals>.inner")}


def test_a_file_changed_since_it_was_loaded_counts_whole(lib, tmp_path: Path) -> None:
    root, project = lib
    mod = importlib.import_module("instlib.mod")
    source = root / "instlib" / "mod.py"
    source.write_text(LIB.replace("return 0", "return 1"), "utf-8")
    instrumenter = Instrumenter.install(project.wants)
    assert str(source) not in instrumenter.instrumented
    assert mod.never() == 0  # still the code it loaded
    example = tmp_path / "plot_x.py"
    example.write_text("import instlib.mod\ninstlib.mod.never()\n", "utf-8")
    recorder = Recorder.get()
    recorder.start(project.roots, code=project.wants)
    exec(compile(example.read_text("utf-8"), str(example), "exec"), {})
    seen = recorder.stop()
    deps = collect(seen, project, str(example), "function").to_json()
    assert "instlib/mod.py" in deps["files"] and "instlib/mod.py" not in deps["code"]


def test_code_outside_the_project_is_untouched(lib) -> None:
    _, project = lib
    before = json.dumps.__code__
    Instrumenter.install(project.wants)
    importlib.reload(json)
    assert "__docsaccel_note__" not in json.dumps.__code__.co_names
    assert json.dumps.__code__.co_code == before.co_code


def test_instrumented_collect_counts_pieces(lib, tmp_path: Path) -> None:
    _, project = lib
    recorder = Recorder.get()
    example = tmp_path / "plot_y.py"
    example.write_text("import instlib.mod\ninstlib.mod.outer(1)\n", "utf-8")
    recorder.start(project.roots, code=project.wants)
    exec(compile(example.read_text("utf-8"), str(example), "exec"), {})
    seen = recorder.stop()
    deps = collect(seen, project, str(example), "function").to_json()
    assert set(deps["code"]["instlib/mod.py"]) == {
        MODULE_BODY,
        "outer",
        "compiled",
        "compiled.<locals>.twice",
        "njit",
    }


def test_the_plugins_own_machinery_is_never_watched() -> None:
    import docsaccel.cache.recorder as recorder_module
    import docsaccel.gallery.hook as hook_module
    import docsaccel.gallery.process_end as process_end_module
    import docsaccel.render.gating as gating_module

    instrumenter = Instrumenter(lambda path: True)
    for module in (recorder_module, hook_module, process_end_module):
        assert is_machinery(module.__file__) and not instrumenter.takes(module.__file__)
    assert not is_machinery(gating_module.__file__) and instrumenter.takes(gating_module.__file__)
    recorder = Recorder.get()
    recorder.start([str(Path(recorder_module.__file__).parents[2])])
    Path(recorder_module.__file__).read_bytes()  # as linecache does for a traceback
    Path(gating_module.__file__).read_bytes()
    seen = recorder.stop()
    assert seen.files == {gating_module.__file__}


def test_importing_modules_that_share_a_class_leaves_no_state(lib) -> None:
    # Each module imported while the example runs is measured from the state its body
    # left; a class of the project's, bound in two of them, reads the same in both.
    root, project = lib
    (root / "instlib" / "shapes.py").write_text("class Box:\n    SIDES = 4\n", "utf-8")
    (root / "instlib" / "use.py").write_text("from instlib.shapes import Box\n", "utf-8")
    recorder = Recorder.get()
    try:
        recorder.start(project.roots, code=project.wants, label="first")
        importlib.import_module("instlib.use")
        assert recorder.stop().left_state == set()
        recorder.start(project.roots, code=project.wants, label="second")
        sys.modules["instlib.shapes"].Box.SIDES = 5
        left = recorder.stop().left_state
        shapes, use = (str(root / "instlib" / f"{name}.py") for name in ("shapes", "use"))
        assert left == {(shapes, "Box"), (use, "Box")}
    finally:
        for name in ("instlib.shapes", "instlib.use"):
            sys.modules.pop(name, None)
