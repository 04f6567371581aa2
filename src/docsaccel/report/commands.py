"""The work behind ``docsaccel report``, ``check``, ``compare`` and ``history append``.

The design, in full: the reports guide's *Design* section.

Example: ``docsaccel check --budget 30s`` on a sphinx-gallery file, then on a missing one.

>>> import tempfile
>>> from pathlib import Path
>>> folder = tempfile.TemporaryDirectory()
>>> times = Path(folder.name, "sg_execution_times.rst")
>>> _ = times.write_text("- **00:42.000**: :ref:`sphx_glr_auto_examples_plot_a.py` (``plot_a.py``)")
>>> text, code = run_check([str(times)], flat_budget="30s")
>>> print(text, code)
FAIL: 1 of 1 example over budget:
  plot_a.py: 42s > budget 30s from --budget 30s
note: .../sg_execution_times.rst: sphinx-gallery's file does not say whether an example failed, ...
 1
>>> run_check([str(times.with_name("missing.json"))], flat_budget="30s")
('error: .../missing.json: cannot read the input: ...\\n', 2)
>>> folder.cleanup()
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from docsaccel.budgets import parse_bounded_duration
from docsaccel.contract import InputError, error_line
from docsaccel.memory_sizes import parse_size
from docsaccel.report.chart import is_chart_svg
from docsaccel.report.check import (
    EXIT_BUILD_FAILED,
    apply_budgets,
    check_timings,
    format_check,
    one_line,
)
from docsaccel.report.compare import (
    DEFAULT_ABSOLUTE_BYTES,
    DEFAULT_ABSOLUTE_SECONDS,
    DEFAULT_RELATIVE,
    Comparison,
    check_same_kind,
    compare_timings,
    format_comparison,
    mixed_kinds,
)
from docsaccel.report.history import (
    PART_OF_BUILD_TEXT,
    append_history,
    read_builds,
    recent_history,
    same_kind,
)
from docsaccel.report.html import is_html_report, render_html
from docsaccel.report.inputs import (
    HTML_VIEW,
    MARKDOWN_VIEW,
    judged_input,
    load_budget_file,
    other_kind_at,
)
from docsaccel.report.markdown import is_markdown_report, render_markdown
from docsaccel.report.model import LoadedInput, budget_failures_text, unique_timings
from docsaccel.report.summary import SUMMARY_SCHEMA, summarize
from docsaccel.report.trend import build_trends
from docsaccel.settings import in_package, missing_folder

__all__ = ["REPORT_FORMATS", "run_check", "run_compare", "run_history_append", "run_report"]

EXIT_UNREADABLE = 2
# InputError covers every reader (reports, budget files, histories) and a missing extra;
# ValueError the argument checks of the views (--top 0, a negative threshold).
_INPUT_ERRORS = (InputError, ValueError)


def _guarded(work: Callable[[], tuple[str, int]]) -> tuple[str, int]:
    try:
        return work()
    except _INPUT_ERRORS as exc:
        return error_line(str(exc)), EXIT_UNREADABLE


def refuse_same_input(first: str, second: str, role: str, instead: str) -> None:
    """Raise :class:`InputError` when ``second`` is the file ``first`` names (``role``:
    what ``first`` is to the command): a build against itself says "0 regressions" of
    nothing. ``instead``: what to do. Paths of one file by another name count too.

    >>> refuse_same_input("r1.json", "./r1.json", "the base", "compare two builds")
    Traceback (most recent call last):
    ...
    docsaccel.contract.InputError: ./r1.json: is the base (r1.json) too; compare two builds
    """
    same = first == second or os.path.normpath(first) == os.path.normpath(second)
    if not same:
        with contextlib.suppress(OSError):
            same = Path(first).samefile(second)
    if same:
        raise InputError(f"{second}: is {role} ({first}) too; {instead}")


def _report(
    report: str, baseline: str | None, history: str | None, last: int, fmt: str, top: int
) -> tuple[str, int]:
    if last < 1:
        raise ValueError(f"--last must be 1 or more, got {last!r}")
    # A sphinx-gallery file says what its build's report says of each example.
    loaded = judged_input(report)
    loaded.require_current()
    trends = None
    stats = None
    if history:
        # Only builds of the report's own kind (fast or full) are like with like.
        fast = loaded.build.get("fast")
        builds = same_kind(read_builds(history), fast if isinstance(fast, bool) else None)
        stats = recent_history((b.durations for b in builds), last)
        trends = build_trends(builds, last)
    base = None
    if baseline:
        refuse_same_input(
            report, baseline, "the report", "give another build's report as --baseline"
        )
        base = _baseline_input(baseline)
        check_same_kind(base, loaded, hint="Give a baseline of the report's own kind")
    summary = summarize(
        loaded,
        baseline=base.timings if base else None,
        history=stats,
        baseline_failed=base.judged_failures() if base else (),
        baseline_no_status=base.no_status_text() if base else "",
    )
    return REPORT_FORMATS[fmt](summary, top, trends), 0


REPORT_FORMATS = {
    "md": lambda summary, top, trends: render_markdown(summary, top=top, trends=trends),
    "html": lambda summary, top, trends: render_html(summary, trends=trends),
    "json": lambda summary, top, trends: (
        json.dumps(summary.to_json(), indent=2, allow_nan=False) + "\n"
    ),
}


#: The view each file suffix names, so ``-o budget.html`` writes the HTML view.
_SUFFIX_VIEWS = {".md": "md", ".markdown": "md", ".html": "html", ".htm": "html", ".json": "json"}


def view_format(fmt: str | None, output: str | None) -> str:
    """The view ``report`` writes: ``fmt`` when given, else the one ``output``'s suffix
    names, else Markdown. A ``fmt`` another suffix names is refused (:class:`InputError`):
    Markdown in ``budget.html`` is a file of another kind than its name says.

    >>> view_format(None, "budget.html"), view_format("json", None), view_format(None, "out")
    ('html', 'json', 'md')
    """
    named = _SUFFIX_VIEWS.get(Path(output).suffix.lower()) if output else None
    if fmt is None:
        return named or "md"
    if named is not None and named != fmt:
        raise InputError(
            f"{output}: names a {named} file, but --format {fmt} was given; "
            f"pass --format {named}, or an output named for the {fmt} view"
        )
    return fmt


def run_report(
    report: str,
    baseline: str | None = None,
    history: str | None = None,
    last: int = 10,
    fmt: str | None = None,
    top: int = 10,
    output: str | None = None,
) -> tuple[str, int]:
    """The report view of ``report`` in ``fmt`` (``md``, ``html`` or ``json``; when
    ``None``, the one ``output``'s suffix names: :func:`view_format`).

    ``output``: where the caller will write it; exit 2 if that is one of the inputs, or a
    file of another kind (a report, a history): a view never replaces what it reads.
    """

    def work() -> tuple[str, int]:
        if output is not None:  # what the file is comes first, then what its name says
            refuse_output(output, [report, baseline, history], fmt or view_format(None, output))
        view = view_format(fmt, output)
        return _report(report, baseline, history, last, view, top)

    return _guarded(work)


#: The ``schema`` of each view's own file (``None``: the view is not JSON).
_VIEW_SCHEMAS = {"md": None, "html": None, "json": SUMMARY_SCHEMA, "svg": None}
#: The kind (:func:`~docsaccel.report.inputs.other_kind`) of each view's own file.
_VIEW_KINDS = {"md": MARKDOWN_VIEW, "html": HTML_VIEW, "json": SUMMARY_SCHEMA, "svg": "svg"}
#: How each non-JSON view's own file is recognised from its head and its tail ("svg": the
#: chart ``python -m docsaccel.report.chart`` draws).
_VIEW_RECOGNISERS: dict[str, Callable[[str, str], bool]] = {
    "md": is_markdown_report,
    "html": is_html_report,
    "svg": is_chart_svg,
}
#: Bytes read from each end of an existing target to recognise it.
_PEEK_BYTES = 1 << 16


def refuse_output(output: str, inputs: Sequence[str | None], fmt: str) -> None:
    """Raise :class:`InputError` unless ``output`` may take the ``fmt`` view: a file not
    there yet in a folder that is (:func:`~docsaccel.settings.missing_folder`), an empty
    one, or a file of that view docsaccel wrote before.

    Anything else (one of ``inputs``, a report or history, a budget file, a page of the
    docs, a README) is the user's: it is refused with one line saying why, never replaced.
    Nothing is written inside the installed docsaccel package
    (:func:`~docsaccel.settings.in_package`).
    """
    target = Path(output)
    inside = in_package(target)
    if inside is not None:
        raise InputError(f"{output}: {inside}")
    problem = missing_folder(target)
    if problem is not None:
        raise InputError(f"{output}: cannot write the output: {problem}")
    if not target.is_file() or target.stat().st_size == 0:
        return  # not there yet, or a folder the write then names, or empty
    for given in inputs:
        if given is not None and Path(given).exists() and target.samefile(given):
            raise InputError(f"{output}: is an input of this command; write the output elsewhere")
    found, schema = _docsaccel_schema(target), _VIEW_SCHEMAS[fmt]
    if (found is not None and found == schema) or (found is None and _is_view(target, fmt)):
        return
    # Another file of docsaccel's is named as what it is, by the one owner of that.
    other = other_kind_at(target, _VIEW_KINDS[fmt])
    if other is not None:
        raise InputError(f"{output}: is {other}, not this command's {fmt} output; not overwritten")
    if found is not None:
        raise InputError(
            f"{output}: is a {found!r} file, not this command's output; not overwritten"
        )
    raise InputError(
        f"{output}: not a file docsaccel wrote (not its {fmt} output); remove it first"
    )


def _is_view(path: Path, fmt: str) -> bool:
    """Whether ``path`` holds the ``fmt`` view as docsaccel writes it (never for JSON: its
    ``schema`` says what it is)."""
    recognise = _VIEW_RECOGNISERS.get(fmt)
    if recognise is None:
        return False
    try:
        with path.open("rb") as stream:
            head = stream.read(_PEEK_BYTES)
            stream.seek(max(0, path.stat().st_size - _PEEK_BYTES))
            tail = stream.read()
    except OSError:
        return False
    return recognise(head.decode("utf-8", "replace"), tail.decode("utf-8", "replace"))


def _docsaccel_schema(path: Path) -> str | None:
    """The ``schema`` of the docsaccel JSON file (or JSON lines) at ``path``, else ``None``."""
    try:
        with path.open("rb") as stream:
            head = stream.read(1 << 16).decode("utf-8", "replace")
    except OSError:
        return None
    for text in (head, head.split("\n", 1)[0]):
        try:
            data = json.loads(text)
        except ValueError:
            continue
        schema = data.get("schema") if isinstance(data, dict) else None
        if isinstance(schema, str) and schema.startswith("docsaccel."):
            return schema
    # A report larger than the part read: its header says what it is.
    if head.lstrip().startswith("{") and '"schema": "docsaccel.' in head:
        return head.split('"schema": "', 1)[1].split('"', 1)[0]
    return None


def _gate_input(path: str, allow_incomplete: bool, judges_failure: bool = True) -> LoadedInput:
    """The input at ``path`` for a gate (:func:`~docsaccel.report.inputs.judged_input`: a
    sphinx-gallery file of a build that failed is judged by that build's report): refused
    when a later build of its project failed
    before docsaccel ran, leaving it in its output folder (:meth:`LoadedInput.require_current`),
    when the build ran none of its examples (even with ``allow_incomplete``: it holds
    nothing to judge) and when it did not finish (unless ``allow_incomplete``, or,
    ``judges_failure``, an example failed it: a failed build the gate judges as failed).

    ``judges_failure=False`` for ``compare``: it judges no failed build by itself, so an
    unfinished build is refused whatever failed in it, base and head alike."""
    loaded = judged_input(path)
    loaded.require_current()
    loaded.require_examples_ran()
    # A build an example failed (abort_on_example_error ends it there) failed: check
    # judges it as such (exit 3, naming the example), not refused as unfinished ("rebuild").
    # A hard stop alone is no such verdict: it ended the build before the build could
    # give one, so that build is refused as unfinished unless allowed.
    hard = set(loaded.stopped_hard)
    failed_by_an_example = (
        judges_failure
        and not loaded.build.get("records_lost")
        and (
            loaded.failed_examples
            or loaded.build_failures()
            or any(t.id not in hard for t in loaded.budget_failures)
        )
    )
    # A build running now is judged by no gate, whatever is allowed: its examples are
    # not done, not stopped, and its verdict is not in.
    if (not allow_incomplete and not failed_by_an_example) or loaded.building_now:
        loaded.require_complete()
    return loaded


def _baseline_input(path: str) -> LoadedInput:
    """The ``--baseline`` of ``report``, judged as ``compare`` judges its base: refused
    when its build ran none of its examples or did not finish (its stopped examples
    would read as a speed-up or a slow-down). ``report`` has no ``--allow-incomplete``,
    nor a line to say the baseline did not finish, so an example that stopped the build
    does not let it through either."""
    loaded = _gate_input(path, allow_incomplete=True)
    loaded.require_complete(option=None)
    return loaded


def _check(
    inputs: Sequence[str],
    flat_budget: str | None,
    budgets: str | None,
    allow_incomplete: bool,
    fmt: str = "text",
    source_dir: str | None = None,
) -> tuple[str, int]:
    flat = None
    if flat_budget is not None:
        flat = parse_bounded_duration(
            flat_budget, "--budget", '"none" is not a budget; leave the option out instead'
        )
    table = load_budget_file(budgets) if budgets else None
    loaded = [_gate_input(path, allow_incomplete) for path in inputs]
    folders = _source_dirs(loaded, source_dir, fmt)
    timings = unique_timings(loaded)
    checked = apply_budgets(timings, flat_seconds=flat, table=table)
    result = check_timings(checked)
    sphinx_failed = [f"{why} ({one.path})" for one in loaded for why in one.build_failures()]
    overruns = [budget_failures_text(one.budget_failures) for one in loaded]
    incomplete = [f"{one.path}: {one.incomplete_text()}" for one in loaded if not one.complete]
    statusless = [text for one in loaded if (text := one.no_status_text())]
    result = dataclasses.replace(
        result,
        sphinx_failed=sphinx_failed,
        budgets_failed=[why for why in overruns if why],
        incomplete=incomplete,
        statusless=statusless,
        times_only=not all(one.holds_status for one in loaded),
    )
    # The build's own check: a rule that matches no example is said, never silently idle
    # (sphinx-gallery's files name examples by file name, which a "sub/..." rule misses).
    unused = table.check_examples((t.name, t.id) for t in timings) if table is not None else []
    if fmt == "github":
        from docsaccel.report.github import annotation, check_annotations

        prefixes = {t.id: prefix for one, prefix in folders for t in one.timings}
        notes = "".join(annotation("warning", m, title="Unused budget rule") + "\n" for m in unused)
        notes += "".join(
            annotation("error", f"the build failed: {why}", title="Build failed") + "\n"
            for why in [*result.budgets_failed, *sphinx_failed]
        )
        # A build that did not finish failed (CheckResult.exit_code), never silently.
        notes += "".join(
            annotation("error", why, title="Build did not finish") + "\n" for why in incomplete
        )
        notes += "".join(
            annotation("notice", text, title="Failures not known") + "\n" for text in statusless
        )
        if result.unmeasured:
            title = "Not measured"
            notes += annotation("notice", result.unmeasured_text(), title=title) + "\n"
        return notes + check_annotations(checked, prefixes), result.exit_code
    notes = "".join(f"warning: {one_line(message)}\n" for message in unused)
    return notes + format_check(result) + "\n", result.exit_code


def run_check(
    inputs: Sequence[str],
    flat_budget: str | None = None,
    budgets: str | None = None,
    allow_incomplete: bool = False,
    fmt: str = "text",
    source_dir: str | None = None,
) -> tuple[str, int]:
    """Check every example of every input against its budget (see :mod:`.check`).

    The report of a build that did not finish is exit 2 unless ``allow_incomplete``, and
    then exit 3 (it failed: its examples are judged all the same). ``fmt="github"``:
    GitHub Actions workflow commands instead of text (see :mod:`.github`);
    ``source_dir``: the Sphinx source folder from the repository root.
    """
    if not inputs:
        return error_line("no input given"), EXIT_UNREADABLE
    return _guarded(lambda: _check(inputs, flat_budget, budgets, allow_incomplete, fmt, source_dir))


def _compare(
    base: str,
    head: str,
    relative: float,
    absolute: float,
    fail: bool,
    fmt: str,
    allow_incomplete: bool,
    allow_mixed: bool,
    source_dir: str | None,
    absolute_memory: str | None = None,
) -> tuple[str, int]:
    absolute_bytes = DEFAULT_ABSOLUTE_BYTES
    if absolute_memory is not None:
        absolute_bytes = parse_size(absolute_memory, "--absolute-memory", allow_zero=True)
    base_input = _gate_input(base, allow_incomplete, judges_failure=False)
    head_input = _gate_input(head, allow_incomplete, judges_failure=False)
    # After reading them: what is wrong with an input itself says more.
    refuse_same_input(base, head, "the base", "compare the reports of two builds")
    if not allow_mixed:
        check_same_kind(base_input, head_input)
    mixed = mixed_kinds(base_input, head_input)
    comparison = compare_timings(
        base_input.timings,
        head_input.timings,
        relative,
        absolute,
        absolute_bytes,
        base_lists_plan=base_input.lists_plan,
        head_lists_plan=head_input.lists_plan,
    )
    # An input that did not finish failed: LoadedInput.judged_failures says so and why.
    comparison = dataclasses.replace(
        comparison,
        head_failed=head_input.judged_failures(),
        base_failed=base_input.judged_failures(),
        mixed=mixed,
        statusless=[text for one in (head_input, base_input) if (text := one.no_status_text())],
    )
    code = _compare_code(comparison, fail)
    folders = _source_dirs([head_input], source_dir, fmt)
    if fmt == "github":
        from docsaccel.report.github import comparison_annotations

        prefix = folders[0][1]
        return comparison_annotations(comparison, prefix, fail), code
    return format_comparison(comparison, markdown=fmt == "md"), code


def _compare_code(comparison: Comparison, fail_on_regression: bool) -> int:
    """``compare``'s exit code: a failed head build (one that did not finish too) is
    never a pass, whatever its times (exit 3, as ``check`` judges it); else 1 on a
    regression with ``fail_on_regression``, else 0."""
    if comparison.head_failed:
        return EXIT_BUILD_FAILED
    return 1 if fail_on_regression and comparison.regressions else 0


def _source_dirs(
    loaded: Sequence[LoadedInput], source_dir: str | None, fmt: str
) -> list[tuple[LoadedInput, str]]:
    """Each input with the Sphinx source folder of its examples, from the repository root,
    for the annotations of ``--format github``. A given ``--source-dir`` is checked
    whatever the format (it must be a folder holding each input's examples): a mistyped
    one is refused, never left unread. Without it and annotations, none is needed."""
    if source_dir is None and fmt != "github":
        return []
    from docsaccel.report.github import source_prefix

    return [(one, source_prefix(one, source_dir)) for one in loaded]


def run_compare(
    base: str,
    head: str,
    relative: float = DEFAULT_RELATIVE,
    absolute: float = DEFAULT_ABSOLUTE_SECONDS,
    fail_on_regression: bool = False,
    markdown: bool = False,
    allow_incomplete: bool = False,
    allow_mixed: bool = False,
    fmt: str | None = None,
    source_dir: str | None = None,
    absolute_memory: str | None = None,
) -> tuple[str, int]:
    """Compare two inputs; exit 1 on a regression (of time or memory) only with
    ``fail_on_regression``; exit 3 when the head build failed, whatever its times.

    The report of a build that did not finish is exit 2 unless ``allow_incomplete``, and
    then, as head, exit 3 (it failed: its examples are compared all the same); a
    fast build against a full one is refused (exit 2) unless ``allow_mixed``.
    ``fmt``: ``text``, ``md`` or ``github`` (workflow commands; default: ``markdown``).
    ``absolute_memory``: the absolute threshold of a memory regression, a size (``"100M"``).
    """
    fmt = fmt or ("md" if markdown else "text")
    return _guarded(
        lambda: _compare(
            base,
            head,
            relative,
            absolute,
            fail_on_regression,
            fmt,
            allow_incomplete,
            allow_mixed,
            source_dir,
            absolute_memory,
        )
    )


def run_history_append(report: str, history: str | Path) -> tuple[str, int]:
    """Append ``report`` (any input ``check`` reads) as one line of ``history``."""

    def work() -> tuple[str, int]:
        appended = append_history(report, history)
        # Said as check says it: the history records its times, not whether they passed.
        note = f"note: {one_line(appended.note)}\n" if appended.note else ""
        if appended.part_of_build:
            note += f"note: {PART_OF_BUILD_TEXT}\n"
        return f"appended {appended.examples} examples from {report} to {history}\n{note}", 0

    return _guarded(work)
