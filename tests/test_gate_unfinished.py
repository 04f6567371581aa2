"""A gate never passes an example, nor a build, that did not finish: ``check`` names every
example that failed or that the build stopped while it ran, and says the build did not finish,
whether the build ran its examples serially or in sphinx-gallery's parallel workers, with
``--allow-incomplete`` or without. Real Sphinx builds in temporary folders."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest
from helpers.gallery_build import build, child_env, make_project, run_cli, sphinx_command
from helpers.processes import held_build, kill_children, terminated_while_running

from docsaccel import layout
from docsaccel.cli import main
from docsaccel.report.check import EXIT_BUILD_FAILED
from docsaccel.report.commands import run_check, run_compare, run_history_append, run_report

pytestmark = pytest.mark.slow

#: Examples run in file name order, so which one ends the build is known.
ORDERED = 'sphinx_gallery_conf["within_subsection_order"] = "FileNameSortKey"\n'


def test_allow_incomplete_fails_an_example_that_ended_the_process(tmp_path) -> None:
    """``os._exit`` in an example ends a serial build: the build may be judged with
    ``--allow-incomplete``, but not as OK; the example is named (exit 3)."""
    src = make_project(tmp_path, ["plot_h_osexit.py", "plot_quick.py"], conf=ORDERED)
    built = build(src)
    assert built.returncode != 0, built.output
    report = str(built.report_path)

    refused, code = run_check([report])
    assert code == 2 and "examples/plot_h_osexit.py was running" in refused, refused

    out, code = run_check([report], allow_incomplete=True)
    assert code == 3, out
    assert "OK" not in out
    assert "1 example did not finish: examples/plot_h_osexit.py (the example called os._exit" in out
    assert "(did not finish" not in out  # the word said once
    assert "the build did not finish (examples/plot_h_osexit.py was running)" in out


#: Ends its worker once the other worker's example has failed.
LATE_EXIT = '''"""
Late exit
=========
"""
import os
import time

time.sleep(3)
os._exit(0)
'''


def test_a_parallel_build_a_worker_died_in_names_every_example(tmp_path) -> None:
    """With ``parallel: 2``, one example raises and another ends its worker: ``check``
    names both and says the build did not finish, as the serial build's refusal does."""
    conf = ORDERED + 'sphinx_gallery_conf["parallel"] = 2\n'
    src = make_project(tmp_path, ["plot_crash.py", "plot_quick.py"], conf=conf)
    (src / "examples" / "plot_late_exit.py").write_text(LATE_EXIT, encoding="utf-8")
    built = build(src)
    assert built.returncode != 0, built.output
    assert built.report["build"]["complete"] is False

    for allow_incomplete in (False, True):
        out, code = run_check([str(built.report_path)], allow_incomplete=allow_incomplete)
        assert code == 3, out
        assert "1 example failed: examples/plot_crash.py (RuntimeError" in out, out
        assert "did not finish: examples/plot_late_exit.py (the example called os._exit" in out, out
        assert "(did not finish" not in out, out  # the word said once
        assert "the build did not finish (examples/plot_late_exit.py was running)" in out, out


def _finished_copy(report: Path, target: Path) -> Path:
    """``report`` as the report of a build that finished, every example in it ok."""
    data = json.loads(report.read_text(encoding="utf-8"))
    data["build"]["complete"] = True
    for key in ("ended_because", "reading", "writing"):
        data["build"].pop(key, None)
    for example in data["examples"]:
        example.update(status="ok", error=None, finished_at=data["generated_at"])
    target.write_text(json.dumps(data), encoding="utf-8")
    return target


def test_compare_refuses_a_terminated_build_an_example_also_failed(tmp_path, capsys) -> None:
    """An example raised, then the build was terminated (SIGTERM) while another ran: as
    head or as base, ``compare`` refuses it (exit 2), whatever the format and
    ``--fail-on-regression``; with ``--allow-incomplete`` it says so first and, as head,
    never passes the failed build (exit 3)."""
    src = make_project(tmp_path, ["plot_crash.py", "plot_wait.py"], conf=ORDERED)
    outdir = src / "_build" / "html"
    ended = terminated_while_running(
        sphinx_command(src, outdir), child_env({}), src, "plot_wait.py"
    )
    assert ended.returncode != 0, ended.stdout
    report = layout.report_path(outdir)
    assert json.loads(report.read_text(encoding="utf-8"))["build"]["complete"] is False
    good = str(_finished_copy(report, tmp_path / "good.json"))

    for base, head in ((good, str(report)), (str(report), good)):
        for extra in ([], ["--fail-on-regression"], ["--format", "github"]):
            assert main(["compare", base, head, *extra]) == 2, (base, extra)
            err = capsys.readouterr().err
            assert "the build did not finish" in err and "--allow-incomplete" in err, err

    text, code = run_compare(good, str(report), allow_incomplete=True)
    assert code == EXIT_BUILD_FAILED, text
    assert text.startswith("The head build failed: examples/plot_crash.py failed ("), text
    assert "did not finish; the build did not finish (" in text, text
    text, code = run_compare(str(report), good, allow_incomplete=True)
    assert code == 0 and text.startswith("The base build failed: examples/plot_crash.py"), text
    assert "did not finish; the build did not finish (" in text, text


def test_compare_and_check_agree_on_an_example_that_did_not_finish(tmp_path) -> None:
    """An example ended the build's process (``os._exit``): judged with
    ``--allow-incomplete``, ``check`` exits 3, and so does ``compare`` of it as head,
    whatever its format and ``--fail-on-regression``, naming the example; as base it
    fails nothing."""
    src = make_project(tmp_path, ["plot_h_osexit.py", "plot_quick.py"], conf=ORDERED)
    built = build(src)
    assert built.returncode != 0, built.output
    report = str(built.report_path)
    good = str(_finished_copy(built.report_path, tmp_path / "good.json"))

    _, check_code = run_check([report], allow_incomplete=True)
    assert check_code == EXIT_BUILD_FAILED
    for fmt in ("text", "md", "github"):
        for fail in (False, True):
            text, code = run_compare(
                good, report, allow_incomplete=True, fail_on_regression=fail, fmt=fmt
            )
            assert code == check_code, (fmt, fail, text)
            assert "plot_h_osexit.py did not finish" in text.replace("\\_", "_"), text
    text, code = run_compare(report, good, allow_incomplete=True, fail_on_regression=True)
    assert code == 0, text
    assert "The base build failed: examples/plot_h_osexit.py did not finish" in text, text


#: Runs until the test lets it end, so a gate reads the build while it runs.
WAITER = '''"""
Waiter
======
"""
import time
from pathlib import Path

here = Path.cwd()
(here / "running.flag").touch()
deadline = time.monotonic() + 120
while not (here / "go.flag").exists() and time.monotonic() < deadline:
    time.sleep(0.05)
'''


def test_every_gate_says_a_build_runs_now_never_that_it_was_killed(tmp_path) -> None:
    """While an example runs, its build has written journals and no report: every gate
    (and ``history append``) given its output folder or the report file it will write
    says a build is running now, naming its process, with
    ``--allow-incomplete`` too (exit 2), never that the example "was running when the
    build was killed"; after the build ends, the gates judge its report."""
    src = make_project(tmp_path, ["plot_quick.py"], conf=ORDERED)
    (src / "examples" / "plot_wait.py").write_text(WAITER, encoding="utf-8")
    outdir = src / "_build" / "html"
    process = subprocess.Popen(
        sphinx_command(src, outdir),
        env=child_env({}),
        cwd=src / "examples",
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    flags = [src / "examples" / "running.flag", src / "running.flag"]
    try:
        deadline = time.monotonic() + 120
        while not any(flag.exists() for flag in flags) and process.poll() is None:
            assert time.monotonic() < deadline, "the example never started"
            time.sleep(0.1)
        said = []
        report = layout.report_path(outdir)  # not written yet: said as given the folder
        for allow in (False, True):
            said.append(run_check([str(outdir)], allow_incomplete=allow))
            said.append(run_check([str(report)], allow_incomplete=allow))
            said.append(run_compare(str(outdir), str(outdir), allow_incomplete=allow))
        history = tmp_path / "history.jsonl"
        for given in (outdir, report):
            said.append(run_history_append(str(given), history))
    finally:
        for flag in flags:
            flag.with_name("go.flag").touch()
        output = process.communicate(timeout=300)[0]
    assert process.returncode == 0, output
    for text, code in said:
        assert code == 2 and text.count("\n") == 1, text
        assert f"a build is running now (process {process.pid})" in text, text
        assert "killed" not in text and "stopped examples" not in text, text
    text, code = run_check([str(outdir)], allow_incomplete=True)
    assert code == 0, text


def test_a_stopped_builds_sphinx_gallery_file_never_passes_silently(tmp_path) -> None:
    """The second gallery's example ends the build's process: the first gallery's
    ``sg_execution_times.rst`` is written and says nothing of that. Its copy kept
    elsewhere is checked (exit 0: no budget broken), but never silently: one line says
    the file cannot tell whether an example failed nor whether its build finished."""
    conf = (
        ORDERED
        + 'sphinx_gallery_conf["examples_dirs"] = ["examples", "more"]\n'
        + 'sphinx_gallery_conf["gallery_dirs"] = ["auto_examples", "auto_more"]\n'
        + 'exclude_patterns.append("more")\n'
    )
    src = make_project(tmp_path, ["plot_quick.py"], conf=conf)
    more = src / "more"
    more.mkdir()
    fixtures = Path(__file__).parent / "gallery_fixtures" / "examples"
    for name in ("README.rst", "plot_h_osexit.py"):
        (more / name).write_bytes((fixtures / name).read_bytes())
    built = build(src)
    assert built.returncode != 0, built.output
    times = src / "auto_examples" / "sg_execution_times.rst"
    assert times.is_file(), built.output
    copy = tmp_path / "kept" / "sg_execution_times.rst"
    copy.parent.mkdir()
    copy.write_bytes(times.read_bytes())

    text, code = run_check([str(copy)], allow_incomplete=False)
    assert code == 0, text
    notes = [line for line in text.splitlines() if line.startswith("note: ")]
    assert len(notes) == 1, text
    assert "nor whether its build finished" in notes[0], text


#: Holds the build in Sphinx's reading phase (its examples ran) until the test ends it.
READING_HOLD = """
import time
from pathlib import Path


def _hold(app, docname, source):
    here = Path(app.srcdir)
    (here / "reading.flag").touch()
    deadline = time.monotonic() + 120
    while not (here / "go.flag").exists() and time.monotonic() < deadline:
        time.sleep(0.05)


def setup(app):
    app.connect("source-read", _hold)
"""


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM", "SIGKILL"])
def test_a_build_stopped_after_its_examples_ran_fails_every_gate(tmp_path, sig) -> None:
    """The build is interrupted (or killed) while Sphinx reads the documents, its examples
    all ran and passed: ``--allow-incomplete`` lets ``check`` and ``compare`` judge them,
    but the build did not finish, so both exit 3 saying so first, and why; without it
    they refuse it (exit 2), and ``history append`` refuses it."""
    conf = "import os, sys\nsys.path.insert(0, os.path.dirname(__file__))\n"
    conf += "extensions.append('reading_hold')\n"
    src = make_project(tmp_path, ["plot_quick.py"], conf=conf)
    (src / "reading_hold.py").write_text(READING_HOLD, encoding="utf-8")
    outdir = src / "_build" / "html"
    with held_build(src, outdir, src / "reading.flag") as process:
        process.send_signal(getattr(signal, sig))
        output = process.communicate(timeout=120)[0]
    assert process.returncode != 0, output
    report = layout.report_path(outdir)
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["build"]["complete"] is False, output
    assert [example["status"] for example in data["examples"]] == ["ok"], data["examples"]
    good = str(_finished_copy(report, tmp_path / "good.json"))
    why = "its examples ran; it ended while Sphinx read the documents)"

    text, code = run_check([str(report)])
    assert code == 2 and "--allow-incomplete" in text, text
    text, code = run_check([str(report)], allow_incomplete=True)
    assert code == EXIT_BUILD_FAILED, text
    first = text.splitlines()[0]
    assert first.startswith(f"FAIL: {report}: the build did not finish (") and why in first, text
    assert "OK" not in text and "note: " not in text, text
    text, code = run_check([str(report)], allow_incomplete=True, fmt="github")
    assert code == EXIT_BUILD_FAILED and text.startswith("::error title=Build did not finish::")

    for fmt in ("text", "md", "github"):
        text, code = run_compare(good, str(report), allow_incomplete=True, fmt=fmt)
        assert code == EXIT_BUILD_FAILED, (fmt, text)
        said = text.replace("\\", "")  # Markdown escapes the parentheses
        assert "the build did not finish (" in said and why in said, (fmt, text)
    text, _ = run_compare(good, str(report), allow_incomplete=True)
    assert text.startswith("The head build failed: the build did not finish ("), text
    text, code = run_compare(str(report), good, allow_incomplete=True, fail_on_regression=True)
    assert code == 0 and text.startswith("The base build failed: the build did not finish ("), text

    text, code = run_history_append(str(report), tmp_path / "history.jsonl")
    assert code == 2 and "the build did not finish" in text, text

    # The views say what the gates say: the build failed, and why.
    for fmt in ("md", "html"):
        text, code = run_report(str(report), fmt=fmt)
        said = text.replace("\\", "")  # Markdown escapes the parentheses
        assert code == 0 and "The build failed: the build did not finish (" in said, text
        assert why in said and "No example over budget" not in said, text


@pytest.mark.parametrize(
    ("signum", "named"),
    [
        (signal.SIGINT, "interrupted by Ctrl-C (SIGINT)"),
        (signal.SIGTERM, "terminated (SIGTERM)"),
    ],
)
def test_check_and_compare_name_the_signal_that_stopped_the_build(tmp_path, signum, named) -> None:
    """Ctrl-C and ``SIGTERM`` while an example runs: ``check`` and ``compare`` name the
    signal, in the same words for both, as why the build did not finish and why its
    example did not."""
    src = make_project(tmp_path, ["plot_wait.py"])
    outdir = src / "_build" / "html"
    ended = terminated_while_running(
        sphinx_command(src, outdir), child_env({}), src, "plot_wait.py", signum
    )
    assert ended.returncode != 0, ended.stdout
    report = layout.report_path(outdir)
    good = str(_finished_copy(report, tmp_path / "good.json"))

    gate = run_cli("check", "--allow-incomplete", str(report))
    assert gate.returncode == EXIT_BUILD_FAILED, gate.stdout + gate.stderr
    lines = gate.stdout.splitlines()
    assert (
        f"FAIL: the build failed: 1 example did not finish: examples/plot_wait.py "
        f"(the build was {named} while it ran)"
    ) in lines, gate.stdout
    incomplete = next(line for line in lines if "the build did not finish (" in line)
    assert f"(it was {named}; " in incomplete, gate.stdout

    compared = run_cli("compare", "--allow-incomplete", good, str(report))
    assert compared.returncode == EXIT_BUILD_FAILED, compared.stdout + compared.stderr
    first = compared.stdout.splitlines()[0]
    assert first.startswith("The head build failed: "), compared.stdout
    assert f"the build did not finish (it was {named}; " in first, first


def test_fail_mode_names_an_example_stopped_hard_as_why_the_build_failed(tmp_path) -> None:
    """In fail mode an example ignores its interruption and is stopped hard: its process
    ends before the build can say its budgets failed it. Every gate and view names it as
    why the build failed: ``check`` and ``compare`` with ``--allow-incomplete`` exit 3,
    and the report says the build failed, not that an example is over budget."""
    src = make_project(tmp_path, ["plot_h_swallow.py"], budgets='default = "3s"\n')
    env = {"DOCSACCEL_ON_OVERRUN": "fail", "DOCSACCEL_INTERRUPT_GRACE": "2"}
    built = build(src, env=env)
    kill_children(src)
    assert built.returncode != 0, built.output
    assert "was stopped hard after" in built.record("plot_h_swallow.py")["error"]
    report = str(built.report_path)
    good = str(_finished_copy(built.report_path, tmp_path / "good.json"))
    cause = "1 example stopped at its budget: examples/plot_h_swallow.py"

    text, code = run_check([report])
    assert code == 2 and "was stopped hard after its budget" in text, text
    text, code = run_check([report], allow_incomplete=True)
    assert code == EXIT_BUILD_FAILED, text
    lines = text.splitlines()
    assert lines[0] == f"FAIL: the build failed: {cause}", text
    assert "examples/plot_h_swallow.py was stopped hard after its budget" in lines[1], text

    text, code = run_compare(good, report, allow_incomplete=True)
    assert code == EXIT_BUILD_FAILED and cause in text, text

    for fmt in ("md", "html", "json"):
        text, code = run_report(report, fmt=fmt)
        assert code == 0 and cause in text, (fmt, text)
    markdown, _ = run_report(report, fmt="md")
    # Causes first, then that the build did not finish: the words compare says.
    said = markdown.replace("\\", "")  # Markdown escapes the parentheses
    assert f"The build failed: {cause}; the build did not finish (" in said, markdown
    assert "over budget." not in markdown, markdown
