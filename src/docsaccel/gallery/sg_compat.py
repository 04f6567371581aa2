"""Every place where the plugin relies on sphinx-gallery beyond its documented config.

sphinx-gallery has no per-example "started"/"finished" events. The plugin gets them through
the documented ``reset_modules`` hook with ``reset_modules_order = "both"`` (see
:func:`install_hook`); everything else it needs from sphinx-gallery's internals is here,
so an upgrade that moves them breaks one module, and the tests say which function:

- which files are examples, and which of them run (:func:`example_files`,
  :func:`is_executable`): the same functions sphinx-gallery uses, so the plan matches;
- which examples were skipped as unchanged and which failed, from the lists sphinx-gallery
  keeps in its config dict (:func:`stale_targets`, :func:`failures`);
- the last measured time of an unchanged example (:func:`cached_seconds`) and forcing an
  unchanged example to run again (:func:`forget_cached_run`), through its cache files next
  to the generated page (``<name>.py.md5``, ``<name>.cost.json``).

Checked against sphinx-gallery 0.22.1.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sphinx_gallery.gen_rst import _read_cached_cost, executable_script
from sphinx_gallery.utils import _collect_gallery_files

_USER_RESET = "docsaccel_user_reset_modules"

__all__ = [
    "cached_seconds",
    "call_user_resetters",
    "example_files",
    "failures",
    "forget_cached_run",
    "gallery_dirs",
    "install_hook",
    "is_executable",
    "stale_targets",
]


def gallery_dirs(gallery_conf: dict[str, Any]) -> list[tuple[str, str]]:
    """``(examples_dir, gallery_dir)`` pairs, both relative to the source dir."""
    examples = gallery_conf["examples_dirs"]
    galleries = gallery_conf["gallery_dirs"]
    examples = [examples] if isinstance(examples, str) else list(examples)
    galleries = [galleries] if isinstance(galleries, str) else list(galleries)
    return [(str(e), str(g)) for e, g in zip(examples, galleries, strict=False)]


def example_files(examples_dir: Path, gallery_conf: dict[str, Any]) -> list[Path]:
    """The example files of a gallery folder and its sub-folders, as sphinx-gallery sees them."""
    if not examples_dir.is_dir():
        return []
    return sorted(Path(p) for p in _collect_gallery_files([examples_dir], gallery_conf, True))


def is_executable(src_file: str, gallery_conf: dict[str, Any]) -> bool:
    """Whether sphinx-gallery runs this example (``filename_pattern``, ``plot_gallery``)."""
    return executable_script(src_file, gallery_conf)


def install_hook(gallery_conf: dict[str, Any], hook: Callable[..., None]) -> None:
    """Make ``hook`` sphinx-gallery's only resetter, called before and after every example.

    The user's ``reset_modules`` and ``reset_modules_order`` move to a key of their own in
    the same dict (:func:`call_user_resetters` calls them at the moments they asked for).
    They stay in sphinx-gallery's config rather than in the hook, so Sphinx caches (or
    declines to cache) that config exactly as it would without docsaccel.
    """
    if gallery_conf["reset_modules"] == (hook,):
        return
    gallery_conf[_USER_RESET] = (gallery_conf["reset_modules"], gallery_conf["reset_modules_order"])
    gallery_conf["reset_modules"] = (hook,)
    gallery_conf["reset_modules_order"] = "both"


def call_user_resetters(gallery_conf: dict[str, Any], fname: str, when: str) -> None:
    """Call the user's ``reset_modules`` exactly as sphinx-gallery would, if due ``when``."""
    from sphinx_gallery.scrapers import clean_modules

    reset_modules, order = gallery_conf.get(_USER_RESET, ((), "before"))
    if order in (when, "both"):
        clean_modules({**gallery_conf, "reset_modules": reset_modules}, fname, when)


def stale_targets(gallery_conf: dict[str, Any]) -> set[str]:
    """Generated example files sphinx-gallery skipped because their source did not change."""
    return {os.path.normpath(path) for path in gallery_conf.get("stale_examples", [])}


def failures(gallery_conf: dict[str, Any]) -> dict[str, str]:
    """``{source file: formatted traceback}`` of the examples that raised."""
    return {os.path.normpath(k): v for k, v in gallery_conf.get("failing_examples", {}).items()}


def cached_seconds(target_file: Path) -> float | None:
    """sphinx-gallery's last measured time of an example, ``None`` when it has none."""
    seconds = _read_cached_cost(target_file)[0]
    return seconds if seconds > 0 else None


def forget_cached_run(target_file: Path) -> None:
    """Make sphinx-gallery run an unchanged example again (its md5 no longer matches)."""
    Path(f"{target_file}.md5").unlink(missing_ok=True)
