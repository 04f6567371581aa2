"""Every view tells a build killed outright (SIGKILL: no report, its journals read as an
incomplete report) truly: the example running at the kill "was running when the build
was killed", with no time; the examples it never reached are listed as an interrupted
build's report lists them (``not-executed``, from the plan the build recorded before
any example ran), never removed. Real Sphinx builds in temporary folders."""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
from helpers.gallery_build import build, child_env, make_project, run_cli, sphinx_command
from helpers.processes import hold, kill_children, wait_until_running

from docsaccel import layout
from docsaccel.contract import DID_NOT_FINISH, KILLED_RUNNING, NOT_EXECUTED, NOT_MEASURED

pytestmark = pytest.mark.slow

ORDERED = 'sphinx_gallery_conf["within_subsection_order"] = "FileNameSortKey"\n'


@pytest.fixture(scope="module")
def killed(tmp_path_factory) -> tuple[Path, Path]:
    """A base build's report, and the output folder of the same project's build killed
    while plot_wait.py ran (plot_x_after.py never reached)."""
    tmp_path = tmp_path_factory.mktemp("killed")
    src = make_project(tmp_path, ["plot_quick.py", "plot_wait.py"], conf=ORDERED)
    shutil.copy(src / "examples" / "plot_quick.py", src / "examples" / "plot_x_after.py")
    base = build(src)
    assert base.returncode == 0, base.output
    kill_children(src)
    base_report = tmp_path / "base.json"
    shutil.copy(base.report_path, base_report)
    shutil.rmtree(src / "_build")
    shutil.rmtree(src / "auto_examples")
    (src / "examples" / "child_pids.txt").unlink()
    hold(src)
    process = subprocess.Popen(
        sphinx_command(src, src / "_build" / "html"),
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        wait_until_running(src, "plot_wait.py", process)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=120)
    finally:
        kill_children(src)
    outdir = src / "_build" / "html"
    assert not layout.report_path(outdir).exists()
    return base_report, outdir


def test_compare_lists_the_unreached_as_such_and_the_running_one_without_a_time(killed):
    base, outdir = killed
    for head in (outdir, layout.journals(layout.records_dir(outdir))[0]):
        shown = run_cli("compare", str(base), str(head), "--allow-incomplete")

        # The running example did not finish: a failed head, as check judges it.
        assert shown.returncode == 3, shown.stderr
        assert "Removed examples" not in shown.stdout, shown.stdout
        assert f"{DID_NOT_FINISH} after" not in shown.stdout, shown.stdout
        lines = shown.stdout.splitlines()
        # The base's time is measured: any number of seconds, then no time for the head.
        running = re.compile(rf"  examples/plot_wait\.py: [0-9.]+s -> {re.escape(KILLED_RUNNING)}")
        assert any(running.fullmatch(line) for line in lines), shown.stdout
        unreached = f"  examples/plot_x_after.py: 0s -> {NOT_EXECUTED} ({NOT_MEASURED})"
        assert unreached in lines, shown.stdout


def test_compare_says_why_the_head_failed_in_the_words_of_check(killed) -> None:
    """The line saying why the head build failed names the killed example as check and the
    views do, never as one the build stopped and that said so."""
    base, outdir = killed
    shown = run_cli("compare", str(base), str(outdir), "--allow-incomplete")

    failed = next(line for line in shown.stdout.splitlines() if "head build failed" in line)
    assert f"examples/plot_wait.py {KILLED_RUNNING}" in failed, failed
    assert f"plot_wait.py {DID_NOT_FINISH}" not in failed, failed


def test_report_and_check_say_the_running_example_has_no_time(killed) -> None:
    base, outdir = killed
    for args in (["report", str(outdir)], ["report", "--baseline", str(base), str(outdir)]):
        shown = run_cli(*args)

        assert shown.returncode == 0, shown.stderr
        row = next(
            line for line in shown.stdout.splitlines() if "examples/plot\\_wait.py |" in line
        )
        assert f"| {KILLED_RUNNING} | – |" in row, row
        assert f"examples/plot\\_wait.py {KILLED_RUNNING} (no time, not judged)" in shown.stdout
        assert "partial time" not in shown.stdout and f"1 {DID_NOT_FINISH}" not in shown.stdout
    gate = run_cli("check", "--allow-incomplete", str(outdir))
    assert gate.returncode == 3, gate.stdout + gate.stderr
    assert f"1 example {KILLED_RUNNING}: examples/plot_wait.py\n" in gate.stdout, gate.stdout
    history = str(outdir.parent / "history.jsonl")
    refused = run_cli("history", "append", "--to", history, str(outdir))
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "did not finish" in refused.stderr, refused.stderr


def test_report_and_check_list_the_examples_it_never_reached(killed) -> None:
    """Read without a baseline, the journals list what the build planned and never
    reached as its report would have (an interrupted build's report lists them as not
    run): not a shorter gallery."""
    _, outdir = killed
    shown = run_cli("report", str(outdir))
    assert shown.returncode == 0, shown.stderr
    row = next(
        (line for line in shown.stdout.splitlines() if "examples/plot\\_x\\_after.py |" in line),
        None,
    )
    assert row is not None and "| not\\-executed | not run |" in row, shown.stdout
    assert "1 not run (not\\-executed)" in shown.stdout, shown.stdout
    for head in (outdir, layout.journals(layout.records_dir(outdir))[0]):
        gate = run_cli("check", "--allow-incomplete", str(head))
        assert gate.returncode == 3, gate.stdout + gate.stderr
        assert "note: 1 example not measured by this build" in gate.stdout, gate.stdout


def _damaged_copy(outdir: Path, target: Path, damage) -> tuple[Path, Path]:
    """A copy of the killed build's output folder whose one journal ``damage`` rewrote
    (given its bytes), and that journal."""
    copy = target / "html"
    shutil.copytree(outdir, copy, ignore=shutil.ignore_patterns("*.pipe"))
    (journal,) = layout.journals(layout.records_dir(copy))
    journal.write_bytes(damage(journal.read_bytes()))
    return copy, journal


def _before_last_line(replacement: bytes):
    """Put ``replacement`` as the line before the last: the third, after plot_quick.py's
    start and end, before plot_wait.py's start."""

    def damage(data: bytes) -> bytes:
        ended, last = data.rstrip(b"\n").rsplit(b"\n", 1)
        return ended + b"\n" + replacement + b"\n" + last + b"\n"

    return damage


@pytest.mark.parametrize(
    ("damage", "line", "wrong"),
    [
        (lambda data: data[:150], 1, "the last line is cut short"),
        (_before_last_line(b"\x00\x01garbage"), 3, "not valid JSON"),
        (_before_last_line(b'{"id": "x\xff\xfe"}'), 3, "not UTF-8 text"),
        (_before_last_line(b'{"schema": "docsaccel.report", "version": 1}'), 3, "another kind"),
    ],
    ids=["cut-short", "garbage", "not-utf8", "other-kind"],
)
def test_every_reader_names_a_damaged_journal_and_never_says_nothing_ran(
    killed, tmp_path, damage, line, wrong
) -> None:
    """A journal damaged after the kill is named with its line and what is wrong, by every
    command that reads it; none of them takes the examples it no longer shows for ones
    never run."""
    base, outdir = killed
    copy, journal = _damaged_copy(outdir, tmp_path, damage)
    named = f"{journal}:{line}: "
    history = str(tmp_path / "history.jsonl")
    for args in (
        ["check", str(copy)],
        ["check", "--allow-incomplete", str(copy)],
        ["check", str(journal)],
        ["compare", str(base), str(copy), "--allow-incomplete"],
        ["history", "append", "--to", history, str(copy)],
    ):
        shown = run_cli(*args)
        said = shown.stdout + shown.stderr

        assert shown.returncode == 2, (args, said)
        said_line = next((one for one in said.splitlines() if named in one), None)
        assert said_line is not None and wrong in said_line, (args, said)
        assert "ran none" not in said and "Traceback" not in said, (args, said)
    shown = run_cli("report", "--format", "json", str(copy))
    if line == 1:
        # No line before the damage: nothing to show, said in one line.
        assert shown.returncode == 2, shown.stdout
        assert named in shown.stderr and len(shown.stderr.splitlines()) == 1, shown.stderr
        return
    # The lines before the damage are read: the example that finished is listed, and none
    # the journal no longer shows is taken for one never run.
    assert shown.returncode == 0, shown.stderr
    assert named in shown.stdout and NOT_EXECUTED not in shown.stdout, shown.stdout
    assert '"examples/plot_quick.py"' in shown.stdout, shown.stdout
