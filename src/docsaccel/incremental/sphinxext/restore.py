"""``config-inited``: decide which Sphinx state this build starts from, and put it in place.

The design, in full: the caching guide's *Design* section.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import docutils
import sphinx
from sphinx.application import ENV_PICKLE_FILENAME, Sphinx
from sphinx.util import logging

from docsaccel import sg_compat
from docsaccel.cache.context import env_values
from docsaccel.cache.deps import Project, project_roots, providers
from docsaccel.cache.early import carry_early_reads
from docsaccel.cache.fingerprint import file_digest
from docsaccel.cache.recorder import Recorder
from docsaccel.cache.shown_paths import path_forms, shows
from docsaccel.contract import InputError, read_json
from docsaccel.counts import counted
from docsaccel.incremental.last_build import OTHER_VERSION, LastBuild
from docsaccel.incremental.pages import Place
from docsaccel.incremental.relocate import relocated
from docsaccel.incremental.sphinxext import output_record
from docsaccel.incremental.sphinxext.conf_facts import (
    COMPARED,
    conf_code,
    conf_data,
    docutils_conf,
    helper_code,
    overrides,
    sphinx_libraries,
)
from docsaccel.incremental.sphinxext.state_build import (
    MARKER,
    MARKER_FORMAT,
    IncrementalBuild,
    Restored,
)
from docsaccel.incremental.sphinxext.untrusted_output import (
    FinishedBuild,
    keep_only_restored,
    own_folders,
)
from docsaccel.incremental.state_context import context_key, describe_difference, state_context
from docsaccel.incremental.state_store import StateError, StateStore, remove_partials
from docsaccel.settings import given_as
from docsaccel.sphinx_events import connected_handlers

__all__ = [
    "CHECKED_SPHINX",
    "CHECKED_SPHINX_GALLERY_FOR_STATE",
    "PAGE_BUILDERS",
    "build_folders",
    "on_config_inited",
]

logger = logging.getLogger(__name__)

#: The Sphinx release series the state is checked with: its tests, which compare every
#: rule with a clean build, pass on each (the nox ``compat`` sessions run them). With
#: another, the state is off: Sphinx's environment, its search index and its domains'
#: containers change between releases in ways those rules depend on
#: (:mod:`.sphinx_compat` holds the differences met so far).
CHECKED_SPHINX = ("7.4", "8.2", "9.0")
#: The sphinx-gallery series the state is checked with. Before 0.22 sphinx-gallery writes
#: an example's "examples using" entries only when it runs it, so the generated files the
#: API pages read change with which examples ran; the state's tests fail there.
CHECKED_SPHINX_GALLERY_FOR_STATE = ("0.22",)
#: Builders whose pages are restored and written by content: one page per document, each
#: a function of the environment (see :mod:`.writing`).
PAGE_BUILDERS = frozenset({"html", "dirhtml"})


def build_folders(srcdir: Path, outdir: Path, doctreedir: Path) -> list[str]:
    """The folders holding this build's output beside the HTML and doctree folders: the
    one holding both (``_build`` for ``_build/html`` and ``_build/doctrees``), and the
    doctrees' parent, where extensions write what they make for a page (matplotlib's
    plot_directive, its figures). What a build writes there is its output, never an input
    of a page (a fresh checkout has none of it). A folder that holds the sources is none.
    """
    outdir, doctreedir = Path(os.path.abspath(outdir)), Path(os.path.abspath(doctreedir))
    sources = Path(os.path.abspath(srcdir))
    found = []
    for folder in (Path(os.path.commonpath([outdir, doctreedir])), doctreedir.parent):
        if folder != sources and folder not in sources.parents and str(folder) not in found:
            found.append(str(folder))
    return found


def _sphinx_arguments() -> dict[str, Any] | None:
    """The arguments ``Sphinx.__init__`` was called with (the builder's name is known to no
    object before the builder exists, and ``config-inited`` comes before it)."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code is Sphinx.__init__.__code__:
            return frame.f_locals
        frame = frame.f_back
    return None


def _files_digest(path: str, package: bool) -> str:
    """A digest of a module's file, or of every Python file of its package's folder, and
    of the files their code read when imported (a registry a local extension loads)."""
    folder = os.path.dirname(path)
    files = (
        sorted(str(p) for p in Path(folder).rglob("*.py") if "__pycache__" not in p.parts)
        if package
        else [path]
    )
    carried = Recorder.get().carried.reads()
    read = sorted({r for name in files for r in carried.get(os.path.normpath(name), ())})
    digests = []
    for name in files + read:
        with contextlib.suppress(OSError):
            digests.append(file_digest(name))
    return context_key({"files": digests})


def _extension_version(extension: Any, roots: tuple[str, ...]) -> str:
    """An extension's declared version, and what says when its code changed without it:
    the digest of its files when they are the project's own (under the roots), installed
    in editable mode or by no distribution (a folder on ``sys.path``); else the versions
    of the distributions that install it (an extension may declare no version, or keep
    the same one across releases)."""
    version = str(extension.version)
    module = sys.modules.get(extension.name)
    path = getattr(module, "__file__", None)
    if not isinstance(path, str):
        return version
    path = os.path.abspath(path)
    dists, editable = providers(extension.name.partition(".")[0])
    own = any(path.startswith(os.path.join(r, "")) for r in roots)
    if own or editable or not dists:
        return f"{version} ({_files_digest(path, hasattr(module, '__path__'))})"
    return f"{version} ({', '.join(f'{name} {v}' for name, v in dists.items())})"


#: The name the context gives ``conf.py`` (what it does beyond its settings,
#: :mod:`.conf_facts`): Sphinx runs it, and its ``setup()``, as no extension.
CONF_PY = "conf.py"


def _conf_version(
    config: Any,
    confdir: str,
    root: str,
    builder: str,
    counted: Iterable[str],
    handlers: Iterable[Any],
) -> str:
    kinds = COMPARED if builder in PAGE_BUILDERS else COMPARED - {"html"}
    compared = {item.name for item in config if item.rebuild in kinds}
    conf = os.path.join(confdir, "conf.py")
    code = conf_code(conf, compared)
    given = overrides(config, compared, root)
    raw = getattr(config, "_raw_config", None) or {}
    named = [value for value in raw.values() if callable(value)]
    helpers = helper_code(confdir, root, {conf, *counted}, [*named, *handlers])
    return (
        f"code {code}, data {conf_data(config, root)}, command line {given}, helpers"
        f" {helpers}, docutils.conf {docutils_conf(confdir)}"
    )


def _unchecked_releases() -> list[str]:
    """Why the installed Sphinx and sphinx-gallery are not releases the state was checked
    with, one reason each (every one at once: a project upgrading one of the two learns
    then whether the other must follow); ``[]`` when both are."""
    reasons = []
    if "{}.{}".format(*sphinx.version_info[:2]) not in CHECKED_SPHINX:
        checked = ", ".join(CHECKED_SPHINX)
        reasons.append(f"checked with Sphinx {checked}, this is Sphinx {sphinx.__version__}")
    gallery_series = sg_compat.series()
    if gallery_series not in CHECKED_SPHINX_GALLERY_FOR_STATE:
        checked = ", ".join(CHECKED_SPHINX_GALLERY_FOR_STATE)
        reasons.append(
            f"checked with sphinx-gallery {checked}, this is sphinx-gallery {gallery_series}"
        )
    return reasons


def on_config_inited(app: Sphinx, config: Any) -> None:
    gallery = getattr(app, "_docsaccel_gallery", None)
    settings = getattr(gallery, "settings", None)
    if settings is None or settings.cache is None or settings.shard_examples is not None:
        return
    if not settings.cache_sphinx:
        logger.info(f"docsaccel: Sphinx state off ({given_as('cache_sphinx', config=config)})")
        return
    unchecked = _unchecked_releases()
    for reason in unchecked:
        logger.info(
            f"docsaccel: Sphinx state off: {reason}; Sphinx decides what to read again, as "
            "without docsaccel (use -E or a fresh output folder for a clean build)"
        )
    if unchecked:
        return
    arguments = _sphinx_arguments()
    if arguments is None or not isinstance(arguments.get("buildername"), str):
        logger.info("docsaccel: Sphinx state off: the builder's name is unknown")
        return
    builder = arguments["buildername"]
    root, roots, note = project_roots(app.confdir, settings.cache_roots)
    if note is not None:
        logger.info(f"docsaccel: Sphinx state: {note}")
    doctreedir, outdir = Path(app.doctreedir), Path(app.outdir)
    excluded = [str(outdir), str(doctreedir), str(Path(settings.cache).resolve())]
    excluded += build_folders(Path(app.srcdir), outdir, doctreedir)
    project = Project(root=root, roots=roots, excluded=tuple(map(os.path.normpath, excluded)))
    # Before the context: what the project's extensions read when imported is part of it.
    unknown = carry_early_reads(project, str(app.confdir), app.tags)
    if unknown is not None:
        logger.info(f"docsaccel: {unknown}")
    context = state_context(
        project=Place(root).key(app.srcdir),
        builder=builder,
        sphinx=sphinx.__version__,
        docutils=docutils.__version__,
        extensions=_extensions(app, config, root, roots, builder),
        libraries=sphinx_libraries(),
        theme=str(getattr(config, "html_theme", None)),
        tags=list(app.tags),
        env=env_values(settings.cache_env),
    )
    build = IncrementalBuild(
        restored=Restored(store=StateStore(settings.cache), place=Place(root)),
        project=project,
        context=context,
        key=context_key(context),
        builder=builder,
        pages=builder in PAGE_BUILDERS,
        doctreedir=doctreedir,
        outdir=outdir,
    )
    app._docsaccel_incremental = build  # type: ignore[attr-defined]
    _start(build, fresh=bool(arguments.get("freshenv")))
    if build.restored.origin:
        logger.info(f"docsaccel: Sphinx state: {_origin_text(build)}")
    else:
        logger.info(
            f"docsaccel: Sphinx state: none ({build.restored.full_reason}): every document is read"
        )


def _extensions(
    app: Sphinx, config: Any, root: str, roots: tuple[str, ...], builder: str
) -> dict[str, str]:
    found = {name: _extension_version(e, roots) for name, e in app.extensions.items()}
    own = [getattr(sys.modules.get(name), "__file__", None) for name in app.extensions]
    counted = [p for p in own if isinstance(p, str)]
    found[CONF_PY] = _conf_version(
        config, str(app.confdir), root, builder, counted, connected_handlers(app)
    )
    return found


def _origin_text(build: IncrementalBuild) -> str:
    if build.restored.origin == "local":
        return f"the last build in {build.doctreedir}"
    return f"restored from {build.restored.store.folder} ({len(build.restored.files)} files)"


def _start(build: IncrementalBuild, fresh: bool) -> None:
    marker_path = build.doctreedir / MARKER
    marker = _read_marker(marker_path)
    finished = (
        output_record.last_finished(build.outdir)
        or _finished_build(marker_path, marker)
        or FinishedBuild.none()
    )
    build.restored.finished = finished
    # From now on the folders hold an unfinished build until build-finished says otherwise.
    with contextlib.suppress(FileNotFoundError):
        marker_path.unlink()
    output_record.started(build.outdir, finished, build.restored.started_ns)
    env_pickle = build.doctreedir / ENV_PICKLE_FILENAME
    local = _local_record(marker, build.key) if env_pickle.is_file() else None
    if local is None:
        # Not what a finished build left: a restore killed there left its partial copies.
        remove_partials([build.doctreedir, build.outdir])
    if fresh:
        build.restored.full_reason = "a fresh environment was asked for (-E)"
        return
    if local is not None:
        build.restored.origin, build.restored.previous = "local", local
        return
    if env_pickle.exists():
        # Not left by a finished build of this context: its outdated documents cannot be
        # told by content, and its doctrees may be older than its environment.
        env_pickle.unlink()
    _restore(build)
    if build.pages:
        # Nor are its pages: a build that did not finish wrote some no record names.
        removed = keep_only_restored(
            build.outdir,
            build.restored.files,
            own_folders(build.outdir, build.doctreedir),
            [*build.project.roots, build.restored.place.root, str(build.restored.store.folder)],
            finished,
        )
        if removed:
            logger.info(
                f"docsaccel: {counted(removed, 'file')} of the output folder no finished "
                "build of this state left there deleted"
            )


def _restore(build: IncrementalBuild) -> None:
    """Restore the stored state of this context into the folders, if there is one."""
    try:
        state = build.restored.store.load(build.key)
    except StateError as exc:
        build.restored.full_reason = _why_none(build, exc)
        return
    previous = LastBuild.from_json(state.meta.get("build"))
    if previous is None:
        # Made by a docsaccel whose record of a build this one cannot read.
        build.restored.full_reason = OTHER_VERSION
        return
    folders = {"doctrees": build.doctreedir, "output": build.outdir}
    try:
        build.restored.files = build.restored.store.restore(state, folders)
        if state.meta["root"] != build.restored.place.root:
            build.restored.moved_texts = _relocate_folder(
                build.doctreedir, state.meta["root"], build.restored.place.root
            )
            build.restored.moved_from = str(state.meta["root"])
            build.restored.moved_pages = _pages_showing(
                build.outdir, state.meta["root"], previous.outputs
            )
    except (StateError, OSError, pickle.UnpicklingError, EOFError, AttributeError) as exc:
        _forget_restored(build)
        logger.warning(
            f"docsaccel: the Sphinx state {state.path} is unusable ({exc}); every document is read",
            type="docsaccel",
            subtype="cache",
        )
        build.restored.full_reason = "the stored state is unusable"
        return
    build.restored.origin, build.restored.previous = "cache", previous


def _forget_restored(build: IncrementalBuild) -> None:
    for path in build.restored.files:
        with contextlib.suppress(OSError):
            os.unlink(path)
    build.restored.files = {}
    with contextlib.suppress(FileNotFoundError):
        (build.doctreedir / ENV_PICKLE_FILENAME).unlink()


def _why_none(build: IncrementalBuild, error: StateError) -> str:
    if "no such state" not in str(error):
        logger.warning(
            f"docsaccel: {error}; every document is read", type="docsaccel", subtype="cache"
        )
        return "the stored state is unusable"
    others = [
        meta
        for _, meta in build.restored.store.all_states()
        if meta is not None and meta["context"].get("project") == build.context["project"]
    ]
    same_builder = [m for m in others if m["context"].get("builder") == build.builder]
    if not (same_builder or others):
        return "no stored state of this project yet"
    newest = max(same_builder or others, key=lambda m: m.get("made_at", 0))
    return (
        f"no stored state of this context: {describe_difference(newest['context'], build.context)}"
    )


def _local_record(marker: dict[str, Any] | None, key: str) -> LastBuild | None:
    """The record a finished build of this context left in these folders (``None``: none,
    another context's, or one of another version: the folders are not trusted)."""
    if marker is None or marker.get("key") != key:
        return None
    return LastBuild.from_json(marker.get("facts"))


def _finished_build(path: Path, marker: dict[str, Any] | None) -> FinishedBuild | None:
    """The build that left ``marker`` (read from ``path``) in folders whose output folder
    holds no record (:mod:`.output_record`: one written before builds left it), told by
    the marker's time; ``None`` when none finished (one killed, or never built)."""
    if marker is None:
        return None
    try:
        ended_ns = path.stat().st_mtime_ns
    except OSError:
        return None
    return FinishedBuild.of(ended_ns, LastBuild.from_json(marker.get("facts")))


def _read_marker(path: Path) -> dict[str, Any] | None:
    try:
        marker = read_json(path, MARKER_FORMAT.what)
        MARKER_FORMAT.check(marker, path)
    except InputError:
        return None  # none, or not one this docsaccel wrote: the folders are not trusted
    return marker


def _pages_showing(outdir: Path, old: str, outputs: dict[str, list[str]]) -> set[str]:
    """The documents whose restored page shows a path under ``old``: made when the page
    was written (a ``todolist`` names each todo's file), it changes only when the page is
    written again."""
    forms = path_forms(old)
    found = set()
    for docname, files in outputs.items():
        with contextlib.suppress(OSError, IndexError):
            if shows((outdir / files[0]).read_bytes(), forms):
                found.add(docname)
    return found


def _relocate_folder(doctreedir: Path, old: str, new: str) -> set[str]:
    """Move the paths of every pickle in the doctree folder from ``old`` to ``new``;
    return the documents whose text held a path under ``old``: a text that is such a path,
    or one that still names ``old`` once the paths are moved (``'/old/repo/src/pkg'``
    quoted in a value or a signature, which only reading the document again tells)."""
    texts = set()
    # The old root itself, not a sibling whose name it begins (``/ci/pp`` in ``/ci/pp_x``,
    # which the new root may be).
    shown = re.compile(re.escape(old.encode("utf-8")) + rb"(?![\w.-])")
    for path in [doctreedir / ENV_PICKLE_FILENAME, *sorted(doctreedir.rglob("*.doctree"))]:
        if not path.is_file():
            continue
        with open(path, "rb") as stream:
            value = pickle.load(stream)
        value, moved = relocated(value, old, new)
        data = pickle.dumps(value, pickle.HIGHEST_PROTOCOL)
        if path.suffix == ".doctree" and (moved or shown.search(data)):
            texts.add(path.relative_to(doctreedir).with_suffix("").as_posix())
        partial = path.with_name(f".{path.name}.relocated")
        with open(partial, "wb") as stream:
            stream.write(data)
        os.replace(partial, path)
    return texts
