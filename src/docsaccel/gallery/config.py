"""The plugin's ``conf.py`` settings: defaults in one table, each value checked by name.

================================  ===================  ============================================
key                               default              meaning
================================  ===================  ============================================
``docsaccel_budgets``             ``None``             TOML budget file, relative to the conf dir
``docsaccel_on_overrun``          ``"warn"``           ``"warn"`` or ``"fail"``
                                                       (variable: ``DOCSACCEL_ON_OVERRUN``)
``docsaccel_fast``                ``False``            the CI fast path: True or False (``None``
                                                       is the default)
                                                       (variable: ``DOCSACCEL_FAST``)
``docsaccel_videos``              ``True``             add :mod:`docsaccel.video`'s scraper, so
                                                       videos an example writes play in its page
``docsaccel_report_page``         ``None``             docname of a generated "Build budget
                                                       report" page, such as ``"budget_report"``
                                                       (written into the source dir); None: no
                                                       page
``docsaccel_report_chart``        ``False``            draw the time-vs-budget chart on that page
                                                       (matplotlib, in a second process: about
                                                       0.5 s of CPU, which a small gallery feels)
``docsaccel_cache``               ``None``             folder of the example cache across builds
                                                       (relative to the conf dir); None: no
                                                       cache (variable: ``DOCSACCEL_CACHE``,
                                                       relative to the current folder; ``0`` or
                                                       ``off``: no cache)
``docsaccel_cache_granularity``   ``"module"``         ``"module"`` (a file counts whole) or
                                                       ``"function"`` (the code that ran)
``docsaccel_cache_roots``         ``None``             folders (relative to the conf dir) whose
                                                       files count as the project's; None: the
                                                       repository root above the conf dir
``docsaccel_cache_env``           ``()``               environment variables whose values are
                                                       part of every cache entry's context
``docsaccel_history``             ``None``             a history file (``docsaccel history
                                                       append``), relative to the conf dir: the
                                                       build log's expected times and the report
                                                       page's trends; a missing file is no error
``docsaccel_progress``            ``True``             progress lines in the build log
================================  ===================  ============================================

One precedence for every setting that has an environment variable, resolved in
:func:`resolve_setting`: the variable when it is set (and not blank), then ``conf.py``,
then the default. So ``DOCSACCEL_FAST=0`` makes a full build of a project whose
``conf.py`` says ``docsaccel_fast = True``, as ``DOCSACCEL_ON_OVERRUN=warn`` does for
``docsaccel_on_overrun = "fail"``. A ``docsaccel_*`` name in ``conf.py`` that is none of
the above gets a warning naming the closest valid one (:func:`unknown_settings`).

Two environment variables make a build one part of a sharded build (see
:mod:`docsaccel.shard.build`); they have no ``conf.py`` key, since they describe one run:

- ``DOCSACCEL_SHARD_EXAMPLES``: a text file listing the examples this build executes, one
  a line (ids such as ``tutorials/plot_a.py`` or paths inside their gallery folder); the
  others get pages without being executed.
- ``DOCSACCEL_SHARD_RECORDS``: a folder of records of examples executed by other builds
  (the shards): this build must execute nothing, and reports those records as they are.

Example::

    settings = read_settings(app.config, confdir=app.confdir)
    settings.on_overrun, settings.fast, settings.budgets_path
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from difflib import get_close_matches
from pathlib import Path
from typing import Any

from sphinx.errors import ConfigError

from docsaccel.contract import (
    CACHE_ENV,
    CONFIG_PREFIX,
    FAST_ENV,
    ON_OVERRUN_ENV,
    SHARD_EXAMPLES_ENV,
    SHARD_RECORDS_ENV,
    parse_switch,
)

__all__ = [
    "CONFIG_DEFAULTS",
    "ENV_VARS",
    "ON_OVERRUN_ENV_VAR",
    "ON_OVERRUN_MODES",
    "SHARD_EXAMPLES_ENV_VAR",
    "SHARD_RECORDS_ENV_VAR",
    "Settings",
    "read_settings",
    "resolve_setting",
    "unknown_settings",
]

ON_OVERRUN_ENV_VAR = ON_OVERRUN_ENV
ON_OVERRUN_MODES = ("warn", "fail")
SHARD_EXAMPLES_ENV_VAR = SHARD_EXAMPLES_ENV
SHARD_RECORDS_ENV_VAR = SHARD_RECORDS_ENV
CONFIG_DEFAULTS: dict[str, Any] = {
    "docsaccel_budgets": None,
    "docsaccel_on_overrun": "warn",
    "docsaccel_fast": False,
    "docsaccel_videos": True,
    "docsaccel_report_page": None,
    "docsaccel_report_chart": False,
    "docsaccel_cache": None,
    "docsaccel_cache_granularity": "module",
    "docsaccel_cache_roots": None,
    "docsaccel_cache_env": (),
    "docsaccel_history": None,
    "docsaccel_progress": True,
}
#: The settings an environment variable can set; it beats ``conf.py``.
ENV_VARS: dict[str, str] = {
    "docsaccel_fast": FAST_ENV,
    "docsaccel_on_overrun": ON_OVERRUN_ENV,
    "docsaccel_cache": CACHE_ENV,
}
CACHE_GRANULARITIES = ("module", "function")


@dataclass(frozen=True)
class Settings:
    """The validated settings of one build."""

    budgets_path: Path | None
    on_overrun: str
    fast: bool
    videos: bool = True
    report_page: str | None = None
    report_chart: bool = False
    history_path: Path | None = None
    progress: bool = True
    #: The examples this build executes (``None``: every one); see the module docstring.
    shard_examples: tuple[str, ...] | None = None
    #: Records of examples executed by the shards; set, this build executes nothing.
    shard_records: Path | None = None
    #: The example cache's folder (``None``: no cache), and how it works.
    cache_dir: Path | None = None
    cache_granularity: str = "module"
    cache_roots: tuple[Path, ...] | None = None
    cache_env: tuple[str, ...] = ()


def read_settings(
    config: Any, confdir: str | Path, env: Mapping[str, str] | None = None
) -> Settings:
    """Validate the ``docsaccel_*`` config values of ``config`` (a Sphinx config).

    ``env`` (default ``os.environ``) supplies the variables of :data:`ENV_VARS` and the
    shard variables. Raises :class:`sphinx.errors.ConfigError` naming the key (or
    variable) and the value.
    """
    env = os.environ if env is None else env
    return Settings(
        budgets_path=_budgets_path(config.docsaccel_budgets, Path(confdir)),
        on_overrun=_on_overrun(*resolve_setting("docsaccel_on_overrun", config, env)),
        fast=_fast(*resolve_setting("docsaccel_fast", config, env)),
        videos=_switch("docsaccel_videos", config.docsaccel_videos),
        report_page=_report_page(config.docsaccel_report_page),
        report_chart=_switch("docsaccel_report_chart", config.docsaccel_report_chart),
        history_path=_history_path(config.docsaccel_history, Path(confdir)),
        progress=_switch("docsaccel_progress", config.docsaccel_progress),
        shard_examples=_shard_examples(env.get(SHARD_EXAMPLES_ENV_VAR, "")),
        shard_records=_shard_records(env.get(SHARD_RECORDS_ENV_VAR, "")),
        cache_dir=_cache_dir(*resolve_setting("docsaccel_cache", config, env), Path(confdir)),
        cache_granularity=_cache_granularity(config.docsaccel_cache_granularity),
        cache_roots=_cache_roots(config.docsaccel_cache_roots, Path(confdir)),
        cache_env=_names("docsaccel_cache_env", config.docsaccel_cache_env),
    )


def _cache_dir(where: str, value: Any, confdir: Path) -> Path | None:
    path = _cache_path(where, value, confdir)
    if path is not None and path.exists() and not path.is_dir():
        named = CACHE_ENV if where == CACHE_ENV else "docsaccel_cache"
        raise ConfigError(f"{named}={value!r}: {path} is a file, not a folder")
    return path


def _cache_path(where: str, value: Any, confdir: Path) -> Path | None:
    if where == CACHE_ENV:
        # A switch's "off" spelling turns the cache off for this build; any other text is
        # a folder, relative to where the build runs (as a variable's paths are).
        try:
            if not parse_switch(value, CACHE_ENV):
                return None
        except ValueError:
            return Path(value).resolve()
        raise ConfigError(
            f"{CACHE_ENV}={value!r} is not a folder; give the cache folder's path, or 0 for "
            "no cache"
        )
    path = _conf_path("docsaccel_cache", value, confdir, "the cache folder")
    return None if path is None else path.resolve()


def _cache_granularity(value: Any) -> str:
    if value not in CACHE_GRANULARITIES:
        raise ConfigError(
            f"docsaccel_cache_granularity must be 'module' or 'function', got {value!r}"
        )
    return value


def _cache_roots(value: Any, confdir: Path) -> tuple[Path, ...] | None:
    if value is None:
        return None
    if isinstance(value, (str, os.PathLike)) or not isinstance(value, (list, tuple)):
        raise ConfigError(
            f"docsaccel_cache_roots must be a list of folders (relative to the conf dir) or "
            f"None, got {value!r}"
        )
    roots = []
    for item in value:
        path = confdir / item if isinstance(item, (str, os.PathLike)) and str(item) else None
        if path is None or not path.is_dir():
            raise ConfigError(f"docsaccel_cache_roots: {item!r} is not a folder (from {confdir})")
        roots.append(path.resolve())
    return tuple(roots)


def _names(key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)) or not all(
        isinstance(v, str) and v.strip() and "=" not in v for v in value
    ):
        raise ConfigError(f"{key} must be a list of environment variable names, got {value!r}")
    return tuple(value)


def _shard_examples(value: str) -> tuple[str, ...] | None:
    if not value.strip():
        return None
    path = Path(value.strip())
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{SHARD_EXAMPLES_ENV_VAR} = {value!r}: cannot read it: {exc}") from None
    return tuple(line.strip() for line in lines if line.strip())


def _shard_records(value: str) -> Path | None:
    if not value.strip():
        return None
    path = Path(value.strip())
    if not path.is_dir():
        raise ConfigError(f"{SHARD_RECORDS_ENV_VAR} = {value!r}: no such folder")
    return path


def _switch(key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{key} must be True or False, got {value!r}")
    return value


def _report_page(value: Any) -> str | None:
    if value is None:
        return None
    if (
        not isinstance(value, str)
        or not value.strip()
        or value.endswith(".rst")
        or value.startswith("/")
        or ".." in value.split("/")
    ):
        raise ConfigError(
            "docsaccel_report_page must be a docname inside the source dir, such as "
            f"'budget_report' (no suffix), or None for no page, got {value!r}"
        )
    return value


def _conf_path(key: str, value: Any, confdir: Path, what: str) -> Path | None:
    """A path setting of ``conf.py``, relative to the conf dir; ``None`` stays ``None``."""
    if value is None:
        return None
    if not isinstance(value, (str, os.PathLike)) or not str(value).strip():
        raise ConfigError(
            f"{key} must be the path of {what} (relative to the conf dir) or None, got {value!r}"
        )
    return confdir / value


def _budgets_path(value: Any, confdir: Path) -> Path | None:
    path = _conf_path("docsaccel_budgets", value, confdir, "a TOML budget file")
    if path is None:
        return None
    if not path.is_file():
        raise ConfigError(f"docsaccel_budgets = {str(value)!r}: no such file: {path}")
    return path


def resolve_setting(key: str, config: Any, env: Mapping[str, str]) -> tuple[str, Any]:
    """``(where, value)`` of setting ``key``: its variable, else ``conf.py``, else the default.

    ``where`` names what gave the value (the variable or the key), for messages; a value
    from the environment is the variable's text, stripped. A variable set to a blank
    string counts as unset, and so does a ``conf.py`` value of ``None``.

    Example::

        resolve_setting("docsaccel_fast", app.config, {"DOCSACCEL_FAST": "0"})
        # ('DOCSACCEL_FAST', '0'), whatever conf.py says
    """
    variable = ENV_VARS.get(key)
    if variable is not None and env.get(variable, "").strip():
        return variable, env[variable].strip()
    value = getattr(config, key, None)
    if value is not None:
        return key, value
    return key, CONFIG_DEFAULTS[key]


def unknown_settings(names: Iterable[str]) -> list[str]:
    """A message for each ``docsaccel_*`` name among ``names`` that is no setting.

    Sphinx keeps any name ``conf.py`` defines, so a misspelled setting would otherwise be
    ignored without a word.
    """
    messages = []
    # Any case: `DOCSACCEL_FAST = True` in conf.py (the variable's spelling) sets nothing.
    for name in sorted(n for n in names if n.lower().startswith(CONFIG_PREFIX)):
        if name in CONFIG_DEFAULTS:
            continue
        # Compared without the prefix every name shares, which would make all look close.
        known = {key[len(CONFIG_PREFIX) :]: key for key in CONFIG_DEFAULTS}
        bare = name[len(CONFIG_PREFIX) :].lower()
        close = get_close_matches(bare, list(known), n=1, cutoff=0.6)
        hint = f"; did you mean {known[close[0]]!r}?" if close else "."
        valid = ", ".join(CONFIG_DEFAULTS)
        messages.append(f"unknown setting {name!r} in conf.py (ignored){hint} Settings: {valid}")
    return messages


def _history_path(value: Any, confdir: Path) -> Path | None:
    what = "a history file (written by docsaccel history append)"
    path = _conf_path("docsaccel_history", value, confdir, what)
    if path is not None and path.is_dir():
        raise ConfigError(f"docsaccel_history = {str(value)!r}: {path} is a folder, not a file")
    return path


def _on_overrun(where: str, value: Any) -> str:
    if value not in ON_OVERRUN_MODES:
        raise ConfigError(f"{where} must be 'warn' or 'fail', got {value!r}")
    return value


def _fast(where: str, value: Any) -> bool:
    if where == FAST_ENV:
        try:
            return parse_switch(value, FAST_ENV)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
    if not isinstance(value, bool):
        raise ConfigError(f"{where} must be True or False (or None: the default), got {value!r}")
    return value
