"""Which functions of the project's own code ran, at no cost to any other code.

At ``function`` granularity the cache needs the functions (and module bodies) of the
project's code that an example executed. A tracer (:func:`sys.settrace`, coverage.py's
C tracer) sees that, but on Python 3.11 any trace function puts the whole interpreter on
its slow path: every line of every library the example runs pays, not only the project's.
So the project's own modules are compiled with one extra statement at the top of every
function (after its docstring), and in every lambda, that adds the function's piece to a
set; code outside the roots runs exactly as without the cache.

- Modules imported after :func:`install` are compiled so by an import hook: a finder
  first in :data:`sys.meta_path` asks the other finders, and hands a project module whose
  loader is the standard source loader to :class:`_Loader` instead.
- Modules already loaded then (``conf.py`` imported the library, the build imported the
  plugin) keep their module body; each live function of theirs (found through :mod:`gc`)
  gets the instrumented code of the same name and first line, if the file still holds the
  code it runs.
- A file that cannot be fully instrumented (a function whose code could not be swapped,
  a loader other than the standard one) is not in :attr:`Instrumenter.instrumented`:
  :func:`docsaccel.cache.deps.collect` then counts it whole, as at ``module`` granularity.
- Functions a JIT compiles from their bytecode (``@numba.njit``, ``@torch.compile``...)
  cannot hold the extra statement: they are left as they are and counted whenever their
  file counts (:attr:`Instrumenter.instrumented` maps the file to them).

Pieces are named by :func:`docsaccel.cache.fingerprint.functions`, the rule
:func:`~docsaccel.cache.fingerprint.code_digests` uses; a lambda counts as the function
(or module body) it is written in.

Example::

    instrumenter = Instrumenter.install(project.wants)
    instrumenter.ran.clear()
    ...  # the example runs
    ran = set(instrumenter.ran)         # (file, piece) of each project function that ran
    instrumenter.instrumented           # {file: the pieces left as written}, per watched file
"""

from __future__ import annotations

import ast
import builtins
import gc
import importlib.machinery
import os
import sys
import threading
import types
from collections.abc import Callable, Iterator
from typing import Any

from docsaccel.cache.fingerprint import MODULE_BODY, functions

__all__ = ["PACKAGE_DIR", "RAN_NAME", "Instrumenter", "is_machinery"]

#: The name instrumented code records through: a builtin, so that no module's namespace
#: (what ``dir()`` and autodoc list) gains a name. Never mangled: it ends in ``__``.
RAN_NAME = "__docsaccel_ran__"

#: The docsaccel package's folder.
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_CACHE_CODE = os.path.join(PACKAGE_DIR, "cache", "")
_HOOK = os.path.join(PACKAGE_DIR, "gallery", "hook.py")


def is_machinery(path: str) -> bool:
    """Whether a file (absolute, normalised) is the plugin's own code that runs while an
    example records (the cache, the hook stopping the recording): where docsaccel is
    part of the project, it is still never a dependency of an example, nor instrumented.
    """
    return path.startswith(_CACHE_CODE) or path == _HOOK


# Decorators of functions compiled from their bytecode, which must stay as written.
_JIT_WORDS = frozenset({"jit", "njit", "vectorize", "guvectorize", "cfunc", "stencil", "compile"})


def _decorator_words(node: ast.expr) -> Iterator[str]:
    while isinstance(node, ast.Call):
        node = node.func
    while isinstance(node, ast.Attribute):
        yield node.attr
        node = node.value
    if isinstance(node, ast.Name):
        yield node.id


def _compiled_by_a_jit(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(
        word in _JIT_WORDS for item in node.decorator_list for word in _decorator_words(item)
    )


def _record(key: tuple[str, str], at: ast.AST) -> ast.expr:
    """``__docsaccel_ran__.add(key)``, placed at ``at``."""
    call = ast.Call(
        func=ast.Attribute(value=ast.Name(RAN_NAME, ast.Load()), attr="add", ctx=ast.Load()),
        args=[ast.Constant(key)],
        keywords=[],
    )
    return ast.copy_location(call, at)


class _Lambdas(ast.NodeTransformer):
    """Records ``key`` in each lambda of one function's own body (not in nested defs)."""

    def __init__(self, key: tuple[str, str]) -> None:
        self.key = key

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST:
        # A nested function records its own piece; its decorators and defaults are ours.
        for item in (*node.decorator_list, *node.args.defaults, *node.args.kw_defaults):
            if item is not None:
                self.visit(item)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        self.generic_visit(node)
        both = ast.Tuple([_record(self.key, node.body), node.body], ast.Load())
        node.body = ast.Subscript(ast.copy_location(both, node.body), ast.Constant(1), ast.Load())
        return node


def instrumented_tree(tree: ast.Module, path: str) -> tuple[ast.Module, frozenset[str]]:
    """``tree`` with every function and lambda recording its piece (changed in place), and
    the pieces left as written (compiled by a JIT)."""
    left: set[str] = set()
    for name, node in list(functions(tree)):
        if _compiled_by_a_jit(node) or any(name.startswith(f"{j}.<locals>.") for j in left):
            left.add(name)  # a JIT compiles the functions nested in it too
            continue
        key = (path, name)
        body = node.body
        first = 1 if body and _is_docstring(body[0]) else 0
        statement = ast.copy_location(ast.Expr(_record(key, body[0])), body[0])
        for statement_node in body:
            _Lambdas(key).visit(statement_node)
        body.insert(first, statement)
    for node in tree.body:
        _Lambdas((path, MODULE_BODY)).visit(node)
    return ast.fix_missing_locations(tree), frozenset(left)


def _is_docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def _compile(source: bytes, path: str) -> tuple[types.CodeType, frozenset[str]]:
    tree, left = instrumented_tree(ast.parse(source, filename=path), path)
    return compile(tree, path, "exec", dont_inherit=True), left


def _code_by_place(code: types.CodeType) -> dict[tuple[str, int], types.CodeType]:
    """Every function code object inside ``code``, by ``(co_qualname, co_firstlineno)``."""
    found: dict[tuple[str, int], types.CodeType] = {}
    stack = [code]
    while stack:
        current = stack.pop()
        for const in current.co_consts:
            if isinstance(const, types.CodeType):
                found[(const.co_qualname, const.co_firstlineno)] = const
                stack.append(const)
    return found


class Instrumenter:
    """The process's instrumentation of the project's code; see the module docstring."""

    _instance: Instrumenter | None = None
    _lock = threading.Lock()

    def __init__(self, wants: Callable[[str], bool]) -> None:
        self.wants = wants
        #: ``(file, piece)`` of every instrumented function that ran since the last clear.
        self.ran: set[tuple[str, str]] = set()
        #: Fully instrumented files, each with the pieces left as written (always counted).
        self.instrumented: dict[str, frozenset[str]] = {}
        self._tried: set[str] = set()  # module files looked at once (as ``__file__`` says)

    @classmethod
    def install(cls, wants: Callable[[str], bool]) -> Instrumenter:
        """The process's instrumenter for the files ``wants`` accepts (absolute paths),
        installing it the first time; a later call with another predicate extends it."""
        with cls._lock:
            if cls._instance is None:
                cls._instance = cls(wants)
                # Left in place by uninstall(): code instrumented earlier still runs.
                setattr(builtins, RAN_NAME, cls._instance.ran)
                sys.meta_path.insert(0, _Finder(cls._instance))
            elif cls._instance.wants != wants:
                cls._instance.wants = wants
                cls._instance._tried.clear()
            cls._instance._swap_loaded()
            return cls._instance

    @classmethod
    def uninstall(cls) -> None:
        """Stop instrumenting modules imported from now on (code already instrumented
        stays so, recording into a set nobody reads)."""
        with cls._lock:
            sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _Finder)]
            cls._instance = None

    def takes(self, path: str | None) -> bool:
        """Whether a module file is one to instrument."""
        if not path or not path.endswith(".py"):
            return False
        path = os.path.normpath(os.path.abspath(path))
        return not is_machinery(path) and self.wants(path)

    def compile(self, source: bytes, path: str) -> types.CodeType:
        code, left = _compile(source, path)
        self.instrumented[path] = left
        return code

    def _swap_loaded(self) -> None:
        """Give the live functions of already loaded project modules instrumented code."""
        files: dict[str, list[types.FunctionType]] = {}
        for module in list(sys.modules.values()):
            # Not getattr(module, ...): a lazy module's __getattr__ could import something.
            path = (getattr(module, "__dict__", None) or {}).get("__file__")
            if not isinstance(path, str) or path in self._tried:
                continue
            self._tried.add(path)
            if self.takes(path):
                files[os.path.normpath(os.path.abspath(path))] = []
        files = {p: v for p, v in files.items() if p not in self.instrumented}
        if not files:
            return
        for obj in gc.get_objects():
            if type(obj) is types.FunctionType:
                path = os.path.normpath(obj.__code__.co_filename)
                if path in files:
                    files[path].append(obj)
        for path, live in files.items():
            self._swap_file(path, live)

    def _swap_file(self, path: str, live: list[types.FunctionType]) -> None:
        try:
            with open(path, "rb") as stream:
                source = stream.read()
            plain = _code_by_place(compile(source, path, "exec", dont_inherit=True))
            code, left = _compile(source, path)
        except (OSError, SyntaxError, ValueError):
            return  # not instrumented: the file counts whole
        instrumented = _code_by_place(code)
        swaps = []
        for function in live:
            old = function.__code__
            place = (old.co_qualname, old.co_firstlineno)
            new, same = instrumented.get(place), plain.get(place)
            if same is None or new is None or old != same:
                return  # the file changed since it was loaded, or code made elsewhere
            if new.co_freevars != old.co_freevars:
                return
            swaps.append((function, new))
        for function, new in swaps:
            if function.__code__.co_qualname not in left:  # else left as written
                function.__code__ = new
        self.instrumented[path] = left


class _Loader(importlib.machinery.SourceFileLoader):
    """The standard source loader, compiling through the instrumenter."""

    def __init__(self, fullname: str, path: str, instrumenter: Instrumenter) -> None:
        super().__init__(fullname, path)
        self.instrumenter = instrumenter

    def get_code(self, fullname: str) -> types.CodeType:
        path = self.get_filename(fullname)
        return self.instrumenter.compile(self.get_data(path), os.path.normpath(path))


class _Finder:
    """First in :data:`sys.meta_path`: finds a module with the finders after it, and hands
    project modules to :class:`_Loader`."""

    def __init__(self, instrumenter: Instrumenter) -> None:
        self.instrumenter = instrumenter

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        for finder in list(sys.meta_path):
            if finder is self:
                continue
            find_spec = getattr(finder, "find_spec", None)
            if find_spec is None:
                return None  # a legacy finder: leave the search to the import system
            spec = find_spec(fullname, path, target)
            if spec is None:
                continue
            loader = spec.loader
            if type(loader) is importlib.machinery.SourceFileLoader and self.instrumenter.takes(
                spec.origin
            ):
                spec.loader = _Loader(fullname, spec.origin, self.instrumenter)
            return spec
        return None
