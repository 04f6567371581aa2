"""The ``docsaccel`` command line: argument parsing only; the work lives in the modules.

Each subcommand is added by one ``_add_*`` function and calls into its capability module,
so the same logic is callable from Python and tested without a subprocess.

Exit codes, the same for every command: 0 success; 1 the verdict the command exists for
(an example over budget, a regression with ``--fail-on-regression``, ``doctor``: cannot
render); 2 an input, argument, output path or resource that is wrong, with one line
naming the file and the problem (never a traceback: a crash must not read as a verdict);
141 (128 + SIGPIPE) its output went to a pipe closed before it was all written
(``docsaccel shard --plan | head -1``), with nothing on stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from docsaccel import __version__
from docsaccel.contract import Terminated, error_line
from docsaccel.standard_output import StandardOutputError, guarded


class _OneLineErrors(argparse.ArgumentParser):
    """A parser whose argument errors are one line (``docsaccel compare: error: ...``),
    as every other exit 2 is: argparse's usage block before it would push the line
    naming the problem out of a CI log's view. ``--help`` still shows the usage; its
    subcommands' parsers are of this class too (argparse makes them of their parent's)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {error_line(' '.join(message.split()))}")


def _doctor(args: argparse.Namespace) -> int:
    from docsaccel import doctor

    problem = None if args.docs is None else doctor.docs_problem(args.docs)
    if problem is not None:
        return _emit(error_line(problem), 2)
    text, ok = doctor.describe(args.docs)
    print(text)
    return 0 if ok else 1


def _add_doctor(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "doctor",
        help="check the install and, with --docs, a project's docsaccel settings",
        description=(
            "Show the versions docsaccel runs with, which of its extras are installed and "
            "the headless OpenGL backend MuJoCo will render with (when the mujoco extra is "
            "installed). With --docs, check that conf.py loads docsaccel.gallery with valid "
            "docsaccel_* settings and that its budgets read as the build reads them: what "
            "the build refuses fails, what it warns of is a warning. A missing optional "
            "extra is information only. Exit 1 when a check fails, 2 "
            "when --docs names no Sphinx conf folder."
        ),
    )
    parser.add_argument("--docs", metavar="DIR", help="the Sphinx conf folder to check")
    parser.set_defaults(handler=_doctor)


def _emit(text: str, code: int, output: str | None = None) -> int:
    """Write a command's text to ``output`` (or stdout; errors go to stderr)."""
    if code == 2:
        sys.stderr.write(f"docsaccel: {text}")
    elif output:
        try:
            Path(output).write_text(text, encoding="utf-8")
        except OSError as exc:
            why = f"{output}: cannot write the output: {exc.strerror or exc}"
            return _emit(error_line(why), 2)
    else:
        sys.stdout.write(text)
    return code


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _report(args: argparse.Namespace) -> int:
    from docsaccel.report.commands import run_report

    text, code = run_report(
        args.report, args.baseline, args.history, args.last, args.format, args.top, args.output
    )
    return _emit(text, code, args.output)


def _add_report(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "report",
        help="the budget report of a build as Markdown, self-contained HTML or JSON",
        description="Render the budget report of a build. REPORT and --baseline accept any "
        "input `docsaccel check` reads. Exit 2 when an input cannot be read.",
    )
    parser.add_argument("report", metavar="REPORT", help="docsaccel report JSON (or any input)")
    parser.add_argument("--baseline", metavar="BASE", help="input to show deltas against")
    parser.add_argument("--history", metavar="HISTORY.jsonl", help="flag noisy examples")
    parser.add_argument("--last", type=int, default=10, help="history runs to use (10)")
    parser.add_argument(
        "--format",
        choices=("md", "html", "json"),
        help="output format (default: the one -o's suffix names, .html or .json, else md)",
    )
    parser.add_argument("--top", type=int, default=10, help="slowest examples listed (10)")
    parser.add_argument("-o", "--output", metavar="FILE", help="write here, not to stdout")
    parser.set_defaults(handler=_report)


def _check(args: argparse.Namespace) -> int:
    from docsaccel.report.commands import run_check

    return _emit(
        *run_check(
            args.inputs,
            args.budget,
            args.budgets,
            allow_incomplete=args.allow_incomplete,
            fmt=args.format,
            source_dir=args.source_dir,
        )
    )


#: The options of the commands CI gates on (check, compare), besides their formats.
_GATE_OPTIONS: dict[str, dict[str, Any]] = {
    "--allow-incomplete": {
        "action": "store_true",
        "help": 'judge the examples of a report that says "complete": false (a build that '
        "stopped early) instead of exiting 2: listed and judged against budgets or the "
        "base, but a build that did not finish failed, so the gate exits 3 saying why; "
        "a build that ran none of its examples still exits 2",
    },
    "--source-dir": {
        "metavar": "DIR",
        "help": "with --format github: the Sphinx source folder from the repository root "
        "(default: the one the report recorded, relative to the working directory); "
        "checked with any format: exit 2 when it does not hold the examples",
    },
}


def _add_gate_options(parser: argparse.ArgumentParser, formats: tuple[str, ...]) -> None:
    parser.add_argument(
        "--format",
        choices=formats,
        default="text",
        help="github: GitHub Actions workflow commands, annotating the pull request's files",
    )
    for flag, options in _GATE_OPTIONS.items():
        parser.add_argument(flag, **options)


def _add_check(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "check",
        help="exit 3 when the build failed, 1 when an example is over its budget",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="""\
Check every example of every INPUT against its budget.

INPUT: a docsaccel report JSON; a sphinx-gallery sg_execution_times.rst of any release
(bullet list, grid table, list-table; per-gallery or root file); a sphinx-gallery JUnit XML.

Budget precedence, per example (the build's own, docsaccel.budgets):
  1. an inline # docsaccel_budget the report recorded (budget_source "inline");
  2. --budgets FILE: its most specific matching pattern, then its default;
  3. --budget SECONDS, for examples still without a budget;
  4. the budget recorded in the input (report JSON); otherwise unbounded.

Several inputs that time the same examples (a root and a per-gallery file) count each
example once.

Exit codes: 0 all within budget; 1 an example over budget (listed slowest first with
time, budget and its source); 2 an input unreadable or with no example in it, a bad
budget, the report of a build that did not finish (see --allow-incomplete) or ran none
of its examples, or a report whose conf.py changed since its build (a later build failed
before docsaccel ran); 3 the build failed: an example failed unexpectedly (named on the
first line, budgets apart), or, with --allow-incomplete, it did not finish (said first).""",
    )
    parser.add_argument(
        "inputs",
        nargs="+",
        metavar="INPUT",
        help="the build: report JSON, sg_execution_times.rst or JUnit XML (see above)",
    )
    parser.add_argument("--budget", metavar="SECONDS", help="flat budget: 90, '90s', '5m'")
    parser.add_argument("--budgets", metavar="FILE", help="budget file (conf/budgets.toml)")
    _add_gate_options(parser, ("text", "github"))
    parser.set_defaults(handler=_check)


def _compare(args: argparse.Namespace) -> int:
    from docsaccel.report.commands import run_compare

    text, code = run_compare(
        args.base,
        args.head,
        relative=args.relative / 100,
        absolute=args.absolute,
        fail_on_regression=args.fail_on_regression,
        allow_incomplete=args.allow_incomplete,
        allow_mixed=args.allow_mixed,
        fmt=args.format,
        source_dir=args.source_dir,
        absolute_memory=args.absolute_memory,
    )
    return _emit(text, code)


def _threshold(text: str) -> float:
    """A threshold option's value: a finite number of 0 or more. Checked as typed, so the
    message quotes what the user wrote (``--relative -5``, not the fraction it becomes)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a number of 0 or more, got {text!r}")
    return value


def _add_compare(subparsers: argparse._SubParsersAction) -> None:
    from docsaccel.memory_sizes import format_size
    from docsaccel.report.compare import (
        DEFAULT_ABSOLUTE_BYTES,
        DEFAULT_ABSOLUTE_SECONDS,
        DEFAULT_RELATIVE,
    )

    parser = subparsers.add_parser(
        "compare",
        help="per-example time and memory deltas between two builds",
        description="Compare HEAD against BASE (any two inputs `check` reads). An example "
        "regressed when slower by more than both thresholds, or when its peak memory grew "
        "by more than the relative threshold and --absolute-memory. Exit 1 on a regression with "
        "--fail-on-regression, 2 when an input cannot be read, is the report of a build "
        "that did not finish (see --allow-incomplete), or when one input is a fast build "
        "and the other a full one (unless --allow-mixed); 3 when the head build failed "
        "(an example failed unexpectedly, or, with --allow-incomplete, it did not "
        "finish), whatever its times.",
    )
    parser.add_argument("base", metavar="BASE", help="the build to compare against")
    parser.add_argument("head", metavar="HEAD", help="the build compared")
    parser.add_argument(
        "--relative",
        type=_threshold,
        default=DEFAULT_RELATIVE * 100,
        metavar="PERCENT",
        help=f"relative threshold in percent ({DEFAULT_RELATIVE * 100:g})",
    )
    parser.add_argument(
        "--absolute",
        type=_threshold,
        default=DEFAULT_ABSOLUTE_SECONDS,
        metavar="SECONDS",
        help=f"absolute threshold in seconds ({DEFAULT_ABSOLUTE_SECONDS:g})",
    )
    parser.add_argument(
        "--absolute-memory",
        metavar="SIZE",
        help=f"absolute threshold of a memory regression ({format_size(DEFAULT_ABSOLUTE_BYTES)})",
    )
    parser.add_argument(
        "--fail-on-regression", action="store_true", help="exit 1 when an example regressed"
    )
    parser.add_argument(
        "--allow-mixed",
        action="store_true",
        help="compare a fast-path build with a full one anyway",
    )
    _add_gate_options(parser, ("text", "md", "github"))
    parser.set_defaults(handler=_compare)


def _history_append(args: argparse.Namespace) -> int:
    from docsaccel.report.commands import run_history_append

    return _emit(*run_history_append(args.report, args.to))


def _add_history(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "history",
        help="record builds for medians and noise",
        description="Keep a history of builds (a JSON line each) for `report --history`, "
        "`check` and `shard`: medians of recent runs and the examples whose times are noisy.",
    )
    parser.set_defaults(handler=lambda args: _usage(parser))
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)
    append = actions.add_parser(
        "append",
        help="append one build (any input `check` reads) as a JSON line",
        description="Append one build to a history file, as one JSON line. Exit 2 when "
        "the input cannot be read, or is a build a history does not record: one that did "
        "not finish, failed, ran no example, or that a later build left behind, or one the "
        "history already records.",
    )
    append.add_argument("report", metavar="REPORT", help="the build: any input `check` reads")
    append.add_argument("--to", required=True, metavar="HISTORY.jsonl", help="history file")
    append.set_defaults(handler=_history_append)


def _shard(args: argparse.Namespace) -> int:
    import json

    from docsaccel import doctor, shard
    from docsaccel.contract import InputError

    listed = args.gallery_dir is not None or args.conf_dir is not None
    if listed and doctor.docs_extra_missing():  # sphinx-gallery lists a gallery's examples
        print(f"docsaccel shard: error: {doctor.DOCS_EXTRA_NEEDED}", file=sys.stderr)
        return 2
    try:
        if args.index is None and not args.plan:
            raise shard.ShardError("give --index I (the shard to print) or --plan")
        if args.json and not args.plan:
            raise shard.ShardError("--json prints the whole plan: use it with --plan")
        if args.index is not None:
            shard.check_index(args.index, args.shards)
        gallery_conf = None
        if args.conf_dir is not None:
            if args.gallery_dir is None:
                raise shard.ShardError("--conf-dir needs --gallery-dir: the gallery to plan")
            from docsaccel.shard.build import read_gallery_conf

            gallery_conf = read_gallery_conf(args.conf_dir)
        plan = shard.build_plan(
            args.inputs,
            args.shards,
            args.gallery_dir,
            args.budgets,
            runs=args.runs,
            gallery_conf=gallery_conf,
        )
    except InputError as exc:  # ShardError, BudgetError, SchemaError: one class
        print(f"docsaccel shard: error: {exc}", file=sys.stderr)
        return 2
    if args.plan:
        print(json.dumps(plan.to_json(), indent=2) if args.json else shard.describe(plan))
    elif plan.examples_of(args.index):
        print("\n".join(plan.examples_of(args.index)))
    else:  # more shards than examples: an empty list must not read as a failed plan
        planned = sum(len(one.examples) for one in plan.shards)
        print(
            f"docsaccel shard: shard {args.index} of {args.shards} has no example to run "
            f"(the plan has {planned} example{'s' if planned != 1 else ''} for "
            f"{args.shards} shards)",
            file=sys.stderr,
        )
    return 0


def _add_shard(subparsers: argparse._SubParsersAction) -> None:
    from docsaccel.shard.plan import DEFAULT_RUNS

    parser = subparsers.add_parser(
        "shard",
        help="split the gallery over CI workers by measured durations; print one shard",
        description=(
            "Plan N shards of the gallery balanced by predicted seconds and print the "
            "example files of shard I, one per line (paths inside --gallery-dir, or ids "
            "as in the inputs). Examples without a measurement get their budget or the "
            "median as estimate and are spread over the shards."
        ),
    )
    parser.add_argument(
        "inputs",
        nargs="*",
        metavar="INPUT",
        help="earlier timings: a docsaccel report JSON or a history JSONL",
    )
    parser.add_argument("--shards", type=int, required=True, metavar="N", help="shard count")
    parser.add_argument("--index", type=int, metavar="I", help="the shard to print (0 to N-1)")
    parser.add_argument(
        "--gallery-dir",
        metavar="DIR",
        help="gallery folder: plan every example file in it (which files are examples: "
        "sphinx-gallery's defaults, or --conf-dir's sphinx_gallery_conf)",
    )
    parser.add_argument(
        "--conf-dir",
        metavar="DIR",
        help="the Sphinx conf folder: its conf.py's sphinx_gallery_conf (ignore_pattern, "
        "example_extensions) says which files of --gallery-dir are examples, as in the build",
    )
    parser.add_argument(
        "--budgets", metavar="FILE", help="budget file: unmeasured examples take their budget"
    )
    parser.add_argument(
        "--runs",
        type=int,
        default=DEFAULT_RUNS,
        metavar="K",
        help=f"predict each example by the median of its last K runs (default: {DEFAULT_RUNS})",
    )
    parser.add_argument("--plan", action="store_true", help="print the whole plan instead")
    parser.add_argument("--json", action="store_true", help="with --plan: print it as JSON")
    parser.set_defaults(handler=_shard)


def _shard_build_command(args: argparse.Namespace) -> int:
    from docsaccel import doctor

    if doctor.docs_extra_missing():  # a plain install: no Sphinx to build with
        print(f"docsaccel {args.command}: error: {doctor.DOCS_EXTRA_NEEDED}", file=sys.stderr)
        return 2
    sphinx_args = ["-W"] if args.strict else []
    inputs = [*getattr(args, "inputs", []), *getattr(args, "history", [])]
    # A stop asked by SIGTERM (a cancelled CI job) is handled as Ctrl-C: the builds run in
    # process groups of their own, which only this process can stop.
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        return _run_shard_command(args, sphinx_args, inputs)
    except KeyboardInterrupt as exc:
        from docsaccel.contract import ended_by, stop_signal

        signum = stop_signal(exc)
        # Named as a serial build names the signal that ended it.
        print(
            f"docsaccel {args.command}: {ended_by(signum)}; its builds were stopped",
            file=sys.stderr,
        )
        return _stopped_status(signum)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run_shard_command(args: argparse.Namespace, sphinx_args: list[str], inputs: list[str]) -> int:
    from docsaccel import layout
    from docsaccel.contract import InputError
    from docsaccel.gallery.report_page import show_unfinished_site
    from docsaccel.incremental.sphinxext.sources import merge_watch
    from docsaccel.shard import build as shard_build

    try:
        project = shard_build.read_project(args.docs, args.root)
        out = Path(args.out or project.docs / "_build" / "html")
        if args.command != "shard-build":  # the one with no site
            shard_build.check_output_folder(out, "--out")
            shard_build.check_site_folder(project, out, "--out")
        if args.command == "shard-build":
            artifact = Path(args.artifact or layout.shard_dir(project.docs, "shard"))
            shard_build.check_output_folder(artifact, "--artifact")
            manifest = shard_build.run_shard_build(
                project,
                args.shards,
                args.index,
                inputs,
                artifact,
                sphinx_args=sphinx_args,
                builder=args.builder,
            )
            print(f"shard {args.index}: executed {len(manifest['executed'])}, kept in {artifact}")
            return 0

        def say(line: str) -> None:
            print(f"docsaccel {args.command}: {line}", file=sys.stderr)

        if args.command == "shard-merge":
            merged = shard_build.run_merge(
                project,
                Path(args.artifacts),
                out,
                None,
                sphinx_args,
                merge_watch,
                show_unfinished_site,
                say=say,
                builder=args.builder,
            )
        else:
            merged = shard_build.run_local(
                project,
                args.shards,
                inputs,
                out,
                sphinx_args,
                merge_watch,
                show_unfinished_site,
                say=say,
                builder=args.builder,
            )
    except shard_build.BuildSaidError:
        return 2  # its build printed why, in one line
    except InputError as exc:  # ShardError, BudgetError, SchemaError: one class
        print(f"docsaccel {args.command}: error: {exc}", file=sys.stderr)
        return 2
    print(f"merged {len(merged)} executed examples from the shards; site: {out}")
    return 0


def _stopped_status(signum: int) -> int:
    """The exit code of a shard command a signal stopped: 128 + its number, as a shell
    reports a serial build the signal ended (130 for Ctrl-C, 143 for ``SIGTERM``)."""
    return 128 + signum


def _terminate(signum: int, frame: object) -> None:
    raise Terminated(signum)


def _add_shard_builds(subparsers: argparse._SubParsersAction) -> None:
    from docsaccel.shard.sphinx_runs import BUILDERS, DEFAULT_BUILDER

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--docs", default="docs", help="the Sphinx conf folder (default: docs)")
    common.add_argument(
        "--root", help="the folder copied for each shard: conf.py may use files in it (default: .)"
    )
    common.add_argument("-W", dest="strict", action="store_true", help="sphinx-build -W")
    common.add_argument(
        "--builder",
        choices=BUILDERS,
        default=DEFAULT_BUILDER,
        help="the Sphinx builder of every build: the site's pages are its files, as a serial "
        f"sphinx-build -b BUILDER writes them (default: {DEFAULT_BUILDER})",
    )
    planned = argparse.ArgumentParser(add_help=False)
    planned.add_argument("inputs", nargs="*", metavar="INPUT", help="history or report(s)")
    planned.add_argument("--shards", type=int, required=True, metavar="N", help="shard count")
    planned.add_argument(
        "--history", action="append", default=[], metavar="FILE", help="same as an INPUT"
    )
    build = subparsers.add_parser(
        "shard-build",
        parents=[common, planned],
        help="execute the examples of one shard; keep their outputs and records",
        description="Plan N shards of every gallery of <docs>/conf.py (from the INPUT timings "
        "and the budget file), build a copy of the project executing only shard I's examples, "
        "and keep their outputs and records in an artifact folder for shard-merge. Exit 2 "
        "when the build fails or an example left no reusable outputs.",
    )
    build.add_argument("--index", type=int, required=True, metavar="I", help="0 to N-1")
    build.add_argument("--artifact", help="artifact folder (default: <docs>/_build/shard)")
    merge = subparsers.add_parser(
        "shard-merge",
        parents=[common],
        help="build the site from shard artifacts without executing any example again",
        description="Check the shard artifacts under ARTIFACTS (every shard once, each example "
        "executed by one shard), copy their outputs into the gallery folders and build the "
        "site; the build stops before any example would execute. Exit 2 on a failure.",
    )
    merge.add_argument("artifacts", metavar="ARTIFACTS", help="folder of shard artifact folders")
    local = subparsers.add_parser(
        "shard-local",
        parents=[common, planned],
        help="run every shard on this machine, a build per core at a time, then merge",
        description="shard-build for every shard (no more shards than examples), at most one "
        "build per core at a time, each in its own process and copy of "
        "the project (logs in <docs>/_build/shard-work/<i>.log), then shard-merge. Exit 2 on "
        "a failure, 130 on Ctrl-C and 143 on SIGTERM (either stops every shard's build).",
    )
    for parser in (merge, local):
        parser.add_argument("--out", help="HTML folder (default: <docs>/_build/html)")
    build.set_defaults(handler=_shard_build_command, command="shard-build", out=None)
    merge.set_defaults(handler=_shard_build_command, command="shard-merge")
    local.set_defaults(handler=_shard_build_command, command="shard-local")


def _cache_command(args: argparse.Namespace) -> int:
    # The example entries and the Sphinx states beside them.
    from docsaccel.incremental import folder_commands

    cache, named = _cache_folder(args.cache, args.docs)
    if cache is None:
        return _emit(error_line(named), 2)  # why there is none
    if not Path(cache).is_dir():
        # Named as the user gave it: the option, the variable or conf.py's setting.
        what = "a file, not a cache folder" if Path(cache).exists() else "no such cache folder"
        return _emit(error_line(f"{named} {cache!r}: {what}"), 2)
    if args.action == "explain":
        text, code = folder_commands.explain(args.example, cache, args.docs)
    elif args.action == "stats":
        text, code = folder_commands.stats(cache)
    else:
        text, code = folder_commands.prune(cache, args.max_size)
    # The cache's functions return the problem; the command line says it is an error.
    return _emit(error_line(text) if code == 2 else text, code)


def _cache_folder(given: str | None, docs: str) -> tuple[str | None, str]:
    """The cache folder every ``cache`` action looks into: ``--cache``, else the one the
    build would use (the variable, else ``docsaccel_cache`` in ``<docs>/conf.py``, read as
    the build reads them), with where it came from (``"--cache"``, the variable, the
    setting); else ``None`` and why."""
    from docsaccel.contract import InputError
    from docsaccel.settings import env_name, read_setting

    if given is not None:
        return given, "--cache"
    variable = env_name("cache")
    conf_file = Path(docs) / "conf.py"
    source = variable
    try:
        folder = read_setting("cache", None, docs)
        if folder is None and not os.environ.get(variable, "").strip() and conf_file.is_file():
            # Only now: reading conf.py needs Sphinx, which --cache or the variable do not.
            from docsaccel import doctor

            if doctor.docs_extra_missing():
                return None, f"{conf_file}: not read: {doctor.DOCS_EXTRA_NEEDED} (or give --cache)"
            from docsaccel.shard.build import read_conf

            conf = argparse.Namespace(**read_conf(Path(docs)))
            folder = read_setting("cache", conf, docs)
            source = f"{conf_file}: docsaccel_cache ="
    except InputError as exc:
        return None, str(exc)
    if folder is not None:
        return str(folder), source
    if os.environ.get(variable, "").strip():
        return (
            None,
            f"{variable}={os.environ[variable].strip()!r} turns the cache off; give --cache",
        )
    from docsaccel.doctor import docs_problem

    # A --docs that names no conf folder is said as such, never as a conf.py to edit.
    no_conf = docs_problem(docs)
    if no_conf is not None:
        return None, f"no cache folder: give --cache, or set {variable}; {no_conf}"
    return None, (
        f"no cache folder: give --cache, or set {variable}, or docsaccel_cache in {conf_file}"
    )


def _add_cache(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "cache",
        help="inspect and prune the example cache",
        description="Inspect and prune the example cache (docsaccel_cache): why an example "
        "runs or is restored, the cache's size and hit rate, and pruning it to a size.",
    )
    parser.set_defaults(handler=lambda args: _usage(parser))
    actions = parser.add_subparsers(title="actions", metavar="ACTION")
    explain = actions.add_parser(
        "explain",
        help="an example's entries: their dependencies and which of them changed",
        description="List the cache entries of an example (or a document's Sphinx state): "
        "the context each was made in, its dependencies, and which of them changed since.",
    )
    explain.add_argument(
        "example",
        help="the example: its path (from here, from the conf folder or inside its gallery) "
        "or its id; or a document (api/pkg.rst)",
    )
    stats = actions.add_parser(
        "stats",
        help="entries, size and the last build's hit rate",
        description="Count the cache's entries and their size, with the last build's hits, "
        "misses and time saved.",
    )
    prune = actions.add_parser(
        "prune",
        help="delete the least recently hit entries",
        description="Delete the least recently hit entries until the cache is at most "
        "--max-size, and every unusable entry whatever the size.",
    )
    prune.add_argument("--max-size", required=True, help="size to keep at most: 500M, 2G...")
    from docsaccel.settings import env_name

    variable = env_name("cache")
    for action, name in ((explain, "explain"), (stats, "stats"), (prune, "prune")):
        action.add_argument(
            "--cache",
            help=f"the cache folder (default: the one {variable} names, else conf.py's "
            "docsaccel_cache)",
        )
        action.add_argument("--docs", default="docs", help="the Sphinx conf folder (default: docs)")
        action.set_defaults(handler=_cache_command, action=name)


def build_parser() -> argparse.ArgumentParser:
    parser = _OneLineErrors(
        prog="docsaccel",
        description="Fast Sphinx docs with executed tutorials: budgets, reports, sharding.",
    )
    parser.add_argument("--version", action="version", version=f"docsaccel {__version__}")
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND")
    _add_doctor(subparsers)
    _add_report(subparsers)
    _add_check(subparsers)
    _add_compare(subparsers)
    _add_history(subparsers)
    _add_shard(subparsers)
    _add_shard_builds(subparsers)
    _add_cache(subparsers)
    return parser


#: The exit code of a command whose output went to a pipe closed early (``| head -1``):
#: 128 + SIGPIPE, as a shell reports a command the closed pipe killed; never 1 or 2, which
#: would read as a verdict or a wrong input.
EXIT_CLOSED_PIPE = 128 + signal.SIGPIPE


def main(argv: Sequence[str] | None = None) -> int:
    try:
        with guarded():
            code = _run(argv)
            # Flushed here, not at the interpreter's exit, where a failure is a traceback.
            sys.stdout.flush()
    except BrokenPipeError:
        _drop_pending_output()
        return EXIT_CLOSED_PIPE
    except StandardOutputError as exc:
        _drop_pending_output()
        sys.stderr.write(f"docsaccel: {error_line(f'cannot write to standard output: {exc}')}")
        return 2
    return code


def _drop_pending_output() -> None:
    """Python's documented way for a closed pipe, used for any output that failed: later
    flushes of stdout (at the interpreter's exit) write to devnull, never a traceback."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    given = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(_dash_values_joined(given, parser))
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    return handler(args)


def _dash_values_joined(argv: list[str], parser: argparse.ArgumentParser) -> list[str]:
    """``argv`` with a value that starts with a dash joined to its option (``--max-size
    -1G`` as ``--max-size=-1G``): argparse takes it for an unknown option and says only
    "expected one argument", where the option's own check refuses it, naming it."""
    takes_value, known = _option_strings(parser)
    joined: list[str] = []
    index = 0
    while index < len(argv):
        arg, following = argv[index], argv[index + 1 : index + 2]
        if arg in takes_value and following and _dashed_value(following[0], known):
            joined.append(f"{arg}={following[0]}")
            index += 2
        else:
            joined.append(arg)
            index += 1
    return joined


def _dashed_value(arg: str, known: set[str]) -> bool:
    """Whether ``arg`` starts with a dash but is no option of the parser (nor ``--``)."""
    return arg.startswith("-") and arg != "--" and arg.split("=", 1)[0] not in known


def _option_strings(parser: argparse.ArgumentParser) -> tuple[set[str], set[str]]:
    """The options of ``parser`` and its subcommands that take one value, and all."""
    takes_value: set[str] = set()
    known: set[str] = set()
    for action in parser._actions:
        known.update(action.option_strings)
        if action.option_strings and action.nargs is None:
            takes_value.update(action.option_strings)
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                sub_takes, sub_known = _option_strings(sub)
                takes_value |= sub_takes
                known |= sub_known
    return takes_value, known


if __name__ == "__main__":
    sys.exit(main())
