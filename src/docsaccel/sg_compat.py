"""Every place where the plugin relies on sphinx-gallery beyond its documented config.

The design, in full: the adopting guide's *Design* section.

>>> unchecked_release("0.22.1") is None
True
>>> print(unchecked_release("0.99.0"))
docsaccel was checked against sphinx-gallery 0.17 to 0.22, but ... 0.99.0 is installed: ...
"""

from __future__ import annotations

import bdb
import contextlib
import dataclasses
import functools
import logging
import os
import re
import sys
import types
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import BrokenExecutor
from pathlib import Path
from typing import Any

import sphinx_gallery
from sphinx.errors import ExtensionError, SphinxError
from sphinx_gallery import gen_gallery, gen_rst, py_source_parser, utils

from docsaccel.budgets import INLINE_COMMENT
from docsaccel.contract import (
    SG_FAILED_PREFIX,
    expected_passed_text,
    failed_examples_text,
)
from docsaccel.intercept import Patch
from docsaccel.sphinx_events import wrap_handlers

_USER_RESET = "docsaccel_user_reset_modules"

__all__ = [
    "BACKREFERENCES_FROM_SKIPPED",
    "BROKEN_SPHINX_GALLERY",
    "CHECKED_SPHINX_GALLERY",
    "DUPLICATE_FILENAME_WARNING",
    "MEMORY_NOT_MEASURED",
    "ROOT_PAGES",
    "RUN_MARKER_SUFFIX",
    "TIMES_OF_SKIPPED",
    "TYPED_DUPLICATE_FILENAME",
    "abort_in_one_line",
    "cached_seconds",
    "call_user_resetters",
    "check_after_blocks",
    "cost_stamp",
    "example_files",
    "execution_times_page",
    "expect_no_failure_of",
    "expected_failure_marks",
    "fail_own_exits",
    "failure_summary",
    "failures",
    "final_name",
    "forget_cached_run",
    "forget_marked_run",
    "gallery_dirs",
    "generated_page_target",
    "hide_frames",
    "image_folders",
    "image_owner",
    "image_prefix",
    "install_hook",
    "is_executable",
    "is_measurement_file",
    "is_unchanged",
    "junit_folder",
    "list_runs_elsewhere",
    "mark_unchanged",
    "mask_measurements",
    "measured_seconds",
    "output_files",
    "page_file",
    "page_label",
    "refuse_broken",
    "remove_expected_failure_marks",
    "remove_our_config_comments",
    "remove_outputs",
    "restoring_loses_backreferences",
    "run_again",
    "run_marker_file",
    "run_only",
    "running_example",
    "series",
    "settings_of_pages",
    "stale_targets",
    "summary_in_one_line",
    "thumbnail_files",
    "type_duplicate_filename_warning",
    "unchecked_release",
    "user_resetters",
    "with_defaults",
    "worker_died",
    "written_after_the_gallery",
]

#: The sphinx-gallery release series whose private names this module was checked
#: against, oldest to newest; ``pyproject.toml`` allows exactly these.
CHECKED_SPHINX_GALLERY = ("0.17", "0.18", "0.19", "0.20", "0.21", "0.22")

#: Releases known not to work with docsaccel, and why: importing this module refuses them.
BROKEN_SPHINX_GALLERY: dict[str, str] = {}


def _series(version: str) -> str:
    return ".".join(version.split("+")[0].split(".")[:2])


def _series_numbers(version: str) -> tuple[int, ...]:
    """The release series of ``version`` as numbers, to compare: ``(0, 22)``."""
    return tuple(int(part) for part in _series(version).split(".") if part.isdigit())


def series(version: str | None = None) -> str:
    """The release series of the installed sphinx-gallery (or ``version``): ``"0.22"``."""
    return _series(sphinx_gallery.__version__ if version is None else version)


def unchecked_release(version: str | None = None) -> str | None:
    """Why the installed sphinx-gallery (or ``version``) is outside the checked series,
    ``None`` when it is one of them."""
    version = sphinx_gallery.__version__ if version is None else version
    if _series(version) in CHECKED_SPHINX_GALLERY:
        return None
    return (
        f"docsaccel was checked against sphinx-gallery {CHECKED_SPHINX_GALLERY[0]} to "
        f"{CHECKED_SPHINX_GALLERY[-1]}, but sphinx-gallery {version} is installed: the "
        "private functions docsaccel reads may have changed, and an example's record or a "
        f"skipped run could be wrong. Install sphinx-gallery {_supported_range()}."
    )


#: The first series that writes an example's "examples using" entries (backreferences)
#: when it skips the example as unchanged, from its ``.codeobj.json``; before it, only an
#: example it runs gets them.
BACKREFERENCES_FROM_SKIPPED = (0, 22)


def restoring_loses_backreferences(
    gallery_conf: dict[str, Any], version: str | None = None
) -> str | None:
    """Why an example restored instead of run would be missing from the "examples using"
    mini-galleries of the API pages (``backreferences_dir`` set, sphinx-gallery before
    :data:`BACKREFERENCES_FROM_SKIPPED`); ``None`` when restoring keeps them.

    >>> restoring_loses_backreferences({"backreferences_dir": "gen"}, "0.21.0")[:40]
    'sphinx-gallery 0.21.0 writes the "exampl'
    >>> restoring_loses_backreferences({"backreferences_dir": "gen"}, "0.22.1") is None
    True
    >>> restoring_loses_backreferences({"backreferences_dir": None}, "0.17.1") is None
    True
    """
    version = sphinx_gallery.__version__ if version is None else version
    if not gallery_conf.get("backreferences_dir"):
        return None
    if _series_numbers(version) >= BACKREFERENCES_FROM_SKIPPED:
        return None
    first = ".".join(map(str, BACKREFERENCES_FROM_SKIPPED))
    return (
        f'sphinx-gallery {version} writes the "examples using" mini-galleries '
        "(backreferences_dir) only for the examples it runs, so every example runs "
        f"(sphinx-gallery {first} and later rebuild them for restored examples)"
    )


def _supported_range() -> str:
    last = CHECKED_SPHINX_GALLERY[-1].split(".")
    after = f"{last[0]}.{int(last[1]) + 1}"
    return f">={CHECKED_SPHINX_GALLERY[0]},<{after}"


def _private(module: Any, name: str) -> Any:
    """``module.name`` from the installed sphinx-gallery; an ``ImportError`` naming the
    release when it has no such name."""
    found = getattr(module, name, None)
    if found is None:
        raise ImportError(
            f"docsaccel.gallery needs {module.__name__}.{name}, which sphinx-gallery "
            f"{sphinx_gallery.__version__} does not have; it was checked against "
            f"sphinx-gallery {CHECKED_SPHINX_GALLERY[0]} to {CHECKED_SPHINX_GALLERY[-1]}: "
            f"install sphinx-gallery {_supported_range()}"
        )
    return found


def refuse_broken(version: str | None = None) -> None:
    """Raise ``ImportError`` when the installed sphinx-gallery (or ``version``) is a release
    known not to work (:data:`BROKEN_SPHINX_GALLERY`); importing this module calls it."""
    version = sphinx_gallery.__version__ if version is None else version
    if version in BROKEN_SPHINX_GALLERY:
        raise ImportError(
            f"docsaccel.gallery does not work with sphinx-gallery {version}: "
            f"{BROKEN_SPHINX_GALLERY[version]}; install sphinx-gallery {_supported_range()}"
        )


refuse_broken()
_fill_gallery_conf_defaults = _private(gen_gallery, "_fill_gallery_conf_defaults")
get_subsections = _private(gen_gallery, "get_subsections")
_get_gallery_header = _private(gen_rst, "_get_gallery_header")
executable_script = _private(gen_rst, "executable_script")
_generate_file_rst = _private(gen_rst, "generate_file_rst")
_get_callables = _private(gen_rst, "_get_callables")
_collect_gallery_files = _private(utils, "_collect_gallery_files")
get_md5sum = _private(utils, "get_md5sum")
_summarize_failing_examples = _private(gen_gallery, "summarize_failing_examples")
_generate_gallery_rst = _private(gen_gallery, "generate_gallery_rst")
_private(gen_gallery, "write_junit_xml")  # wrapped, and looked up, when used
_private(py_source_parser, "remove_config_comments")  # wrapped, and looked up, when used
# Only in some of the checked releases (None in the others), each with a way without it:
# the per-example cost file ``<stem>.cost.json``, new in sphinx-gallery 0.22, and the
# making of the ``within_subsection_order`` sort key before 0.19.
_read_cached_cost = getattr(gen_rst, "_read_cached_cost", None)
_write_cached_cost = getattr(gen_rst, "_write_cached_cost", None)
_get_class = getattr(gen_rst, "_get_class", None)

# Never matches: the pattern of a build that executes no example.
_MATCH_NOTHING = r"(?!)"


def with_defaults(gallery_conf: dict[str, Any]) -> dict[str, Any]:
    """``sphinx_gallery_conf`` as written in ``conf.py``, with sphinx-gallery's defaults.

    For code that reads ``conf.py`` outside a Sphinx build (planning shards) and must see
    the examples exactly as the build will.
    """
    return _fill_gallery_conf_defaults(dict(gallery_conf), app=None, check_keys=False)


#: The pages sphinx-gallery writes at the source folder's root, beside every page of its
#: gallery folders: the execution times of all galleries (``write_computation_times``)
#: and the API usage page (``show_api_usage``).
ROOT_PAGES = ("sg_execution_times", "sg_api_usage")


def gallery_dirs(gallery_conf: dict[str, Any]) -> list[tuple[str, str]]:
    """``(examples_dir, gallery_dir)`` pairs, both relative to the source dir. A key
    ``conf.py`` leaves out has sphinx-gallery's default: read at ``config-inited``, the
    configuration is still as written (sphinx-gallery fills it in at ``builder-inited``).

    >>> gallery_dirs({})
    [('../examples', 'auto_examples')]
    """
    examples = gallery_conf.get("examples_dirs", gen_gallery.DEFAULT_GALLERY_CONF["examples_dirs"])
    galleries = gallery_conf.get("gallery_dirs", gen_gallery.DEFAULT_GALLERY_CONF["gallery_dirs"])
    examples = [examples] if isinstance(examples, str) else list(examples)
    galleries = [galleries] if isinstance(galleries, str) else list(galleries)
    return [(str(e), str(g)) for e, g in zip(examples, galleries, strict=False)]


def example_files(examples_dir: Path, gallery_conf: dict[str, Any]) -> list[Path]:
    """The example files sphinx-gallery builds in one gallery folder, sorted.

    The walk of its ``generate_gallery_rst``: the files of the gallery folder, then those of
    each sub-gallery, one level deep and not below (``data/``, ``__pycache__`` inside a
    sub-gallery are never walked). A sub-gallery is a sub-folder with a gallery header
    (``GALLERY_HEADER.rst``, ``README.txt``, ...); when the gallery folder has its own
    ``index.rst`` instead, every sub-folder but ``__pycache__`` is one. Files are those of
    ``example_extensions`` not matching ``ignore_pattern``, executed or not.

    Example: a gallery with a sub-gallery, and a data folder that is neither.

    >>> import tempfile
    >>> folder = tempfile.TemporaryDirectory()
    >>> examples = Path(folder.name, "examples")
    >>> for name in ("README.txt", "plot_a.py", "sub/README.txt", "sub/plot_b.py", "data/x.py"):
    ...     Path(examples, name).parent.mkdir(parents=True, exist_ok=True)
    ...     _ = Path(examples, name).write_text("'''Title\\n=====\\n'''\\n")
    >>> found = example_files(examples, with_defaults({}))
    >>> [path.relative_to(examples).as_posix() for path in found]
    ['plot_a.py', 'sub/plot_b.py']
    >>> folder.cleanup()
    """
    if not examples_dir.is_dir():
        return []
    folders = [examples_dir]
    folders += [examples_dir / name for name in _sub_galleries(examples_dir, gallery_conf)]
    # Depth 0: the files of the folder itself, as sphinx-gallery lists each one.
    return sorted(
        folder / name
        for folder in folders
        for name in _collect_gallery_files([folder], gallery_conf)
    )


def _sub_galleries(examples_dir: Path, gallery_conf: dict[str, Any]) -> list[str]:
    # sphinx-gallery asks for gallery headers in sub-folders only when the gallery folder
    # has one itself (rather than a hand-written index.rst). Its subsection_order only
    # sorts them, and may name paths relative to a folder this function does not know.
    has_header = _get_gallery_header(examples_dir, gallery_conf, raise_error=False) is not None
    unsorted = {**gallery_conf, "subsection_order": None}
    # The flag is positional: sphinx-gallery 0.17 named it check_for_index.
    return get_subsections(examples_dir, examples_dir, unsorted, has_header)


def is_executable(src_file: str, gallery_conf: dict[str, Any]) -> bool:
    """Whether sphinx-gallery runs this example (``filename_pattern``, ``plot_gallery``)."""
    # Before sphinx-gallery 0.21 its answer is the match or plot_gallery's value, not a bool.
    return bool(executable_script(src_file, gallery_conf))


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
    remove_our_config_comments()


def call_user_resetters(gallery_conf: dict[str, Any], fname: str, when: str) -> None:
    """Call the user's ``reset_modules`` exactly as sphinx-gallery would, if due ``when``."""
    from sphinx_gallery.scrapers import clean_modules

    reset_modules, order = gallery_conf.get(_USER_RESET, ((), "before"))
    if order in (when, "both"):
        clean_modules({**gallery_conf, "reset_modules": reset_modules}, fname, when)


_GENERATE_FILE_RST = _generate_file_rst.__code__


def _generate_file_rst_locals() -> dict[str, Any] | None:
    """The locals of the ``generate_file_rst`` call up this thread's stack (it calls the
    resetters, in whichever process runs the example), ``None`` when there is none."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code is not _GENERATE_FILE_RST:
        frame = frame.f_back
    return None if frame is None else frame.f_locals


def _locals_running(target_file: str) -> dict[str, Any] | None:
    """:func:`_generate_file_rst_locals`, when that call runs the example ``target_file``."""
    found = _generate_file_rst_locals()
    running = None if found is None else found.get("target_file")
    if running is None or os.path.normpath(running) != os.path.normpath(target_file):
        return None
    return found


def running_example(fname: str) -> str | None:
    """The source path (absolute, normalised) of the example a resetter is called for.

    sphinx-gallery calls ``reset_modules`` with the example's file name alone
    (``plot_a.py``), which examples of two sub-galleries can share. The full path is the
    ``src_file`` of its ``generate_file_rst``, which calls the resetters (in whichever
    process runs the example). ``None`` when the call does not come from there.
    """
    found = _generate_file_rst_locals()
    src_file = None if found is None else found.get("src_file")
    if isinstance(src_file, str) and os.path.basename(src_file) == os.path.basename(
        os.fspath(fname)
    ):
        return src_file
    return None


#: The type and subtype of sphinx-gallery's warning of examples sharing a file name, as
#: ``suppress_warnings`` names it (``sphinx_gallery.duplicate_filename``).
DUPLICATE_FILENAME_WARNING = ("sphinx_gallery", "duplicate_filename")

#: The first series that logs that warning with its type and subtype; before it, the
#: warning has none, and ``suppress_warnings`` could not name it.
TYPED_DUPLICATE_FILENAME = (0, 22)


class _TypeUntypedWarnings(logging.Filter):
    """Give a warning logged without a type :data:`DUPLICATE_FILENAME_WARNING`'s."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.WARNING and not getattr(record, "type", None):
            record.type, record.subtype = DUPLICATE_FILENAME_WARNING
        return True


def type_duplicate_filename_warning(version: str | None = None) -> None:
    """Make ``suppress_warnings = ["sphinx_gallery.duplicate_filename"]`` silence
    sphinx-gallery's "Duplicate example file name(s) found" before
    :data:`TYPED_DUPLICATE_FILENAME` too, where it logs that warning without a type: its
    ``check_duplicate_filenames``, which logs nothing else, gives its warnings that type
    and subtype while it runs (through Sphinx's logging, which then suppresses them or
    prints them as it would from a later release). Once per process (safe to call again).
    """
    version = sphinx_gallery.__version__ if version is None else version
    if _series_numbers(version) >= TYPED_DUPLICATE_FILENAME:
        return
    original = _private(utils, "check_duplicate_filenames")
    if getattr(original, "_docsaccel", False):
        return
    # The standard logger under sphinx-gallery's Sphinx logger, whose filters run before
    # Sphinx's handlers judge a warning's type.
    logged = _private(utils, "logger").logger
    typed = _TypeUntypedWarnings()

    @functools.wraps(original)
    def check_duplicate_filenames(*args: Any, **kwargs: Any) -> Any:
        logged.addFilter(typed)
        try:
            return original(*args, **kwargs)
        finally:
            logged.removeFilter(typed)

    check_duplicate_filenames._docsaccel = True  # type: ignore[attr-defined]
    utils.check_duplicate_filenames = check_duplicate_filenames


def remove_our_config_comments() -> None:
    """Make ``remove_config_comments`` remove ``# docsaccel_budget`` lines too.

    With ``remove_config_comments: True`` sphinx-gallery drops its own
    ``# sphinx_gallery_*`` comments from the code of Python examples on the page and in
    the notebook (the downloadable script is the source as written, so it keeps both).
    It only calls the function wrapped here when that option is on, so an inline budget
    leaves exactly where sphinx-gallery's comments do. Safe to call more than once; the
    hook calls it in every process that runs examples.
    """
    original = py_source_parser.remove_config_comments
    if getattr(original, "_docsaccel", False):
        return

    # Passes for the original wherever it is looked at: autodoc documents a module's
    # functions by their __module__, pickle finds a function by its qualified name.
    @functools.wraps(original)
    def remove_config_comments(code_block: str) -> str:
        return INLINE_COMMENT.sub("", original(code_block))

    remove_config_comments._docsaccel = True  # type: ignore[attr-defined]
    py_source_parser.remove_config_comments = remove_config_comments


#: Folders (ending in a separator) and files whose code's frames the tracebacks on example
#: pages leave out (:func:`hide_frames`).
_HIDDEN: set[str] = set()
_IMPORTLIB = "<frozen importlib._bootstrap"


def hide_frames(path: str) -> None:
    """Leave the frames of code in ``path`` (absolute: a folder, or one file) out of the
    traceback of a failing example that sphinx-gallery puts on its page and in the build
    log.

    The import wrappers (every ``import`` goes through them) and the cache's module loader
    are frames of their own between the example's ``import`` line and the module that
    raised; between them, the import system no longer recognises its own frames as a
    run to leave out. Without this, a page would show docsaccel's code and the import
    system's that a build without the cache does not: when a traceback holds frames of
    ``path``, those and the import system's are left out. Safe to call more than
    once; the cache calls it in every process that records examples.
    """
    path = os.path.normpath(path)
    _HIDDEN.add(path if os.path.isfile(path) else os.path.join(path, ""))
    _wrap_handle_exception()


#: What :func:`on_abort` calls with the example's error that ends the build.
_aborting: list[Callable[[BaseException], None]] = []


def on_abort(callback: Callable[[BaseException], None]) -> None:
    """Call ``callback(error)`` in the process that ran the example, when sphinx-gallery
    lets the example's ``error`` out to end the build (``abort_on_example_error``), its
    traceback logged: in a ``parallel`` build, a worker, whose state the build's process
    never sees. Once per process (safe to call again)."""
    if callback not in _aborting:
        _aborting.append(callback)
    _wrap_handle_exception()


def _wrap_handle_exception() -> None:
    """Wrap sphinx-gallery's ``handle_exception`` once per process, for
    :func:`hide_frames`, :func:`on_abort` and :func:`check_after_blocks`."""
    original = gen_rst.handle_exception
    if getattr(original, "_docsaccel", False):
        return

    @functools.wraps(original)
    def handle_exception(exc_info: Any, *args: Any, **kwargs: Any) -> str:
        kind, value, tb = exc_info
        tb = None if getattr(value, "_docsaccel_after_block", False) else _without_hidden(tb)
        try:
            return original((kind, value, tb), *args, **kwargs)
        except BaseException as exc:
            # Its bare ``raise`` lets the example's own error out: the build ends with it.
            if exc is value:
                for callback in _aborting:
                    callback(exc)
            raise

    handle_exception._docsaccel = True  # type: ignore[attr-defined]
    gen_rst.handle_exception = handle_exception


def fail_own_exits(replace: Callable[[BaseException], Exception | None]) -> None:
    """Make a ``KeyboardInterrupt`` or ``SystemExit`` raised by an example's code an error
    of that example, as sphinx-gallery makes any ``Exception``: ``replace(exc)`` gives the
    exception to raise in its place, or ``None`` to let it end the build (a real Ctrl-C).

    sphinx-gallery catches ``Exception`` around each code block, so an example's own
    ``raise KeyboardInterrupt`` or ``raise SystemExit`` stopped the whole build. The
    block's code runs in the function ``_exec_once`` returns: wrapped here, once per
    process (safe to call again).
    """
    original = _private(gen_rst, "_exec_once")
    if getattr(original, "_docsaccel", False):
        return

    @functools.wraps(original)
    def exec_once(*args: Any, **kwargs: Any) -> Callable[[], Any]:
        run = original(*args, **kwargs)

        def once() -> Any:
            try:
                return run()
            except (KeyboardInterrupt, SystemExit) as exc:
                replaced = replace(exc)
                if replaced is None:
                    raise
                # The example's own frames, where it raised, stay on its page.
                raise replaced.with_traceback(exc.__traceback__) from None

        return once

    exec_once._docsaccel = True  # type: ignore[attr-defined]
    gen_rst._exec_once = exec_once


#: What :func:`check_after_blocks` calls: ``check(last, failed)``.
_checks: list[Callable[[bool, bool], BaseException | None]] = []


def check_after_blocks(check: Callable[[bool, bool], BaseException | None]) -> None:
    """Call ``check(last, failed)`` where an example's code block is over but sphinx-gallery
    still handles its errors: once its code has returned, and again once its figures are
    scraped. ``last``: no such call comes after this one for the example (its last code
    block); ``failed``: the example has raised already. An exception ``check`` returns is
    raised there, so sphinx-gallery fails the example with it, as if its code had raised
    it: its page, JUnit XML and times then say it failed. Once per process (safe to call
    again).
    """
    if check not in _checks:
        _checks.append(check)
    _wrap_handle_exception()
    run_code = _private(gen_rst, "_exec_and_get_memory")
    if not getattr(run_code, "_docsaccel", False):

        @functools.wraps(run_code)
        def exec_and_get_memory(*args: Any, **kwargs: Any) -> Any:
            done = run_code(*args, **kwargs)
            caller = sys._getframe(1).f_locals
            # A block whose figures are deferred is over with its code: no scrape follows.
            _after_block(caller.get("block"), not caller.get("need_save_figures", True))
            return done

        exec_and_get_memory._docsaccel = True  # type: ignore[attr-defined]
        gen_rst._exec_and_get_memory = exec_and_get_memory
    scrape = _private(gen_rst, "save_figures")
    if not getattr(scrape, "_docsaccel", False):

        @functools.wraps(scrape)
        def save_figures(block: Any, script_vars: dict[str, Any], *args: Any, **kw: Any) -> Any:
            done = scrape(block, script_vars, *args, **kw)
            # Also called once the example raised (to close its figures): then no error.
            _after_block(block, True, failed=not script_vars.get("execute_script", True))
            return done

        save_figures._docsaccel = True  # type: ignore[attr-defined]
        gen_rst.save_figures = save_figures


def _after_block(block: Any, over: bool, failed: bool = False) -> None:
    """Run the checks after ``block``; ``over``: nothing of the block follows."""
    found = _generate_file_rst_locals()
    blocks = [] if found is None else found.get("script_blocks") or []
    # A block is a named tuple whose first field is its kind (``"text"`` or ``"code"``).
    code = [b for b in blocks if b[0] != "text"]
    last = over and bool(code) and code[-1] is block
    for check in _checks:
        error = check(last, failed)
        if error is not None and not failed:
            # Raised after the example's code returned: no frame of its (nor of
            # sphinx-gallery's, nor ours) belongs on its page (:func:`_wrap_handle_exception`).
            error._docsaccel_after_block = True  # type: ignore[attr-defined]
            raise error


def _without_hidden(tb: types.TracebackType | None) -> types.TracebackType | None:
    """The traceback ``tb``, or a copy without the entries of hidden frames (and of the
    import system's, when it had hidden ones)."""
    entries = []
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next
    hidden = tuple(_HIDDEN)
    kept = [e for e in entries if not e.tb_frame.f_code.co_filename.startswith(hidden)]
    if len(kept) == len(entries):
        return entries[0] if entries else None
    kept = [e for e in kept if not e.tb_frame.f_code.co_filename.startswith(_IMPORTLIB)]
    chain = None
    for entry in reversed(kept):
        chain = types.TracebackType(chain, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return chain


def user_resetters(gallery_conf: dict[str, Any]) -> tuple[Any, Any]:
    """The user's ``(reset_modules, reset_modules_order)``, whether or not the hook is in."""
    if _USER_RESET in gallery_conf:
        return gallery_conf[_USER_RESET]
    return gallery_conf.get("reset_modules", ()), gallery_conf.get("reset_modules_order", "before")


def stale_targets(gallery_conf: dict[str, Any]) -> set[str]:
    """Generated example files sphinx-gallery skipped because their source did not change."""
    return {os.path.normpath(path) for path in gallery_conf.get("stale_examples", [])}


#: The key of ``sphinx_gallery_conf`` holding what :func:`list_runs_elsewhere` adds to
#: the JUnit XML and the times.
_RAN_ELSEWHERE = "docsaccel_ran_elsewhere"

#: Keys sphinx-gallery (or :func:`list_runs_elsewhere`) fills while it runs the
#: examples: what this run did, not settings.
_RUN_STATE = ("failing_examples", "passing_examples", "stale_examples", _RAN_ELSEWHERE)


def settings_of_pages(gallery_conf: dict[str, Any]) -> dict[str, Any]:
    """``sphinx_gallery_conf`` without what the run filled in (which examples passed,
    failed or were skipped): the settings that may shape a written page."""
    return {k: v for k, v in gallery_conf.items() if k not in _RUN_STATE}


def executed_sources(gallery_conf: dict[str, Any]) -> set[str]:
    """The source files of the examples sphinx-gallery ran in this build (passing or
    failing), in whichever process."""
    passing = {os.path.normpath(path) for path in gallery_conf.get("passing_examples", [])}
    return passing | set(failures(gallery_conf))


def failures(gallery_conf: dict[str, Any]) -> dict[str, str]:
    """``{source file: formatted traceback}`` of the examples that raised."""
    return {os.path.normpath(k): v for k, v in gallery_conf.get("failing_examples", {}).items()}


def cached_seconds(target_file: Path) -> float | None:
    """sphinx-gallery's last measured time of an example, ``None`` when it has none
    (always before sphinx-gallery 0.22, which keeps no such time)."""
    if _read_cached_cost is None:
        return None
    seconds = _read_cached_cost(target_file)[0]
    return seconds if seconds > 0 else None


def cost_stamp(target_file: str) -> tuple[int, int] | None:
    """What identifies the current ``<stem>.cost.json`` of an example (``None``: none yet).

    Taken before the example runs, it tells :func:`measured_seconds` whether the file it
    finds afterwards was written by this run. Modification times alone cannot: the
    kernel stamps files with a clock coarser than a trivial example's run.
    """
    try:
        info = os.stat(_cost_file(target_file))
    except OSError:
        return None
    return info.st_mtime_ns, info.st_ino


def measured_seconds(target_file: str, before: tuple[int, int] | None) -> float | None:
    """The execution time sphinx-gallery has just measured for an example, else ``None``.

    sphinx-gallery times the example's code blocks (with their scrapers) and writes that
    time to ``<stem>.cost.json`` beside the page before its "after" resetters run, so the
    hook can read it in the process that ran the example. Only a passing example gets the
    file: when it is still the one :func:`cost_stamp` saw before the run (``before``), it
    is an earlier run's, and this gives ``None``, as for a missing or unreadable file.
    Before sphinx-gallery 0.22, which writes no such file, the time is read where it
    measured it (:func:`_running_example_time`).
    """
    if _read_cached_cost is None:
        return _running_example_time(target_file)
    if cost_stamp(target_file) in (None, before):
        return None
    seconds = _read_cached_cost(Path(target_file))[0]
    return seconds if seconds > 0 else None


def is_measurement_file(relative: str) -> bool:
    """Whether an output only holds what sphinx-gallery measured of a run (time, memory):
    ``<stem>.cost.json``, which two runs never share."""
    return relative.endswith(".cost.json")


def running_example_failure(target_file: str) -> tuple[str, bool] | None:
    """``(last line of its traceback, expected)`` of the example ``target_file`` if it
    raised (an error, ``sys.exit``), read from its ``generate_file_rst`` frame while it
    calls the "after" resetters; ``None`` if it passed or the call does not come from there.

    sphinx-gallery catches an example's exception itself, so its resetter would otherwise
    only learn of it once the whole gallery has run: its status must be true at its end
    (the progress line, the journal a stopped build's report is made from).
    """
    found = _locals_running(target_file)
    if found is None:
        return None
    out_vars = found.get("out_vars")
    if not isinstance(out_vars, dict) or not isinstance(out_vars.get("formatted_exception"), str):
        return None
    conf, src_file = found.get("gallery_conf"), found.get("src_file")
    expected = isinstance(conf, dict) and isinstance(src_file, str)
    return _last_line(out_vars["formatted_exception"]), expected and is_expected_failure(
        src_file, conf
    )


def is_expected_failure(src_file: str, gallery_conf: dict[str, Any]) -> bool:
    """Whether sphinx-gallery was told to expect ``src_file`` to fail
    (``expected_failing_examples``, paths relative to the Sphinx source folder)."""
    return _resolved(src_file) in {
        _expected(gallery_conf, p) for p in gallery_conf.get("expected_failing_examples", ())
    }


def _resolved(path: str | os.PathLike[str]) -> str:
    """``path`` absolute and normalised, as examples' paths are compared."""
    return os.path.normpath(Path(path).resolve(strict=False))


def _expected(gallery_conf: dict[str, Any], path: str) -> str:
    """An ``expected_failing_examples`` entry (relative to the Sphinx source folder),
    resolved."""
    return _resolved(Path(gallery_conf.get("src_dir", ""), path))


def _running_example_time(target_file: str) -> float | None:
    """Before sphinx-gallery 0.22 (no ``.cost.json``): the time its ``generate_file_rst``
    measured, read from that function's frame while it calls the "after" resetters, if
    the example passed (its ``out_vars["passing"]``) and is ``target_file``."""
    found = _locals_running(target_file)
    if found is None:
        return None
    out_vars, seconds = found.get("out_vars"), found.get("time_elapsed")
    if not isinstance(out_vars, dict) or not out_vars.get("passing"):
        return None
    return seconds if isinstance(seconds, float) and seconds > 0 else None


def _cost_file(target_file: str) -> str:
    return f"{os.path.splitext(target_file)[0]}.cost.json"


def forget_cached_run(target_file: Path) -> None:
    """Make sphinx-gallery run an unchanged example again (its md5 no longer matches)."""
    Path(f"{target_file}.md5").unlink(missing_ok=True)


#: What :func:`run_marker_file` adds to an example's file name.
RUN_MARKER_SUFFIX = ".docsaccel.json"


def run_marker_file(target_file: Path | str) -> Path:
    """The plugin's note of the run that made an example's outputs: ``<name>.py.docsaccel.json``.

    Next to ``<name>.py.md5``, which makes sphinx-gallery skip the example and keep those
    outputs: whichever output folder a later build uses, the two travel together.
    """
    return Path(f"{target_file}{RUN_MARKER_SUFFIX}")


def expect_no_failure_of(gallery_conf: dict[str, Any], src_files: Iterable[str]) -> None:
    """Take ``src_files`` out of ``expected_failing_examples``.

    For a build that takes the pages of expected failures as they are, made elsewhere (a
    shard): sphinx-gallery skips them as unchanged, and would otherwise end the build
    with "Examples expected to fail, but not failing".
    """
    taken = {_resolved(path) for path in src_files}
    gallery_conf["expected_failing_examples"] = [
        path
        for path in gallery_conf.get("expected_failing_examples", ())
        if _expected(gallery_conf, path) not in taken
    ]


def mark_unchanged(target_file: Path | str, seconds: float) -> list[Path]:
    """Write ``<target_file>.md5`` as sphinx-gallery writes it after a passing run, so a
    later build skips the example as unchanged and keeps its page, and (from
    sphinx-gallery 0.22) ``<stem>.cost.json`` with ``seconds``, the time that build then
    lists for it; return the files written.

    sphinx-gallery writes neither for an example that raised: an expected failure's page,
    made by one shard, is marked so the merge publishes it instead of running it again,
    with the time the shard measured, as a serial build lists the time it ran before
    raising. :func:`forget_marked_run` removes both.
    """
    md5_file = Path(f"{target_file}.md5")
    md5_file.write_text(get_md5sum(str(target_file), mode="t"), encoding="utf-8")
    if _write_cached_cost is None:
        return [md5_file]
    # Memory as sphinx-gallery writes it when it did not measure it.
    _write_cached_cost(Path(target_file), (seconds, 0.0))
    return [md5_file, Path(_cost_file(str(target_file)))]


def forget_marked_run(target_file: Path | str) -> None:
    """Remove what :func:`mark_unchanged` wrote, so the next build runs the example
    again and lists no time of its own for it, as after a serial build where it raised."""
    forget_cached_run(Path(target_file))
    Path(_cost_file(str(target_file))).unlink(missing_ok=True)


#: What sphinx-gallery writes in an ``.md5`` file: the hex md5 digest of the example.
_MD5_TEXT = re.compile(r"[0-9a-f]{32}")


def expected_failure_marks(gallery_conf: dict[str, Any], src_dir: Path | str) -> list[Path]:
    """The ``<copy>.md5`` files beside the copies of the examples of
    ``expected_failing_examples`` in their gallery folders (``src_dir``: the Sphinx source
    folder) that hold an md5 as sphinx-gallery writes one.

    sphinx-gallery writes none for an example that raised, and skips any example whose
    md5 is current: such a file (an earlier docsaccel's shard merge left them, as
    :func:`mark_unchanged` writes them) makes a build skip the example, then fail it as
    "expected to fail" that did not. A file holding anything else is no such mark.
    """
    src = Path(src_dir)
    expected = {_resolved(src / path) for path in gallery_conf.get("expected_failing_examples", ())}
    found = []
    for examples_dir, gallery_dir in gallery_dirs(gallery_conf):
        folder = Path(_resolved(src / examples_dir))
        for source in sorted(expected):
            if folder not in Path(source).parents:
                continue
            mark = Path(f"{src / gallery_dir / Path(source).relative_to(folder)}.md5")
            with contextlib.suppress(OSError, UnicodeDecodeError):
                if mark.is_file() and _MD5_TEXT.fullmatch(mark.read_text(encoding="utf-8")):
                    found.append(mark)
    return found


def remove_expected_failure_marks(gallery_conf: dict[str, Any], src_dir: Path | str) -> str | None:
    """Remove the :func:`expected_failure_marks` of a project, so its build runs those
    examples as a clean build does; the line that says so, ``None`` when there was none."""
    removed = []
    for mark in expected_failure_marks(gallery_conf, src_dir):
        with contextlib.suppress(FileNotFoundError):
            mark.unlink()
            removed.append(os.path.relpath(mark, src_dir))
    if not removed:
        return None
    return (
        f"removed {', '.join(removed)}: left beside examples of expected_failing_examples "
        "by an earlier sharded build, it would make this build skip them and fail them as "
        "expected to fail that did not"
    )


def run_only(gallery_conf: dict[str, Any], src_files: Iterable[str]) -> None:
    """Make sphinx-gallery execute exactly ``src_files`` (absolute, normalised paths).

    ``filename_pattern`` is matched with ``re.search`` against each example's path: the new
    pattern matches those paths whole and nothing else. The other examples still get their
    pages, without outputs, as with any example the pattern does not match.
    """
    alternatives = sorted(re.escape(path) for path in src_files)
    pattern = f"^(?:{'|'.join(alternatives)})$" if alternatives else _MATCH_NOTHING
    gallery_conf["filename_pattern"] = pattern


def is_unchanged(src_file: str, target_file: str) -> bool:
    """Whether sphinx-gallery will skip this example as unchanged.

    It copies a changed source over ``target_file`` first, then compares the copy with
    ``<target_file>.md5``: the example is skipped when that file holds the source's md5.
    """
    md5_file = Path(f"{target_file}.md5")
    if not md5_file.is_file():
        return False
    return md5_file.read_text(encoding="utf-8") == get_md5sum(src_file, mode="t")


def output_files(target_file: Path) -> list[Path]:
    """Every file sphinx-gallery (and :mod:`docsaccel.video`) wrote for one executed example.

    Next to the copy of the example, ``target_file`` (``<dir>/<stem>.py``): the copy, its
    ``.md5``, ``<stem>.rst``, ``.ipynb``, ``.zip``, ``.codeobj.json`` (backreferences),
    ``.cost.json`` (time and memory) and the plugin's :func:`run_marker_file`; in
    ``<dir>/images``: ``sphx_glr_<stem>_NNN.*`` (figures; videos and their posters), each
    figure's copies at the resolutions of ``image_srcset`` (``_NNN_2_00x.*``), and
    ``thumb/sphx_glr_<stem>_thumb.*``. Together they let a later build skip the example
    as unchanged and still show all its outputs.
    """
    target = Path(target_file)
    folder, stem = target.parent, target.stem
    beside = [Path(f"{target}.md5"), run_marker_file(target), target]
    beside += [folder / f"{stem}{suffix}" for suffix in _PAGE_SUFFIXES]
    images = re.compile(rf"sphx_glr_{re.escape(stem)}_\d{{3,}}{_SRCSET}\.\w+")
    thumbs = re.compile(rf"sphx_glr_{re.escape(stem)}_thumb\.\w+")
    found = [path for path in beside if path.is_file()]
    found += _matching(folder / "images", images.fullmatch)
    found += _matching(folder / "images" / "thumb", thumbs.fullmatch)
    return found


_PAGE_SUFFIXES = (".rst", ".ipynb", ".zip", ".codeobj.json", ".cost.json")

# What the matplotlib scraper puts after a figure's number for each factor of
# ``image_srcset`` but 1: the factor with two decimals, its dot an underscore, then "x".
_SRCSET = r"(?:_\d+_\d\dx)?"


def remove_outputs(target_file: Path | str) -> None:
    """Remove every file of one example's run (:func:`output_files`), its copy too, so a
    later build finds the example as a clean build would: never run. For a run that did
    not finish: what it wrote is no run's whole output, yet sphinx-gallery takes every
    copy in a gallery folder for an example of the gallery (its zips of all the examples
    name each copy's notebook, and fail when there is none)."""
    for path in output_files(Path(target_file)):
        with contextlib.suppress(OSError):  # already gone, or not this process's to remove
            path.unlink()


#: How every example page sphinx-gallery writes begins (``EXAMPLE_HEADER``), up to the
#: file it names in quotes: its copy of the example, relative to the source folder.
_GENERATED_PAGE_HEAD = gen_rst.EXAMPLE_HEADER.split("{0}", 1)[0]


def generated_page_target(page: Path | str) -> Path | None:
    """The copy of the example (``<dir>/<stem>.py``, or the extension the page's header
    names) for which sphinx-gallery generated ``page`` (``<dir>/<stem>.rst``); ``None``
    when ``page`` does not begin with the header of a page sphinx-gallery generated for
    an example: a gallery's index, a page the user wrote.

    >>> import tempfile
    >>> folder = tempfile.TemporaryDirectory()
    >>> page = Path(folder.name, "plot_a.rst")
    >>> _ = page.write_text(gen_rst.EXAMPLE_HEADER.format("gallery/plot_a.py", "", ""))
    >>> generated_page_target(page).name
    'plot_a.py'
    >>> _ = page.write_text("Notes\\n=====\\n")
    >>> generated_page_target(page) is None
    True
    >>> folder.cleanup()
    """
    page = Path(page)
    try:
        with page.open(encoding="utf-8") as stream:
            head = stream.read(len(_GENERATED_PAGE_HEAD) + 1024)
    except (OSError, UnicodeDecodeError):
        return None
    if not head.startswith(_GENERATED_PAGE_HEAD):
        return None
    named = head[len(_GENERATED_PAGE_HEAD) :].split('"', 1)[0]
    # The stem is the page's: sphinx-gallery names every output of an example after it.
    return page.with_suffix(os.path.splitext(named)[1] or ".py")


def page_label(target: str) -> str:
    """sphinx-gallery's label of an example's page, from the path of the example's copy
    in its gallery folder relative to the source folder (posix): the ``:ref:`` target
    both its root and its per-gallery ``sg_execution_times.rst`` name the example by,
    whatever path each prints.

    >>> page_label("auto_examples/sub/plot_a.py")
    'sphx_glr_auto_examples_sub_plot_a.py'
    """
    return "sphx_glr_" + target.replace("/", "_")


def execution_times_page(folder: Path | str) -> Path:
    """The execution times page of a gallery (or sub-gallery) folder, which names each of
    its examples' pages. sphinx-gallery rewrites it only when it is missing or some
    example of the folder took time: the last example of a folder removed, it keeps
    naming that example's page, which no build generates any more."""
    return Path(folder) / "sg_execution_times.rst"


def list_runs_elsewhere(
    gallery_conf: dict[str, Any],
    passing: Iterable[str],
    failing: dict[str, str],
    seconds: Mapping[str, float],
) -> None:
    """Have sphinx-gallery's JUnit XML (its ``junit`` setting) list the examples another
    build ran, as that build's own XML would: ``passing`` source files, and ``failing``
    ones with the error each raised; and have it, ``sg_execution_times.rst`` and the
    build's log list each with the time that build measured (``seconds``, by source file)
    and, with ``show_memory``, never with a memory of 0 (:data:`MEMORY_NOT_MEASURED`).

    The build merging shards skips every example as unchanged, and a build with the
    example cache those it restored, and sphinx-gallery lists in its XML only the examples
    it ran. It lists a skipped example's time and memory from its ``.cost.json`` (a
    shard's, copied with its outputs), but only from sphinx-gallery
    :data:`TIMES_OF_SKIPPED`: before, a skipped example's time and memory are 0, and
    from it, the memory of a ``.cost.json`` :func:`mark_unchanged` wrote is 0: the time
    of ``seconds`` replaces a time of 0, and a memory of 0 is listed as not measured
    (:func:`_cost_runs_elsewhere`). Its lists of
    passing and failing examples stay as they are (the build's summary, the records read
    them), and the XML judges a failure against ``expected_failing_examples`` as written
    now, before a merge takes its expected failures out (:func:`expect_no_failure_of`)."""
    expected = list(gallery_conf.get("expected_failing_examples", ()))
    times = {os.path.normpath(path): value for path, value in seconds.items()}
    gallery_conf[_RAN_ELSEWHERE] = (list(passing), dict(failing), expected, times)
    _cost_runs_elsewhere()
    original = gen_gallery.write_junit_xml
    if getattr(original, "_docsaccel", False):
        return

    @functools.wraps(original)
    def write_junit_xml(gallery_conf: dict[str, Any], *args: Any, **kwargs: Any) -> None:
        elsewhere = gallery_conf.get(_RAN_ELSEWHERE)
        if elsewhere is not None:
            passing, failing, expected, _ = elsewhere
            gallery_conf = {
                **gallery_conf,
                "passing_examples": [*gallery_conf["passing_examples"], *passing],
                "failing_examples": {**failing, **gallery_conf["failing_examples"]},
                "expected_failing_examples": expected,
            }
        return original(gallery_conf, *args, **kwargs)

    write_junit_xml._docsaccel = True  # type: ignore[attr-defined]
    gen_gallery.write_junit_xml = write_junit_xml


#: The first series that lists an example it skips as unchanged with the time of the run
#: that made its outputs (kept in ``<stem>.cost.json``); before it, with a time of 0.
TIMES_OF_SKIPPED = (0, 22)

#: The memory listed for an example run elsewhere whose memory sphinx-gallery did not
#: measure: shown as ``nan``, never as a number (0 would read as measured). No record
#: holds sphinx-gallery's figure: its memory_profiler measure is what the process held
#: as the build began plus the example's growth, and a record's peak is what the process
#: held at the example's peak, which reads higher by all that earlier imports and
#: examples left in the process.
MEMORY_NOT_MEASURED = float("nan")


def _cost_runs_elsewhere() -> None:
    """Give the examples :func:`list_runs_elsewhere` names the costs another build
    measured, in the costs of each gallery folder sphinx-gallery makes its
    ``sg_execution_times.rst``, JUnit XML and log from, where it gives an example it
    skips a time or memory of 0. Once per process (safe to call again)."""
    original = _private(gen_gallery, "generate_dir_rst")
    if getattr(original, "_docsaccel", False):
        return

    @functools.wraps(original)
    def generate_dir_rst(
        src_dir: str, target_dir: str, gallery_conf: dict[str, Any], *args: Any, **kwargs: Any
    ) -> Any:
        made = original(src_dir, target_dir, gallery_conf, *args, **kwargs)
        elsewhere = gallery_conf.get(_RAN_ELSEWHERE)
        if elsewhere is not None:
            # The costs, third of what it returns: one list, which its caller then reads.
            costs = made[2]
            memory = _measures_memory(gallery_conf)
            costs[:] = [_costed(cost, elsewhere[3], memory) for cost in costs]
        return made

    generate_dir_rst._docsaccel = True  # type: ignore[attr-defined]
    gen_gallery.generate_dir_rst = generate_dir_rst


def _measures_memory(gallery_conf: dict[str, Any]) -> bool:
    """Whether sphinx-gallery measures examples' memory in this build: ``show_memory``
    on (memory_profiler, or a function of the project's), and not turned off as it set
    up (for want of memory_profiler, or in a ``parallel`` build)."""
    return bool(gallery_conf.get("show_memory")) and bool(gallery_conf.get("plot_gallery", True))


def _costed(cost: Any, seconds: Mapping[str, float], memory: bool) -> Any:
    """One example's cost, with the time another build measured where sphinx-gallery
    gave it 0, and (``memory``: sphinx-gallery measures it) :data:`MEMORY_NOT_MEASURED`
    where it gave it a memory of 0: a dict before sphinx-gallery 0.21, an
    ``ExampleCost`` from it."""
    if isinstance(cost, dict):
        src_file, measured, mebibytes = cost["src_file"], cost["t"], cost["mem"]
    else:
        src_file, measured, mebibytes = cost.src_file, cost.execution_time, cost.memory
    elsewhere = seconds.get(os.path.normpath(src_file))
    if elsewhere is None:
        return cost
    measured = measured or elsewhere
    if memory and not mebibytes:
        mebibytes = MEMORY_NOT_MEASURED
    if isinstance(cost, dict):
        return {**cost, "t": measured, "mem": mebibytes}
    return dataclasses.replace(cost, execution_time=measured, memory=mebibytes)


def junit_folder(gallery_conf: dict[str, Any], outdir: str | os.PathLike[str]) -> Path | None:
    """The folder of the JUnit XML sphinx-gallery writes as the build ends (its ``junit``
    setting, a path relative to the output folder, often outside it), or ``None`` when it
    writes none.

    >>> junit_folder({"junit": "../test-results/sphinx-gallery/junit.xml"}, "/b/html")
    PosixPath('/b/html/../test-results/sphinx-gallery')
    >>> junit_folder({}, "/b/html") is None
    True
    """
    junit = gallery_conf.get("junit")
    if not isinstance(junit, str) or not junit:
        return None
    return (Path(outdir) / junit).parent


def page_file(target_file: Path | str) -> Path:
    """The reST page sphinx-gallery writes for an example: ``<dir>/<stem>.rst``."""
    return Path(target_file).with_suffix(".rst")


def image_folders(target_file: Path | str) -> list[Path]:
    """The folders of an example's images and thumbnail: ``<dir>/images``, ``.../thumb``."""
    images = Path(target_file).parent / "images"
    return [images, images / "thumb"]


def image_owner(name: str, stems: Iterable[str]) -> str | None:
    """The stem, among the examples' ``stems`` of one gallery folder, whose image (or
    thumbnail) file ``name`` is: sphinx-gallery names them ``sphx_glr_<stem>_...``
    (``_001.png``, ``_001_2_00x.png`` for ``image_srcset``, ``_thumb.png``), so of two
    stems that both prefix the name (``plot_x`` and ``plot_x_100``) the longer one owns it.

    >>> image_owner("sphx_glr_plot_x_100_001.png", ["plot_x", "plot_x_100"])
    'plot_x_100'
    >>> image_owner("sphx_glr_plot_y_001.png", ["plot_x", "plot_x_100"]) is None
    True
    """
    owners = [stem for stem in stems if name.startswith(image_prefix(stem))]
    return max(owners, key=len) if owners else None


def image_prefix(stem: str) -> str:
    """How the name of every image and thumbnail of the example ``stem`` starts:
    ``sphx_glr_<stem>_`` (a file without it is never the example's, see
    :func:`image_owner`)."""
    return f"sphx_glr_{stem}_"


# What follows ``<prefix>thumb.`` in a thumbnail's name: its extension.
_EXTENSION = re.compile(r"\w+")


def thumbnail_files(target_file: Path | str) -> list[Path]:
    """An example's thumbnail as it is on disk (``images/thumb/sphx_glr_<stem>_thumb.*``):
    sphinx-gallery leaves one that exists alone when the example made no image, so it is
    the example's output whether or not this run wrote it."""
    target = Path(target_file)
    # A plain prefix, not a pattern made for the stem: asked once per example, a new
    # pattern would be compiled each time.
    prefix = f"{image_prefix(target.stem)}thumb."

    def is_thumbnail(name: str) -> bool:
        return name.startswith(prefix) and _EXTENSION.fullmatch(name, len(prefix)) is not None

    return _matching(image_folders(target)[1], is_thumbnail)


def written_after_the_gallery(example_file: Path | str) -> list[Path]:
    """The files an example's page names that sphinx-gallery writes itself on every build,
    once every example of the gallery ran or was skipped: its recommender's
    ``<dir>/<stem>.recommendations`` (``example_file``: the copy of the example or its
    page, which share folder and stem). Made from all the gallery's sources, never by the
    example's run: not one of its outputs, and not there yet (in a fresh tree) when the
    plugin restores the example's outputs, before sphinx-gallery runs.

    >>> [path.as_posix() for path in written_after_the_gallery("auto_examples/plot_a.py")]
    ['auto_examples/plot_a.recommendations']
    """
    return [Path(example_file).with_suffix(".recommendations")]


def final_name(path: str) -> str:
    """The file a file sphinx-gallery writes stands for: it writes ``<file>.new`` (a
    thumbnail as ``<name>.new.<ext>``) and moves it over ``<file>`` when they differ,
    else deletes it and keeps ``<file>``. Any other path is itself."""
    if path.endswith(".new"):
        return path[: -len(".new")]
    head, dot, ext = path.rpartition(".")
    if dot and head.endswith(".new") and "/" not in ext and os.sep not in ext:
        return f"{head[: -len('.new')]}.{ext}"
    return path


def _matching(folder: Path, wanted: Callable[[str], object]) -> list[Path]:
    """The files of ``folder`` whose names are ``wanted``, sorted."""
    if not folder.is_dir():
        return []
    # The name first, before any path is made: a folder of every example's images, asked
    # once per example.
    with os.scandir(folder) as entries:
        names = sorted(e.name for e in entries if wanted(e.name) and e.is_file())
    return [folder / name for name in names]


def run_order(src_files: Iterable[str], gallery_conf: dict[str, Any]) -> list[str]:
    """``src_files`` in the order sphinx-gallery executes them in a serial build: folder by
    folder (in the order given), each sorted by its ``within_subsection_order`` key.

    Example: sphinx-gallery's default order runs the example with fewer lines of code first.

    >>> import tempfile
    >>> folder = tempfile.TemporaryDirectory()
    >>> long, short = Path(folder.name, "plot_long.py"), Path(folder.name, "plot_short.py")
    >>> _ = long.write_text("'''Long\\n====\\n'''\\n" + "x = 1\\n" * 20)
    >>> _ = short.write_text("'''Short\\n=====\\n'''\\nx = 1\\n")
    >>> conf = {"within_subsection_order": "NumberOfCodeLinesSortKey"}
    >>> [Path(name).name for name in run_order([str(long), str(short)], conf)]
    ['plot_short.py', 'plot_long.py']
    >>> folder.cleanup()
    """
    folders: dict[str, list[str]] = {}
    for src_file in src_files:
        folders.setdefault(os.path.dirname(src_file), []).append(src_file)
    ordered: list[str] = []
    for folder, files in folders.items():
        # Examples the key ranks equal run in the order the folder lists them, as
        # sphinx-gallery walks it.
        try:
            listed = {name: index for index, name in enumerate(os.listdir(folder))}
        except OSError:
            listed = {}
        names = sorted((os.path.basename(f) for f in files), key=lambda n: listed.get(n, -1))
        # A sort key sphinx-gallery itself refuses: keep the listed order.
        with contextlib.suppress(Exception):
            names = sorted(names, key=_sort_key(gallery_conf, folder))
        ordered += [os.path.join(folder, name) for name in names]
    return ordered


# The measurements sphinx-gallery writes into an example's page (``TIMING_CONTENT``, and
# the memory line with ``show_memory``). Patterns, compiled by ``re`` on first use: only
# the example cache masks pages, and most builds never do.
_MEASUREMENTS = (
    (r"(\*\*Total running time of the script:\*\* \()[^)]*(\))", r"\1<time>\2"),
    (r"(\*\*Estimated memory usage:\*\*)[^\n]*", r"\1 <memory>"),
)


def mask_measurements(page_text: str) -> str:
    """An example's page text with its measured time and memory replaced by placeholders.

    >>> mask_measurements("**Total running time of the script:** (0 minutes 1.250 seconds)")
    '**Total running time of the script:** (<time>)'
    """
    for pattern, replacement in _MEASUREMENTS:
        page_text = re.sub(pattern, replacement, page_text)
    return page_text


def run_again(src_file: str, target_file: str, gallery_conf: dict[str, Any]) -> bool:
    """Execute an example once more, in this process, as sphinx-gallery's build executes
    it (its resetters, scrapers, page and notebook; its ``.md5`` removed first, so it
    runs). Whether it passed; an error is its failure, never the build's: the lists of
    failing and passing examples sphinx-gallery reports at the end are left as they were.
    """
    forget_cached_run(Path(target_file))
    lists = [
        gallery_conf[key] for key in ("failing_examples", "passing_examples", "stale_examples")
    ]
    kept = [value.copy() for value in lists]
    try:
        out_vars = gen_rst.generate_file_rst(
            os.path.basename(src_file),
            os.path.dirname(target_file),
            os.path.dirname(src_file),
            gallery_conf,
        )[3]
    except Exception:
        return False
    finally:
        for value, before in zip(lists, kept, strict=True):
            value.clear()
            if isinstance(value, dict):
                value.update(before)
            else:
                value.extend(before)
    return bool(out_vars.get("passing"))


def _sort_key(gallery_conf: dict[str, Any], folder: str) -> Callable[[str], Any]:
    """The ``within_subsection_order`` key sphinx-gallery sorts ``folder``'s files with."""
    if _get_class is not None:  # before sphinx-gallery 0.19: a class, made for the folder
        return _get_class(gallery_conf, "within_subsection_order")(folder)
    return _get_callables(gallery_conf, "within_subsection_order", folder)[0]


def failure_summary(gallery_conf: dict[str, Any]) -> str:
    """What sphinx-gallery's summary of the build's failing examples says, in one line:
    the examples that raised unexpectedly, each with its exception's last line (its whole
    traceback was logged as it failed), and those expected to fail that did not."""
    failed = failures(gallery_conf)
    src_dir = gallery_conf.get("src_dir", "")
    unexpected = sorted(p for p in failed if not is_expected_failure(p, gallery_conf))
    parts = []
    if unexpected:
        named = [f"{os.path.relpath(p, src_dir)} ({_last_line(failed[p])})" for p in unexpected]
        parts.append(failed_examples_text(named))
    expected = [
        _expected(gallery_conf, p) for p in gallery_conf.get("expected_failing_examples", ())
    ]
    ran = {_resolved(p) for p in failed}
    pattern = gallery_conf.get("filename_pattern", "")
    passing = sorted(p for p in expected if p not in ran and re.search(pattern, p))
    if passing:
        parts.append(expected_passed_text([os.path.relpath(p, src_dir) for p in passing]))
    return SG_FAILED_PREFIX + ("; ".join(parts) or "examples failed")


def _last_line(traceback: str) -> str:
    lines = [line.strip() for line in str(traceback).strip().splitlines() if line.strip()]
    return lines[-1] if lines else "it raised"


def summary_in_one_line(app: Any, stop: Callable[[str], BaseException]) -> bool:
    """Have sphinx-gallery's ``build-finished`` summary of failing examples, which ends the
    build with every traceback again in an ``ExtensionError`` (Sphinx 9 prints it as a
    crash report, "please open an issue"), raise ``stop(failure_summary(...))`` instead;
    whether its handler was found among the build's listeners."""
    summarize = _summarize_failing_examples

    def one_line(app: Any, exception: BaseException | None) -> None:
        try:
            summarize(app, exception)
        except ExtensionError:
            raise stop(failure_summary(app.config.sphinx_gallery_conf)) from None

    return _replace_handler(app, "build-finished", summarize, one_line)


def worker_died(exception: BaseException) -> bool:
    """Whether ``exception`` is the pool of ``parallel`` workers breaking because one of
    them ended while it ran an example (joblib's ``TerminatedWorkerError`` is one)."""
    return isinstance(exception, BrokenExecutor)


def abort_in_one_line(app: Any, stop: Callable[[BaseException], BaseException]) -> bool:
    """Raise ``stop(exception)`` where sphinx-gallery lets an exception out of its
    ``builder-inited`` handler, which Sphinx prints as a crash report: with
    ``abort_on_example_error``, the first failing example's (its traceback already
    logged), and with ``parallel``, the pool's when a worker ended (:func:`worker_died`).
    Stops of Sphinx's or docsaccel's own (a ``SphinxError``, an interrupt) pass as they
    are."""
    generate = _generate_gallery_rst

    # Named as sphinx-gallery's handler, whose module says whose error it is.
    @functools.wraps(generate)
    def one_line(app: Any) -> None:
        try:
            generate(app)
        except (SphinxError, bdb.BdbQuit):
            raise
        except Exception as exc:
            aborted = app.config.sphinx_gallery_conf.get("abort_on_example_error")
            if not (aborted or worker_died(exc)):
                raise
            raise stop(exc) from None

    return _replace_handler(app, "builder-inited", generate, one_line)


def _replace_handler(app: Any, event: str, handler: Any, replacement: Any) -> bool:
    """``replacement`` where ``handler`` is connected to ``event``, at its priority, until
    the event has been emitted (:func:`docsaccel.sphinx_events.wrap_handlers`)."""

    def wrap(connected: Any) -> Callable[[Patch], Any] | None:
        return (lambda applied: replacement) if connected is handler else None

    return bool(wrap_handlers(app, event, wrap))
