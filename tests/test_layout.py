"""Every docsaccel module imports on its own, first, in a fresh interpreter.

A module that only imports when another one was imported before it (a circular import
between packages) works in the test suite by luck of import order and fails for the user
who imports it first. One child process imports each module with docsaccel's own modules
forgotten in between (third-party packages stay loaded, so this stays fast).
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import os
import pkgutil
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import docsaccel

_CHILD = """
import importlib, os, sys, traceback
# Optional extras this environment does not have (torchrl's, on a Python with no torch
# CPU build): a module that needs one may fail to import for that reason alone.
absent = set(os.environ.get("ABSENT_EXTRAS", "").split())
failed = []
for name in sys.argv[1:]:
    for loaded in [m for m in sys.modules if m == "docsaccel" or m.startswith("docsaccel.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as error:
        if (error.name or "").split(".")[0] not in absent:
            failed.append(name + ": " + traceback.format_exc().strip().splitlines()[-1])
    except Exception:
        failed.append(name + ": " + traceback.format_exc().strip().splitlines()[-1])
print("\\n".join(failed))
sys.exit(1 if failed else 0)
"""


def _modules() -> list[str]:
    names = [docsaccel.__name__]
    for info in pkgutil.walk_packages(docsaccel.__path__, prefix="docsaccel."):
        names.append(info.name)
    return sorted(names)


def _absent_extras() -> str:
    """The optional extras this environment lacks (torchrl's where torch has no CPU build)."""
    return " ".join(n for n in ("torch", "torchrl") if importlib.util.find_spec(n) is None)


@pytest.mark.slow
def test_every_module_imports_first() -> None:
    modules = _modules()
    assert "docsaccel.render.video_file" in modules and "docsaccel.shard.roles" in modules
    result = subprocess.run(
        [sys.executable, "-c", _CHILD, *modules],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "ABSENT_EXTRAS": _absent_extras()},
    )
    assert result.returncode == 0, result.stdout + result.stderr[-2000:]


def test_render_still_exports_the_file_recorder() -> None:
    from docsaccel.render import VideoFileRecorder
    from docsaccel.render.video_file import VideoFileRecorder as defined

    assert VideoFileRecorder is defined


# The layers -----------------------------------------------------------------------------

SRC = Path(docsaccel.__file__).parent

#: Bottom to top. A module may import its own part (a top-level module or package of
#: docsaccel) and the parts of the layers below it, never a part beside it or above it.
LAYERS: tuple[frozenset[str], ...] = (
    # How a count is said with its noun, which every message counting things uses.
    frozenset({"counts"}),
    # What identifies the code a build ran (its modules' bytes, its extensions'
    # distributions), which the contract's rule of a stale report compares.
    frozenset({"loaded_code"}),
    # The facts every part shares.
    frozenset({"contract"}),
    # The one owner of what docsaccel intercepts in a process (the audit hook, the import
    # events, the process-wide functions it replaces), used by the cache, the watches and
    # the plugin.
    frozenset({"intercept"}),
    # Sizes and the machine's memory, which settings and budgets check values against.
    frozenset({"memory_sizes"}),
    # A child process ending with its parent, which the shard builds and a parallel
    # build's workers ask for.
    frozenset({"parent_death"}),
    # The command line of a Python process started for the project, which the shard
    # builds, the report page's chart and the headless probe start.
    frozenset({"child_python"}),
    # A process named by its pid and start time, which the plugin ends the processes of
    # an example by and the report readers tell a shard command running from killed.
    frozenset({"process_stat"}),
    # What a budget pattern matches, which the budget file reads examples by.
    frozenset({"patterns"}),
    frozenset({"layout", "formats", "registry"}),
    # The settings' declaration, which names the project root (layout) in its messages.
    frozenset({"settings"}),
    # How docsaccel stops a Sphinx build whose error it logged (one line, status 2).
    frozenset({"stops"}),
    # Warnings logged through Sphinx, kept and given again (the cache and the Sphinx state).
    frozenset({"sphinx_logs"}),
    # Sphinx's event handlers, read and wrapped (through intercept) by every part.
    frozenset({"sphinx_events"}),
    frozenset({"schema", "budgets", "headless"}),
    # What a tutorial uses, the report views, and sphinx-gallery's internals.
    frozenset({"fast", "render", "video", "report", "sg_compat"}),
    # The example model and the records, which the cache, sharding and the plugin share.
    frozenset({"examples", "outputs"}),
    frozenset({"records"}),
    # sphinx-gallery's files listing the examples a build takes as they are (a shard
    # merge, the example cache).
    frozenset({"listed_runs"}),
    frozenset({"cache", "shard"}),
    # Sphinx's state across builds: the cache's recording applied to documents; its
    # Sphinx extension (incremental.sphinxext) is loaded by the plugin.
    frozenset({"incremental"}),
    # The Sphinx plugin composes everything below it; the CLI sits on top of all.
    frozenset({"gallery"}),
    frozenset({"doctor"}),
    # The command line's standard output, whose write errors it tells apart.
    frozenset({"standard_output"}),
    frozenset({"cli"}),
)


def _part(path: Path, src: Path) -> str:
    return path.relative_to(src).parts[0].removesuffix(".py")


def _docsaccel_imports(path: Path) -> list[tuple[int, str]]:
    """``(line, imported part)`` of every docsaccel import of a file, at any depth."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "docsaccel":
                names = [f"docsaccel.{alias.name}" for alias in node.names]
            else:
                names = [node.module]
        elif isinstance(node, ast.ImportFrom):
            raise AssertionError(f"{path}:{node.lineno}: relative import; name the module")
        for name in names:
            parts = name.split(".")
            if parts[0] == "docsaccel" and len(parts) > 1 and parts[1] != "__version__":
                found.append((node.lineno, parts[1]))
    return found


def layer_violations(src: Path) -> list[str]:
    """Every import under ``src`` (a copy of the docsaccel package) that breaks the layers."""
    layer_of = {part: index for index, layer in enumerate(LAYERS) for part in layer}
    problems = []
    for path in sorted(src.rglob("*.py")):
        if path == src / "__init__.py":
            continue
        part = _part(path, src)
        if part not in layer_of:
            problems.append(f"{path.relative_to(src)}: part {part!r} is in no layer")
            continue
        for line, imported in _docsaccel_imports(path):
            if imported == part:
                continue
            if imported not in layer_of or layer_of[imported] >= layer_of[part]:
                problems.append(
                    f"{path.relative_to(src)}:{line}: {part} imports {imported}, which is "
                    "not below it"
                )
    return problems


def test_every_import_goes_down_the_layers() -> None:
    assert layer_violations(SRC) == []


@pytest.mark.parametrize(
    ("module", "line", "expected"),
    [
        ("cache/store.py", "from docsaccel.gallery import hook", "cache imports gallery"),
        ("shard/plan.py", "import docsaccel.gallery.events", "shard imports gallery"),
        ("render/gating.py", "from docsaccel import video", "render imports video"),
        ("cache/deps.py", "from docsaccel.shard import plan", "cache imports shard"),
        ("contract.py", "from docsaccel import settings", "contract imports settings"),
        # Deep inside a function, as lazy imports are.
        ("records.py", "def f():\n    from docsaccel.cache import build", "records imports cache"),
        ("newpart.py", "", "part 'newpart' is in no layer"),
    ],
)
def test_a_forbidden_import_fails_the_layer_check(tmp_path, module, line, expected) -> None:
    copy = tmp_path / "docsaccel"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__"))
    target = copy / module
    text = target.read_text(encoding="utf-8") if target.exists() else ""
    target.write_text(f"{text}\n{line}\n", encoding="utf-8")
    problems = layer_violations(copy)
    assert len(problems) == 1 and expected in problems[0], problems


# One file name per module -----------------------------------------------------------------


def shared_file_names(src: Path) -> list[str]:
    """Every file name (``__init__.py`` aside) that more than one module under ``src``
    has, with the modules that share it.

    A name shared by two modules (``cache/state.py`` and ``incremental/state.py``) makes a
    traceback, a relative ``:mod:`` reference and a search by file name ambiguous, and
    says nothing of what either module is for.
    """
    by_name: dict[str, list[str]] = {}
    for path in sorted(src.rglob("*.py")):
        if path.name != "__init__.py":
            by_name.setdefault(path.name, []).append(path.relative_to(src).as_posix())
    return [f"{name}: {', '.join(paths)}" for name, paths in by_name.items() if len(paths) > 1]


def test_no_two_modules_share_a_file_name() -> None:
    assert shared_file_names(SRC) == []


def test_a_second_module_of_a_name_fails_the_check(tmp_path) -> None:
    copy = tmp_path / "docsaccel"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "cache" / "roles.py").write_text("", encoding="utf-8")
    # Every package has an __init__.py: only the new name is reported.
    assert shared_file_names(copy) == ["roles.py: cache/roles.py, shard/roles.py"]


# Typed records across packages -----------------------------------------------------------

#: The packages whose functions other packages call with records.
RECORD_OWNERS = ("cache", "incremental")
#: What an untyped record is annotated as: a mapping of strings to anything (or a bare
#: mapping, which says no more).
_UNTYPED_MAPPINGS = frozenset({"dict", "Dict", "Mapping", "MutableMapping"})
_ANYTHING = frozenset({"Any", "typing.Any", "object"})
#: Methods that convert a record to and from its stored JSON form: the one place its keys
#: are spelled, so a JSON object is what they take and give.
_STORED_FORM = frozenset({"to_json", "from_json"})

#: Public functions, classes' public methods and fields of :data:`RECORD_OWNERS` that
#: another package uses and that still take or give a ``dict[str, Any]``, each with why.
#: The list only shrinks: one that gets a typed record (a dataclass) must leave it, and no
#: other may join it.
UNTYPED_ALLOWED = {
    # sphinx-gallery's own configuration, handed through as sphinx-gallery made it (to
    # docsaccel.sg_compat, which reads it): not a record of ours.
    "docsaccel.cache.cache_build.lookup": "gallery_conf",
    "docsaccel.cache.cache_build.CacheBuild.gallery_conf": "field",
}


def _module_name(path: Path, src: Path) -> str:
    parts = [src.name, *path.relative_to(src).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _used_names(path: Path, modules: set[str]) -> set[tuple[str, str]]:
    """``(module, name)`` of every docsaccel name a file imports or reads through an
    imported module (``from docsaccel.cache import deps`` then ``deps.collect``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    used, aliases = set(), {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                if f"{node.module}.{alias.name}" in modules:
                    aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
                else:
                    used.add((node.module, alias.name))
        elif isinstance(node, ast.Import):
            aliases.update({a.asname: a.name for a in node.names if a.asname in modules})
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and getattr(node.value, "id", None) in aliases:
            used.add((aliases[node.value.id], node.attr))
    return used


def _last_name(node: ast.expr) -> str:
    return ast.unparse(node).rsplit(".", 1)[-1]  # dict, typing.Dict, abc.Mapping


def _is_untyped_mapping(annotation: ast.expr | None, aliases: frozenset[str] = frozenset()) -> bool:
    """Whether an annotation holds ``dict``/``Dict``/``Mapping[str, Any]`` (or ``object``)
    anywhere in it (``list[dict[str, Any]]`` too; a string annotation is parsed), a bare
    ``dict``/``Mapping``, or one of ``aliases``: names of module-level aliases of those."""
    if annotation is None:
        return False
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        with contextlib.suppress(SyntaxError):
            return _is_untyped_mapping(ast.parse(annotation.value, mode="eval").body, aliases)
        return False
    if isinstance(annotation, (ast.Name, ast.Attribute)):
        name = _last_name(annotation)
        return name in _UNTYPED_MAPPINGS or name in aliases
    if isinstance(annotation, ast.Subscript):
        base = _last_name(annotation.value)
        items = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else []
        if base in _UNTYPED_MAPPINGS and len(items) == 2:
            key, value = (ast.unparse(item) for item in items)
            if key == "str" and value in _ANYTHING:
                return True
        inner = annotation.slice.elts if items else [annotation.slice]
        return any(_is_untyped_mapping(item, aliases) for item in inner)
    return any(_is_untyped_mapping(child, aliases) for child in ast.iter_child_nodes(annotation))


def _untyped_aliases(files: dict[str, Path]) -> frozenset[str]:
    """Names of module-level type aliases of an untyped mapping (``Record = dict[str,
    Any]``, ``Record: TypeAlias = ...``, ``type Record = ...``) anywhere in the package."""
    found = set()
    for path in files.values():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, value = node.targets[0], node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                if _last_name(node.annotation) != "TypeAlias":
                    continue
                target, value = node.target, node.value
            elif isinstance(node, getattr(ast, "TypeAlias", ())):
                target, value = node.name, node.value
            else:
                continue
            # ``x = dict`` binds the type, no annotation of a record.
            named = isinstance(target, ast.Name) and not isinstance(value, ast.Name)
            if named and _is_untyped_mapping(value):
                found.add(target.id)
    return frozenset(found)


def _untyped_parameters(
    function: ast.FunctionDef | ast.AsyncFunctionDef, aliases: frozenset[str] = frozenset()
) -> list[str]:
    """The parameters (and ``return``) of a function annotated as an untyped mapping."""
    args = function.args
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    found = [a.arg for a in every if a is not None and _is_untyped_mapping(a.annotation, aliases)]
    if _is_untyped_mapping(function.returns, aliases):
        found.append("return")
    return found


def _untyped_members(node: ast.ClassDef, used: set[str], aliases: frozenset[str]) -> dict[str, str]:
    """``{Class.member: what is untyped}`` of the members of a class that another part
    ``used`` (by name): its public methods (and ``__init__``), its annotated fields (a
    dataclass's, a NamedTuple's)."""
    found = {}
    for member in node.body:
        if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = member.name
            if name in used - _STORED_FORM and (untyped := _untyped_parameters(member, aliases)):
                found[f"{node.name}.{name}"] = ", ".join(untyped)
        elif isinstance(member, ast.AnnAssign) and isinstance(member.target, ast.Name):
            name = member.target.id
            if name in used and _is_untyped_mapping(member.annotation, aliases):
                found[f"{node.name}.{name}"] = "field"
    return found


def _attributes_read(path: Path) -> set[str]:
    """Every attribute name a file reads (``cache.hits`` gives ``hits``), and ``__init__``:
    the members of a class it imports that it may use."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {"__init__"} | {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}


def untyped_boundaries(src: Path) -> dict[str, str]:
    """``{function or Class.member: what is untyped}`` of what :data:`RECORD_OWNERS` give
    a module of another part: the public functions it imports, and the public methods and
    fields it may use (by name) of the public classes of a module it imports from (an
    object returned by a function of it, too), whose annotations take or give a
    ``dict[str, Any]`` (or ``Dict``/``Mapping``, bare or through an alias) where a typed
    record belongs."""
    files = {_module_name(path, src): path for path in sorted(src.rglob("*.py"))}
    aliases = _untyped_aliases(files)
    called, members = set(), {}
    for path in files.values():
        part = _part(path, src)
        for module, name in _used_names(path, set(files)):
            owner = module.split(".")[1] if module.count(".") else ""
            if owner in RECORD_OWNERS and owner != part and not name.startswith("_"):
                called.add((module, name))
                read = {m for m in _attributes_read(path) if not m.startswith("_")}
                members.setdefault(module, {"__init__"}).update(read)
    found = {}
    for module, used in sorted(members.items()):
        if module not in files:
            continue
        for node in ast.parse(files[module].read_text(encoding="utf-8")).body:
            public = not getattr(node, "name", "_").startswith("_")
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if (module, node.name) in called and (
                    untyped := _untyped_parameters(node, aliases)
                ):
                    found[f"{module}.{node.name}"] = ", ".join(untyped)
            elif isinstance(node, ast.ClassDef) and public:
                untyped_members = _untyped_members(node, used, aliases)
                found.update({f"{module}.{m}": why for m, why in untyped_members.items()})
    return dict(sorted(found.items()))


def test_records_between_packages_are_typed_or_allowed() -> None:
    assert untyped_boundaries(SRC) == UNTYPED_ALLOWED


def _add_used_code(copy: Path, store_code: str, shard_code: str) -> None:
    """Append ``store_code`` to the copy's cache store and ``shard_code`` to a module of
    another part (the shard plan)."""
    for path, code in [
        (copy / "cache" / "store.py", store_code),
        (copy / "shard" / "plan.py", shard_code),
    ]:
        path.write_text(path.read_text(encoding="utf-8") + code, encoding="utf-8")


@pytest.mark.parametrize(
    ("store_code", "shard_code", "found"),
    [
        (  # a function, the record inside a list
            "\n\ndef entry_facts(entry: list[Mapping[str, Any]]) -> int:\n    return 0\n",
            "\nfrom docsaccel.cache.store import entry_facts\n",
            {"docsaccel.cache.store.entry_facts": "entry"},
        ),
        (  # a method of a public class, used on an object another function returned
            "\n\nclass Facts:\n    def of(self, name: str) -> dict:\n        return {}\n",
            "\nfrom docsaccel.cache.store import Facts\n_ = Facts().of\n",
            {"docsaccel.cache.store.Facts.of": "return"},
        ),
        (  # a field of a dataclass, through an alias
            "\nFacts = dict[str, object]\n\n@dataclass\nclass Held:\n    facts: Facts\n",
            "\nfrom docsaccel.cache.store import Held\n_ = Held.facts\n",
            {"docsaccel.cache.store.Held.facts": "field"},
        ),
        (  # a method it does not use, and the stored form of a record, are not reported
            "\n\nclass Kept:\n    def unused(self) -> dict[str, Any]:\n        return {}\n"
            "    def to_json(self) -> dict[str, Any]:\n        return {}\n",
            "\nfrom docsaccel.cache.store import Kept\n_ = Kept().to_json\n",
            {},
        ),
    ],
    ids=["function", "method", "alias-field", "unused-and-stored-form"],
)
def test_a_new_untyped_record_between_packages_fails_the_check(
    tmp_path, store_code: str, shard_code: str, found: dict[str, str]
) -> None:
    copy = tmp_path / "docsaccel"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__"))
    _add_used_code(copy, store_code, shard_code)
    assert untyped_boundaries(copy) == {**UNTYPED_ALLOWED, **found}


# Importing is free of side effects --------------------------------------------------------

_SIDE_EFFECTS = """
import atexit, importlib, os, signal, sys, threading
src = sys.argv[1]
found = []

def watch(owner, name):
    real = getattr(owner, name)
    def wrapper(*args, **kwargs):
        caller = sys._getframe(1).f_code.co_filename
        if caller.startswith(src):
            found.append(f"{name} from {caller}")
        return real(*args, **kwargs)
    setattr(owner, name, wrapper)

for owner, name in [(atexit, "register"), (sys, "addaudithook"), (signal, "signal"),
                    (sys, "settrace"), (sys, "setprofile"), (threading, "excepthook")]:
    if callable(getattr(owner, name)):
        watch(owner, name)
before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGALRM)
absent = set(os.environ.get("ABSENT_EXTRAS", "").split())  # as in _CHILD
for name in sys.argv[2:]:
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as error:
        if (error.name or "").split(".")[0] not in absent:
            raise
after = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGALRM)
if before != after:
    found.append(f"signal handlers changed: {before} -> {after}")
if sys.meta_path and any(type(f).__module__.startswith("docsaccel") for f in sys.meta_path):
    found.append("an import hook is installed")
print("\\n".join(found))
sys.exit(1 if found else 0)
"""


@pytest.mark.slow
def test_importing_every_module_registers_nothing() -> None:
    result = subprocess.run(
        [sys.executable, "-c", _SIDE_EFFECTS, str(SRC), *_modules()],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "ABSENT_EXTRAS": _absent_extras()},
    )
    assert result.returncode == 0, result.stdout + result.stderr[-2000:]


def test_the_cache_store_loads_neither_sphinx_nor_sphinx_gallery() -> None:
    code = (
        "import docsaccel.cache.store, sys; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('sphinx', 'sphinx_gallery')))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


# One owner for what a process intercepts --------------------------------------------------

#: What replaces a process-wide function: the import system's, the ways a process ends,
#: and the ``exec*`` functions that replace it with another program.
PROCESS_WIDE = frozenset(
    {"__import__", "_gcd_import", "find_spec", "exit", "_exit", "_clear", "unregister"}
    | {"_run_exitfuncs", "_send_bytes", "_recv_bytes"}
    | {f"exec{form}" for form in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")}
)
#: The import system's functions docsaccel wraps: patched in ``intercept.py`` alone, which
#: publishes what they see as typed events.
IMPORT_FUNCTIONS = frozenset({"__import__", "_gcd_import", "find_spec"})
INTERCEPT = SRC / "intercept.py"


def intercept_violations(src: Path) -> list[str]:
    """Every place under ``src`` but ``intercept.py`` that installs an audit hook (in code
    or in the code of a child, a string), assigns a process-wide function (an attribute
    of :data:`PROCESS_WIDE` assigned, or set with ``setattr`` by name, or by a name not
    known before it runs; a module constant's string is known), or patches an import
    function (:data:`IMPORT_FUNCTIONS`, even through ``intercept.patch``)."""
    problems = []
    for path in sorted(src.rglob("*.py")):
        if path.name == "intercept.py" and path.parent == src:
            continue
        text = path.read_text(encoding="utf-8")
        where = path.relative_to(src)
        for number, line in enumerate(text.splitlines(), start=1):
            if "addaudithook(" in line:
                problems.append(f"{where}:{number}: calls sys.addaudithook")
        tree = ast.parse(text)
        constants = {
            node.targets[0].id: node.value.value
            for node in tree.body
            if isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Constant)
        }
        for node in ast.walk(tree):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            for target in targets:
                if (
                    isinstance(target, ast.Attribute)
                    and target.attr in PROCESS_WIDE
                    and not (isinstance(target.value, ast.Name) and target.value.id == "self")
                ):
                    problems.append(f"{where}:{node.lineno}: assigns {target.attr}")
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "setattr"
                and len(node.args) >= 2
            ):
                name = node.args[1]
                if isinstance(name, ast.Name) and name.id in constants:
                    name = ast.Constant(constants[name.id])
                if not isinstance(name, ast.Constant) or name.value in PROCESS_WIDE:
                    shown = name.value if isinstance(name, ast.Constant) else ast.unparse(name)
                    if _setattr_may_replace(node.args[0]):
                        problems.append(f"{where}:{node.lineno}: setattr of {shown}")
            patched = _patched_import_function(node, constants)
            if patched:
                problems.append(f"{where}:{node.lineno}: patches {patched}")
    return problems


def _patched_import_function(node: ast.AST, constants: dict[str, object]) -> str | None:
    """The import function a call of ``patch``/``Patch`` (``intercept``'s, or
    ``unittest.mock``'s: ``"builtins.__import__"``) names, if any."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    if called not in {"patch", "Patch"}:
        return None
    for arg in [*node.args, *(keyword.value for keyword in node.keywords)]:
        if isinstance(arg, ast.Name) and arg.id in constants:
            arg = ast.Constant(constants[arg.id])
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            name = arg.value.rpartition(".")[2]
            if name in IMPORT_FUNCTIONS:
                return name
    return None


#: Objects whose attributes a ``setattr`` with a name computed at run time may replace.
_PROCESS_OWNERS = frozenset({"sys", "os", "builtins", "atexit", "importlib", "posix", "owner"})


def _setattr_may_replace(owner: ast.expr) -> bool:
    """Whether ``setattr(owner, ...)`` may replace a process-wide function: its owner is a
    module that holds one, or a variable standing for any."""
    if isinstance(owner, ast.Name):
        return owner.id in _PROCESS_OWNERS or owner.id.startswith("_")
    return isinstance(owner, ast.Attribute) and owner.attr in {"_bootstrap", "util"}


def test_only_intercept_installs_the_audit_hook_or_replaces_process_functions() -> None:
    assert INTERCEPT.is_file()
    assert intercept_violations(SRC) == []


@pytest.mark.parametrize(
    ("module", "line", "expected"),
    [
        ("outputs.py", "sys.addaudithook(print)", "calls sys.addaudithook"),
        ("cache/early.py", '_C = "sys.addaudithook(hook)"', "calls sys.addaudithook"),
        ("cache/child.py", "os._exit = print", "assigns _exit"),
        ("gallery/hook.py", "def f():\n    builtins.__import__ = print", "assigns __import__"),
        ("cache/recorder.py", "importlib.util.find_spec = print", "assigns find_spec"),
        ("gallery/process_end.py", 'setattr(sys, "exit", print)', "setattr of exit"),
        ("gallery/process_end.py", "setattr(owner, name, print)", "setattr of name"),
        ("cache/recorder.py", 'patch(builtins, "__import__", print)', "patches __import__"),
        ("cache/early.py", 'Patch(bootstrap, "_gcd_import", print)', "patches _gcd_import"),
        ("outputs.py", 'mock.patch("importlib.util.find_spec", print)', "patches find_spec"),
    ],
)
def test_an_interception_elsewhere_fails_the_check(tmp_path, module, line, expected) -> None:
    copy = tmp_path / "docsaccel"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__"))
    target = copy / module
    target.write_text(f"{target.read_text(encoding='utf-8')}\n{line}\n", encoding="utf-8")
    problems = intercept_violations(copy)
    assert len(problems) == 1 and expected in problems[0], problems


# One owner for Sphinx's event handlers -----------------------------------------------------

SPHINX_EVENTS = SRC / "sphinx_events.py"


def listeners_readers(src: Path) -> list[str]:
    """Every place under ``src`` but ``sphinx_events.py`` that reads an attribute named
    ``listeners`` (Sphinx's ``EventManager.listeners``, an internal)."""
    problems = []
    for path in sorted(src.rglob("*.py")):
        if path.name == SPHINX_EVENTS.name and path.parent == src:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr == "listeners":
                problems.append(f"{path.relative_to(src)}:{node.lineno}: reads .listeners")
            elif isinstance(node, ast.Constant) and node.value == "listeners":
                problems.append(f"{path.relative_to(src)}:{node.lineno}: names 'listeners'")
    return problems


def test_only_sphinx_events_reaches_sphinx_event_listeners() -> None:
    assert SPHINX_EVENTS.is_file()
    assert listeners_readers(SRC) == []


@pytest.mark.parametrize(
    "line",
    ["app.events.listeners.clear()", 'getattr(app.events, "listeners", {})'],
)
def test_a_reach_into_sphinx_listeners_elsewhere_fails_the_check(tmp_path, line) -> None:
    copy = tmp_path / "docsaccel"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__"))
    target = copy / "gallery" / "handler_errors.py"
    target.write_text(f"{target.read_text(encoding='utf-8')}\ndef f(app):\n    {line}\n")
    problems = listeners_readers(copy)
    assert len(problems) == 1 and "gallery/handler_errors.py" in problems[0], problems
