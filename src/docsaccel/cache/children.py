"""What an example's child processes run is part of its dependencies.

An example that computes in a ``multiprocessing`` pool, a ``ProcessPoolExecutor``,
joblib's loky or multiprocessing backends, or a Python it starts with ``subprocess``
runs project code the recording process never sees: the project modules a child
imports, the functions it runs (at ``function`` granularity) and the files it reads
count, in whichever child, grandchild or pool worker (every start method: fork, spawn,
forkserver).

The design, in full: the caching guide's *Design* section.

:class:`~docsaccel.cache.cache_build.CacheRecording` calls :meth:`Children.begin` before
an example runs, :meth:`Children.end` after it, and :meth:`Children.collect` once the
example's processes have ended; what the children saw is merged into the example's own.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import site
import sys
import sysconfig
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, Protocol

from docsaccel.cache.recorder import Recorder, Seen
from docsaccel.contract import InputError, fork_safe_lock, read_json
from docsaccel.counts import counted
from docsaccel.formats import Format, replace_atomically, write_json
from docsaccel.intercept import listen
from docsaccel.settings import env_name

if TYPE_CHECKING:  # a child imports as little as it can: it starts before its work
    from docsaccel.cache.deps import Project

__all__ = [
    "CHILD_ENV",
    "PTH_NAME",
    "RECORD_FORMAT",
    "Children",
    "Control",
    "Followed",
    "Launches",
    "decode_seen",
    "encode_seen",
    "ensure_hooks",
    "file_signature",
    "merge_seen",
    "start_recording",
]

#: The variable a child reads the control file's path from.
CHILD_ENV = env_name("cache_child")
#: One record per child process and example.
RECORD_FORMAT = Format("docsaccel.cache-child", 2, "child process record")
#: The startup hook in the interpreter's site folder.
PTH_NAME = "docsaccel-cache-children.pth"
_PTH_LINE = (
    f"import os; exec('try:\\n from docsaccel.cache.child import startup\\n startup()\\n"
    f"except Exception:\\n pass') if os.environ.get({CHILD_ENV!r}) else None\n"
)
#: How a child record's ``state`` says it ended: exited (its last write at its exit).
EXITED = "exited"
RUNNING = "running"
#: Kinds of child: a ``multiprocessing`` (or loky) worker writes before each message it
#: sends; a plain fork or a subprocess only when it exits.
MULTIPROCESSING = "multiprocessing"
FORK = "fork"
SUBPROCESS = "subprocess"
_PYTHON_NAME = re.compile(r"^(i?python|pypy)(\d+(\.\d+)*)?(\.exe)?$")


class _Files(Protocol):
    """Where the project's files are (:class:`.deps.Project`, or a child's :class:`Control`)."""

    roots: tuple[str, ...]
    excluded: tuple[str, ...]

    def wants(self, path: str) -> bool: ...


def start_recording(project: _Files, granularity: str, label: str) -> None:
    """Start recording an example (``label``: its id) in this process: the one way the
    recording process and each child of it start."""
    watch_code = project.wants if granularity == "function" else None
    Recorder.get().start(
        project.roots, project.excluded, code=watch_code, label=label, state=project.wants
    )


@dataclass(frozen=True)
class Control:
    """What a child needs to record for the example its parent runs now."""

    #: The example's id, ``None`` between examples.
    example: str | None
    #: Counts the examples the parent started (a child switches when it changes).
    epoch: int
    #: The folder of the children's records of the example.
    records: str
    root: str
    roots: tuple[str, ...]
    excluded: tuple[str, ...]
    granularity: str

    def __post_init__(self) -> None:
        # Made now, at function granularity only (a child imports as little as it can),
        # and before the recording starts: made later, while the instrumenter's finder
        # asks ``wants`` about a module being imported, its own imports would go through
        # that finder, which would ask ``wants`` again.
        if self.granularity == "function":
            object.__setattr__(self, "_project", self.project())

    def project(self) -> Project:
        from docsaccel.cache.deps import Project

        return Project(root=self.root, roots=self.roots, excluded=self.excluded)

    def wants(self, path: str) -> bool:
        """Whether a file is the project's (:meth:`.deps.Project.wants`)."""
        project = self.__dict__.get("_project")
        if project is None:
            project = self.project()
            object.__setattr__(self, "_project", project)
        return project.wants(path)

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: Any) -> Control:
        """A control read from a file; ``ValueError`` when it is not one."""
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        try:
            control = cls(
                example=data["example"],
                epoch=data["epoch"],
                records=data["records"],
                root=data["root"],
                roots=tuple(data["roots"]),
                excluded=tuple(data["excluded"]),
                granularity=data["granularity"],
            )
        except (KeyError, TypeError) as exc:
            raise ValueError(f"key {exc} is missing or malformed") from None
        texts = [control.records, control.root, control.granularity, *control.roots]
        if not all(isinstance(t, str) for t in [*texts, *control.excluded]):
            raise ValueError("a path is not text")
        if control.example is not None and not isinstance(control.example, str):
            raise ValueError("example is not text")
        if not isinstance(control.epoch, int):
            raise ValueError("epoch is not a number")
        return control


def file_signature(path: str) -> tuple[int, int, int] | None:
    """What changes when the control file at ``path`` is written again."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_ino, info.st_size, info.st_mtime_ns


def read_control(path: str) -> Control | None:
    """The control file at ``path``; ``None`` when it cannot be read."""
    try:
        return Control.from_json(read_json(path, "child process control"))
    except (InputError, ValueError):
        return None


# --- Launches: the programs a process starts ----------------------------------------------


@dataclass
class Launches:
    """The programs one process started while recording an example."""

    #: How many Python children it started that will record (their records are expected).
    python: int = 0
    #: Programs that are not Python: named in the entry, what they read is not seen.
    not_followed: list[str] = field(default_factory=list)
    #: Python children that cannot record: the entry cannot be stored.
    unfollowable: list[str] = field(default_factory=list)

    def note(self, event: str, args: tuple[Any, ...]) -> None:
        """Classify one audit event of a process start (see the caching guide's design)."""
        if event == "subprocess.Popen":
            executable, argv, _, env = args
            self._program(executable, argv, env)
        elif event == "os.posix_spawn" and not _inside_popen(sys._getframe(1)):
            # subprocess.Popen starts its child with posix_spawn where it can (more often
            # from Python 3.13): that launch was noted at its Popen event already.
            path, argv, env = args[:3]
            self._program(path, argv, env)
        elif event == "os.exec":
            # The process becomes the program: a Python records again as itself.
            path, argv = args[0], args[1]
            env = args[2] if len(args) > 2 else None
            if not _is_python(os.fsdecode(path)):
                self._program(path, argv, env)
        elif event == "os.system":
            # A shell: what it runs is not known here; a Python it starts records itself.
            self.not_followed.append(f"shell: {_short(os.fsdecode(args[0]))}")

    def _program(self, executable: Any, argv: Any, env: Any) -> None:
        words = [os.fsdecode(a) for a in argv] if isinstance(argv, (list, tuple)) else []
        if isinstance(argv, (str, bytes)):
            words = [os.fsdecode(argv)]
        program = os.fsdecode(executable) if executable else (words[0] if words else "?")
        command = _short(" ".join(words) or program)
        if not _is_python(program):
            self.not_followed.append(command)
            return
        if "-S" in words[1 : _script_index(words)]:
            self.unfollowable.append(f"{command} (-S: no site folder, no startup hook)")
            return
        if env is not None and CHILD_ENV not in env:
            try:
                env[CHILD_ENV] = os.environ[CHILD_ENV]  # its environment was given without it
            except (TypeError, KeyError):
                self.unfollowable.append(f"{command} (its environment leaves out {CHILD_ENV})")
                return
        self.python += 1

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _inside_popen(frame: FrameType | None) -> bool:
    """Whether ``frame``'s stack runs ``subprocess.Popen`` starting its child."""
    while frame is not None:
        if frame.f_code.co_name == "_execute_child" and (
            frame.f_globals.get("__name__") == "subprocess"
        ):
            return True
        frame = frame.f_back
    return False


def _script_index(words: list[str]) -> int:
    """Where a Python command line's options end (its ``-c``, ``-m`` or script)."""
    for index, word in enumerate(words[1:], start=1):
        if word in ("-c", "-m") or not word.startswith("-"):
            return index
    return len(words)


def _short(text: str, width: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else f"{text[: width - 1]}…"


def _is_python(program: str) -> bool:
    """Whether a program is a Python interpreter, or a script whose first line runs one."""
    name = os.path.basename(program)
    if _PYTHON_NAME.match(name):
        return True
    path = program if os.sep in program else _which(program)
    if path is None:
        return False
    with contextlib.suppress(OSError):
        if os.path.realpath(path) == os.path.realpath(sys.executable):
            return True
        with open(path, "rb") as stream:
            first = stream.readline(256)
        if first.startswith(b"#!"):
            words = first[2:].decode("utf-8", "replace").split()
            named = [os.path.basename(w) for w in words[:2]]
            return any(_PYTHON_NAME.match(n) for n in named)
    return False


def _which(program: str) -> str | None:
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        candidate = os.path.join(folder, program)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


# --- Seen, as a child record holds it ------------------------------------------------------


def _encode(value: Any) -> Any:
    if isinstance(value, (set, frozenset)):
        items = [_encode(v) for v in value]
        return {"set": sorted(items, key=repr)}
    if isinstance(value, tuple):
        return {"tuple": [_encode(v) for v in value]}
    if isinstance(value, dict):
        return {"dict": [[_encode(k), _encode(v)] for k, v in value.items()]}
    if isinstance(value, list):
        return {"list": [_encode(v) for v in value]}
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(f"cannot record a {type(value).__name__}")


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        if len(value) != 1:
            raise ValueError(f"a tagged value has keys {sorted(value)!r:.60}")
        ((tag, items),) = value.items()
        if not isinstance(items, list):
            raise ValueError(f"{tag}: not a list")
        if tag == "set":
            return frozenset(_decode(v) for v in items)
        if tag == "tuple":
            return tuple(_decode(v) for v in items)
        if tag == "list":
            return [_decode(v) for v in items]
        if tag == "dict":
            if not all(isinstance(p, list) and len(p) == 2 for p in items):
                raise ValueError("dict: not a list of pairs")
            return {_decode(k): _decode(v) for k, v in items}
        raise ValueError(f"unknown tag {tag!r:.40}")
    if isinstance(value, list):
        raise ValueError("an untagged list")
    return value


def encode_seen(seen: Seen) -> dict[str, Any]:
    """What a child saw, as JSON (every field of :class:`.recorder.Seen`)."""
    return {f.name: _encode(getattr(seen, f.name)) for f in dataclasses.fields(seen)}


def decode_seen(data: Any) -> Seen:
    """The :class:`.recorder.Seen` a child record holds; ``ValueError`` when malformed
    (a field of the wrong kind, an unknown tag). Fields this docsaccel does not know are
    left out; those it knows and the record lacks are empty."""
    if not isinstance(data, dict):
        raise ValueError("seen: not a JSON object")
    seen = Seen()
    for item in dataclasses.fields(seen):
        if item.name not in data:
            continue
        value, empty = _decode(data[item.name]), getattr(seen, item.name)
        if isinstance(empty, (set, frozenset)) and isinstance(value, frozenset):
            setattr(seen, item.name, type(empty)(value))
        elif isinstance(empty, dict) and isinstance(value, dict):
            setattr(seen, item.name, value)
        else:
            raise ValueError(f"seen.{item.name} has the wrong kind")
    return seen


def merge_seen(into: Seen, other: Seen) -> None:
    """Add what ``other`` saw to ``into`` (sets joined; of a dict's values, sets joined and
    others kept as ``into`` has them). A file the one wrote is no input of the other."""
    for item in dataclasses.fields(into):
        mine, theirs = getattr(into, item.name), getattr(other, item.name)
        if isinstance(mine, (set, frozenset)):
            setattr(into, item.name, type(mine)(mine | set(theirs)))
        elif isinstance(mine, dict):
            merged = dict(mine)
            for key, value in theirs.items():
                if key in merged and isinstance(value, (set, frozenset)):
                    merged[key] = type(merged[key])(set(merged[key]) | set(value))
                else:
                    merged.setdefault(key, value)
            setattr(into, item.name, merged)
    into.files -= into.written


# --- The parent side ------------------------------------------------------------------------


@dataclass
class Followed:
    """What an example's children recorded (:meth:`Children.collect`)."""

    seen: Seen = field(default_factory=Seen)
    #: How many child processes recorded for it.
    count: int = 0
    #: Programs not followed (not Python): their reads are not seen.
    not_followed: list[str] = field(default_factory=list)
    #: Why the example's entry cannot be stored (a child docsaccel could not follow, or
    #: one still running or killed before it wrote everything).
    problems: list[str] = field(default_factory=list)


class Children:
    """The recording process's side (see the caching guide's design); one per process."""

    _instance: Children | None = None
    _lock = fork_safe_lock()

    def __init__(self) -> None:
        self.control: Control | None = None
        self.control_path: str | None = None
        #: The control file's :func:`file_signature` as last written.
        self.signature: tuple[int, int, int] | None = None
        self.launches = Launches()
        self.recording = False
        #: How many children it forked while recording the example (a pool worker that
        #: noted nothing its parent had not writes no record: followed all the same).
        self.forks = 0
        self._epoch = 0
        self._hooked = False
        #: Why children started afresh cannot be followed (no startup hook), if so.
        self.no_startup: str | None = None

    @classmethod
    def get(cls) -> Children:
        with cls._lock:
            if cls._instance is None:
                cls._instance = cls()
            return cls._instance

    def begin(self, example_id: str, deps_dir: str, project: Project, granularity: str) -> None:
        """The example starts in this process: tell its children (see the caching
        guide's design)."""
        from docsaccel.cache import child
        from docsaccel.layout import id_slug

        child.leave()  # a process that records examples is nobody's child any more
        folder = os.path.join(deps_dir, "children")
        records = os.path.join(folder, id_slug(example_id))
        with contextlib.suppress(OSError):
            for name in os.listdir(records):  # an earlier run of it in this build
                os.unlink(os.path.join(records, name))
        os.makedirs(records, exist_ok=True)
        self._epoch += 1
        self.control = Control(
            example_id, self._epoch, records, project.root, project.roots, project.excluded,
            granularity,
        )  # fmt: skip
        self.control_path = os.path.join(folder, f"{os.getpid()}.json")
        write_json(self.control_path, self.control.to_json(), indent=None)
        self.signature = file_signature(self.control_path)
        os.environ[CHILD_ENV] = self.control_path
        if not self._hooked:
            self._hooked = True
            ensure_hooks()
            self.no_startup = install_startup_hook()
        self.launches = Launches()
        self.forks = 0
        self.recording = True

    def end(self) -> None:
        """The example ended: children from now on work for no example."""
        self.recording = False
        if self.control is None or self.control_path is None:
            return
        self._epoch += 1
        self.control = dataclasses.replace(self.control, example=None, epoch=self._epoch)
        with contextlib.suppress(OSError):
            write_json(self.control_path, self.control.to_json(), indent=None)
        self.signature = file_signature(self.control_path)

    def collect(self, example_id: str, deps_dir: str, modules: Iterable[str] = ()) -> Followed:
        """What the example's children recorded; call it once its processes were ended.
        ``modules``: those the example used, which say whether it may have started
        Python processes no event shows (``multiprocessing``'s ``spawn``), when those
        cannot be followed here (no startup hook)."""
        from docsaccel.layout import id_slug

        followed = Followed(not_followed=list(self.launches.not_followed))
        followed.problems += [f"a Python child docsaccel cannot follow: {c}" for c in
                              self.launches.unfollowable]  # fmt: skip
        records = Path(deps_dir, "children", id_slug(example_id))
        started: dict[int, int] = {os.getpid(): self.launches.python}
        found: dict[int, int] = {}
        forked_here = 0
        for path in sorted(records.glob("*.json")) if records.is_dir() else ():
            try:
                record = _read_record(path)
            except (InputError, ValueError) as exc:
                followed.problems.append(f"a child process record is unreadable: {exc}")
                continue
            merge_seen(followed.seen, _as_child(record["seen"], example_id))
            followed.count += 1
            launches = record["launches"]
            followed.not_followed += launches.not_followed
            followed.problems += [
                f"a Python child docsaccel cannot follow: {c}" for c in launches.unfollowable
            ]
            started[record["pid"]] = launches.python
            if record["kind"] == SUBPROCESS:
                found[record["ppid"]] = found.get(record["ppid"], 0) + 1
            forked_here += record["forked"] and record["ppid"] == os.getpid()
            if record["state"] != EXITED and record["kind"] != MULTIPROCESSING:
                followed.problems.append(
                    f"child process {record['pid']} ({record['command']}) had not exited when "
                    "the example ended: what it ran after its last record is not known"
                )
        for pid, count in started.items():
            if found.get(pid, 0) < count:
                why = f" ({self.no_startup})" if self.no_startup else ""
                unrecorded = counted(
                    count - found.get(pid, 0), "Python child process", "Python child processes"
                )
                followed.problems.append(
                    f"{unrecorded} of process {pid} left no record{why}: what they ran is not known"
                )
        followed.count += max(self.forks - forked_here, 0)  # those that had nothing to add
        starting = sorted({m.partition(".")[0] for m in modules} & _STARTS_PYTHON)
        if self.no_startup and starting:
            followed.problems.append(
                f"it uses {', '.join(starting)}, whose workers started afresh cannot be "
                f"followed here ({self.no_startup})"
            )
        followed.not_followed = sorted(set(followed.not_followed))
        return followed


def _as_child(seen: Seen, example_id: str) -> Seen:
    """What a child saw, as its parent counts it: the state its own earlier records of
    the example left is the example's, not an earlier example's; the globals it changed
    and the caches it filled live in the child, not in the parent, where later examples
    run."""
    carried = {key: labels - {example_id} for key, labels in seen.carried_state.items()}
    seen.carried_state = {key: labels for key, labels in carried.items() if labels}
    seen.carried_fills = {}  # those of earlier examples are the parent's: it knows them
    seen.left_state = set()
    return seen


#: Modules that start Python processes without an audit event (a fresh interpreter).
_STARTS_PYTHON = frozenset({"multiprocessing", "concurrent", "joblib", "loky"})


def _read_record(path: Path) -> dict[str, Any]:
    """A child record, checked; ``InputError``/``ValueError`` naming the file if not one."""
    data = read_json(path, RECORD_FORMAT.what)
    RECORD_FORMAT.check(data, path)
    kinds = {"pid": int, "ppid": int, "state": str, "kind": str, "command": str, "forked": bool}
    for key, kind in kinds.items():
        if not isinstance(data.get(key), kind):
            raise ValueError(f"{path}: key {key!r} is missing or has the wrong type")
    launches = data.get("launches")
    if not isinstance(launches, dict):
        raise ValueError(f"{path}: key 'launches' is missing or has the wrong type")
    try:
        data["launches"] = Launches(
            python=int(launches["python"]),
            not_followed=[str(n) for n in launches["not_followed"]],
            unfollowable=[str(n) for n in launches["unfollowable"]],
        )
        seen = decode_seen(data.get("seen"))
        modules = data.get("module_files", {})
        if not isinstance(modules, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in modules.items()
        ):
            raise ValueError("module_files is not {name: file}")
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{path}: {exc}") from None
    seen.module_files.update(modules)
    data["seen"] = seen
    return data


def _audit(event: str, args: tuple[Any, ...]) -> None:
    """The programs a recording process starts (see :class:`Launches`): a listener of
    :data:`_LAUNCH_EVENTS`."""
    children = Children._instance
    if children is not None and children.recording:
        with contextlib.suppress(Exception):  # never in the way of the example's own call
            children.launches.note(event, args)
        return
    from docsaccel.cache import child

    child.note_launch(event, args)


_LAUNCH_EVENTS = frozenset({"subprocess.Popen", "os.posix_spawn", "os.exec", "os.system"})
_hooks_installed = False


def ensure_hooks() -> None:
    """Install, once per process (a forked child inherits them), the audit listener that
    sees the programs started and the at-fork hook that makes a forked process a child."""
    global _hooks_installed
    if _hooks_installed:
        return
    _hooks_installed = True
    from docsaccel.cache import child

    listen(_LAUNCH_EVENTS, _audit)  # for the life of the process
    os.register_at_fork(before=child.before_fork, after_in_child=child.after_fork)


def install_startup_hook() -> str | None:
    """Make sure a Python started afresh in this environment runs the child startup
    (:data:`PTH_NAME` in the first site folder that takes it); ``None`` when in place,
    else why it cannot be."""
    folders = [sysconfig.get_paths()["purelib"]]
    if site.ENABLE_USER_SITE:
        folders.append(site.getusersitepackages())
    payload = _PTH_LINE.encode("utf-8")
    errors = []
    for folder in dict.fromkeys(folders):
        path = os.path.join(folder, PTH_NAME)
        try:
            with open(path, "rb") as stream:
                if stream.read() == payload:
                    return None
        except OSError:
            pass
        try:
            replace_atomically(path, payload)
            return None
        except OSError as exc:
            errors.append(f"cannot write {path}: {exc.strerror or exc}")
    return "; ".join(errors) or "no site folder"


def pth_line() -> str:
    """The startup hook's one line (for the docs and ``doctor``)."""
    return _PTH_LINE
