"""An example that ignores Ctrl-C or sets its own SIGINT or SIGTERM handler leaves the
build stoppable: the build's handlers go back after it, said in one line, and a later
Ctrl-C or SIGTERM stops the build with its report written incomplete, as without that
example. Real Sphinx builds in temporary folders."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest
from helpers.gallery_build import child_env, make_project, sphinx_command
from helpers.processes import hold, kill_children, wait_until_running

from docsaccel import layout
from docsaccel.records import read_records
from docsaccel.schema import load_report

pytestmark = pytest.mark.slow

ORDERED = 'sphinx_gallery_conf["within_subsection_order"] = "FileNameSortKey"\n'
#: The examples run in joblib's worker processes, the signal sent to the build's.
PARALLEL = 'sphinx_gallery_conf["parallel"] = 2\n'
#: Hangs fail here rather than hanging the test session.
HANG = 120


@pytest.mark.parametrize("parallel", ["", PARALLEL], ids=["serial", "parallel"])
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_example_deaf_to_stops_leaves_the_build_stoppable(tmp_path, signum, parallel):
    src = make_project(tmp_path, ["plot_h_deaf.py", "plot_wait.py"], conf=ORDERED + parallel)
    hold(src)
    outdir = src / "_build" / "html"
    process = subprocess.Popen(
        sphinx_command(src, outdir, quiet=False),
        env=child_env({"DOCSACCEL_INTERRUPT_GRACE": "1"}),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        wait_until_running(src, "plot_wait.py", process)
        _wait_until_finished(outdir, "examples/plot_h_deaf.py", process)
        process.send_signal(signum)
        output = process.communicate(timeout=HANG)[0]
    finally:
        process.kill()
        kill_children(src)

    # Stopped, not left to finish plot_wait.py (whose run would then be "ok").
    assert process.returncode != 0, output
    report = load_report(layout.report_path(outdir))
    assert report["build"]["complete"] is False, report["build"]
    statuses = {r["name"]: r["status"] for r in report["examples"]}
    assert statuses == {"plot_h_deaf.py": "ok", "plot_wait.py": "failed"}, statuses
    said = [line for line in output.splitlines() if "changed the handler" in line]
    assert said == [
        "docsaccel: examples/plot_h_deaf.py changed the handler of SIGINT and SIGTERM; "
        "the build's was put back, so the build can still be stopped"
    ], output


def _wait_until_finished(outdir: Path, example_id: str, process: subprocess.Popen[str]) -> None:
    """Wait until ``example_id``'s record says it finished (in a parallel build, its
    worker may still run it while another worker runs the next example)."""
    records = layout.records_dir(outdir)
    deadline = time.monotonic() + HANG
    while not (read_records(records).get(example_id) or {}).get("finished_at"):
        assert process.poll() is None and time.monotonic() < deadline, f"{example_id} never ended"
        time.sleep(0.1)


def test_ctrl_c_lists_the_running_example_not_an_expected_failure(tmp_path):
    """Ctrl-C while an example runs, after one sphinx-gallery was told to expect to fail:
    the build's last ERROR lines name the running example, never the expected failure,
    which did not stop the build."""
    conf = ORDERED + 'sphinx_gallery_conf["expected_failing_examples"] = ["examples/plot_a.py"]\n'
    src = make_project(tmp_path, ["plot_wait.py"], conf=conf)
    (src / "examples" / "plot_a.py").write_text(
        '"""\nExpected\n========\n\nFails on purpose.\n"""\n\n'
        + 'raise RuntimeError("this example fails on purpose")\n',
        encoding="utf-8",
    )
    hold(src)
    outdir = src / "_build" / "html"
    process = subprocess.Popen(
        sphinx_command(src, outdir, quiet=False),
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        wait_until_running(src, "plot_wait.py", process)
        process.send_signal(signal.SIGINT)
        output = process.communicate(timeout=HANG)[0]
    finally:
        process.kill()
        kill_children(src)

    assert process.returncode != 0, output
    report = load_report(layout.report_path(outdir))
    expected = next(r for r in report["examples"] if r["name"] == "plot_a.py")
    assert expected["expected_failure"] is True, expected
    block = output[output.index("ERROR: docsaccel: the build stopped before its end") :]
    listed = [line.split(":")[0].strip() for line in block.splitlines()[1:] if line[:2] == "  "]
    assert listed == ["examples/plot_wait.py"], output
    assert "fails on purpose" not in block, output
