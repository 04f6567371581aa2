"""The plugin's ``conf.py`` settings: defaults in one table, each value checked by name.

============================  ===================  ============================================
key                           default              meaning
============================  ===================  ============================================
``docsaccel_budgets``         ``None``             TOML budget file, relative to the conf dir
``docsaccel_on_overrun``      ``"warn"``           ``"warn"`` or ``"fail"``;
                                                   ``DOCSACCEL_ON_OVERRUN`` overrides it
``docsaccel_fast``            ``None``             ``None`` follows ``DOCSACCEL_FAST``; True
                                                   or False
``docsaccel_videos``          ``True``             add :mod:`docsaccel.video`'s scraper, so
                                                   videos an example writes play in its page
``docsaccel_report_page``     ``None``             docname of a generated "Build budget
                                                   report" page, such as ``"budget_report"``
                                                   (written into the source dir); None: no
                                                   page
``docsaccel_report_chart``    ``False``            draw the time-vs-budget chart on that page
                                                   (matplotlib, in a second process: about
                                                   0.5 s of CPU, which a small gallery feels)
``docsaccel_history``         ``None``             a history file (``docsaccel history
                                                   append``), relative to the conf dir: the
                                                   build log's expected times and the report
                                                   page's trends; a missing file is no error
``docsaccel_progress``        ``True``             progress lines in the build log
============================  ===================  ============================================

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
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sphinx.errors import ConfigError

from docsaccel.contract import FAST_ENV as FAST_ENV_VAR
from docsaccel.contract import ON_OVERRUN_ENV, SHARD_EXAMPLES_ENV, SHARD_RECORDS_ENV, parse_switch

__all__ = [
    "CONFIG_DEFAULTS",
    "ON_OVERRUN_ENV_VAR",
    "ON_OVERRUN_MODES",
    "SHARD_EXAMPLES_ENV_VAR",
    "SHARD_RECORDS_ENV_VAR",
    "Settings",
    "read_settings",
]

ON_OVERRUN_ENV_VAR = ON_OVERRUN_ENV
ON_OVERRUN_MODES = ("warn", "fail")
SHARD_EXAMPLES_ENV_VAR = SHARD_EXAMPLES_ENV
SHARD_RECORDS_ENV_VAR = SHARD_RECORDS_ENV
CONFIG_DEFAULTS: dict[str, Any] = {
    "docsaccel_budgets": None,
    "docsaccel_on_overrun": "warn",
    "docsaccel_fast": None,
    "docsaccel_videos": True,
    "docsaccel_report_page": None,
    "docsaccel_report_chart": False,
    "docsaccel_history": None,
    "docsaccel_progress": True,
}


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


def read_settings(
    config: Any, confdir: str | Path, env: Mapping[str, str] | None = None
) -> Settings:
    """Validate the ``docsaccel_*`` config values of ``config`` (a Sphinx config).

    ``env`` (default ``os.environ``) supplies ``DOCSACCEL_ON_OVERRUN`` and
    ``DOCSACCEL_FAST``. Raises :class:`sphinx.errors.ConfigError` naming the key and value.
    """
    env = os.environ if env is None else env
    return Settings(
        budgets_path=_budgets_path(config.docsaccel_budgets, Path(confdir)),
        on_overrun=_on_overrun(config.docsaccel_on_overrun, env),
        fast=_fast(config.docsaccel_fast, env),
        videos=_switch("docsaccel_videos", config.docsaccel_videos),
        report_page=_report_page(config.docsaccel_report_page),
        report_chart=_switch("docsaccel_report_chart", config.docsaccel_report_chart),
        history_path=_history_path(config.docsaccel_history, Path(confdir)),
        progress=_switch("docsaccel_progress", config.docsaccel_progress),
        shard_examples=_shard_examples(env.get(SHARD_EXAMPLES_ENV_VAR, "")),
        shard_records=_shard_records(env.get(SHARD_RECORDS_ENV_VAR, "")),
    )


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


def _budgets_path(value: Any, confdir: Path) -> Path | None:
    if value is None:
        return None
    if not isinstance(value, (str, os.PathLike)) or not str(value).strip():
        raise ConfigError(
            f"docsaccel_budgets must be the path of a TOML budget file (relative to the conf "
            f"dir) or None, got {value!r}"
        )
    path = confdir / value
    if not path.is_file():
        raise ConfigError(f"docsaccel_budgets = {str(value)!r}: no such file: {path}")
    return path


def _history_path(value: Any, confdir: Path) -> Path | None:
    if value is None:
        return None
    if not isinstance(value, (str, os.PathLike)) or not str(value).strip():
        raise ConfigError(
            "docsaccel_history must be the path of a history file (docsaccel history append; "
            f"relative to the conf dir) or None, got {value!r}"
        )
    path = confdir / value
    if path.is_dir():
        raise ConfigError(f"docsaccel_history = {str(value)!r}: {path} is a folder, not a file")
    return path


def _on_overrun(value: Any, env: Mapping[str, str]) -> str:
    key = "docsaccel_on_overrun"
    if env.get(ON_OVERRUN_ENV_VAR, "").strip():
        key, value = ON_OVERRUN_ENV_VAR, env[ON_OVERRUN_ENV_VAR].strip()
    if value not in ON_OVERRUN_MODES:
        raise ConfigError(f"{key} must be 'warn' or 'fail', got {value!r}")
    return value


def _fast(value: Any, env: Mapping[str, str]) -> bool:
    if value is None:
        try:
            return parse_switch(env.get(FAST_ENV_VAR, ""), FAST_ENV_VAR)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
    if not isinstance(value, bool):
        raise ConfigError(
            f"docsaccel_fast must be None (follow {FAST_ENV_VAR}), True or False, got {value!r}"
        )
    return value
