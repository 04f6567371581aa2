"""Every docsaccel setting, declared once: its default, types, variable, check and help.

The design, in full: the adopting guide's *Design* section.

Example:

>>> from types import SimpleNamespace
>>> conf = SimpleNamespace(**{key: default for key, default, _ in config_values()})
>>> settings = read_settings(conf, confdir=".", env={"DOCSACCEL_FAST": "1"})
>>> settings.fast, settings.on_overrun
(True, 'warn')
>>> resolve("fast", conf, {"DOCSACCEL_FAST": "0"})
('DOCSACCEL_FAST', '0')
>>> unknown_settings(["docsaccel_fsat"])[0].split(";")[1].split("?")[0]
" did you mean 'docsaccel_fast'"
"""

from __future__ import annotations

import math
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from difflib import get_close_matches
from pathlib import Path
from typing import Any, NamedTuple

from docsaccel.contract import MAX_BUDGET_SECONDS, InputError, parse_switch
from docsaccel.layout import marked_root
from docsaccel.memory_sizes import format_size, machine_bytes, parse_size

__all__ = [
    "CACHE_GRANULARITIES",
    "CACHE_RECORDERS",
    "CONFIG_PREFIX",
    "DEFAULT_CACHE_NAME",
    "MIN_GRACE_SECONDS",
    "ON_OVERRUN_MODES",
    "PACKAGE_FOLDER",
    "ClearOf",
    "Setting",
    "SettingError",
    "Settings",
    "Source",
    "below_a_file",
    "cache_collision",
    "config_values",
    "env_name",
    "environment_variables",
    "given_as",
    "given_value",
    "given_where",
    "in_package",
    "missing_folder",
    "not_a_file",
    "not_a_folder",
    "overlap",
    "override_value",
    "own_cache_folder",
    "project_root",
    "read_env_setting",
    "read_overrides",
    "read_setting",
    "read_settings",
    "resolve",
    "setting_errors",
    "settings_rst",
    "spec",
    "specs",
    "unknown_settings",
    "unknown_variables",
]

#: Every ``conf.py`` setting of docsaccel starts with this.
CONFIG_PREFIX = "docsaccel_"
ON_OVERRUN_MODES = ("warn", "fail")
#: The name suggested for a cache folder (this project's, at the repository root).
DEFAULT_CACHE_NAME = ".docsaccel-cache"
#: ``module``: a project file counts whole; ``function``: the code of it that ran.
CACHE_GRANULARITIES = ("module", "function")
#: How ``function`` granularity sees code run: ``auto`` (``sys.monitoring`` on 3.12+, the
#: instrumenter on 3.11) or ``instrument`` (the instrumenter everywhere).
CACHE_RECORDERS = ("auto", "instrument")


class SettingError(InputError):
    """A setting with a bad value; the message names the key (or variable) and the value."""


class Source(NamedTuple):
    """Where a setting's value came from, for its check: the variable, ``-D`` or ``conf.py``."""

    #: The variable, ``-D`` and the name, or the ``conf.py`` name that gave the value, for
    #: messages: the one place a message learns where the value came from.
    where: str
    value: Any
    #: The value is a variable's text (stripped); else a ``conf.py`` value or the default.
    from_env: bool
    confdir: Path


class Setting(NamedTuple):
    """The declaration of one setting (the metadata of a :class:`Settings` field).

    A named tuple, as :class:`Source`: immutable, shown as a dataclass would be, and
    defined at import at a fraction of a frozen dataclass's cost.
    """

    name: str
    default: Any
    #: The types Sphinx accepts for the ``conf.py`` value (empty: no ``conf.py`` name).
    types: tuple[type, ...]
    #: The environment variable that sets it, if any.
    env: str | None
    check: Callable[[Source], Any]
    help: str
    #: How the docs name the accepted values (``"True or False"``).
    accepts: str
    #: Set by docsaccel for its own processes, never by a user: not offered in messages.
    internal: bool = False

    @property
    def key(self) -> str | None:
        """Its ``conf.py`` name, or None for a setting of the environment only."""
        return f"{CONFIG_PREFIX}{self.name}" if self.types else None

    def describe(self) -> str:
        """``docsaccel_fast`` (or its variable, for a setting of the environment only)."""
        return self.key or str(self.env)


def setting(
    default: Any,
    check: Callable[[Source], Any],
    help: str,
    accepts: str,
    types: tuple[type, ...] = (),
    env: str | None = None,
    internal: bool = False,
) -> Any:
    """A :class:`Settings` field declaring one setting (``types=()``: no ``conf.py`` name;
    ``internal``: a variable docsaccel sets for its own processes)."""
    return field(
        default=default,
        metadata={"setting": (default, types, env, check, help, accepts, internal)},
    )


# Checks: each turns a Source into the value Settings holds, or raises SettingError. --


def _switch(source: Source) -> bool:
    if source.from_env:
        try:
            return parse_switch(source.value, source.where)
        except ValueError as exc:
            raise SettingError(str(exc)) from None
    if not isinstance(source.value, bool):
        raise SettingError(f"{source.where} must be True or False, got {source.value!r}")
    return source.value


def _on_overrun(source: Source) -> str:
    return _one_of(source, ON_OVERRUN_MODES)


def _conf_path(source: Source, what: str) -> Path | None:
    """A path of ``conf.py``, relative to the conf dir (a variable's: to the current folder)."""
    value = source.value
    if value is None:
        return None
    if not isinstance(value, (str, os.PathLike)) or not str(value).strip():
        raise SettingError(
            f"{source.where} must be the path of {what} (relative to the conf dir) or None, "
            f"got {value!r}"
        )
    return Path(value) if source.from_env else source.confdir / value


def _budgets(source: Source) -> Path | None:
    path = _conf_path(source, "a TOML budget file")
    problem = None if path is None else not_a_file(path, "a TOML budget file")
    if problem is not None:
        raise SettingError(f"{source.where} = {str(source.value)!r}: {problem}")
    return path


def _history(source: Source) -> Path | None:
    path = _conf_path(source, "a history file (written by docsaccel history append)")
    # A missing history file is none yet; anything else there must be a file to read.
    problem = None if path is None or not path.exists() else not_a_file(path)
    if problem is not None:
        raise SettingError(f"{source.where} = {str(source.value)!r}: {problem}")
    return path


def _report_page(source: Source) -> str | None:
    value = source.value
    if value is None:
        return None
    if (
        not isinstance(value, str)
        or not value.strip()
        or value.endswith(".rst")
        or value.startswith("/")
        or ".." in value.split("/")
    ):
        raise SettingError(
            f"{source.where} must be a docname inside the source dir, such as "
            f"'budget_report' (no suffix), or None for no page, got {value!r}"
        )
    return value


def _cache(source: Source) -> Path | None:
    if source.from_env:
        # A switch's "off" spelling turns the cache off for this build; any other text is
        # a folder, relative to where the build runs (as a variable's paths are).
        try:
            on = parse_switch(source.value, source.where)
        except ValueError:
            path: Path | None = Path(source.value).resolve()
        else:
            if on:
                raise SettingError(
                    f"{source.where}={source.value!r} is not a folder; give the cache "
                    "folder's path, or 0 for no cache"
                )
            return None
    else:
        path = _conf_path(source, "the cache folder")
        path = None if path is None else path.resolve()
    # A cache folder that does not exist yet is made by the first build, unless it is to be
    # made below a file or a folder that does not exist: a typo, not a tree to make.
    try:
        problem = None if path is None else not_a_folder(path) if path.exists() else _unmade(path)
    except OSError as exc:  # a name too long, a folder one may not look into
        raise SettingError(f"{source.where}={source.value!r}: {exc.strerror or exc}") from None
    if problem is None and path is not None:
        confdir = source.confdir.resolve()
        conf = ClearOf(confdir, "the Sphinx conf folder", inside_allowed=True)
        problem = cache_collision(path, [conf], project_root(confdir, path))
    if problem is not None:
        raise SettingError(f"{source.where}={source.value!r}: {problem}")
    return path


def _unmade(path: Path) -> str | None:
    """Why the cache folder ``path``, missing, is not made: a build makes the folder
    itself, never its parents (``/nonexistent/deep/cache`` would make a tree at the
    filesystem's root). None when its parent is a folder."""
    if path.parent.is_dir():
        return None
    return below_a_file(path) or (
        f"its parent folder {path.parent} does not exist; a build makes only the cache "
        "folder itself: create the parent first, or give a folder whose parent exists"
    )


class ClearOf(NamedTuple):
    """A folder the cache folder must stay clear of (:func:`cache_collision`)."""

    folder: Path
    #: What it is, for the message: ``"the Sphinx conf folder"``.
    what: str
    #: A cache strictly inside it is allowed: the source folder's, left out of the
    #: documents (the build adds it to ``exclude_patterns``).
    inside_allowed: bool = False


def cache_collision(cache: Path, folders: Iterable[ClearOf], root: Path) -> str | None:
    """Why ``cache`` cannot be the cache folder: it is, holds or is inside one of
    ``folders`` (resolved paths), which it would share with what the build or the user
    keeps there. None when it is a folder of its own.

    The cache writes entries, Sphinx's state and kept pages into its folder, and a build
    may remove them: in the sources, Sphinx reads them as documents; in a gallery folder,
    sphinx-gallery's pages and the cache's mix, and neither can be told from the other;
    in an examples folder, they land among the user's tracked files; in the output folder
    or a folder copied into it (``html_static_path``), they are published with the site.
    The message suggests a folder clear of them all (:func:`own_cache_folder`, at the
    project ``root``).

    >>> docs = ClearOf(Path("/repo/docs"), "the Sphinx conf folder", inside_allowed=True)
    >>> cache_collision(Path("/repo"), [docs], Path("/repo")).split("; ")[0]
    '/repo holds the Sphinx conf folder /repo/docs'
    >>> cache_collision(Path("/repo/docs"), [docs], Path("/repo")).split("such as ")[1]
    '/repo/.docsaccel-cache'
    >>> cache_collision(Path("/repo/docs/_cache"), [docs], Path("/repo")) is None
    True
    >>> html = ClearOf(Path("/repo/docs/_build/html"), "the build's output folder")
    >>> cache_collision(Path("/repo/docs/_build/html/_c"), [docs, html], Path("/repo"))
    "/repo/docs/_build/html/_c is inside the build's output folder /repo/docs/_build/html; \
give the cache a folder of its own, such as /repo/.docsaccel-cache"
    """
    folders = list(folders)
    # The folder the cache is, when it is one, names it best (a nested gallery is also
    # inside the outer one).
    for clear in sorted(folders, key=lambda clear: clear.folder != cache):
        where = overlap(cache, clear)
        if where is not None:
            suggested = own_cache_folder(cache, folders, root)
            return f"{cache} {where}; give the cache a folder of its own, such as {suggested}"
    return None


def overlap(folder: Path, clear: ClearOf) -> str | None:
    """How ``folder`` shares the folder ``clear`` ("is", "holds", "is inside"), if it
    does (both resolved)."""
    if folder == clear.folder:
        return f"is {clear.what}"
    if folder in clear.folder.parents:
        return f"holds {clear.what} {clear.folder}"
    if clear.folder in folder.parents and not clear.inside_allowed:
        return f"is inside {clear.what} {clear.folder}"
    return None


def project_root(confdir: Path, cache: Path) -> Path:
    """Where a cache folder is suggested for a project whose conf dir is ``confdir``: its
    repository root (:func:`docsaccel.layout.marked_root`, beside ``.git``), or, with no
    marker above, the folder holding both ``confdir`` and the refused ``cache``."""
    marked = marked_root(confdir)
    if marked is not None:
        return Path(marked)
    return Path(os.path.commonpath([Path(confdir).resolve(), cache]))


def own_cache_folder(cache: Path, folders: Iterable[ClearOf], root: Path) -> Path:
    """The one suggestion for a refused cache folder ``cache``: ``.docsaccel-cache`` at
    the project ``root`` (:func:`docsaccel.layout.find_root`, beside ``.git``, where this
    project keeps its own), else at the nearest folder above it that is clear. Never
    inside ``cache`` itself when it is inside the project (refused: ``.git``, a package
    of the user's), nor, where another is possible, inside one of ``folders`` (the
    output, the doctrees, which ``make clean`` deletes or the site publishes); inside
    the sources (a cache may be there, left out of the documents) rather than outside
    the project.

    >>> docs = ClearOf(Path("/repo/docs"), "the Sphinx source folder", inside_allowed=True)
    >>> own_cache_folder(Path("/repo/mylib"), [docs], Path("/repo")).as_posix()
    '/repo/.docsaccel-cache'
    >>> own_cache_folder(Path("/repo"), [docs], Path("/repo")).as_posix()
    '/repo/.docsaccel-cache'
    >>> root = ClearOf(Path("/repo"), "the Sphinx source folder", inside_allowed=True)
    >>> own_cache_folder(Path("/repo/_build/html"), [root], Path("/repo")).as_posix()
    '/repo/.docsaccel-cache'
    """
    folders = list(folders)
    # A folder at or above the root is refused for what it holds; the root's own cache
    # folder below it is a folder of its own, what the README suggests.
    if cache != root and cache not in root.parents:
        folders.append(ClearOf(cache, "the refused folder"))
    candidates = [base / DEFAULT_CACHE_NAME for base in (root, *root.parents)]
    # The project's own place first: a folder above the root is no part of the project.
    for candidate in candidates:
        for strict in (True, False):
            if all(_clear(candidate, clear, strict) for clear in folders):
                return candidate
    return candidates[-1]


def _clear(candidate: Path, clear: ClearOf, strict: bool) -> bool:
    """Whether ``candidate`` stays clear of ``clear``; ``strict``: not even inside it."""
    if overlap(candidate, clear) is not None:
        return False
    return not (strict and clear.folder in candidate.parents)


def below_a_file(path: Path) -> str | None:
    """Why a folder or file cannot be made at ``path``, when one of its parents is a file
    (a typo: ``pyproject.toml/cache``); None otherwise.

    >>> below_a_file(Path("/no/such/place")) is None
    True
    """
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    return None if parent.is_dir() else f"{path} cannot be made: {parent} is a file, not a folder"


def missing_folder(path: Path) -> str | None:
    """Why the folder of the file ``path`` cannot take it, or ``None``: no command makes
    the folder of a file it writes (``report -o``, ``history append --to``), so a
    mistyped one is said rather than a new tree of folders made.

    >>> missing_folder(Path("/no/such/place/x.md"))
    'its folder /no/such/place does not exist; create it first'
    """
    if path.parent.is_dir():
        return None
    return below_a_file(path) or f"its folder {path.parent} does not exist; create it first"


#: How :func:`not_a_file` names what is at a path that is neither a file nor a folder.
_OTHER_KINDS = (
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISSOCK, "a socket"),
)


def not_a_file(path: Path, what: str = "a file") -> str | None:
    """Why ``path`` is not the regular file a path setting expects (``what``), in the
    words every such setting's error uses: missing, a folder, or something else that
    exists (a device such as ``/dev/null``, a named pipe); None when it is a file.

    >>> not_a_file(Path("/dev/null"))
    '/dev/null is a character device, not a regular file'
    >>> not_a_file(Path("/"), "a TOML budget file")
    '/ is a folder, not a TOML budget file'
    >>> not_a_file(Path("/no/such/place"))
    'no such file: /no/such/place'
    """
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return f"no such file: {path}"
    except OSError as exc:  # a name too long, a folder one may not look into
        return f"{path}: {exc.strerror or exc}"
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return f"{path} is a folder, not {what}"
    kind = next((name for test, name in _OTHER_KINDS if test(mode)), "a special file")
    return f"{path} is {kind}, not a regular file"


#: The installed docsaccel package: no command writes into it (a file there would be lost
#: at the next upgrade, or read as part of the package).
PACKAGE_FOLDER = Path(__file__).resolve().parent


def in_package(path: Path) -> str | None:
    """Why a command may not write the file ``path``: it is inside the installed docsaccel
    package (:data:`PACKAGE_FOLDER`); None otherwise.

    >>> in_package(PACKAGE_FOLDER / "report" / "x.md")[:41]
    'is inside the installed docsaccel package'
    >>> in_package(Path("/no/such/place/x.md")) is None
    True
    """
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError):  # a loop of links: not a place to write either
        return None
    if PACKAGE_FOLDER not in resolved.parents and resolved != PACKAGE_FOLDER:
        return None
    return f"is inside the installed docsaccel package ({PACKAGE_FOLDER}); write it elsewhere"


def not_a_folder(path: Path) -> str | None:
    """Why ``path`` is not a folder, in the words every path setting's error uses (a file
    given for a folder is named as one); None when it is a folder.

    >>> not_a_folder(Path("/no/such/place"))
    '/no/such/place: no such folder'
    """
    if path.is_dir():
        return None
    if path.exists():
        return f"{path} is a file, not a folder"
    return f"{path}: no such folder"


def _one_of(source: Source, choices: tuple[str, ...]) -> str:
    # Read as switches are: case and surrounding spaces do not matter (``FAIL``, `` fail``).
    value = source.value.strip().lower() if isinstance(source.value, str) else source.value
    if value not in choices:
        raise SettingError(
            f"{source.where} must be {' or '.join(map(repr, choices))}, got {source.value!r}"
        )
    return value


def _granularity(source: Source) -> str:
    return _one_of(source, CACHE_GRANULARITIES)


def _recorder(source: Source) -> str:
    return _one_of(source, CACHE_RECORDERS)


def _roots(source: Source) -> tuple[Path, ...] | None:
    value = source.value
    if value is None:
        return None
    if isinstance(value, (str, os.PathLike)) or not isinstance(value, (list, tuple)):
        raise SettingError(
            f"{source.where} must be a list of folders (relative to the conf dir) or None, "
            f"got {value!r}"
        )
    roots = []
    for item in value:
        path = source.confdir / item if isinstance(item, (str, os.PathLike)) and str(item) else None
        problem = "not a path" if path is None else not_a_folder(path)
        if problem is not None:
            raise SettingError(
                f"{source.where}: {item!r} is not a folder ({problem}; from {source.confdir})"
            )
        roots.append(path.resolve())
    return tuple(roots)


def _names(source: Source) -> tuple[str, ...]:
    value = source.value
    if not isinstance(value, (list, tuple)) or not all(
        isinstance(v, str) and v.strip() and "=" not in v for v in value
    ):
        raise SettingError(
            f"{source.where} must be a list of environment variable names, got {value!r}"
        )
    return tuple(value)


def _fraction(source: Source) -> float:
    """A share of the examples: a switch (on: all of them) or a number from 0 to 1."""
    value = source.value
    if source.from_env:
        try:
            return 1.0 if parse_switch(value, source.where) else 0.0
        except ValueError:
            pass
        try:
            value = float(value)
        except ValueError:
            value = math.nan
    elif isinstance(value, bool):
        return 1.0 if value else 0.0
    if not isinstance(value, (int, float)) or not (0 <= value <= 1):
        raise SettingError(
            f"{source.where} must be on or off (True/False, 1/0) or a fraction from 0 to 1 "
            f"(0.2: a random fifth of the examples), got {source.value!r}"
        )
    return float(value)


def _shard_examples(source: Source) -> tuple[str, ...] | None:
    if source.value is None:
        return None
    # Checked before it is read: reading a named pipe would wait for a writer.
    problem = not_a_file(Path(source.value), "a text file")
    if problem is not None:
        raise SettingError(f"{source.where} = {source.value!r}: {problem}")
    try:
        lines = Path(source.value).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingError(f"{source.where} = {source.value!r}: cannot read it: {exc}") from None
    return tuple(line.strip() for line in lines if line.strip())


def _shard_records(source: Source) -> Path | None:
    if source.value is None:
        return None
    path = Path(source.value)
    problem = not_a_folder(path)
    if problem is not None:
        raise SettingError(f"{source.where} = {source.value!r}: {problem}")
    return path


def _memory_limit(source: Source) -> int | None:
    value = source.value
    if value is None or (isinstance(value, str) and value.strip().lower() == "none"):
        return None
    if not isinstance(value, str):
        raise SettingError(
            f"{source.where} must be a size such as '6.5G' or '1500M' (a string with a "
            f"unit), or None for no ceiling, got {value!r}"
        )
    size = parse_size(value, source.where, SettingError)
    machine = machine_bytes()
    if machine is not None and size > machine:
        raise SettingError(
            f"{source.where} = {value!r} is more than the memory of this machine "
            f"({format_size(machine)}); set the ceiling a little under it, such as "
            f"{format_size(machine * 0.9)!r}"
        )
    return size


def _text(source: Source) -> str | None:
    return source.value


#: Seconds an example may still run after its budget ran out before the hard stop: time
#: for an import in progress to finish and for an interrupted example to unwind.
GRACE_SECONDS = 5.0
#: The shortest grace accepted: below it an example that unwinds normally from its
#: interruption (a ``finally``, a context manager closing a file) is stopped hard, and
#: the hard stop ends the build.
MIN_GRACE_SECONDS = 1.0


def _grace(source: Source) -> float:
    if not source.from_env:
        return source.value
    try:
        value = float(source.value)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise SettingError(
            f"{source.where}={source.value!r} is not a number of seconds; use a finite "
            f"number >= {MIN_GRACE_SECONDS:g}, e.g. {source.where}={GRACE_SECONDS:g}"
        )
    if value < MIN_GRACE_SECONDS:
        raise SettingError(
            f"{source.where}={source.value!r} is less than {MIN_GRACE_SECONDS:g} second: an "
            "example interrupted at its budget needs that long to unwind before the hard stop "
            f"ends the build; use at least {MIN_GRACE_SECONDS:g}, e.g. "
            f"{source.where}={GRACE_SECONDS:g}"
        )
    # The cap of every duration docsaccel reads (the budgets' too): an example that
    # swallows its interruption would otherwise hold the build without end.
    if value > MAX_BUDGET_SECONDS:
        raise SettingError(
            f"{source.where}={source.value!r} is more than {MAX_BUDGET_SECONDS:g} seconds "
            f"(7 days); use at most that, e.g. {source.where}={GRACE_SECONDS:g}"
        )
    return value


_PATH = (type(None), str, Path)
_FAST_ENV = "DOCSACCEL_FAST"


@dataclass(frozen=True)
class Settings:
    """The validated settings of one build; each field is declared with :func:`setting`."""

    budgets: Path | None = setting(
        None,
        _budgets,
        "TOML budget file (see the budgets guide), relative to the conf dir.",
        "a path or None",
        types=_PATH,
    )
    on_overrun: str = setting(
        "warn",
        _on_overrun,
        "What an example over its budget does: ``warn`` (the build goes on, a warning) or "
        "``fail`` (interrupted at its budget, the build fails).",
        "``'warn'`` or ``'fail'``",
        types=(str,),
        env="DOCSACCEL_ON_OVERRUN",
    )
    fast: bool = setting(
        False,
        _switch,
        "The CI fast path: every ``docsaccel.fast.pick`` knob takes its fast value, and "
        "fast budgets apply.",
        "True or False",
        types=(bool,),
        env=_FAST_ENV,
    )
    videos: bool = setting(
        True,
        _switch,
        "Add the video scraper, so the videos an example writes play in its page.",
        "True or False",
        types=(bool,),
    )
    memory_limit: int | None = setting(
        None,
        _memory_limit,
        "The build's memory ceiling: an example that would take the build's processes "
        "over it is interrupted, its record and the report written first, and the build "
        "fails (see the budgets guide). Set it a little under the runner's memory, such as "
        '``"6.5G"`` on a 7 GB host; ``"none"`` in the variable turns it off. One at or '
        "below what the build holds before any example runs stops the build then.",
        "a size such as ``'6.5G'``, or None",
        types=(type(None), str),
        env="DOCSACCEL_MEMORY_LIMIT",
    )
    report_page: str | None = setting(
        None,
        _report_page,
        'Docname of a generated "Build budget report" page, such as ``"budget_report"`` '
        "(written into the source dir); None: no page.",
        "a docname or None",
        types=(type(None), str),
    )
    report_chart: bool = setting(
        False,
        _switch,
        "Draw the time-against-budget chart on the report page (matplotlib, in a second process).",
        "True or False",
        types=(bool,),
    )
    cache: Path | None = setting(
        None,
        _cache,
        "Folder of the example cache across builds (see the caching guide), relative to the conf "
        "dir; the variable's path is relative to the current folder, and ``0`` or ``off`` "
        "there turns the cache off. None: no cache.",
        "a path or None",
        types=_PATH,
        env="DOCSACCEL_CACHE",
    )
    cache_sphinx: bool = setting(
        True,
        _switch,
        "With the cache on, also keep Sphinx's state (environment, doctrees, pages) per build "
        "context in it, so a build in a fresh checkout reads and writes only what a change "
        "affects (see the caching guide). False: every build starts Sphinx over.",
        "True or False",
        types=(bool,),
        env="DOCSACCEL_CACHE_SPHINX",
    )
    cache_granularity: str = setting(
        "module",
        _granularity,
        "What of a project file an example depends on: ``module`` (the file, whole) or "
        "``function`` (its module body and the functions that ran).",
        "``'module'`` or ``'function'``",
        types=(str,),
    )
    cache_recorder: str = setting(
        "auto",
        _recorder,
        "How ``function`` granularity sees the project's functions run: ``auto`` "
        "(``sys.monitoring`` on Python 3.12+, compiled-in checks on 3.11) or ``instrument`` "
        "(compiled-in checks on any Python).",
        "``auto`` or ``instrument``",
        env="DOCSACCEL_CACHE_RECORDER",
    )
    cache_roots: tuple[Path, ...] | None = setting(
        None,
        _roots,
        "Folders (relative to the conf dir) whose files count as the project's; None: the "
        "repository root above the conf dir.",
        "a list of paths or None",
        types=(type(None), list, tuple),
    )
    cache_env: tuple[str, ...] = setting(
        (),
        _names,
        "Environment variables whose values are part of every cache entry's context.",
        "a list of names",
        types=(list, tuple),
    )
    cache_verify: float = setting(
        0.0,
        _fraction,
        "Audit the cache: run the examples it would restore (all of them, or a random "
        "fraction such as ``0.2``) and compare their outputs with its entries: each is "
        "``verified``, ``stale`` (``docsaccel check`` fails) or ``nondeterministic``. What a "
        "nightly full build should run (see the caching guide).",
        "True or False, or a fraction from 0 to 1",
        types=(bool, int, float),
        env="DOCSACCEL_CACHE_VERIFY",
    )
    history: Path | None = setting(
        None,
        _history,
        "A history file (``docsaccel history append``), relative to the conf dir: the "
        "build log's estimate of what is left and the report page's trends; a missing file is no "
        "error.",
        "a path or None",
        types=_PATH,
    )
    progress: bool = setting(
        True,
        _switch,
        "Progress lines in the build log: each example's start, end, time and budget.",
        "True or False",
        types=(bool,),
    )
    shard_examples: tuple[str, ...] | None = setting(
        None,
        _shard_examples,
        "A text file listing the examples this build executes, one a line (ids such as "
        "``tutorials/plot_a.py``, or paths inside their gallery); the others get pages "
        "without being executed (see the sharding guide).",
        "a file",
        env="DOCSACCEL_SHARD_EXAMPLES",
    )
    shard_records: Path | None = setting(
        None,
        _shard_records,
        "A folder of records of examples executed by other builds (the shards): this build "
        "executes nothing and reports those records (see the sharding guide).",
        "a folder",
        env="DOCSACCEL_SHARD_RECORDS",
    )
    interrupt_grace: float = setting(
        GRACE_SECONDS,
        _grace,
        "Seconds an example interrupted at its budget may still run before the hard stop "
        "ends the build's process.",
        f"seconds, at least {MIN_GRACE_SECONDS:g}",
        env="DOCSACCEL_INTERRUPT_GRACE",
    )
    gl_verified: str | None = setting(
        None,
        _text,
        "Set by docsaccel once a headless OpenGL backend for MuJoCo has worked in this "
        "environment (its name), so child processes do not probe again.",
        "a backend name, set by docsaccel",
        env="DOCSACCEL_GL_VERIFIED",
        internal=True,
    )
    cache_child: str | None = setting(
        None,
        _text,
        "Set by docsaccel while the example cache records: the file telling a child process "
        "of an example (a ``multiprocessing`` worker, a Python started with ``subprocess``) "
        "which example it works for, so what it runs counts (see the caching guide).",
        "a file, set by docsaccel",
        env="DOCSACCEL_CACHE_CHILD",
        internal=True,
    )
    video_scan: bool = setting(
        True,
        _switch,
        "``0``: the video scraper embeds only the videos an example names with "
        "``docsaccel.video.embed``, without scanning its folder for new files.",
        "a switch",
        env="DOCSACCEL_VIDEO_SCAN",
    )


def _spec(declared: Any) -> Setting:
    default, types, env, check, help, accepts, internal = declared.metadata["setting"]
    return Setting(declared.name, default, types, env, check, help, accepts, internal)


_SPECS: dict[str, Setting] = {declared.name: _spec(declared) for declared in fields(Settings)}


def specs() -> Iterator[Setting]:
    """Every setting, in declaration order."""
    return iter(_SPECS.values())


def spec(name: str) -> Setting:
    """The setting of field ``name`` (``"fast"``)."""
    return _SPECS[name]


def env_name(name: str) -> str:
    """The environment variable of setting ``name``; ``KeyError`` if it has none."""
    variable = spec(name).env
    if variable is None:
        raise KeyError(f"setting {name!r} has no environment variable")
    return variable


def config_values() -> Iterator[tuple[str, Any, tuple[type, ...]]]:
    """``(conf.py name, default, types)`` of every setting ``conf.py`` can set."""
    for item in specs():
        if item.key is not None:
            yield item.key, item.default, item.types


def environment_variables() -> tuple[str, ...]:
    """Every environment variable a setting reads."""
    return tuple(item.env for item in specs() if item.env is not None)


def resolve(name: str, config: Any, env: Mapping[str, str]) -> tuple[str, Any]:
    """``(where, value)`` of setting ``name``: its variable, else ``conf.py``, else the default.

    ``where`` names what gave the value (the variable or the key), for messages; a value
    from the environment is the variable's text, stripped. A variable set to a blank
    string counts as unset, and so does a ``conf.py`` value of ``None`` where the setting
    allows it (else :class:`SettingError`).
    """
    source = _source(spec(name), config, env, Path("."))
    return source.where, source.value


def given_as(name: str, env: Mapping[str, str] | None = None, config: Any = None) -> str:
    """What the user set setting ``name`` with, for a message: its variable when that is
    set (it beats ``conf.py``, see :func:`resolve`), else ``-D`` and its key when
    ``config`` (a Sphinx config) says ``sphinx-build -D`` gave it (:func:`given_where`),
    else its ``conf.py`` key. Code that runs an example has the build's environment but
    not its ``conf.py``: it names the setting as it was typed with what the build's
    process gave it (:func:`given_value`)."""
    item = spec(name)
    if item.env is not None and _env_set(item, os.environ if env is None else env):
        return item.env
    if item.key is not None and config is not None:
        return given_where(item.key, config)
    return item.key or item.describe()


def given_value(
    name: str, value: Any, env: Mapping[str, str] | None = None, config: Any = None
) -> str:
    """Setting ``name`` and its ``value`` as the user gave them, for a message:
    ``DOCSACCEL_ON_OVERRUN=fail`` from the variable, ``-D docsaccel_on_overrun=fail`` from
    ``sphinx-build -D`` (when ``config`` says so), else ``docsaccel_on_overrun = 'fail'``
    as ``conf.py`` writes it.

    >>> given_value("on_overrun", "fail", env={"DOCSACCEL_ON_OVERRUN": " fail "})
    'DOCSACCEL_ON_OVERRUN=fail'
    >>> given_value("on_overrun", "fail", env={})
    "docsaccel_on_overrun = 'fail'"
    """
    env = os.environ if env is None else env
    item = spec(name)
    where = given_as(name, env, config)
    if item.env is not None and where == item.env:
        return f"{where}={env[item.env].strip()}"
    if where.startswith("-D "):
        return f"{where}={config.overrides[item.key]}"
    return f"{where} = {value!r}"


def _env_set(item: Setting, env: Mapping[str, str]) -> bool:
    """Whether the setting's variable is set: a blank one counts as unset."""
    return item.env is not None and bool(env.get(item.env, "").strip())


def read_overrides(config: Any, refuse: bool = True) -> None:
    """Turn every ``-D docsaccel_*=TEXT`` of ``config`` (a Sphinx config) into the value
    ``conf.py`` would give, in place, so the setting's check reads it as it reads
    ``conf.py``'s (a path relative to the conf dir, a bool, a number, a list).

    Sphinx converts an override itself when the value is first read, and a text it cannot
    convert (``-D docsaccel_progress=maybe``) raises out of that read as a crash report.
    Raises :class:`SettingError` naming the setting and the text instead; ``refuse=False``
    leaves such a text in place for a later call to refuse (the plugin's ``setup``
    converts early, before Sphinx first reads the values, but cannot stop a build cleanly).
    """
    overrides = getattr(config, "overrides", None)
    if not isinstance(overrides, dict):
        return
    for item in specs():
        text = overrides.get(item.key) if item.key is not None else None
        if isinstance(text, str):
            try:
                value = override_value(item, text)
            except SettingError:
                if refuse:
                    raise
                continue
            # Sphinx uses a value that is not a text as it is, and so does every reader.
            overrides[item.key] = value
            setattr(config, item.key, value)


def override_value(item: Setting, text: str) -> Any:
    """The ``conf.py`` value of the text ``-D`` gave setting ``item``: a switch's spelling
    for a bool (``1``, ``yes``, ``off``...), a number, a comma-separated list, ``none``
    for None where None is allowed, else the text. Raises :class:`SettingError`.

    >>> override_value(spec("progress"), "no"), override_value(spec("cache_env"), "A, B")
    (False, ['A', 'B'])
    """
    where = f"-D {item.key}"
    accepts = item.accepts.replace("``", "")
    types = set(item.types)
    if type(None) in types and text.strip().lower() == "none":
        return None
    if bool in types:
        try:
            return parse_switch(text, where)
        except ValueError as exc:
            if types == {bool}:
                raise SettingError(str(exc)) from None
    if float in types:
        try:
            return float(text)
        except ValueError:
            raise SettingError(f"{where}={text!r} is not {accepts}") from None
    if str not in types and types & {list, tuple}:
        return [part.strip() for part in text.split(",") if part.strip()]
    return text


def _source(item: Setting, config: Any, env: Mapping[str, str], confdir: Path) -> Source:
    if _env_set(item, env):
        return Source(item.env, env[item.env].strip(), True, confdir)
    if item.key is not None:
        where = given_where(item.key, config)
        value = getattr(config, item.key, None)
        if value is not None:
            return Source(where, value, False, confdir)
        if config is not None and hasattr(config, item.key) and type(None) not in item.types:
            # Sphinx's check of a value's type only warns: None would be the default.
            accepts = item.accepts.replace("``", "")
            raise SettingError(f"{where} must be {accepts}, got None")
    return Source(item.describe(), item.default, False, confdir)


def given_where(key: str, config: Any) -> str:
    """How a message names a ``conf.py`` value: ``-D key`` when ``sphinx-build -D`` gave
    it (Sphinx's ``config.overrides``), so the user looks there and not in ``conf.py``."""
    overrides = getattr(config, "overrides", None)
    return f"-D {key}" if isinstance(overrides, dict) and key in overrides else key


def _read(item: Setting, config: Any, env: Mapping[str, str], confdir: Path) -> Any:
    return item.check(_source(item, config, env, confdir))


def read_settings(
    config: Any, confdir: str | os.PathLike[str], env: Mapping[str, str] | None = None
) -> Settings:
    """The checked settings of ``config`` (a Sphinx config, or any object with the names).

    ``env`` (default ``os.environ``) supplies the variables. Raises :class:`SettingError`
    naming the key (or variable) and the value.
    """
    env = os.environ if env is None else env
    values = {item.name: _read(item, config, env, Path(confdir)) for item in specs()}
    return Settings(**values)


def setting_errors(
    config: Any, confdir: str | os.PathLike[str], env: Mapping[str, str] | None = None
) -> list[str]:
    """The message of each setting :func:`read_settings` would refuse, in the table's
    order (it stops at the first): what a check of a project names, every one at once."""
    env = os.environ if env is None else env
    errors = []
    for item in specs():
        try:
            _read(item, config, env, Path(confdir))
        except SettingError as exc:
            errors.append(str(exc))
    return errors


def read_setting(
    name: str, config: Any, confdir: str | os.PathLike[str], env: Mapping[str, str] | None = None
) -> Any:
    """The checked value of one setting, as a build with ``config`` (``conf.py``'s names,
    or ``None``) in ``confdir`` reads it: its variable, else ``conf.py``, else the default.
    Raises :class:`SettingError`."""
    return _read(spec(name), config, os.environ if env is None else env, Path(confdir))


def read_env_setting(name: str, env: Mapping[str, str] | None = None) -> Any:
    """The value of a setting from its variable alone (for code that runs outside a build's
    configuration, in whichever process runs an example); raises :class:`SettingError`."""
    return _read(spec(name), None, os.environ if env is None else env, Path.cwd())


def unknown_settings(names: Iterable[str], overrides: Mapping[str, Any] | None = None) -> list[str]:
    """A message for each ``docsaccel_*`` name among ``names`` (``conf.py``'s) and among
    ``overrides`` (a build's ``-D`` values, Sphinx's ``confoverrides``) that is no setting.

    Sphinx keeps any name ``conf.py`` defines, so a misspelled setting would otherwise be
    ignored without a word; a misspelled ``-D`` gets only Sphinx's word that it is unknown.
    Any case counts: ``DOCSACCEL_FAST = True`` in ``conf.py`` (the variable's spelling)
    sets nothing.

    >>> message = unknown_settings([], {"docsaccel_budget": "x.toml"})[0]
    >>> message.split(" (ignored)")[0]
    "unknown setting 'docsaccel_budget' in -D docsaccel_budget='x.toml'"
    >>> message.split(";")[1].split("?")[0]
    " did you mean 'docsaccel_budgets'"
    """
    keys = [key for key, _, _ in config_values()]
    # Compared without the prefix every name shares, which would make all look close.
    known = {key[len(CONFIG_PREFIX) :]: key for key in keys}
    given = [(name, "conf.py") for name in sorted(names)]
    given += [(name, f"-D {name}={value!r}") for name, value in sorted((overrides or {}).items())]
    messages = []
    for name, where in given:
        if name in keys or not name.lower().startswith(CONFIG_PREFIX):
            continue
        bare = name[len(CONFIG_PREFIX) :].lower()
        close = get_close_matches(bare, list(known), n=1, cutoff=0.6)
        hint = f"; did you mean {known[close[0]]!r}?" if close else "."
        messages.append(
            f"unknown setting {name!r} in {where} (ignored){hint} Settings: {', '.join(keys)}"
        )
    return messages


def unknown_variables(env: Mapping[str, str]) -> list[str]:
    """A message for each ``DOCSACCEL_*`` variable of ``env`` that no setting reads.

    A misspelled variable (DOCSACCEL_ONOVERRUN=fail) would leave its setting as it was
    without a word, as a misspelled ``conf.py`` name would.

    >>> env = dict(DOCSACCEL_ONOVERRUN="fail", DOCSACCEL_FAST="1")
    >>> [message.split(";")[1].split("?")[0] for message in unknown_variables(env)]
    [" did you mean 'DOCSACCEL_ON_OVERRUN'"]
    """
    variables = environment_variables()
    # docsaccel's own variables are known, never offered: a user does not set them.
    offered = tuple(item.env for item in specs() if item.env is not None and not item.internal)
    prefix = CONFIG_PREFIX.upper()
    known = {name[len(prefix) :]: name for name in offered}
    messages = []
    for name in sorted(n for n in env if n.startswith(prefix) and n not in variables):
        close = get_close_matches(name[len(prefix) :], list(known), n=1, cutoff=0.6)
        hint = f"; did you mean {known[close[0]]!r}?" if close else "."
        messages.append(
            f"unknown variable {name!r} (ignored){hint} Variables: {', '.join(offered)}"
        )
    return messages


def settings_rst() -> str:
    """The table of every setting, as reStructuredText (the docs' settings page)."""
    lines = [
        ".. list-table::",
        "   :header-rows: 1",
        "   :widths: 25 15 20 40",
        "",
        "   * - ``conf.py``",
        "     - default",
        "     - variable",
        "     - meaning",
    ]
    for item in specs():
        lines += [
            f"   * - ``{item.key}``" if item.key else "   * - (none)",
            f"     - ``{item.default!r}``",
            f"     - ``{item.env}``" if item.env else "     -",
            f"     - {item.help} Accepts {item.accepts}.",
        ]
    return "\n".join(lines) + "\n"
