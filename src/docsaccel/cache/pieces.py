"""How a Python file splits into *pieces*, the units ``function`` granularity counts.

The design, in full: the caching guide's *Design* section.

>>> facts = split(ast.parse(
...     "FACTOR = 2\\n"
...     "def scale(x):\\n"
...     "    return FACTOR * x\\n"
...     "class Box:\\n"
...     "    def area(self):\\n"
...     "        return 1\\n"
... ))
>>> sorted(facts.reads["scale"])  # the names its code reads
['FACTOR', 'x']
>>> facts.short["Box.area"]  # the name code uses to reach it
'area'
>>> {"scale", "Box.area", MODULE_BODY} <= set(facts.digests)
True
"""

from __future__ import annotations

import ast
import copy
import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

__all__ = [
    "CLASS_BASES",
    "DOCSTRINGS",
    "DOC_READERS",
    "MODULE_BODY",
    "NAMES",
    "Facts",
    "definitions",
    "every_statement",
    "functions",
    "piece_of",
    "reads_of",
    "split",
]

#: The module body's piece.
MODULE_BODY = "<module>"
#: The file's docstrings.
DOCSTRINGS = "<docstrings>"
#: The headers of the classes that have bases.
CLASS_BASES = "<classes>"
#: Not a piece of the file: the names of its pieces the example's code names (an entry's).
NAMES = "<names>"
#: Names whose use reads docstrings (``help(f)``, ``inspect.getdoc``, ``f.__doc__``).
DOC_READERS = frozenset({"__doc__", "getdoc", "help", "pydoc", "getcomments", "cleandoc"})

# Decorators of the standard library that only wrap or mark what they decorate. A name
# the file itself defines is never taken for one of them.
_PURE_DECORATORS = frozenset(
    {
        "property",
        "staticmethod",
        "classmethod",
        "setter",
        "getter",
        "deleter",
        "cache",
        "lru_cache",
        "cached_property",
        "wraps",
        "total_ordering",
        "singledispatch",
        "singledispatchmethod",
        "abstractmethod",
        "abstractclassmethod",
        "abstractstaticmethod",
        "abstractproperty",
        "dataclass",
        "contextmanager",
        "asynccontextmanager",
        "overload",
        "final",
        "override",
        "runtime_checkable",
        "no_type_check",
        "unique",
    }
)
# Module-level dunders that are metadata; others (``__all__``, ``__getattr__``,
# ``__path__``...) steer the import system and stay in the module body.
_METADATA_DUNDERS = frozenset(
    {
        "__version__",
        "__version_info__",
        "__author__",
        "__email__",
        "__license__",
        "__copyright__",
        "__credits__",
        "__maintainer__",
        "__status__",
        "__date__",
        "__docformat__",
    }
)
# Calls that reach attributes or globals by a computed name.
_BY_NAME = frozenset({"getattr", "setattr", "hasattr", "delattr", "attrgetter", "methodcaller"})
_ANY_NAME = frozenset({"vars", "globals", "locals", "dir", "eval", "exec", "getmembers"})

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
DefinitionNode = FunctionNode | ast.ClassDef


@dataclass(frozen=True)
class Facts:
    """What :func:`split` found in one file (see the caching guide's design)."""

    #: ``{piece: digest}``.
    digests: dict[str, str]
    #: ``{piece: names its code reads}``: identifiers, attribute names, identifier-like
    #: strings (``getattr(x, "name")``).
    reads: dict[str, frozenset[str]]
    #: Pieces whose code reaches names it computes (``getattr(x, name)``, ``vars()``).
    dynamic: frozenset[str]
    #: ``{piece: the name code uses to reach it}`` of the functions, classes and
    #: bindings reachable from outside (not those inside functions).
    short: dict[str, str]
    #: Whether the file runs code as a class is made: ``__init_subclass__``, a metaclass.
    hooks: bool
    #: The pieces that count when code names them (classes, bindings), not by running.
    by_name: frozenset[str] = frozenset()


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def definitions(tree: ast.AST) -> Iterator[tuple[str, DefinitionNode]]:
    """Every function and class definition in ``tree`` with its qualified name: the
    ``co_qualname`` a function's code object gets and the ``__qualname__`` a class gets
    (``Class.method``, ``outer.<locals>.inner``), outer ones first.

    The one naming rule of pieces: :func:`split`, the recorders and the Sphinx state's
    page dependencies (:mod:`docsaccel.incremental.pysource`) follow it.
    """

    def visit(node: ast.AST, prefix: str) -> Iterator[tuple[str, DefinitionNode]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                yield name, child
                yield from visit(child, f"{name}.<locals>.")
            elif isinstance(child, ast.ClassDef):
                name = f"{prefix}{child.name}"
                yield name, child
                yield from visit(child, f"{name}.")
            elif isinstance(child, _HOLDS_STATEMENTS):  # a definition is a statement
                yield from visit(child, prefix)

    return visit(tree, "")


def functions(tree: ast.AST) -> Iterator[tuple[str, FunctionNode]]:
    """The function definitions of :func:`definitions` (a function's piece name)."""
    for name, node in definitions(tree):
        if not isinstance(node, ast.ClassDef):
            yield name, node


_HOLDS_STATEMENTS = (ast.stmt, ast.excepthandler, ast.match_case)


def _statements_in(node: ast.AST) -> Iterator[ast.AST]:
    """The children of ``node`` that are statements or hold them (a definition, and so a
    docstring, is a statement: the expressions between them are not walked)."""
    return (c for c in ast.iter_child_nodes(node) if isinstance(c, _HOLDS_STATEMENTS))


def every_statement(node: ast.AST) -> list[ast.AST]:
    """``node`` and every statement (or holder of statements) under it, in the order
    :func:`ast.iter_child_nodes` finds them. Statements are only ever held in lists, so
    no other field (an expression) is looked into."""
    found = [node]
    for item in found:  # grows while read: each node's statements after it
        for field in item._fields:
            value = getattr(item, field, None)
            if type(value) is list:
                found.extend(v for v in value if isinstance(v, _HOLDS_STATEMENTS))
    return found


def _every_node(node: ast.AST) -> list[ast.AST]:
    """Every node under ``node``, as :func:`ast.walk` finds them (in another order), with
    no generator per node: reading the names of each piece walks most of a file."""
    found = [node]
    for item in found:  # grows while read
        for field in item._fields:
            value = getattr(item, field, None)
            if type(value) is list:
                found.extend(v for v in value if isinstance(v, ast.AST))
            elif isinstance(value, ast.AST):
                found.append(value)
    return found


def piece_of(qualname: str) -> str:
    """The piece that holds a code object's ``co_qualname``.

    Lambdas, comprehensions and generator expressions belong to the function (or module
    body) they are written in: ``f.<locals>.<lambda>`` -> ``f``, ``<listcomp>`` ->
    ``<module>``. A class body is its class's piece (``<module>`` when it has none).
    """
    parts = qualname.split(".")
    kept: list[str] = []
    for index, part in enumerate(parts):
        if part.startswith("<") and part != "<locals>":
            break
        if part == "<locals>" and index + 1 < len(parts) and parts[index + 1].startswith("<"):
            break
        kept.append(part)
    name = ".".join(kept)
    return name or MODULE_BODY


def _is_docstring(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def _has_docstring(node: ast.AST) -> bool:
    body = getattr(node, "body", None)
    return isinstance(body, list) and bool(body) and _is_docstring(body[0])


def _head(node: ast.expr) -> str | None:
    """The last name of a decorator or base: ``functools.lru_cache(8)`` -> ``lru_cache``."""
    while isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


def _inert(node: ast.AST | None) -> bool:
    """Whether evaluating an expression runs no code of anyone's: constants, names,
    attributes, containers, operators and subscripts of those; no call, no lambda."""
    if node is None or isinstance(node, (ast.Constant, ast.Name)):
        return True
    if isinstance(node, ast.Attribute):
        return _inert(node.value)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return all(_inert(e) for e in node.elts)
    if isinstance(node, ast.Starred):
        return _inert(node.value)
    if isinstance(node, ast.Dict):
        return all(_inert(k) for k in node.keys) and all(_inert(v) for v in node.values)
    if isinstance(node, ast.UnaryOp):
        return _inert(node.operand)
    if isinstance(node, ast.BinOp):
        return _inert(node.left) and _inert(node.right)
    if isinstance(node, ast.BoolOp):
        return all(_inert(v) for v in node.values)
    if isinstance(node, ast.Compare):
        return _inert(node.left) and all(_inert(c) for c in node.comparators)
    if isinstance(node, ast.JoinedStr):
        return all(_inert(v) for v in node.values)
    if isinstance(node, ast.FormattedValue):
        return _inert(node.value) and _inert(node.format_spec)
    if isinstance(node, ast.Subscript):
        return _inert(node.value) and _inert(node.slice)
    if isinstance(node, ast.Slice):
        return _inert(node.lower) and _inert(node.upper) and _inert(node.step)
    if isinstance(node, ast.IfExp):
        return _inert(node.test) and _inert(node.body) and _inert(node.orelse)
    return False


class _Splitter:
    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.texts: dict[str, list[str]] = {}
        self.reads: dict[str, set[str]] = {}
        self.dynamic: set[str] = set()
        self.short: dict[str, str] = {}
        self.by_name: set[str] = set()
        self.docs: list[str] = []
        self.bases: list[str] = []
        self.hooks = False
        self.own_names = _top_level_names(tree)
        self.lazy_annotations = any(
            isinstance(s, ast.ImportFrom)
            and s.module == "__future__"
            and any(a.name == "annotations" for a in s.names)
            for s in tree.body
        )

    def add(self, piece: str, text: str, nodes: Iterable[ast.AST]) -> None:
        self.texts.setdefault(piece, []).append(text)
        names = self.reads.setdefault(piece, set())
        for node in nodes:
            if _note_names(node, names):
                self.dynamic.add(piece)

    def pure(self, decorators: list[ast.expr]) -> bool:
        heads = [_head(d) for d in decorators]
        return all(h in _PURE_DECORATORS and h not in self.own_names for h in heads)

    def plain_def(self, node: FunctionNode) -> bool:
        args = node.args
        annotations = [] if self.lazy_annotations else _annotations(node)
        return (
            self.pure(node.decorator_list)
            and all(_inert(d) for d in (*args.defaults, *args.kw_defaults))
            and all(_inert(a) for a in annotations)
        )

    def plain_class(self, node: ast.ClassDef) -> bool:
        return (
            self.pure(node.decorator_list)
            and not node.keywords
            and all(_inert(b) for b in node.bases)
        )

    def run(self) -> Facts:
        for name, node in functions(self.tree):
            self.add(name, _unparse_without_docstrings(node), [node])
            if ".<locals>." not in name:
                self.short.setdefault(name, node.name)
        self.collect_docstrings(self.tree, "")
        body = self.body(self.tree.body, "", top=True)
        module = ast.Module(body=body, type_ignores=[])
        self.add(MODULE_BODY, ast.unparse(_Hollow().visit(module)), body)
        digests = {name: _sha("\n\0".join(parts)) for name, parts in self.texts.items()}
        digests[DOCSTRINGS] = _sha("\n\0".join(self.docs))
        digests[CLASS_BASES] = _sha("\n\0".join(self.bases))
        reads = {name: frozenset(names) for name, names in self.reads.items()}
        return Facts(
            digests,
            reads,
            frozenset(self.dynamic),
            self.short,
            self.hooks,
            frozenset(self.by_name),
        )

    def collect_docstrings(self, node: ast.AST, prefix: str) -> None:
        if _has_docstring(node):
            self.docs.append(f"{prefix or MODULE_BODY}: {node.body[0].value.value!r}")  # type: ignore[attr-defined]
        for child in _statements_in(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.collect_docstrings(child, f"{prefix}{child.name}.")
            else:
                self.collect_docstrings(child, prefix)

    def body(
        self, statements: list[ast.stmt], prefix: str, top: bool, generating: bool = False
    ) -> list[ast.stmt]:
        """The statements of a module or class body that stay in it (copies, without
        docstrings); the others become pieces of their own. In the body of a class whose
        decorator, bases or keywords run code (``generating``: ``@dataclass``, attrs,
        ``namedtuple(...)`` bases), every method stays too, hollow: what they may generate
        (``__repr__``, ``__eq__``) runs code of no project file, and a method written in
        the class body replaces it."""
        kept: list[ast.stmt] = []
        for index, statement in enumerate(statements):
            if index == 0 and _is_docstring(statement):
                continue
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = statement.name
                if name == "__init_subclass__" or name == "__prepare__":
                    self.hooks = True
                special = top and name.startswith("__") and name.endswith("__")
                if not self.plain_def(statement) or special or generating:
                    kept.append(_hollow(statement))
            elif isinstance(statement, ast.ClassDef):
                if any(k.arg == "metaclass" for k in statement.keywords) or any(
                    _head(b) in ("type", "ABCMeta", "EnumMeta", "EnumType") for b in statement.bases
                ):
                    self.hooks = True
                if self.plain_class(statement):
                    self.add_class(statement, f"{prefix}{statement.name}")
                else:
                    name = f"{prefix}{statement.name}."
                    inner = self.body(statement.body, name, top=False, generating=True)
                    header = copy.copy(statement)
                    header.body = inner or [ast.Pass()]
                    kept.append(header)
            elif top and (names := self.binding(statement)):
                value = statement.value
                for name in names:
                    self.add(name, ast.unparse(statement), [value] if value else [])
                    if isinstance(statement, ast.AnnAssign) and not self.lazy_annotations:
                        self.reads[name] |= _names_in(statement.annotation)
                    self.short[name] = name
                    self.by_name.add(name)
            else:
                kept.append(statement)
        return kept

    def add_class(self, node: ast.ClassDef, name: str) -> None:
        inner = self.body(node.body, f"{name}.", top=False)
        header = copy.copy(node)
        header.body = inner or [ast.Pass()]
        special = sorted(
            s.name
            for s in node.body
            if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
            and s.name.startswith("__")
            and s.name.endswith("__")
        )
        text = ast.unparse(_Hollow().visit(header)) + f"\n# special: {' '.join(special)}"
        self.add(name, text, [*node.bases, *node.decorator_list, *inner])
        self.short.setdefault(name, node.name)
        self.by_name.add(name)
        if node.bases:
            self.bases.append(f"{name}({', '.join(ast.unparse(b) for b in node.bases)})")

    def binding(self, statement: ast.stmt) -> list[str]:
        """The names a module-level statement binds when binding them is all it does."""
        if isinstance(statement, ast.Assign):
            targets, value = statement.targets, statement.value
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            targets, value = [statement.target], statement.value
            if not self.lazy_annotations and not _inert(statement.annotation):
                return []
        else:
            return []
        if not _inert(value) or not all(isinstance(t, ast.Name) for t in targets):
            return []
        names = [t.id for t in targets]  # type: ignore[attr-defined]
        for name in names:
            dunder = name.startswith("__") and name.endswith("__")
            if self.own_names.count(name) != 1 or (dunder and name not in _METADATA_DUNDERS):
                return []
        return names


def _annotations(node: FunctionNode) -> list[ast.expr]:
    args = node.args
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    found = [a.annotation for a in every if a is not None and a.annotation is not None]
    return [*found, node.returns] if node.returns is not None else found


def _top_level_names(tree: ast.Module) -> list[str]:
    """Every name the module's own statements bind (a name bound twice appears twice)."""
    found: list[str] = []

    def targets(node: ast.AST) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.append(node.name)
            return  # what its body binds is its own
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            found.append(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                found.append(alias.asname or alias.name.partition(".")[0])
        elif isinstance(node, ast.Lambda):
            return
        for child in ast.iter_child_nodes(node):
            targets(child)

    for statement in tree.body:
        targets(statement)
    return found


def reads_of(node: ast.AST) -> tuple[set[str], bool]:
    """The names the code under ``node`` reads, and whether it also reaches names it
    computes (``getattr(x, name)``, ``vars()``, ``__dict__``)."""
    names: set[str] = set()
    return names, _note_names(node, names)


def _names_in(node: ast.AST) -> set[str]:
    names: set[str] = set()
    _note_names(node, names)
    return names


def _note_names(node: ast.AST, names: set[str]) -> bool:
    """Add the names the code under ``node`` reads to ``names``; whether it also reaches
    names it computes."""
    dynamic = False
    for item in _every_node(node):
        if isinstance(item, ast.Name):
            names.add(item.id)
        elif isinstance(item, ast.Attribute):
            names.add(item.attr)
            dynamic = dynamic or item.attr == "__dict__"
        elif isinstance(item, ast.alias):
            names.update(item.name.split("."))
            if item.asname:
                names.add(item.asname)
        elif isinstance(item, (ast.Global, ast.Nonlocal)):
            names.update(item.names)
        elif isinstance(item, ast.keyword) and item.arg:
            names.add(item.arg)
        elif isinstance(item, ast.ImportFrom) and item.module:
            names.update(item.module.split("."))
        elif (
            isinstance(item, ast.Constant)
            and isinstance(item.value, str)
            and len(item.value) <= 64
            and item.value.isidentifier()
        ):
            names.add(item.value)
        elif isinstance(item, ast.Call):
            head = _head(item.func) if isinstance(item.func, (ast.Name, ast.Attribute)) else None
            if head in _ANY_NAME:
                dynamic = True
            elif head in _BY_NAME:
                by_first = head in ("attrgetter", "methodcaller")
                computed = item.args[:1] if by_first else item.args[1:2]
                if not computed or not all(
                    isinstance(a, ast.Constant) and isinstance(a.value, str) for a in computed
                ):
                    dynamic = True
    return dynamic


def _unparse_without_docstrings(node: ast.AST) -> str:
    """``node`` as :func:`ast.unparse` prints it without the docstrings of it and of the
    definitions inside it (taken out for the print, then put back)."""
    taken = []
    for item in every_statement(node):
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and (
            _has_docstring(item)
        ):
            taken.append((item, item.body))
            item.body = item.body[1:] or [ast.Pass()]
    try:
        return ast.unparse(node)
    finally:
        for item, body in taken:
            item.body = body


class _Hollow(ast.NodeTransformer):
    """Every function body replaced by ``...``: what running the enclosing body runs."""

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        return _hollow(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AST:
        return _hollow(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        copy_ = copy.copy(node)
        body = [s for i, s in enumerate(node.body) if not (i == 0 and _is_docstring(s))]
        copy_.body = [self.visit(s) for s in body] or [ast.Pass()]
        return copy_


def _hollow(node: FunctionNode) -> ast.AST:
    copy_ = type(node)(**{field: getattr(node, field, None) for field in node._fields})
    copy_.body = [ast.Expr(ast.Constant(...))]
    return ast.copy_location(copy_, node)


def split(tree: ast.Module) -> Facts:
    """The pieces of a parsed file (see the caching guide's design)."""
    return _Splitter(tree).run()
