"""Which functions of the project's own code ran, at no cost to any other code.

The design, in full: the caching guide's *Design* section.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import gc
import importlib.machinery
import importlib.util
import marshal
import os
import sys
import types
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from docsaccel.cache.loaded import ModulesMemo, address
from docsaccel.cache.pieces import MODULE_BODY, functions
from docsaccel.contract import fork_safe_lock
from docsaccel.settings import read_env_setting

__all__ = [
    "NOTE_NAME",
    "PACKAGE_DIR",
    "Instrumenter",
    "checked_code",
    "is_machinery",
    "jit_left",
]

#: The name instrumented code notes a piece through: a builtin, so that no module's
#: namespace (what ``dir()`` and autodoc list) gains a name. Never mangled: it ends in
#: ``__``. Each function checks a flag of its own, a constant of its code: once noted in
#: the current example, a call pays one attribute read and a test.
NOTE_NAME = "__docsaccel_note__"
#: Bumped when instrumented code changes shape: it names the bytecode cache's files.
_CODE_VERSION = "2"
# What compiled (and cached) code holds where a flag belongs: (_MARK, piece index).
_MARK = "\0docsaccel-flag"

#: The docsaccel package's folder.
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The cache and the whole Sphinx plugin: besides the hook, the plugin's end-of-process,
# interruption and memory modules keep module state that changes while an example runs,
# which must never read as state the example left for the next one.
_MACHINERY = (os.path.join(PACKAGE_DIR, "cache", ""), os.path.join(PACKAGE_DIR, "gallery", ""))


def is_machinery(path: str) -> bool:
    """Whether a file (absolute, normalised) is the plugin's own code that runs while an
    example records (the cache, the Sphinx plugin around the example): where docsaccel is
    part of the project, it is still never a dependency of an example, nor instrumented.
    """
    return path.startswith(_MACHINERY)


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


class _Flag:
    """A piece's switch, held by its code as a constant: ``on`` until noted. ``swaps``:
    the functions known to run this code, each with the code it runs once noted (the
    same without the check) and the code with it."""

    __slots__ = ("key", "on", "swaps")

    def __init__(self, key: tuple[str, str]) -> None:
        self.key = key
        self.on = True
        self.swaps: list[tuple[types.FunctionType, types.CodeType, types.CodeType]] = []

    def __reduce__(self) -> Any:  # pickled code (cloudpickle) gets a flag of its own
        return (_Flag, (self.key,))


def _check(path: str, index: int) -> ast.expr:
    """``<flag>.on and __docsaccel_note__(<flag>)``, the flag a placeholder until bound."""
    mark = ast.Constant((_MARK, index))
    flag = ast.Attribute(mark, "on", ast.Load())
    note = ast.Call(func=ast.Name(NOTE_NAME, ast.Load()), args=[mark], keywords=[])
    return ast.BoolOp(ast.And(), [flag, note])


def _bind(code: types.CodeType, flags: list[_Flag]) -> types.CodeType:
    """``code`` with each placeholder constant replaced by its flag, nested code too."""
    consts = []
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            const = _bind(const, flags)
        elif type(const) is tuple and len(const) == 2 and const[0] == _MARK:
            const = flags[const[1]]
        consts.append(const)
    return code.replace(co_consts=tuple(consts))


def _record(path: str, index: int, at: ast.AST) -> ast.stmt:
    """``if __docsaccel_on__[path][index]: __docsaccel_note__(path, index)`` at ``at``."""
    check = _check(path, index)
    statement = ast.If(check.values[0], [ast.Expr(check.values[1])], [])
    return ast.fix_missing_locations(ast.copy_location(statement, at))


class _Lambdas(ast.NodeTransformer):
    """Records a piece in each lambda of one function's own body (not in nested defs)."""

    def __init__(self, path: str, index: int) -> None:
        self.path, self.index = path, index

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST:
        # A nested function records its own piece; its decorators and defaults are ours.
        for item in (*node.decorator_list, *node.args.defaults, *node.args.kw_defaults):
            if item is not None:
                self.visit(item)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        self.generic_visit(node)
        check = ast.copy_location(_check(self.path, self.index), node.body)
        both = ast.Tuple([check, node.body], ast.Load())
        node.body = ast.Subscript(ast.copy_location(both, node.body), ast.Constant(1), ast.Load())
        return ast.fix_missing_locations(node)


def jit_left(tree: ast.Module) -> frozenset[str]:
    """The functions a JIT compiles from their bytecode, and those nested in them: no
    recorder watches them; they count whenever their file counts."""
    left: set[str] = set()
    for name, node in functions(tree):
        if _compiled_by_a_jit(node) or any(name.startswith(f"{j}.<locals>.") for j in left):
            left.add(name)
    return frozenset(left)


def instrumented_tree(
    tree: ast.Module, path: str, lambdas: bool = True
) -> tuple[ast.Module, frozenset[str], tuple[str, ...]]:
    """``tree`` with every function and lambda recording its piece (changed in place), the
    pieces left as written (compiled by a JIT), and the qualified name of each index.
    ``lambdas=False``: the source has none (the word ``lambda`` is not in it), so no
    expression is walked for one."""
    left = jit_left(tree)
    names: list[str] = [MODULE_BODY]
    for name, node in list(functions(tree)):
        if name in left:
            continue
        index = len(names)
        names.append(name)
        body = node.body
        first = 1 if body and _is_docstring(body[0]) else 0
        if lambdas:
            for statement_node in body:
                _Lambdas(path, index).visit(statement_node)
        body.insert(first, _record(path, index, body[0]))
    if lambdas:
        for node in tree.body:
            _Lambdas(path, 0).visit(node)
    # Every node added has its location (set where it is made): no walk of the tree.
    return tree, left, tuple(names)


def _is_docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def _compile(source: bytes, path: str) -> tuple[types.CodeType, frozenset[str], tuple[str, ...]]:
    tree, left, names = instrumented_tree(
        ast.parse(source, filename=path), path, lambdas=b"lambda" in source
    )
    return compile(tree, path, "exec", dont_inherit=True), left, names


def _cache_file(path: str) -> str | None:
    """Where the instrumented code of ``path`` is kept (beside Python's own, by
    :func:`importlib.util.cache_from_source`, under a tag of its own)."""
    try:
        return importlib.util.cache_from_source(path, optimization=f"docsaccel{_CODE_VERSION}")
    except (NotImplementedError, ValueError):
        return None


def _cached_compile(
    source: bytes, path: str
) -> tuple[types.CodeType, frozenset[str], tuple[str, ...], types.CodeType]:
    """:func:`_compile`, from the bytecode cache when it holds this source at this path."""
    cache = _cache_file(path)
    digest = importlib.util.source_hash(source)
    if cache is not None:
        with contextlib.suppress(OSError, EOFError, ValueError, TypeError):
            with open(cache, "rb") as stream:
                magic, cached_path, cached_digest, left, names, code, plain = marshal.load(stream)
            if (magic, cached_path, cached_digest) == (importlib.util.MAGIC_NUMBER, path, digest):
                return code, frozenset(left), tuple(names), plain
    code, left, names = _compile(source, path)
    plain = compile(source, path, "exec", dont_inherit=True)
    if cache is not None and not sys.dont_write_bytecode:
        magic = importlib.util.MAGIC_NUMBER
        payload = (magic, path, digest, sorted(left), list(names), code, plain)
        with contextlib.suppress(OSError):
            os.makedirs(os.path.dirname(cache), exist_ok=True)
            partial = f"{cache}.{os.getpid()}.tmp"
            with open(partial, "wb") as stream:
                marshal.dump(payload, stream)
            os.replace(partial, cache)
    return code, left, names, plain


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


#: ``{file: [flag per piece index]}``, process-wide: instrumented code outlives an
#: instrumenter (see :meth:`Instrumenter.uninstall`).
_FLAGS: dict[str, list[_Flag]] = {}


#: The flags whose functions run their code without the check, until re-armed.
_SWAPPED: list[_Flag] = []


def _note(flag: _Flag) -> None:
    """What instrumented code calls the first time a piece runs in an example. The
    functions known to run it then run the same code without the check: seeing a
    function run costs nothing more until the next example."""
    flag.on = False
    if flag.swaps:
        for function, plain, checked in flag.swaps:
            if function.__code__ is checked:
                function.__code__ = plain
        _SWAPPED.append(flag)
    instrumenter = Instrumenter._instance
    if instrumenter is not None:
        instrumenter.note(flag.key)


def _register(path: str, names: tuple[str, ...]) -> list[_Flag]:
    flags = _FLAGS[path] = [_Flag((path, name)) for name in names]
    return flags


def rearm() -> None:
    """Make every piece note itself again the next time it runs."""
    while _SWAPPED:
        for function, plain, checked in _SWAPPED.pop().swaps:
            if function.__code__ is plain:
                function.__code__ = checked
    for flags in _FLAGS.values():
        for flag in flags:
            flag.on = True


def _flag_of(code: types.CodeType) -> _Flag | None:
    for const in code.co_consts:
        if type(const) is _Flag:
            return const
    return None


def _learn_swaps(
    functions_: Iterable[types.FunctionType], plain: types.CodeType, checked: types.CodeType
) -> None:
    """Note, for each function running instrumented code of a module, the code it runs
    once noted: the module's plain code of the same place, whose nested functions are
    still the instrumented ones (a closure made later notes itself)."""
    plain_by_place = _code_by_place(plain)
    checked_by_place = _code_by_place(checked)
    for function in functions_:
        code = function.__code__
        place = (code.co_qualname, code.co_firstlineno)
        flag = _flag_of(code)
        same = plain_by_place.get(place)
        if flag is None or same is None or checked_by_place.get(place) is not code:
            continue
        consts = tuple(
            checked_by_place.get((c.co_qualname, c.co_firstlineno), c)
            if isinstance(c, types.CodeType)
            else c
            for c in same.co_consts
        )
        if any(f is function for f, _, _ in flag.swaps):
            continue
        plain_code = same.replace(co_consts=consts)
        _CHECKED[address(plain_code)] = code
        flag.swaps.append((function, plain_code, code))


#: ``{address of a function's plain code: its instrumented code}``: the same code to
#: anyone comparing a function's state (:mod:`docsaccel.cache.module_state`).
_CHECKED: dict[int, types.CodeType] = {}


def checked_code(code: types.CodeType) -> types.CodeType:
    """The instrumented code a function runs plainly once noted, else ``code``."""
    return _CHECKED.get(address(code), code)


class Instrumenter:
    """The process's instrumentation of the project's code; see the caching guide's design."""

    _instance: Instrumenter | None = None
    _lock = fork_safe_lock()

    def __init__(self, wants: Callable[[str], bool]) -> None:
        self.wants = wants
        #: ``(file, piece)`` of every instrumented function that ran since the last clear.
        self.ran: set[tuple[str, str]] = set()
        #: Fully instrumented files, each with the pieces left as written (always counted).
        self.instrumented: dict[str, frozenset[str]] = {}
        #: ``{module file: (file, piece) that ran while its body ran}``, for the process.
        self.import_code: dict[str, set[tuple[str, str]]] = {}
        self._importing: list[str] = []
        self._compiled: dict[str, tuple[types.CodeType, types.CodeType]] = {}
        #: Called with ``(file, module)`` once a project module's body has run.
        self.after_import: Callable[[str, types.ModuleType], None] | None = None
        self._tried: set[str] = set()  # module files looked at once (as ``__file__`` says)
        # Every example's start looks for loaded modules not looked at yet: rarely any.
        self._looked: ModulesMemo[None] = ModulesMemo()

    @classmethod
    def install(cls, wants: Callable[[str], bool]) -> Instrumenter:
        """The process's instrumenter for the files ``wants`` accepts (absolute paths),
        installing it the first time; a later call with another predicate extends it."""
        with cls._lock:
            if Instrumenter._instance is None:
                Instrumenter._instance = _recorder_class()(wants)
                # Left in place by uninstall(): code instrumented earlier still runs.
                setattr(builtins, NOTE_NAME, _note)
                sys.meta_path.insert(0, _Finder(Instrumenter._instance))
            elif Instrumenter._instance.wants != wants:
                Instrumenter._instance.wants = wants
                Instrumenter._instance._tried.clear()
            Instrumenter._instance._swap_loaded()
            return Instrumenter._instance

    @classmethod
    def uninstall(cls) -> None:
        """Stop instrumenting modules imported from now on (code already instrumented
        stays so, noting into nothing)."""
        with cls._lock:
            sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _Finder)]
            Instrumenter._instance = None

    def begin(self) -> None:
        """A new example: forget what ran, and let every piece note itself again."""
        self.ran.clear()
        self.rearm()

    def rearm(self) -> None:
        rearm()

    def loaded_code(self, loader: _Loader, fullname: str) -> types.CodeType:
        """The code a project module runs, as its loader asks for it."""
        path = loader.get_filename(fullname)
        return self.compile(loader.get_data(path), os.path.normpath(path))

    def note(self, key: tuple[str, str]) -> None:
        self.ran.add(key)
        if self._importing:
            self.import_code[self._importing[-1]].add(key)

    @contextlib.contextmanager
    def importing(self, path: str, module: types.ModuleType) -> Iterator[None]:
        """While a project module's body runs: what runs is its state's (re-armed on the
        way in and out, so a piece that ran before notes itself for this module too)."""
        self.import_code[path] = set()
        self._importing.append(path)
        self.rearm()
        try:
            yield
        finally:
            self._importing.pop()
            self.rearm()
        self._module_ran(path, module)
        if self.after_import is not None:
            self.after_import(path, module)

    def takes(self, path: str | None) -> bool:
        """Whether a module file is one to instrument."""
        if not path or not path.endswith(".py"):
            return False
        path = os.path.normpath(os.path.abspath(path))
        return not is_machinery(path) and self.wants(path)

    def compile(self, source: bytes, path: str) -> types.CodeType:
        code, left, names, plain = _cached_compile(source, path)
        self.instrumented[path] = left
        checked = _bind(code, _register(path, names))
        self._compiled[path] = (plain, checked)
        return checked

    def _module_ran(self, path: str, module: types.ModuleType) -> None:
        """Learn which functions a module's body made from the code it was given."""
        compiled = self._compiled.pop(path, None)
        if compiled is None:
            return
        found: dict[int, types.FunctionType] = {}
        stack: list[Any] = [vars(module)]
        while stack:
            for value in list(stack.pop().values()):
                if type(value) is types.FunctionType and value.__code__.co_filename == path:
                    found[id(value)] = value
                elif (
                    isinstance(value, type)
                    and value.__module__ == module.__name__
                    and id(value) not in found
                ):
                    found[id(value)] = value  # type: ignore[assignment]
                    stack.append(dict(vars(value)))
        functions_ = [f for f in found.values() if type(f) is types.FunctionType]
        _learn_swaps(functions_, *compiled)

    def _swap_loaded(self) -> None:
        """Give the live functions of already loaded project modules instrumented code."""
        # Which files are wanted is what _tried goes with (emptied when it changes).
        self._looked.get(self.wants, self._swap_modules)

    def _swap_modules(self, loaded: list[tuple[str, Any]]) -> None:
        files: dict[str, list[types.FunctionType]] = {}
        for _, module in loaded:
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
            # The plain code, compiled beside the instrumented one (or cached with it),
            # is what the loaded functions ran: not compiled a second time here.
            code, left, names, plain_code = _cached_compile(source, path)
            plain = _code_by_place(plain_code)
        except (OSError, SyntaxError, ValueError):
            return  # not instrumented: the file counts whole
        checked = _bind(code, _register(path, names))
        instrumented = _code_by_place(checked)
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
        _learn_swaps([f for f, _ in swaps], plain_code, checked)
        self.instrumented[path] = left


def _recorder_class() -> type[Instrumenter]:
    """The instrumenter, or on 3.12+ the ``sys.monitoring`` recorder unless the
    ``cache_recorder`` setting (``DOCSACCEL_CACHE_RECORDER``) says ``instrument``."""
    if sys.version_info >= (3, 12) and read_env_setting("cache_recorder") != "instrument":
        from docsaccel.cache.monitor import Monitor

        return Monitor
    return Instrumenter


class _Loader(importlib.machinery.SourceFileLoader):
    """The standard source loader, compiling through the instrumenter."""

    def __init__(self, fullname: str, path: str, instrumenter: Instrumenter) -> None:
        super().__init__(fullname, path)
        self.instrumenter = instrumenter

    def get_code(self, fullname: str) -> types.CodeType:
        return self.instrumenter.loaded_code(self, fullname)

    def exec_module(self, module: types.ModuleType) -> None:
        path = os.path.normpath(self.get_filename(module.__name__))
        with self.instrumenter.importing(path, module):
            super().exec_module(module)


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
