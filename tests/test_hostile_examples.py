"""Fail-mode budgets against examples that try to escape them, in real builds.

Each build holds several hostile examples where one build can still tell them apart
(those the first tier stops run one after another); an example that takes the hard stop
or ends the process gets a build of its own. Every build runs serially and with
``parallel: 2``. The grace before the hard stop is shortened with
``DOCSACCEL_INTERRUPT_GRACE`` to keep the table quick.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.gallery_build import build, make_project
from helpers.processes import assert_no_child_survives

from docsaccel.records import read_records

pytestmark = pytest.mark.slow

BUDGET = 3.0
GRACE = 1.0
# Generous: the machine running the tests may be loaded; a hung build hits the subprocess
# timeout of gallery_build instead.
SLACK = 60.0
ENV = {"DOCSACCEL_ON_OVERRUN": "fail", "DOCSACCEL_INTERRUPT_GRACE": str(GRACE)}
ORDERED = 'sphinx_gallery_conf["within_subsection_order"] = "FileNameSortKey"\n'


def hostile_build(tmp_path: Path, names: list[str], parallel: int):
    conf = ORDERED + f'sphinx_gallery_conf["parallel"] = {parallel}\n'
    src = make_project(tmp_path, names, conf=conf, budgets=f'default = "{BUDGET:g}s"\n')
    started = time.monotonic()
    built = build(src, env=ENV)
    return src, built, time.monotonic() - started


@pytest.mark.parametrize("parallel", [1, 2])
def test_first_tier_stops_examples_that_disable_the_timer(tmp_path, parallel) -> None:
    names = [
        "plot_h_handler.py",
        "plot_h_disarm.py",
        "plot_h_ignore.py",
        "plot_h_csleep.py",
        "plot_h_child.py",
        "plot_h_sysexit.py",
        "plot_h_exec.py",
        "plot_quick.py",
    ]
    src, built, seconds = hostile_build(tmp_path, names, parallel)

    assert built.returncode != 0, built.output
    assert seconds < 4 * (BUDGET + GRACE) + SLACK
    report = built.report
    assert report["build"]["complete"] is True
    for name in ("plot_h_handler.py", "plot_h_disarm.py", "plot_h_ignore.py"):
        record = built.record(name)
        assert record["status"] == "interrupted", record
        assert "by the watchdog thread" in record["error"]
        assert record["wall_seconds"] < BUDGET + GRACE + 5
    native = built.record("plot_h_csleep.py")
    assert native["status"] == "interrupted" and "SIGALRM" in native["error"]
    assert native["wall_seconds"] < BUDGET + GRACE + 5
    assert built.record("plot_h_child.py")["status"] == "ok"
    assert_no_child_survives(src, expected=1)
    exited = built.record("plot_h_sysexit.py")
    assert exited["status"] == "failed" and "sys.exit(0)" in exited["error"]
    assert "ExampleExit" in built.page("plot_h_sysexit.py")
    replaced = built.record("plot_h_exec.py")
    assert replaced["status"] == "failed" and "os.execv()" in replaced["error"]
    assert built.record("plot_quick.py")["status"] == "ok"


@pytest.mark.parametrize("parallel", [1, 2])
@pytest.mark.parametrize("name", ["plot_h_swallow.py", "plot_h_ignore_sleep.py"])
def test_the_hard_stop_ends_what_the_first_tier_cannot(tmp_path, parallel, name) -> None:
    src, built, seconds = hostile_build(tmp_path, [name, "plot_quick.py"], parallel)

    assert built.returncode != 0, built.output
    assert seconds < BUDGET + GRACE + SLACK
    record = built.record(name)
    assert record["status"] == "interrupted", record
    assert "was stopped hard after" in record["error"], record["error"]
    assert f"still running {GRACE:g} s after its time budget" in record["error"]
    assert BUDGET + GRACE <= record["wall_seconds"] < BUDGET + GRACE + 5
    assert "stopped hard" in built.output
    assert built.report["build"]["complete"] is False
    if name == "plot_h_swallow.py":
        assert_no_child_survives(src, expected=1)
    # The gate refuses the report in one line that names the example, as a CI step runs it.
    gate = subprocess.run(
        [sys.executable, "-m", "docsaccel.cli", "check", str(built.report_path)],
        capture_output=True,
        text=True,
        timeout=SLACK,
        check=False,
    )
    assert gate.returncode == 2, gate.stderr
    (line,) = gate.stderr.strip().splitlines()
    assert "the build did not finish (" in line
    assert f"examples/{name} was stopped hard after its budget" in line


@pytest.mark.parametrize("parallel", [1, 2])
@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("plot_h_osexit.py", "os._exit(1)"),
        ("plot_h_posix_exit.py", "the example called os._exit(0)"),
        ("plot_h_thread_exit.py", "os._exit(0) ended the build's process while it ran"),
        ("plot_h_thread_exec.py", "os.execv() replaced the build's process while it ran"),
    ],
)
def test_an_example_that_ends_the_process_fails_the_build(tmp_path, parallel, name, why) -> None:
    _, built, _ = hostile_build(tmp_path, [name, "plot_quick.py"], parallel)

    assert built.returncode != 0, built.output
    records = read_records(built.outdir / "docsaccel" / "records")
    record = records[f"examples/{name}"]
    assert record["status"] == "failed" and "did not finish" in record["error"]
    if parallel == 1:
        # The process that ran it wrote the report; in parallel builds the worker's
        # journal names it, and Sphinx writes the report.
        assert why in record["error"], record["error"]
    assert built.report["build"]["complete"] is False
    assert built.record(name) == record


@pytest.mark.parametrize("parallel", [1, 2])
def test_an_example_raising_keyboardinterrupt_or_systemexit_fails_alone(tmp_path, parallel):
    """Its own ``raise KeyboardInterrupt`` (no Ctrl-C) or ``raise SystemExit`` stopped the
    whole build, blamed on Ctrl-C; it now fails that example, as ``sys.exit()`` does.
    An exit handler one left calling ``os._exit(0)`` does not make the build pass."""
    names = ["plot_h_atexit_exit.py", "plot_h_clear_exit.py", "plot_h_keyboard.py"]
    names.append("plot_h_raise_exit.py")
    _, built, _ = hostile_build(tmp_path, [*names, "plot_quick.py"], parallel)

    assert built.returncode != 0, built.output  # failing examples fail the build
    assert built.report["build"]["complete"] is True
    interrupted = built.record("plot_h_keyboard.py")
    assert interrupted["status"] == "failed", interrupted
    assert "raised KeyboardInterrupt itself (no Ctrl-C" in interrupted["error"]
    for name in ("plot_h_raise_exit.py", "plot_h_clear_exit.py", "plot_h_atexit_exit.py"):
        exited = built.record(name)
        assert exited["status"] == "failed" and "raised SystemExit(0)" in exited["error"]
    assert "ExampleExit" in built.page("plot_h_keyboard.py")
    assert built.record("plot_quick.py")["status"] == "ok"
    assert "Ctrl-C" not in built.output.replace("(no Ctrl-C", "")


def test_exit_handlers_run_early_leave_the_build_going(tmp_path) -> None:
    # As without the plugin: the handlers run, the build goes on and passes.
    _, built, _ = hostile_build(tmp_path, ["plot_h_run_exitfuncs.py", "plot_quick.py"], 1)

    assert built.returncode == 0, built.output
    assert built.report["build"]["complete"] is True
    assert {r["status"] for r in built.report["examples"]} == {"ok"}


def test_an_import_is_not_interrupted_and_the_next_example_imports_the_module(tmp_path):
    names = ["plot_slow_import.py", "plot_slow_import_again.py", "slow_module.py"]
    conf = ORDERED + 'sphinx_gallery_conf["ignore_pattern"] = r"slow_module\\.py"\n'
    src = make_project(tmp_path, names, conf=conf)

    built = build(src, env={"DOCSACCEL_ON_OVERRUN": "fail"})

    assert built.returncode != 0
    first = built.record("plot_slow_import.py")
    assert first["status"] == "interrupted"
    # Interrupted once the import was done (it takes 2.5 s), not inside it.
    assert first["wall_seconds"] >= 2.5
    page = (src / "auto_examples" / "plot_slow_import.rst").read_text("utf-8")
    traceback = page.split("Traceback (most recent call last):", 1)[1].split("BudgetExceeded", 1)[0]
    assert "time.sleep(30)" in traceback and "slow_module.py" not in traceback
    assert built.record("plot_slow_import_again.py")["status"] == "ok"
    assert "imported again True" in built.page("plot_slow_import_again.py")


def test_abort_on_example_error_exits_with_the_budget_failure_not_a_signal(tmp_path) -> None:
    conf = ORDERED + 'sphinx_gallery_conf["abort_on_example_error"] = True\n'
    src = make_project(tmp_path, ["plot_loop.py", "plot_quick.py"], conf=conf)

    built = build(src, env={"DOCSACCEL_ON_OVERRUN": "fail"})

    # Not -SIGALRM ("Alarm clock"): the alarm was disarmed as the example ended.
    assert built.returncode == 2, (built.returncode, built.output)
    assert "BudgetExceeded" in built.output
    assert built.record("plot_loop.py")["status"] == "interrupted"
    assert built.report["build"]["complete"] is False


def _gate(report_path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "docsaccel.cli", "check", str(report_path)],
        capture_output=True,
        text=True,
        timeout=SLACK,
        check=False,
    )


SLEEP_BUDGET = '[examples]\n"plot_sleep.py" = "1s"\n'


def test_an_example_that_removes_the_records_cannot_hide_an_overrun(tmp_path) -> None:
    """The build's process keeps what it recorded: removed files, and a forged record
    file, change nothing in its report, and the gate still fails on the overrun."""
    names = ["plot_h_records.py", "plot_quick.py", "plot_sleep.py"]
    src = make_project(tmp_path, names, conf=ORDERED, budgets=SLEEP_BUDGET)

    built = build(src)

    assert "removed 0" not in built.page("plot_h_records.py")  # its own journal at least
    report = built.report
    assert report["build"]["complete"] is True and "records_lost" not in report["build"]
    statuses = {record["name"]: record["status"] for record in report["examples"]}
    assert statuses == {
        "plot_h_records.py": "ok",
        "plot_quick.py": "ok",
        "plot_sleep.py": "over-budget",
    }
    assert built.record("plot_sleep.py")["wall_seconds"] >= 1.5
    assert "plot_sleep.py took" in built.output
    gate = _gate(built.report_path)
    assert gate.returncode == 1, gate.stdout + gate.stderr
    assert "examples/plot_sleep.py" in gate.stdout


def test_a_record_removed_where_it_was_written_makes_the_report_incomplete(tmp_path) -> None:
    """In a parallel build, a worker's journal removed after its last line cannot be read
    back: its example is never "not executed", the report is incomplete, the gate exits 2."""
    names = ["plot_h_records.py", "plot_sleep.py"]
    conf = ORDERED + 'sphinx_gallery_conf["parallel"] = 2\n'
    src = make_project(tmp_path, names, conf=conf, budgets=SLEEP_BUDGET)
    (src / "examples" / "wait_for.txt").write_text("plot_sleep.py")

    built = build(src)

    assert built.returncode != 0, built.output
    assert re.search(r"the records of \d+ examples? were lost while the build ran", built.output)
    report = built.report
    assert report["build"]["complete"] is False
    assert report["build"]["records_lost"] == ["examples/plot_sleep.py"]
    lost = built.record("plot_sleep.py")
    assert lost["status"] == "failed" and lost["error"].startswith("its record was lost")
    # The worker that ran the remover wrote its journal again at its next line.
    assert built.record("plot_h_records.py")["status"] == "ok"
    gate = _gate(built.report_path)
    assert gate.returncode == 2, gate.stdout + gate.stderr
    assert "examples/plot_sleep.py ran, but its record was lost" in gate.stderr


def test_half_imported_modules_are_forgotten() -> None:
    import importlib.util
    import sys

    from docsaccel.gallery.hook import _forget_half_imported_modules

    spec = importlib.util.spec_from_loader("docsaccel_half_imported", loader=None)
    module = importlib.util.module_from_spec(spec)
    spec._initializing = True
    sys.modules["docsaccel_half_imported"] = module
    _forget_half_imported_modules()
    assert "docsaccel_half_imported" not in sys.modules
    assert "os" in sys.modules and os.__spec__ is not None


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("plot_h_osexit.py", "the example called os._exit(1)"),
        ("plot_h_swallow.py", "was stopped hard after"),
    ],
)
def test_a_worker_that_dies_ends_the_build_in_one_line_naming_its_example(
    tmp_path, name, why
) -> None:
    """With ``parallel: 2``, an example that ends its worker process (``os._exit``, or the
    hard stop of an example that swallows its interruption) ends the build with one
    ``ERROR:`` line naming it and why, not Sphinx's crash report."""
    _, built, _ = hostile_build(tmp_path, [name, "plot_quick.py"], 2)

    assert built.returncode == 2, built.output
    assert "crash report" not in built.output and "sphinx-err-" not in built.output
    assert "Extension error" not in built.output, built.output
    errors = [line for line in built.output.splitlines() if line.startswith("ERROR:")]
    assert len(errors) == 1, built.output
    assert f"examples/{name}" in errors[0] and why in errors[0], errors[0]
    assert "process" in errors[0], errors[0]  # which ended


def _exiting_example(status: int, from_thread: bool) -> str:
    """An example that ends its process with ``os._exit(status)``, itself or from a
    thread it starts."""
    if from_thread:
        body = (
            "import threading\nimport time\n\n"
            f"threading.Thread(target=lambda: os._exit({status}), daemon=True).start()\n"
            "time.sleep(30)\n"
        )
    else:
        body = f"os._exit({status})\n"
    return f'"""\nEnds its process\n================\n"""\n\nimport os\n{body}'


@pytest.mark.parametrize(
    ("status", "from_thread", "parallel"),
    [(3, False, 1), (1, False, 1), (0, False, 1), (3, True, 1), (3, False, 2)],
)
def test_an_example_that_ends_the_process_exits_with_the_documented_status(
    tmp_path, status, from_thread, parallel
) -> None:
    """Whatever status an example passes to ``os._exit`` (3 is ``check``'s "build
    failed"), the build it ends exits with the one the budgets guide gives."""
    from docsaccel.gallery.process_end import EXIT_STATUS

    conf = ORDERED + f'sphinx_gallery_conf["parallel"] = {parallel}\n'
    src = make_project(tmp_path, ["plot_quick.py"], conf=conf)
    example = src / "examples" / "plot_ends.py"
    example.write_text(_exiting_example(status, from_thread), encoding="utf-8")

    built = build(src, env=ENV)

    assert built.returncode == EXIT_STATUS, (built.returncode, built.output)
    assert built.record("plot_ends.py")["status"] == "failed"
    assert built.report["build"]["complete"] is False
