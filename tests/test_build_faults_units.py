"""What the next build finds of a build killed outright: the named pipes it left, and
what it was doing (the real builds are in ``test_build_faults.py``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from docsaccel import layout
from docsaccel.budgets import Budget
from docsaccel.contract import OK, UNFINISHED_ERROR
from docsaccel.examples import Example
from docsaccel.gallery.events import _killed_last_time
from docsaccel.gallery.progress import remove_stale_pipes
from docsaccel.records import RecordJournal, base_record


def test_the_next_build_removes_only_the_pipes_of_dead_builds(tmp_path) -> None:
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    dead, ours = tmp_path / f"progress-{ended.pid}.pipe", tmp_path / f"progress-{os.getpid()}.pipe"
    for pipe in (dead, ours):
        os.mkfifo(pipe)

    assert remove_stale_pipes(tmp_path) == [dead]
    assert not dead.exists() and ours.exists()


def _journal(outdir, status: str, error: str | None) -> None:
    budget = Budget(30.0, "default", "default")
    example = Example(
        "ex", "plot_a.py", "src/ex/plot_a.py", "src/auto/plot_a.py", "auto/plot_a", True, budget
    )
    record = base_record(example, status, fast=False, wall_seconds=1.0, error=error, pid=1)
    RecordJournal(layout.records_dir(outdir)).append(record)


def test_what_the_killed_build_was_doing_is_found(tmp_path) -> None:
    assert _killed_last_time(tmp_path) is None  # a folder never built into
    layout.records_dir(tmp_path).mkdir(parents=True)
    _journal(tmp_path, "failed", UNFINISHED_ERROR)
    assert "while running ex/plot_a.py" in _killed_last_time(tmp_path)

    report = layout.report_path(tmp_path)
    report.write_text(json.dumps({"build": {"complete": False, "writing": True}}))
    assert _killed_last_time(tmp_path).startswith("killed while its pages were written")
    report.write_text(json.dumps({"build": {"complete": False}}))  # it wrote its report
    assert _killed_last_time(tmp_path) is None


def test_a_build_that_ran_its_examples_to_the_end_was_not_killed(tmp_path) -> None:
    layout.records_dir(tmp_path).mkdir(parents=True)
    _journal(tmp_path, OK, None)
    assert _killed_last_time(tmp_path) is None


@pytest.mark.parametrize(
    ("flags", "phase"),
    [
        ({"writing": True, "reading": True}, "while Sphinx read the documents"),
        ({"writing": True}, "while its pages were written"),
    ],
    ids=["reading", "writing"],
)
@pytest.mark.parametrize("ended_because", [None, "it was terminated (SIGTERM)"])
def test_the_next_build_and_the_gates_name_the_same_phase(tmp_path, flags, phase, ended_because):
    """A build killed (or terminated) while Sphinx read the documents was logged by the
    next build as killed "while it wrote its pages", while check said it ended reading."""
    from docsaccel.report.model import LoadedInput

    build = {"complete": False, **flags}
    if ended_because is not None:
        build["ended_because"] = ended_because
    layout.report_path(tmp_path).parent.mkdir(parents=True)
    layout.report_path(tmp_path).write_text(json.dumps({"build": build}))
    said = _killed_last_time(tmp_path)
    assert said is not None and phase in said, said
    # Terminated, it wrote its report saying why: stopped, not killed.
    assert said.startswith("stopped" if ended_because else "killed"), said
    gates = LoadedInput(str(tmp_path / "r.json"), "docsaccel", [], build).incomplete_text()
    assert f"it ended {phase}" in gates, gates
