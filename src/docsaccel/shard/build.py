"""Build a sharded gallery: execute one shard, keep its outputs, merge the shards into a site.

The design, in full: the sharding guide's *Design* section.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import stat
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from docsaccel import layout, sg_compat
from docsaccel.child_python import python_command
from docsaccel.contract import (
    BUDGETS_FAILED,
    BUILD_FAILURES,
    EXECUTED,
    EXPECTED_FAILURE,
    FAILED,
    NOT_EXECUTED,
    SHARD_RUNS,
    InputError,
    build_failures,
    conf_fingerprint,
    is_build_failure,
    merged_budgets_failed,
    merged_sphinx_failed,
    read_json,
    stop_signal,
    unfinished_why,
)
from docsaccel.formats import write_json
from docsaccel.records import read_records, record_file, run_outputs, write_record
from docsaccel.schema import load_report, validate_record, validate_report
from docsaccel.settings import (
    DEFAULT_CACHE_NAME,
    ClearOf,
    SettingError,
    env_name,
    not_a_folder,
    overlap,
    read_settings,
)
from docsaccel.shard import sphinx_runs
from docsaccel.shard.artifact import MANIFEST, MANIFEST_FORMAT
from docsaccel.shard.merge_plan import PLAN_KEY, check_planned, plan_entry
from docsaccel.shard.plan import Plan, ShardError, build_gallery_plan, check_index
from docsaccel.shard.site_pages import ShowUnfinished, SitePages

if TYPE_CHECKING:
    from collections.abc import Callable

    from docsaccel.report.model import Timing

    #: Begins the record of what builds generate in a source folder, for a merge (what
    #: earlier builds generated removed, what this process creates noted; ``finish()``
    #: ends it): ``(cache folder, source folder, output folders in it, the merge's output
    #: folder)``. The Sphinx state's
    #: (:func:`docsaccel.incremental.sphinxext.sources.merge_watch`), given by the caller:
    #: that layer is above this one.
    WatchSources = Callable[[Path, Path, list[Path], Path], Any]

__all__ = [
    "MANIFEST",
    "BuildSaidError",
    "DocsProject",
    "ShardWorkLock",
    "check_artifact_place",
    "check_artifact_target",
    "check_artifacts",
    "check_folder_of_ours",
    "check_output_folder",
    "check_site_folder",
    "collect_shard",
    "copy_project",
    "find_manifests",
    "holding_shard_work",
    "is_build_output",
    "is_site_folder",
    "lock_galleries",
    "merge_artifacts",
    "own_build_folder",
    "plan_project",
    "read_artifacts",
    "read_conf",
    "read_gallery_conf",
    "read_project",
    "run_local",
    "run_merge",
    "run_shard",
    "run_shard_build",
    "run_sphinx",
]

# Never copied into a shard's workspace: version control, environments, caches, builds
# (the example cache and CI's saved state included: builds reach them by absolute path).
_NOT_COPIED = {".git", ".venv", ".nox", ".tox", "__pycache__", ".pytest_cache", ".ruff_cache"}
_NOT_COPIED |= {DEFAULT_CACHE_NAME, ".docsaccel-ci"}
# Sphinx's build folder by convention (sphinx-quickstart's, excluded from the documents by
# its conf.py), wherever it is: a build reads nothing from it.
_NOT_COPIED |= {"_build"}


@dataclass(frozen=True)
class DocsProject:
    """A Sphinx project with sphinx-gallery, as its ``conf.py`` describes it.

    ``root`` is the folder copied into each shard's workspace (the repository: ``conf.py``
    may refer to files beside ``docs``); ``galleries`` maps each gallery id (examples
    folder relative to the Sphinx source folder, ``docs``, which holds ``conf.py``) to its
    output folder relative to ``docs``.
    """

    root: Path
    docs: Path
    galleries: Mapping[str, str]
    budgets: Path | None
    #: ``sphinx_gallery_conf`` with sphinx-gallery's defaults filled in.
    gallery_conf: Mapping[str, Any] = field(default_factory=dict)
    #: The project's example cache folder (absolute; ``None``: off): every shard's build
    #: uses it, not the copy's, so shards and serial builds reuse each other's entries.
    cache: Path | None = None
    #: ``docsaccel_report_page`` (``None``: off) and ``docsaccel_fast``, for the report
    #: pages a sharded build shows before its merge build writes them.
    report_page: str | None = None
    fast: bool = False
    #: ``(setting, what Sphinx does, folder)`` of the folders Sphinx copies into the site
    #: or reads templates from (:func:`docsaccel.layout.conf_folders`), which a site
    #: folder must stay clear of.
    conf_folders: tuple[tuple[str, str, Path], ...] = ()

    def moved_to(self, root: Path) -> DocsProject:
        """The same project, in its copy at ``root``."""
        docs = root / self.docs.relative_to(self.root)
        return dataclasses.replace(self, root=root, docs=docs)

    def example_names(self, folder: Path) -> list[str]:
        """The examples of a gallery folder as the build sees them (paths inside it)."""
        files = sg_compat.example_files(Path(folder), dict(self.gallery_conf))
        return [path.relative_to(folder).as_posix() for path in files]

    def example_ids(self) -> list[str]:
        """The ids of every example of the project's galleries, as a plan names them."""
        return [
            f"{gallery}/{name}"
            for gallery in self.galleries
            for name in self.example_names(self.docs / gallery)
        ]

    def target_file(self, example_id: str) -> Path:
        """Where sphinx-gallery copies the example next to its page."""
        for gallery, output in self.galleries.items():
            if example_id.startswith(f"{gallery}/"):
                return self.docs / output / example_id[len(gallery) + 1 :]
        raise ShardError(f"example {example_id!r} is in none of the galleries of {self.docs}")


def read_conf(docs: Path) -> dict[str, Any]:
    """The names ``<docs>/conf.py`` defines, as Sphinx evaluates it.

    Raises :class:`ShardError` when there is no ``conf.py`` or it does not run (a syntax
    error, an exception), with the last line of Sphinx's message.
    """
    import sphinx
    from sphinx.config import eval_config_file
    from sphinx.errors import ConfigError
    from sphinx.util.tags import Tags

    conf_file = Path(docs) / "conf.py"
    if not conf_file.is_file():
        raise ShardError(f"{conf_file}: no such file; --docs must name the Sphinx conf folder")
    # Absolute, as Sphinx gives it: eval_config_file changes into the conf folder before
    # it opens the file, so a relative path would name a file that is not there.
    absolute = conf_file.resolve()
    try:
        # Before Sphinx 8.2 it takes a str only, from Sphinx 9 a Path only.
        given = absolute if sphinx.version_info >= (8, 2) else str(absolute)
        return eval_config_file(given, Tags())
    except ConfigError as exc:
        # Sphinx's message may hold a traceback of conf.py: its last line says what failed.
        lines = [line for line in str(exc).splitlines() if line.strip()]
        raise ShardError(f"{conf_file}: cannot run the Sphinx config: {lines[-1]}") from None


def read_gallery_conf(docs: str | Path) -> dict[str, Any]:
    """``sphinx_gallery_conf`` of ``<docs>/conf.py`` with sphinx-gallery's defaults filled
    in: which files of its galleries are examples. Raises :class:`ShardError` as
    :func:`read_conf` does, or when ``conf.py`` defines no such dict."""
    return _gallery_conf(read_conf(Path(docs)), Path(docs) / "conf.py")


def _gallery_conf(namespace: Mapping[str, Any], conf_file: Path) -> dict[str, Any]:
    gallery_conf = namespace.get("sphinx_gallery_conf")
    if not isinstance(gallery_conf, dict):
        raise ShardError(f"{conf_file}: sphinx_gallery_conf is missing or not a dict")
    return sg_compat.with_defaults(gallery_conf)


def read_project(docs: str | Path, root: str | Path | None = None) -> DocsProject:
    """Read ``<docs>/conf.py``: its galleries and its ``docsaccel_budgets`` file.

    ``root`` (default: the current folder) must contain ``docs``. A ``conf.py`` that does
    not run (a syntax error, an exception) raises :class:`ShardError` with Sphinx's message.
    """
    docs, root = Path(docs).resolve(), Path(root or os.getcwd()).resolve()
    for option, folder in (("--docs", docs), ("--root", root)):
        # Said first: a folder that is not there is not "outside the project root".
        problem = not_a_folder(folder)
        if problem is not None:
            raise ShardError(f"{option} {problem}")
    if not docs.is_relative_to(root):
        raise ShardError(f"the docs folder {docs} is not inside the project root {root}")
    conf_file = docs / "conf.py"
    namespace = read_conf(docs)
    gallery_conf = _gallery_conf(namespace, conf_file)
    pairs = sg_compat.gallery_dirs(gallery_conf)
    galleries = {Path(examples).as_posix(): Path(out).as_posix() for examples, out in pairs}
    try:
        # Checked as the build checks them: a bad setting fails here, before any shard.
        settings = read_settings(SimpleNamespace(**namespace), docs)
    except SettingError as exc:
        raise ShardError(f"{conf_file}: {exc}") from None
    return DocsProject(
        root,
        docs,
        galleries,
        settings.budgets,
        gallery_conf,
        cache=settings.cache,
        report_page=settings.report_page,
        fast=settings.fast,
        conf_folders=tuple(layout.conf_folders(SimpleNamespace(**namespace), docs)),
    )


# One shard ------------------------------------------------------------------------------


def run_shard(
    project: DocsProject,
    shards: int,
    index: int,
    inputs: Sequence[str | Path],
    artifact: Path,
    work: Path | None = None,
    sphinx_args: Sequence[str] = (),
    log: Path | None = None,
    plan: Plan | None = None,
    outputs: Sequence[Path] = (),
    builder: str = sphinx_runs.DEFAULT_BUILDER,
) -> dict[str, Any]:
    """Execute shard ``index`` of ``shards`` in a workspace; return its manifest.

    ``inputs`` are earlier timings (history, report...) for the plan; ``work`` (default
    ``<docs>/_build/shard-work/<index>``) receives the copy of the project and the HTML.
    ``plan``: the plan of all shards when the caller has made it (:func:`plan_project`).
    ``outputs``: more output folders the copy of the project leaves out (the workspace
    and the artifact are left out anyway). ``builder``: the Sphinx builder of the build.
    """
    check_index(index, shards)
    check_artifact_target(Path(artifact))
    own_build_folder(project.docs)
    work = Path(work or layout.shard_dir(project.docs, "shard-work") / str(index)).resolve()
    plan = plan or plan_project(project, shards, inputs)
    examples = plan.examples_of(index)
    shutil.rmtree(work, ignore_errors=True)
    # An artifact of an earlier run must not outlive a failure of this one: a merge would
    # take it for this run's.
    shutil.rmtree(artifact, ignore_errors=True)
    copy = copy_project(project, work / "project", [work, Path(artifact), *outputs])
    selection = work / "examples.txt"
    selection.write_text("".join(f"{name}\n" for name in examples), encoding="utf-8")
    outdir = work / "html"
    env = {env_name("shard_examples"): str(selection), **_cache_env(project)}
    try:
        # Its failure ends with its first warning or error, as the merge build's does.
        warnings = work / "warnings.log"
        run_sphinx(copy.docs, outdir, env, sphinx_args, log, warnings, builder)
    except ShardError as exc:
        raise ShardError(f"shard {index}: {_failing_examples(outdir)}{exc}") from None
    planned = [shard.examples for shard in plan.shards]
    return collect_shard(
        copy, outdir, Path(artifact), index, shards, examples, origin=project.root, plan=planned
    )


def run_shard_build(
    project: DocsProject,
    shards: int,
    index: int,
    inputs: Sequence[str | Path],
    artifact: Path,
    sphinx_args: Sequence[str] = (),
    builder: str = sphinx_runs.DEFAULT_BUILDER,
) -> dict[str, Any]:
    """:func:`run_shard` as ``shard-build`` runs it, alone on this machine: the project's
    shard work folder held for the whole run (:func:`holding_shard_work`), as
    ``shard-local`` and ``shard-merge`` hold it. A shard replaces its folder in there and
    its artifact folder (by default one for every shard) whole, so a second
    ``shard-build``, or a ``shard-local`` of the project, would build from its half-made
    copy and leave an artifact mixing the two. Refused, naming the process holding the
    folder, before anything is removed or written."""
    check_index(index, shards)
    check_artifact_target(Path(artifact))
    check_artifact_place(project, Path(artifact), "--artifact")
    # First, as it reads the inputs and budgets: one refused leaves nothing behind.
    plan = plan_project(project, shards, inputs)
    own_build_folder(project.docs)  # first: the work folder is in it
    with holding_shard_work(project):
        return run_shard(
            project,
            shards,
            index,
            inputs,
            artifact,
            sphinx_args=sphinx_args,
            plan=plan,
            builder=builder,
        )


#: The manifest key naming the shard's build (its report's ``build.id``).
BUILD_ID_KEY = "build_id"

#: What an artifact folder holds (:func:`collect_shard`); one a failed collection left may
#: lack the manifest.
_ARTIFACT_ENTRIES = {MANIFEST, "files", "records"}


def check_artifact_target(artifact: Path, option: str = "--artifact") -> None:
    """Refuse, before anything is removed, an artifact folder that holds something other
    than a shard artifact (:func:`check_folder_of_ours`): a shard replaces its artifact
    folder whole, and a mistyped ``--artifact`` (the source folder, the repository) must
    not be deleted."""
    check_folder_of_ours(
        Path(artifact),
        option,
        "a shard artifact folder",
        lambda names: [name for name in names if name not in _ARTIFACT_ENTRIES],
        f"not only {', '.join(sorted(_ARTIFACT_ENTRIES))}",
        "a shard replaces that folder whole",
    )


def check_folder_of_ours(
    folder: Path,
    option: str,
    what: str,
    unexplained: Callable[[list[str]], list[str]],
    expected: str,
    why: str,
    suggested: Path | None = None,
) -> None:
    """The one rule of the folders a shard command writes over (an artifact, a site):
    missing, empty, or one that docsaccel or Sphinx wrote, whose every entry
    ``unexplained`` accounts for (it returns the entries it does not). Anything else is a
    folder of the user's files given by mistake (a package, the folder of the budgets),
    refused before anything is removed or written there, naming an entry that is not
    ours and ``why`` writing there would harm it, and the folder ``suggested``."""
    if not folder.is_dir():
        return  # missing (made later) or a file (refused by check_output_folder)
    foreign = sorted(unexplained(sorted(entry.name for entry in folder.iterdir())))
    if foreign:
        such = "" if suggested is None else f", such as {suggested}"
        raise ShardError(
            f"{option} {folder} is not {what} (it holds {foreign[0]!r}, {expected}): "
            f"{why}, so give an empty or new one{such}"
        )


def _failing_examples(outdir: Path) -> str:
    """The examples that failed a shard's build, as its report names them
    (``"tutorials/plot_a.py failed: ZeroDivisionError: ...; "``), then those its budgets
    failed it on (``"1 example stopped at its budget: tutorials/plot_b.py; "``), or
    ``""`` when the report cannot be read or names none: the build failed for another
    reason."""
    # The report views' reader: the examples a budget failed the build on are theirs.
    from docsaccel.report.inputs import load_input
    from docsaccel.report.model import budget_failures_text

    try:
        loaded = load_input(layout.report_path(outdir))
    except InputError:
        return ""
    failing = [_failing_text(timing) for timing in loaded.timings if timing.judged_failed]
    overruns = budget_failures_text(loaded.budget_failures)
    return "".join(f"{line}; " for line in [*failing, *([overruns] if overruns else [])])


def _failing_text(timing: Timing) -> str:
    """How a shard's failure names one example no gate passes: one its build stopped
    while it ran by the views' word for it, said once (its error starts with it), never
    "failed"."""
    error = unfinished_why(timing.error) if timing.unfinished and timing.error else timing.error
    return f"{timing.id} {timing.status_label}: {error or 'no error recorded'}"


def merged_report(
    reports: Sequence[dict[str, Any]], shards: int, where: Path, errors: Sequence[str] = ()
) -> dict[str, Any]:
    """One report of the shards' builds, for a sharded build that stopped before its
    merge: each example's record from the shard that executed it (else one saying it was
    not executed). It is complete when every one of the ``shards`` reports is (every
    example ran and was measured), as a serial build's report with a failing example is:
    a gate then fails it naming the examples that failed; else ``"complete": false``.

    Why each shard's build failed although its examples ran (its
    :data:`~docsaccel.contract.BUILD_FAILURES`) is kept, whichever shard said it, the
    examples the shards' budgets failed them on in one line pointing at the merged report
    (``where``), as a serial build's says them (the shards' copies go); when
    the shards failed (``errors``: why) and no report says how, the merged report says
    ``errors``: a gate never passes a sharded build that failed."""
    by_id: dict[str, dict[str, Any]] = {}
    for report in reports:
        for record in report["examples"]:
            known = by_id.get(record["id"])
            if known is None or known["status"] == NOT_EXECUTED:
                by_id[record["id"]] = record
    whole = len(reports) == shards and all(r["build"].get("complete") is True for r in reports)
    build = {**reports[0]["build"], "complete": whole}
    build["wall_seconds"] = max(float(r["build"].get("wall_seconds") or 0.0) for r in reports)
    build["shard"] = {"role": "merge", "examples": len(by_id)}
    runs = [r["build"]["id"] for r in reports if isinstance(r["build"].get("id"), str)]
    if runs and len(runs) == len(reports):
        build["shard"][SHARD_RUNS] = sorted(set(runs))
    for key in BUILD_FAILURES:
        # Every shard's, in order: equal lines of two shards may be two failures.
        said = [r["build"][key] for r in reports if isinstance(r["build"].get(key), str)]
        build.pop(key, None)
        if said and key == BUDGETS_FAILED:
            build[key] = merged_budgets_failed(said, str(where))
        elif said and key == "sphinx_failed":
            build[key] = merged_sphinx_failed(said)
        elif said:
            build[key] = "; ".join(dict.fromkeys(said))
    examples = [by_id[i] for i in sorted(by_id)]
    failed = build_failures(build) or any(is_build_failure(record) for record in examples)
    if errors and whole and not failed:
        build["sphinx_failed"] = f"a shard's build failed: {'; '.join(errors)}"
    merged = {**reports[0], "build": build, "examples": examples}
    return validate_report(merged)


def own_build_folder(docs: Path) -> None:
    """Make ``<docs>/_build``, where the shard commands keep their work by default, with a
    ``.gitignore`` of ``*`` when it is not there yet: it holds copies of the project and
    the site, which ``git status`` would list as new in a project whose own build folder
    is elsewhere (``sphinx-quickstart``'s ``build/``). One that is there stays as it is."""
    folder = Path(docs) / "_build"
    if folder.exists():
        return
    folder.mkdir(parents=True)
    (folder / ".gitignore").write_text(
        "# Made by docsaccel: sharded builds' copies of the project and their site.\n*\n",
        encoding="utf-8",
    )


def _cache_env(project: DocsProject) -> dict[str, str]:
    """The variable pointing a shard's build at the project's example cache: ``conf.py``'s
    relative path would name a folder inside the copy, thrown away with it."""
    return {} if project.cache is None else {env_name("cache"): str(project.cache)}


def plan_project(project: DocsProject, shards: int, inputs: Sequence[str | Path]) -> Plan:
    """The plan of the project's galleries over ``shards``, from the timings in ``inputs``."""
    galleries = {gallery: project.docs / gallery for gallery in project.galleries}
    return build_gallery_plan(
        inputs, shards, galleries, project.budgets, list_examples=project.example_names
    )


def copy_project(
    project: DocsProject, destination: Path, outputs: Sequence[Path] = ()
) -> DocsProject:
    """Copy the project's root to ``destination``: its sources only.

    Left out: what :data:`_NOT_COPIED` names, the gallery outputs, every build output
    folder (``<docs>/_build``, the folders in ``outputs``, any folder a Sphinx or docsaccel
    build wrote into: :func:`is_build_output`) and every file that is neither a regular
    file, a folder nor a symbolic link (a named pipe an interrupted build left, a socket,
    a device), which no build reads and ``shutil.copytree`` cannot copy. A file that cannot
    be copied raises :class:`ShardError` naming it.
    """
    skipped = {(project.docs / output).resolve() for output in project.galleries.values()}
    skipped |= {Path(path).resolve() for path in (project.docs / "_build", *outputs)}

    def ignore(folder: str, names: list[str]) -> set[str]:
        sphinx_runs.check_running()  # an interrupt stops a shard's copy, folder by folder
        here = Path(folder).resolve()
        if any(name in layout.VCS_MARKERS for name in names):
            marked.append(here.relative_to(source))
        return {
            name
            for name in names
            if name in _NOT_COPIED
            or here / name in skipped
            or _is_special(here / name)
            or is_build_output(here / name)
        }

    source, marked = Path(project.root).resolve(), []

    destination = destination.resolve()
    try:
        shutil.copytree(project.root, destination, ignore=ignore, symlinks=True)
    except shutil.Error as exc:  # one (source, destination, reason) per file not copied
        source, _, reason = exc.args[0][0]
        raise ShardError(f"cannot copy {source} into the shard's workspace: {reason}") from None
    except OSError as exc:
        raise ShardError(f"cannot copy {exc.filename} into the shard's workspace: {exc}") from None
    for folder in marked:
        _mark_root(destination / folder)
    return project.moved_to(destination)


def _mark_root(folder: Path) -> None:
    """Mark ``folder`` of the copy as a repository root, where the project has ``.git``
    (which is not copied): the copy sits inside the project's repository, whose root it
    would find otherwise, and the example cache keeps paths relative to the root, so a
    shard's entries would serve no serial build, nor a serial build's a shard."""
    (folder / layout.COPY_ROOT_MARKER).write_text(
        "A repository root in a copy of the project, made by docsaccel for a shard's build.\n",
        encoding="utf-8",
    )


def _is_special(path: Path) -> bool:
    """A named pipe, socket or device: not a regular file, folder or symbolic link."""
    try:
        mode = path.lstat().st_mode
    except OSError:  # gone since the folder was listed: nothing to copy
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode))


def is_build_output(folder: Path) -> bool:
    """Whether ``folder`` is a build's output, not a source: a Sphinx output folder
    (``.buildinfo``, ``.doctrees``), a doctree folder (``environment.pickle``) or a folder
    a docsaccel build wrote into (:func:`docsaccel.layout.holds_outputs`)."""
    if folder.is_symlink() or not folder.is_dir():
        return False
    markers = (folder / ".buildinfo", folder / ".doctrees", folder / "environment.pickle")
    return any(marker.exists() for marker in markers) or layout.holds_outputs(folder)


def run_sphinx(
    docs: Path,
    outdir: Path,
    env: Mapping[str, str],
    sphinx_args: Sequence[str] = (),
    log: Path | None = None,
    warnings: Path | None = None,
    builder: str = sphinx_runs.DEFAULT_BUILDER,
) -> None:
    """Build ``docs`` to ``outdir`` with ``sphinx-build -b <builder>`` in a child process.

    Its output goes to ``log`` when given (parallel shards), else to this process's. Its
    warnings and errors are also written to ``warnings`` when given: a failure names the
    first, as the one line saying why the build failed.
    """
    kept = [] if warnings is None else ["-w", str(warnings)]
    if warnings is not None:
        warnings.parent.mkdir(parents=True, exist_ok=True)
        warnings.unlink(missing_ok=True)  # an earlier build's would be taken for this one's
    command = python_command("-m", "sphinx", "-b", builder, *kept, *sphinx_args)
    command += [str(docs), str(outdir)]
    child_env = {**os.environ, **env}
    if log is None:
        code = sphinx_runs.run_build(command, child_env)
    else:
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("w", encoding="utf-8") as stream:
            code = sphinx_runs.run_build(command, child_env, stream)
    sphinx_runs.check_running()  # stopped by an interrupt: no build failure to report
    if code != 0:
        where = f" (log: {log})" if log else ""
        said = "" if warnings is None else _first_problem(warnings, log)
        raise ShardError(f"sphinx-build of {docs} failed with exit code {code}{where}{said}")


#: How a Sphinx build says an error: the start of its message in the warning file and the
#: log (a docsaccel stop logs one ``ERROR:`` line), or the crash Sphinx did not catch.
_ERROR_WORDS = ("ERROR:", "CRITICAL:", "SEVERE:", "Exception occurred")
_WARNING_WORDS = ("WARNING:",)
#: The line after a crash's error, ending the block that says it.
_CRASH_END = "The full traceback has been saved"


def _first_problem(warnings: Path, log: Path | None = None) -> str:
    """``": <the first error>"`` of the build's warning file, else of its ``log``: the
    error it failed on, which a warning before it (a budget pattern matching nothing)
    does not say; when there is none, the first warning, else the first line; ``""``
    when both hold nothing (the build failed before it wrote one, or ``-w`` of the
    caller's named another file)."""
    lines = _said(warnings) + ([] if log is None else _said(log))
    for words in (_ERROR_WORDS, _WARNING_WORDS):
        for index, line in enumerate(lines):
            if any(word in line for word in words):
                return f": {_whole(lines, index)}"
    return f": {lines[0]}" if lines else ""


def _said(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return [line.strip() for line in text.splitlines() if line.strip()]


def _whole(lines: Sequence[str], index: int) -> str:
    """The problem starting at ``lines[index]`` in one line: a message Sphinx starts on
    the next line (sphinx-gallery's failed example: ``WARNING:`` alone) joined to it;
    a crash said by its error, the last line before :data:`_CRASH_END`."""
    line, rest = lines[index], lines[index + 1 :]
    if line.startswith("Exception occurred"):
        ends = [i for i, later in enumerate(rest) if later.startswith(_CRASH_END)]
        if ends and ends[0] > 0:
            return f"{line} {rest[ends[0] - 1]}"
    elif rest and any(line.endswith(word) for word in (*_ERROR_WORDS, *_WARNING_WORDS)):
        return f"{line} {rest[0]}"
    return line


def collect_shard(
    project: DocsProject,
    outdir: Path,
    artifact: Path,
    index: int,
    shards: int,
    examples: Sequence[str],
    origin: Path | None = None,
    plan: Sequence[Sequence[str]] | None = None,
) -> dict[str, Any]:
    """Copy the outputs and records of the examples the build executed into ``artifact``.

    ``plan``: every shard's examples, kept in the manifest so a merge takes only shards of
    one plan of its tree (:func:`docsaccel.shard.merge_plan.check_planned`).

    Raises :class:`ShardError` when an executed example left no reusable outputs (it
    failed: sphinx-gallery keeps no md5 of a failing example, so it would run again). An
    expected failure (``expected_failing_examples``) is kept like a passing example: its
    page shows the traceback a serial build shows. Every page shows the paths of
    ``origin`` (the project the shard's workspace copied) for those of the copy, in a
    traceback or in what the example printed (its folder, its ``__file__``).
    """
    report_path = layout.report_path(outdir)
    try:
        report = load_report(report_path)
    except InputError as exc:
        raise ShardError(f"cannot read the shard's report: {exc}") from None
    shutil.rmtree(artifact, ignore_errors=True)
    try:
        return _collect(project, artifact, report, index, shards, examples, origin, plan)
    except BaseException:
        # Without its manifest, a partial artifact is not known as one: its pages would be
        # read as documents where it lies.
        shutil.rmtree(artifact, ignore_errors=True)
        raise


def _collect(
    project: DocsProject,
    artifact: Path,
    report: dict[str, Any],
    index: int,
    shards: int,
    examples: Sequence[str],
    origin: Path | None,
    plan: Sequence[Sequence[str]] | None = None,
) -> dict[str, Any]:
    """:func:`collect_shard` of a read ``report`` into the emptied ``artifact``."""
    executed: dict[str, list[str]] = {}
    for record in report["examples"]:
        # An example restored from the example cache is the shard's as much as one it ran.
        restored = (record.get("cache") or {}).get("hit") is True
        if record["status"] not in EXECUTED and not restored:
            continue
        target = project.target_file(record["id"])
        source = project.docs / record["id"]
        extra = []
        if _is_expected_failure(record):
            # Its page (the traceback) is the site's, as a serial build makes it; no md5
            # would make the merge run it again, and no cost file list it as not run.
            marks = sg_compat.mark_unchanged(target, record["wall_seconds"])
            extra += [mark.relative_to(project.docs) for mark in marks]
        if not sg_compat.is_unchanged(str(source), str(target)):
            raise ShardError(
                f"{record['id']} was executed by shard {index} with status "
                f"{record['status']!r} and left no reusable outputs (no current "
                f"{target.name}.md5): the merge would execute it again"
            )
        listed = run_outputs(target)
        if listed is None:  # outputs made before their run's files were listed
            files = [path.relative_to(project.docs) for path in sg_compat.output_files(target)]
        else:
            files = [Path(relative) for relative in listed if (project.docs / relative).is_file()]
        files += [path for path in extra if path not in files]
        for relative in files:
            _copy(project.docs / relative, artifact / "files" / relative)
        if origin is not None:
            page = artifact / "files" / sg_compat.page_file(target).relative_to(project.docs)
            _show_paths_of(origin, page, project.root)
        write_record(artifact / "records", record)
        executed[record["id"]] = [path.as_posix() for path in files]
    manifest = {
        **MANIFEST_FORMAT.header(),
        "index": index,
        "shards": shards,
        "examples": list(examples),
        "executed": executed,
    }
    if isinstance(report["build"].get("id"), str):
        # The shard's run, which the merge's report names (layout.write_shard_runs).
        manifest[BUILD_ID_KEY] = report["build"]["id"]
    if plan is not None:
        manifest[PLAN_KEY] = plan_entry(plan)
    write_json(artifact / MANIFEST, manifest)
    return manifest


def _is_expected_failure(record: Mapping[str, Any]) -> bool:
    """Whether a shard ran the example of ``record`` and it failed as expected: a shard
    keeps it like a passing one, its page marked unchanged for the merge alone."""
    return record["status"] == FAILED and record.get(EXPECTED_FAILURE) is True


def _unmark_expected_failures(project: DocsProject, records: Path) -> None:
    """Remove the marks that made the merge build keep the pages of the expected failures
    the shards ran (:func:`collect_shard`): a serial build leaves no md5 nor cost file of
    a failed example, so the next build runs it again, and one left would make it skip the
    example and fail it as "expected to fail" that did not."""
    for example_id, record in read_records(records).items():
        if _is_expected_failure(record):
            sg_compat.forget_marked_run(project.target_file(example_id))


def _show_paths_of(origin: Path, page: Path, workspace: Path) -> None:
    """Make a page (its traceback, what the example printed) name the project's files,
    not the shard's copies of them: the page a serial build of the project makes. A path
    written otherwise (relative, in an image) is not seen: the sharding guide's limits."""
    if page.is_file():
        text = page.read_text(encoding="utf-8")
        page.write_text(text.replace(str(workspace), str(origin)), encoding="utf-8")


def _copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source, target)


# Merge ----------------------------------------------------------------------------------


def find_manifests(artifacts: Path) -> dict[Path, dict[str, Any]]:
    """The shard artifact folders under ``artifacts`` (it or its subfolders) and manifests."""
    problem = not_a_folder(Path(artifacts))
    if problem is not None:
        raise ShardError(f"the shard artifacts {problem}")
    found = sorted(Path(artifacts).glob(MANIFEST)) + sorted(Path(artifacts).glob(f"*/{MANIFEST}"))
    if not found:
        raise ShardError(f"{artifacts}: no shard artifact (no {MANIFEST} in it or its folders)")
    manifests = {}
    for path in found:
        manifest = read_json(path, "shard manifest")
        MANIFEST_FORMAT.check(manifest, path, error=ShardError, missing_version=1)
        _check_manifest(manifest, path)
        manifests[path.parent] = manifest
    return manifests


def _check_manifest(manifest: dict[str, Any], path: Path) -> None:
    """The keys :func:`check_artifacts` and the merge read, with their types."""
    for key in ("index", "shards"):
        value = manifest.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ShardError(f"{path}: {key} is {value!r:.40}; expected an integer >= 0")
    executed = manifest.get("executed")
    if not isinstance(executed, dict) or not all(
        isinstance(files, list) and all(isinstance(f, str) for f in files)
        for files in executed.values()
    ):
        raise ShardError(f"{path}: executed must map example ids to lists of file paths")
    for files in executed.values():
        for name in files:
            # The merge copies these into the source folder: none may point outside it.
            parts = Path(name).parts
            if Path(name).is_absolute() or ".." in parts or not parts:
                raise ShardError(
                    f"{path}: executed lists {name!r}, not a path inside the source folder"
                )


def check_artifacts(manifests: Mapping[Path, dict[str, Any]]) -> None:
    """Every shard present exactly once, of one shard count; each example executed once."""
    counts = {manifest["shards"] for manifest in manifests.values()}
    if len(counts) != 1:
        raise ShardError(f"the shard artifacts disagree on the shard count: {sorted(counts)}")
    shards = counts.pop()
    by_index: dict[int, Path] = {}
    for folder, manifest in manifests.items():
        if manifest["index"] in by_index:
            raise ShardError(
                f"shard {manifest['index']} appears twice: {by_index[manifest['index']]} "
                f"and {folder}"
            )
        by_index[manifest["index"]] = folder
    missing = sorted(set(range(shards)) - set(by_index))
    if missing:
        raise ShardError(
            f"the artifacts of {'shard' if len(missing) == 1 else 'shards'} "
            f"{', '.join(map(str, missing))} of {shards} are missing"
        )
    executed_by: dict[str, Path] = {}
    for folder, manifest in manifests.items():
        for example_id in manifest["executed"]:
            if example_id in executed_by:
                raise ShardError(
                    f"{example_id} was executed by two shards: {executed_by[example_id]} and "
                    f"{folder}; each example must be executed by exactly one"
                )
            executed_by[example_id] = folder


def read_artifacts(artifacts: Path) -> dict[Path, dict[str, Any]]:
    """The checked manifests of the shard artifacts under ``artifacts``
    (:func:`find_manifests`, :func:`check_artifacts`): read before a merge removes or
    writes anything, so a mistyped folder leaves the last build's site and report."""
    manifests = find_manifests(artifacts)
    check_artifacts(manifests)
    return manifests


def merge_artifacts(
    project: DocsProject,
    artifacts: Path,
    records: Path,
    manifests: Mapping[Path, dict[str, Any]] | None = None,
) -> list[str]:
    """Check the artifacts (unless ``manifests`` gives them checked), copy their outputs
    into the gallery folders and their records into ``records``; return the ids of the
    examples the shards executed."""
    if manifests is None:
        manifests = read_artifacts(artifacts)
    shutil.rmtree(records, ignore_errors=True)
    records.mkdir(parents=True)
    runs = [m[BUILD_ID_KEY] for m in manifests.values() if isinstance(m.get(BUILD_ID_KEY), str)]
    if len(runs) == len(manifests):  # else some shard's run is unknown: none is named
        layout.write_shard_runs(records, runs)
    merged = []
    for folder, manifest in sorted(manifests.items(), key=lambda item: item[1]["index"]):
        for example_id, files in manifest["executed"].items():
            for relative in files:
                _copy(folder / "files" / relative, project.docs / relative)
            record_path = record_file(folder / "records", example_id)
            validate_record(read_json(record_path, "record"), record_path)
            _copy(record_path, record_file(records, example_id))
            merged.append(example_id)
    return sorted(merged)


def run_merge(
    project: DocsProject,
    artifacts: Path,
    outdir: Path,
    records: Path | None = None,
    sphinx_args: Sequence[str] = (),
    watch_sources: WatchSources | None = None,
    show_unfinished: ShowUnfinished | None = None,
    command: str = "shard-merge",
    say: Callable[[str], None] | None = None,
    builder: str = sphinx_runs.DEFAULT_BUILDER,
) -> list[str]:
    """Merge the shard artifacts and build the site with ``builder``; return the merged
    example ids.

    With ``watch_sources``, the outputs it copies into the gallery folders are recorded as
    generated, as those the build writes are (:func:`_watch_sources`): the next build
    removes them as it removes its own, so the page of an example renamed since is not
    published again. With ``show_unfinished``, the site's report pages say the build has
    not finished until the merge build writes them (:class:`.SitePages`); the site's
    report says so anyway, naming ``command``, the shard command that runs.

    Refused while another sharded build of the project runs (:func:`holding_shard_work`).
    """
    manifests = read_artifacts(Path(artifacts))  # before the last build's report goes
    for folder in manifests:
        check_artifact_place(project, folder, "the shard artifact")
    # Outputs an earlier build left in the gallery folders would otherwise stand for the
    # examples no shard of another plan (or tree) ran.
    check_planned(manifests, project.example_ids(), project.docs)
    own_build_folder(project.docs)  # first: the site folder may be in it
    with holding_shard_work(project):
        return _merge(
            project,
            Path(artifacts),
            manifests,
            outdir,
            records,
            sphinx_args,
            watch_sources,
            show_unfinished,
            command,
            say,
            builder,
        )


def _merge(
    project: DocsProject,
    artifacts: Path,
    manifests: Mapping[Path, dict[str, Any]],
    outdir: Path,
    records: Path | None,
    sphinx_args: Sequence[str],
    watch_sources: WatchSources | None,
    show_unfinished: ShowUnfinished | None,
    command: str,
    say: Callable[[str], None] | None = None,
    builder: str = sphinx_runs.DEFAULT_BUILDER,
) -> list[str]:
    """:func:`run_merge` of checked ``manifests``, the shard work folder held. Interrupted
    (Ctrl-C, ``SIGTERM``) before its build took over the site's report, it says so there:
    the report saying it has not finished would read as a command killed outright."""
    galleries = lock_galleries(project)  # before anything is written
    try:
        # Before the shards' marks are copied: these are an earlier merge's, left behind.
        said = sg_compat.remove_expected_failure_marks(dict(project.gallery_conf), project.docs)
        if said is not None and say is not None:
            say(said)
        pages = _site_pages(project, outdir, show_unfinished, command, builder)
        pages.started()
        records = Path(records or layout.shard_dir(project.docs, "shard-records")).resolve()
        watch = _watch_sources(project, Path(outdir), records, watch_sources)
    except BaseException:
        _release(galleries)
        raise
    try:
        merged = merge_artifacts(project, artifacts, records, manifests)
        env = {env_name("shard_records"): str(records)}
        # Let go for the build, which locks the same folders: its refusal, should another
        # build take them first, is its own line.
        _release(galleries)
        _run_merge_build(project, Path(outdir), env, sphinx_args, builder)
    except KeyboardInterrupt as exc:
        if pages.still_started():
            pages.interrupted(stop_signal(exc))
        raise
    except Exception as exc:
        if pages.still_started():
            pages.ended(str(exc))
        raise
    finally:
        _release(galleries)
        _unmark_expected_failures(project, records)
        if watch is not None:
            watch.finish()
    return merged


class BuildSaidError(ShardError):
    """A failure of a build whose one line the build itself printed: the command adds
    none."""


def lock_galleries(project: DocsProject) -> list[layout.GalleryLock]:
    """Lock the project's gallery folders (:class:`docsaccel.layout.GalleryLock`), as its
    builds do, before a merge copies the shards' outputs there: a build generating them
    meanwhile would mix its files with the shards'. Refused with :class:`ShardError`
    naming the folder and the process holding it, nothing written."""
    locks: list[layout.GalleryLock] = []
    try:
        for gallery in _gallery_folders(project):
            lock = layout.GalleryLock(gallery)
            lock.acquire()
            locks.append(lock)
    except layout.LockedError as exc:
        _release(locks)
        raise ShardError(str(exc)) from None
    except OSError as exc:
        _release(locks)
        raise ShardError(f"cannot lock the gallery folder: {exc}") from None
    return locks


def _gallery_folders(project: DocsProject) -> list[Path]:
    return [project.docs / gallery for gallery in project.galleries.values()]


def _release(locks: Sequence[layout.FolderLock]) -> None:
    for lock in locks:
        lock.release()


def _run_merge_build(
    project: DocsProject,
    outdir: Path,
    env: Mapping[str, str],
    sphinx_args: Sequence[str],
    builder: str = sphinx_runs.DEFAULT_BUILDER,
) -> None:
    """The merge's Sphinx build (:func:`run_sphinx`). Refused because another build took
    a folder it writes (the site's, a gallery folder) since the merge let go, the build
    said so in one line: the command adds none (:class:`BuildSaidError`).

    Its doctrees go to the project's ``shard-doctrees`` folder, out of the site as a
    serial ``sphinx-build -M html`` keeps them; those an earlier merge left in the site
    are removed, or they would be published."""
    shutil.rmtree(outdir / ".doctrees", ignore_errors=True)
    doctrees = layout.shard_dir(project.docs, "shard-doctrees")
    warnings = layout.shard_dir(project.docs, "shard-work") / "merge-warnings.log"
    try:
        args = [*sphinx_args, "-d", str(doctrees)]
        run_sphinx(project.docs, outdir, env, args, warnings=warnings, builder=builder)
    except ShardError as exc:
        others = [layout.lock_holder(outdir)]
        others += [layout.gallery_lock_holder(folder) for folder in _gallery_folders(project)]
        if any(other not in (None, str(os.getpid())) for other in others):
            raise BuildSaidError(str(exc)) from None
        raise


class ShardWorkLock(layout.FolderLock):
    """An exclusive lock on the work folder of the sharded builds of a project
    (``<docs>/_build/shard-work``; its lock file where an output folder's is:
    :func:`docsaccel.layout.lock_path`), held for a whole ``shard-local``,
    ``shard-build`` or ``shard-merge`` (:func:`holding_shard_work`)."""

    def __init__(self, work: str | os.PathLike[str]) -> None:
        super().__init__(work, layout.lock_path(work))

    def _refusal(self, holder: str) -> str:
        return (
            f"another sharded build of this project (process {holder}) is using its work "
            f"folder {self.folder} (lock {self.path}); run this once it ends"
        )


@contextlib.contextmanager
def holding_shard_work(project: DocsProject) -> Iterator[None]:
    """Hold the lock of the project's shard work folder (:class:`ShardWorkLock`) for a
    whole sharded build, or raise :class:`ShardError` naming the process holding it,
    before anything is removed or written: ``shard-local``, ``shard-build`` and
    ``shard-merge`` share that folder, the artifacts' and the merged records', and each
    replaces what it finds there, so two at once would build from each other's half-made
    copies. The lock of a
    process that died is taken over (:class:`docsaccel.layout.FolderLock`)."""
    lock = ShardWorkLock(layout.shard_dir(project.docs, "shard-work"))
    try:
        lock.acquire()
    except layout.LockedError as exc:
        raise ShardError(str(exc)) from None
    except OSError as exc:
        raise ShardError(f"cannot lock {lock.path}: {exc.strerror or exc}") from None
    try:
        yield
    finally:
        lock.release()


def _site_pages(
    project: DocsProject,
    outdir: Path,
    show_unfinished: ShowUnfinished | None,
    command: str,
    builder: str,
) -> SitePages:
    return SitePages(
        project.docs,
        Path(outdir),
        project.report_page,
        project.fast,
        show_unfinished,
        command,
        builder,
    )


def _write_merged_report(
    project: DocsProject, shards: int, outdir: Path, errors: Sequence[str]
) -> dict[str, Any] | None:
    """Write into ``outdir`` the report of what the shards ran, when one failed and no
    merge builds the site, and return it (``None``: no shard wrote a report): a gate then
    names the examples that failed, as after a serial build, rather than finding no
    report."""
    work = layout.shard_dir(project.docs, "shard-work")
    reports = []
    for index in range(shards):
        try:
            reports.append(load_report(layout.report_path(work / str(index) / "html")))
        except InputError:
            continue  # that shard stopped before its report: its examples are not in it
    if not reports:
        return None
    report = merged_report(reports, shards, layout.report_path(outdir), errors)
    # The project's, not the shards' copies of it (the same bytes; the copies go).
    report["build"]["source_dir"] = str(project.docs)
    fingerprint = conf_fingerprint(project.docs)
    if "conf" in report["build"] and fingerprint is not None:
        report["build"]["conf"] = fingerprint
    write_json(layout.report_path(outdir), report)
    return report


def check_output_folder(folder: Path, option: str) -> None:
    """Refuse, before any build, an output folder that is a file (or whose parent is one):
    the build would run every shard and then fail to write there."""
    for place in (Path(folder), *Path(folder).parents):
        if place.exists():
            problem = not_a_folder(place)
            if problem is not None:
                raise ShardError(f"{option} {folder}: {problem}")
            return


def check_site_folder(project: DocsProject, folder: Path, option: str) -> None:
    """Refuse, before anything is removed or written, a site folder that is or holds the
    conf folder, or is, holds or is inside an examples or a gallery folder: each shard's
    copy of the project leaves the site folder out (it would have no sources), the merge
    would publish into the user's examples or among sphinx-gallery's pages. A folder
    inside the conf folder is the usual place (``_build/html``): the builds leave their
    output folder out of the documents. A folder of the user's files is refused too: it
    must be missing, empty or a site a build wrote (:func:`is_site_folder`)."""
    site = Path(folder).resolve()
    docs = ClearOf(project.docs, "the Sphinx conf folder", inside_allowed=True)
    default = project.docs / "_build" / "html"
    where = _overlap(site, [docs, *_read_folders(project)])
    if where is not None:
        raise ShardError(
            f"{option} {site} {where}; give the site a folder of its own, such as {default}"
        )
    _check_site_target(site, option, default)


def check_artifact_place(project: DocsProject, folder: Path, option: str) -> None:
    """Refuse, before anything is removed or written, an artifact folder that is, holds or
    is inside an examples or a gallery folder, or a folder Sphinx copies into the site or
    reads templates from: sphinx-gallery would take the artifact's copies for the user's
    examples or its own pages, Sphinx publish or read them. Elsewhere in the source
    folder an artifact is left out of the documents of every build (the gallery plugin
    knows it by its manifest)."""
    artifact = Path(folder).resolve()
    where = _overlap(artifact, _read_folders(project))
    if where is not None:
        default = layout.shard_dir(project.docs, "shard")
        raise ShardError(
            f"{option} {artifact} {where}, whose files the builds read; give the artifact "
            f"a folder of its own, such as {default}"
        )


def _read_folders(project: DocsProject) -> list[ClearOf]:
    """The folders of the project whose files its builds read other than as documents,
    which a folder a shard command writes must stay clear of: the examples and gallery
    folders of ``sphinx_gallery_conf`` and the folders Sphinx copies into the site or
    reads templates from."""
    folders = []
    for examples, gallery in project.galleries.items():
        what = "an examples folder of sphinx_gallery_conf (examples_dirs)"
        folders.append(ClearOf((project.docs / examples).resolve(), what))
        what = "a gallery folder of sphinx_gallery_conf (gallery_dirs)"
        folders.append(ClearOf((project.docs / gallery).resolve(), what))
    # The merge build would copy a site into itself, or read its pages as templates.
    for name, does, conf_folder in project.conf_folders:
        folders.append(ClearOf(conf_folder, f"a folder {does} ({name})"))
    return folders


def _overlap(folder: Path, folders: Sequence[ClearOf]) -> str | None:
    """How ``folder`` shares one of ``folders`` (:func:`docsaccel.settings.overlap`); the
    folder it is, when it is one, names it best (a nested gallery is also inside the
    outer one)."""
    for clear in sorted(folders, key=lambda clear: clear.folder != folder):
        where = overlap(folder, clear)
        if where is not None:
            return where
    return None


#: What marks a folder as a site a build wrote (:func:`is_site_folder`), for messages.
_SITE_MARKERS = (".buildinfo", ".doctrees", layout.report_path("").as_posix())


def is_site_folder(folder: Path) -> bool:
    """Whether ``folder`` is an output folder a Sphinx or docsaccel build wrote
    (:func:`is_build_output`), or one a shard command started a site in: the report
    saying it has not finished (:class:`.SitePages`) is all a sharded build stopped before
    its merge leaves there."""
    return is_build_output(folder) or layout.report_path(folder).is_file()


def _check_site_target(folder: Path, option: str, default: Path) -> None:
    """Refuse a site folder holding files no build wrote: the merge build writes the whole
    site among them (:func:`check_folder_of_ours`)."""
    check_folder_of_ours(
        folder,
        option,
        "a site folder",
        lambda names: [] if is_site_folder(folder) else names,
        f"and none of {', '.join(_SITE_MARKERS)} a build leaves",
        "the merge build would write the whole site among its files",
        default,
    )


def _watch_sources(
    project: DocsProject, outdir: Path, records: Path, start: WatchSources | None
) -> Any:
    """When the project's builds record what they generate in the source folder (the
    example cache is on, the Sphinx state on or off), start that record here: what earlier
    builds generated is removed, before the shards' outputs are copied in (the merge
    build removes none), and the merge's copies are noted as generated. ``None`` when
    there is none."""
    if start is None or project.cache is None:
        return None
    outputs = [outdir, records, *layout.shard_folders(project.docs)]
    leave_out = [Path(p).resolve() for p in outputs]
    return start(project.cache, project.docs, leave_out, outdir.resolve())


# One machine ----------------------------------------------------------------------------


def run_local(
    project: DocsProject,
    shards: int,
    inputs: Sequence[str | Path],
    outdir: Path,
    sphinx_args: Sequence[str] = (),
    watch_sources: WatchSources | None = None,
    show_unfinished: ShowUnfinished | None = None,
    say: Callable[[str], None] | None = None,
    builder: str = sphinx_runs.DEFAULT_BUILDER,
) -> list[str]:
    """Run every shard as a parallel process on this machine, at most one per core at
    once (:func:`.sphinx_runs.cores`), then merge them (``watch_sources``,
    ``show_unfinished``: see :func:`run_merge`). More shards than examples are cut to
    one per example, which ``say`` is told in a line. Every build (the shards', the
    merge's) builds with ``builder``.

    Each shard works in ``<docs>/_build/shard-work/<i>`` (its Sphinx output in
    ``<docs>/_build/shard-work/<i>.log``) and leaves its artifact in
    ``<docs>/_build/shard-artifacts/docs-shard-<i>``. Refused while another sharded
    build of the project runs (:func:`holding_shard_work`).
    """
    check_index(0, shards)
    # Once, not once per shard; first, as it reads the inputs: a missing one leaves the
    # last build's report and artifacts.
    plan = plan_project(project, shards, inputs)
    planned = sum(len(one.examples) for one in plan.shards)
    if 0 < planned < shards:  # a shard with no example would copy and build for nothing
        if say is not None:
            say(f"{shards} shards for {planned} examples: running {planned}")
        shards = planned
        plan = plan_project(project, shards, inputs)
    own_build_folder(project.docs)  # first: the site folder may be in it
    with holding_shard_work(project):
        return _run_shards_and_merge(
            project,
            shards,
            inputs,
            outdir,
            plan,
            sphinx_args,
            watch_sources,
            show_unfinished,
            say,
            builder,
        )


def _run_shards_and_merge(
    project: DocsProject,
    shards: int,
    inputs: Sequence[str | Path],
    outdir: Path,
    plan: Plan,
    sphinx_args: Sequence[str],
    watch_sources: WatchSources | None,
    show_unfinished: ShowUnfinished | None,
    say: Callable[[str], None] | None = None,
    builder: str = sphinx_runs.DEFAULT_BUILDER,
) -> list[str]:
    """:func:`run_local` of ``plan``, the shard work folder held."""
    pages = _site_pages(project, outdir, show_unfinished, "shard-local", builder)
    pages.started()
    artifacts = layout.shard_dir(project.docs, "shard-artifacts")
    shutil.rmtree(artifacts, ignore_errors=True)

    def one(index: int) -> None:
        run_shard(
            project,
            shards,
            index,
            inputs,
            artifacts / f"docs-shard-{index}",
            sphinx_args=sphinx_args,
            log=layout.shard_dir(project.docs, "shard-work") / f"{index}.log",
            plan=plan,
            outputs=[outdir],
            builder=builder,
        )

    pool = ThreadPoolExecutor(max_workers=min(shards, sphinx_runs.cores()))
    try:
        failures = [f.exception() for f in [pool.submit(one, i) for i in range(shards)]]
    except KeyboardInterrupt as exc:
        # Ctrl-C reaches this process alone (each build has its process group): stop the
        # builds, let the threads return, and leave no partial artifact behind.
        sphinx_runs.stop_all(stop_signal(exc))
        pool.shutdown(wait=True, cancel_futures=True)
        sphinx_runs.resume()
        shutil.rmtree(artifacts, ignore_errors=True)
        pages.interrupted(stop_signal(exc))
        raise
    pool.shutdown()
    errors = [str(error) for error in failures if error is not None]
    if errors:
        pages.failed(_write_merged_report(project, shards, outdir, errors), errors)
        raise ShardError("; ".join(errors))
    try:
        manifests = read_artifacts(artifacts)
        # The tree may have changed while the shards ran.
        check_planned(manifests, project.example_ids(), project.docs)
        return _merge(
            project,
            artifacts,
            manifests,
            outdir,
            None,
            sphinx_args,
            watch_sources,
            show_unfinished,
            "shard-local",
            say,
            builder,
        )
    except Exception as exc:
        # Refused before the merge wrote its own report (another build holds a gallery
        # folder, an artifact does not read): this run's report says why it ended.
        if pages.still_started():
            pages.ended(str(exc))
        raise
