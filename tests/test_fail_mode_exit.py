"""Fail mode ends ``sphinx-build`` as the docs say: the examples over budget as ``ERROR:``
lines, status 2, and nothing else (Sphinx 9 prints a crash report for an exception out of
a build), whether the example ran in this build or was restored from the example cache."""

from __future__ import annotations

import shutil

import pytest
from helpers.gallery_build import build, make_project, run_cli

pytestmark = pytest.mark.slow

#: What Sphinx prints around an exception it did not expect, in any release. (The
#: interrupted example's own traceback is sphinx-gallery's warning about it.)
CRASH_WORDS = ("Exception occurred", "Versions", "Loaded Extensions", "sphinx-err-", "issue")
SLEEP_BUDGET = '[examples]\n"plot_sleep.py" = "0.5s"\n'
FAIL = {"DOCSACCEL_ON_OVERRUN": "fail"}
MIB = 1 << 20
#: The most virtual memory one process of a test build may map.
ADDRESS_SPACE = 4 << 30


def assert_no_crash_report(output: str) -> None:
    """The log ends with docsaccel's ``ERROR:`` line, not with Sphinx's crash report."""
    for word in CRASH_WORDS:
        assert word not in output, output
    last = output.strip().splitlines()[-1]
    assert last.startswith("ERROR: docsaccel: 1 example ran out of their budget"), output


def test_an_example_over_its_budget_fails_the_build_with_error_lines(tmp_path) -> None:
    src = make_project(tmp_path, ["plot_sleep.py", "plot_quick.py"], budgets=SLEEP_BUDGET)

    built = build(src, env=FAIL)

    assert built.returncode == 2, built.output
    assert_no_crash_report(built.output)
    assert "examples/plot_sleep.py" in built.output
    assert built.record("plot_sleep.py")["status"] == "interrupted"


def test_the_verbose_log_ends_with_the_one_error_line_too(tmp_path) -> None:
    """Without ``-q``, nothing is logged after the ending line (the Sphinx state's note
    included), and the example over budget is not an ``ERROR:`` line of its own."""
    src = make_project(tmp_path, ["plot_sleep.py", "plot_quick.py"], budgets=SLEEP_BUDGET)
    env = {**FAIL, "DOCSACCEL_CACHE": str(tmp_path / "cache")}  # the Sphinx state on

    built = build(src, env=env, quiet=False)

    assert built.returncode == 2, built.output
    assert_no_crash_report(built.output)
    errors = [line for line in built.output.splitlines() if line.startswith("ERROR:")]
    assert len(errors) == 1, built.output
    assert "examples/plot_sleep.py was interrupted at its budget of 0.5s" in errors[0], errors[0]
    # stdout's last line, the Sphinx state's note no more (the ERROR line is on stderr).
    assert "Sphinx state" not in built.output.split("dumping object inventory")[-1], built.output


def test_an_example_restored_over_its_budget_fails_the_build_too(tmp_path) -> None:
    """Its run, in a warn-mode build, was over its budget: restored, it still fails the
    build in fail mode, as ``docsaccel check`` fails its report."""
    src = make_project(tmp_path, ["plot_sleep.py", "plot_quick.py"], budgets=SLEEP_BUDGET)
    cache = {"DOCSACCEL_CACHE": str(tmp_path / "cache")}
    warned = build(src, env=cache)
    assert warned.returncode == 0, warned.output
    assert warned.record("plot_sleep.py")["status"] == "over-budget"

    failed = build(src, env={**cache, **FAIL}, outdir=tmp_path / "again")

    sleep = failed.record("plot_sleep.py")
    assert sleep["status"] == "cached" and sleep["cache"]["hit"], failed.output
    assert "in its run the cache restored" in failed.output
    assert failed.returncode == 2, failed.output
    assert_no_crash_report(failed.output)


def test_an_example_that_raises_ends_the_build_in_one_line(tmp_path) -> None:
    """sphinx-gallery ends such a build with every traceback again in an exception, which
    Sphinx 9 prints as a crash report ("please open an issue"): one line instead, naming
    the example and its exception, its traceback logged once as it failed."""
    src = make_project(tmp_path, ["plot_crash.py", "plot_quick.py"])

    built = build(src)

    assert built.returncode == 2, built.output
    for word in (*CRASH_WORDS, "Here is a summary"):
        assert word not in built.output, built.output
    last = built.output.strip().splitlines()[-1]
    assert last == (
        "ERROR: sphinx-gallery: 1 example failed: examples/plot_crash.py "
        "(RuntimeError: this example crashes on purpose); tracebacks above"
    ), built.output
    assert built.output.count('raise RuntimeError("this example crashes on purpose")') == 1
    assert built.record("plot_crash.py")["status"] == "failed"


def test_an_expected_failure_that_passes_ends_the_build_in_one_line(tmp_path) -> None:
    conf = 'sphinx_gallery_conf["expected_failing_examples"] = ["examples/plot_quick.py"]\n'
    src = make_project(tmp_path, ["plot_quick.py"], conf=conf)

    built = build(src)

    assert built.returncode == 2, built.output
    for word in CRASH_WORDS:
        assert word not in built.output, built.output
    last = built.output.strip().splitlines()[-1]
    assert last.startswith(
        "ERROR: sphinx-gallery: 1 example expected to fail did not: examples/plot_quick.py"
    ), built.output
    assert "expected_failing_examples" in last


def assert_not_running(out: str, example: str, parallel: int) -> None:
    """A gate's ``out`` never says ``example``, whose error ended the build, was running
    or did not finish. In a serial build no other example was; in a ``parallel`` one the
    example another worker ran as the build aborted may have been, and is said so."""
    if parallel == 1:
        assert "was running" not in out, out
    clauses = (clause for line in out.splitlines() for clause in line.split("; "))
    for clause in clauses:
        if "running" in clause or "did not finish" in clause:
            assert example not in clause, out


def _aborting_conf(parallel: int) -> str:
    """The lines of ``conf.py`` that abort the build at an example's error, its examples
    run by ``parallel`` worker processes (1: in the build's own process)."""
    return (
        'sphinx_gallery_conf["abort_on_example_error"] = True\n'
        f'sphinx_gallery_conf["parallel"] = {parallel}\n'
    )


@pytest.mark.parametrize("parallel", [1, 2])
def test_an_example_error_with_abort_on_example_error_stops_in_one_line(tmp_path, parallel) -> None:
    """sphinx-gallery lets the example's own exception out of the build: one line naming
    the example instead of the crash report, and the gate fails the build for it (exit 3,
    the example named) rather than refusing it as unfinished ("rebuild"), whether the
    example ran in the build's process or in a worker of a ``parallel`` build."""
    conf = _aborting_conf(parallel)
    src = make_project(tmp_path, ["plot_crash.py", "plot_quick.py"], conf=conf)

    built = build(src)

    assert built.returncode == 2, built.output
    for word in CRASH_WORDS:
        assert word not in built.output, built.output
    assert (
        "ERROR: sphinx-gallery: examples/plot_crash.py failed (RuntimeError: this example "
        "crashes on purpose; traceback above), and abort_on_example_error stops the build there"
    ) in built.output
    crash = built.record("plot_crash.py")
    assert crash["status"] == "failed", crash
    assert crash["error"].startswith("it raised RuntimeError"), crash
    assert crash["finished_at"] is not None, crash
    checked = run_cli("check", str(built.report_path))
    out = checked.stdout + checked.stderr
    assert checked.returncode == 3, out
    assert out.startswith(
        "FAIL: the build failed: 1 example failed: examples/plot_crash.py (it raised RuntimeError"
    ), out
    assert_not_running(out, "examples/plot_crash.py", parallel)


#: The limits whose interruption ``abort_on_example_error`` makes the build's end: the
#: example, the budgets file, the environment, the record's ``interrupted_by``, and how
#: ``check`` and ``compare`` say the example.
_ABORTING_LIMITS = {
    "time": ("plot_sleep.py", SLEEP_BUDGET, FAIL, "time", "stopped at its budget"),
    "memory": (
        "plot_m_grow.py",
        'memory_default = "300M"\n',
        FAIL,
        "memory",
        "stopped at its budget",
    ),
    "ceiling": ("plot_m_grow.py", None, {}, "ceiling", "stopped by the build's memory ceiling"),
}


@pytest.mark.parametrize("parallel", [1, 2])
@pytest.mark.parametrize("limit", list(_ABORTING_LIMITS))
def test_an_example_stopped_by_a_limit_with_abort_on_example_error_fails_by_budgets(
    tmp_path, limit, parallel
) -> None:
    """The interruption stops the build at once, as any example error does with
    ``abort_on_example_error``: the example finished, interrupted by its limit (never
    "was running"), the build failed by its budgets (``build.budgets_failed``, docsaccel's
    one line), and the gates fail it naming the example as stopped at its limit; the
    same when the example ran in a worker of a ``parallel`` build."""
    name, budgets, env, by, words = _ABORTING_LIMITS[limit]
    conf = _aborting_conf(parallel)
    src = make_project(tmp_path, [name, "plot_quick.py"], conf=conf, budgets=budgets)
    if limit == "ceiling":
        quick = build(make_project(tmp_path / "quick", ["plot_quick.py"]))
        ceiling = quick.record("plot_quick.py")["peak_rss_bytes"] + 300 * MIB
        env = {"DOCSACCEL_MEMORY_LIMIT": f"{ceiling}B"}

    built = build(src, env=env, quiet=False, address_space=ADDRESS_SPACE)

    assert built.returncode == 2, built.output
    example = f"examples/{name}"
    record = built.record(name)
    assert (record["status"], record["interrupted_by"]) == ("interrupted", by), record
    assert record["finished_at"] is not None, record
    failed = built.report["build"].get("budgets_failed")
    assert failed and example in failed, built.report["build"]
    assert failed.startswith("docsaccel: 1 example ran out of their budget"), failed
    assert f"ERROR: {failed}" in built.output, built.output
    assert "abort_on_example_error stops the build there" not in built.output, built.output
    # Its one progress line says the status its record has.
    progress = [line for line in built.output.splitlines() if f"] {example}: " in line]
    assert len(progress) == 1 and ", interrupted" in progress[0], built.output
    assert "did not finish" not in progress[0], progress[0]

    checked = run_cli("check", str(built.report_path))
    out = checked.stdout + checked.stderr
    assert checked.returncode == 3, out
    assert out.splitlines()[0] == f"FAIL: the build failed: 1 example {words}: {example}", out
    assert_not_running(out, example, parallel)
    base = build(make_project(tmp_path / "base", ["plot_quick.py"]))
    compared = run_cli(
        "compare", str(base.report_path), str(built.report_path), "--allow-incomplete"
    )
    out = compared.stdout + compared.stderr
    assert compared.returncode == 3, out
    assert out.startswith(f"The head build failed: 1 example {words}: {example}"), out
    assert_not_running(out, example, parallel)


def test_check_names_the_example_stopped_at_its_budget_before_the_warnings_of_w(tmp_path):
    """With ``-W``, the example's stop is also a warning Sphinx treats as an error: the
    cause comes first in ``check``'s first line, the consequence after it."""
    src = make_project(tmp_path, ["plot_sleep.py", "plot_quick.py"], budgets=SLEEP_BUDGET)
    built = build(src, "-W", env=FAIL)
    assert built.returncode == 2, built.output
    checked = run_cli("check", str(built.report_path))
    assert checked.returncode == 3, checked.stdout + checked.stderr
    first, then = checked.stdout.splitlines()[:2]
    assert (
        first == "FAIL: the build failed: 1 example stopped at its budget: examples/plot_sleep.py"
    )
    assert then.startswith("FAIL: the build failed: Sphinx gave 1 warning, treated as errors (-W)")


def test_no_gate_passes_a_build_fail_mode_failed(tmp_path) -> None:
    """An example over its budget fails a fail-mode build (status 2), and its report says
    so: ``check`` and ``compare`` exit 3 as for any failed build, naming the example once,
    the report view says the build failed, and ``history append`` refuses it. The same
    example in warn mode passes the build, and ``check`` exits 1 on it."""
    src = make_project(tmp_path, ["plot_sleep.py", "plot_quick.py"], budgets=SLEEP_BUDGET)
    warned = build(src)
    assert warned.returncode == 0, warned.output
    base = tmp_path / "base.json"
    shutil.copy(warned.report_path, base)
    assert run_cli("check", str(base)).returncode == 1
    # Without its outputs, sphinx-gallery runs the example again rather than reuse them.
    shutil.rmtree(src / "auto_examples")

    failed = build(src, env=FAIL)

    assert failed.returncode == 2, failed.output
    assert failed.record("plot_sleep.py")["status"] == "interrupted"
    report = str(failed.report_path)
    checked = run_cli("check", report)
    assert checked.returncode == 3, checked.stdout + checked.stderr
    lines = checked.stdout.splitlines()
    assert lines[0] == (
        "FAIL: the build failed: 1 example stopped at its budget: examples/plot_sleep.py"
    ), checked.stdout
    # Said once: the build's own line only repeats the example named above.
    assert "ran out of their budget" not in checked.stdout, checked.stdout
    assert "FAIL: 1 of 2 examples over budget:" in lines, checked.stdout
    assert any(
        line.startswith("  examples/plot_sleep.py: ") and "(interrupted) > budget 0.5s" in line
        for line in lines
    ), checked.stdout
    compared = run_cli("compare", str(base), report)
    assert compared.returncode == 3, compared.stdout + compared.stderr
    assert "1 example stopped at its budget: examples/plot_sleep.py" in compared.stdout
    viewed = run_cli("report", report)
    assert "The build failed: 1 example stopped at its budget: " in viewed.stdout, viewed.stdout
    history = tmp_path / "history.jsonl"
    assert run_cli("history", "append", str(base), "--to", str(history)).returncode == 0
    before = history.read_bytes()
    appended = run_cli("history", "append", report, "--to", str(history))
    assert appended.returncode != 0, appended.stdout
    (said,) = appended.stderr.strip().splitlines()
    assert "the build failed (1 example stopped at its budget: examples/plot_sleep.py)" in said
    assert history.read_bytes() == before


@pytest.mark.parametrize(
    ("conf", "args", "env", "given"),
    [
        ("", (), FAIL, "(DOCSACCEL_ON_OVERRUN=fail)"),
        ('docsaccel_on_overrun = "fail"\n', (), {}, "(docsaccel_on_overrun = 'fail')"),
        ("", ("-D", "docsaccel_on_overrun=fail"), {}, "(-D docsaccel_on_overrun=fail)"),
    ],
    ids=["variable", "conf.py", "-D"],
)
def test_the_interruption_names_where_fail_mode_was_set(tmp_path, conf, args, env, given):
    """The error of an example stopped at its budget names the setting as the user gave
    it: the variable, ``conf.py``'s key, or ``-D``."""
    examples = ["plot_sleep.py"]
    src = make_project(tmp_path, examples, conf=conf, budgets=SLEEP_BUDGET)

    built = build(src, *args, env=env)

    assert built.returncode == 2, built.output
    error = built.record("plot_sleep.py")["error"]
    assert given in error, error
    assert given in built.output, built.output
