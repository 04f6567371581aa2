"""sphinx-gallery's ``sg_execution_times.rst`` lists an example it did not run with a time
of ``00:00.000`` (not matched by ``filename_pattern``, ``plot_gallery`` off): the gates
read it as not run, as the build's report says, never as an example that took no time."""

from __future__ import annotations

import json

import pytest
from helpers.gallery_build import build, make_project

from docsaccel.report.commands import run_check, run_history_append

pytestmark = pytest.mark.slow


def _timing_files(src):
    return [src / "sg_execution_times.rst", src / "auto_examples" / "sg_execution_times.rst"]


def test_an_example_sphinx_gallery_did_not_run_is_not_measured(tmp_path) -> None:
    """``filename_pattern`` runs one example of two: each of sphinx-gallery's files is
    checked with the other one not measured, and the history records it as not run, as
    it records the build's report."""
    conf = 'sphinx_gallery_conf["filename_pattern"] = "quick"\n'
    src = make_project(tmp_path, ["plot_quick.py", "plot_figure.py"], conf=conf)
    built = build(src)
    assert built.returncode == 0, built.output
    histories = []
    for times in _timing_files(src):
        assert "00:00.000" in times.read_text(encoding="utf-8"), times
        text, code = run_check([str(times)])
        assert code == 0, text
        assert text.startswith("OK: 1 example checked"), text
        assert "note: 1 example not measured by this build" in text, text
        # One history each: a history records one build once, through any of its files.
        histories.append(tmp_path / f"history{len(histories)}.jsonl")
        text, code = run_history_append(str(times), histories[-1])
        assert code == 0, text
    histories.append(tmp_path / "history.jsonl")
    text, code = run_history_append(str(built.outdir), histories[-1])
    assert code == 0, text
    entries = [json.loads(history.read_text(encoding="utf-8")) for history in histories]
    statuses = [
        {name.rsplit("/", 1)[-1]: e.get("status") for name, e in entry["examples"].items()}
        for entry in entries
    ]
    # Read with the build's report, sphinx-gallery's files say each example's status as
    # the report does: the one that ran is ok, the one not run is said so by every input.
    assert statuses == [{"plot_quick.py": "ok", "plot_figure.py": "not-executed"}] * 3


def test_sphinx_gallerys_files_of_a_build_that_ran_nothing_pass_no_gate(tmp_path) -> None:
    """``plot_gallery`` off: the report says the build ran none of its examples, and so
    do the gates given sphinx-gallery's files of it (exit 2), rather than pass times of 0."""
    src = make_project(tmp_path, ["plot_quick.py"])
    built = build(src, "-D", "plot_gallery=0")
    assert built.returncode == 0, built.output
    history = tmp_path / "history.jsonl"
    for times in _timing_files(src):
        text, code = run_check([str(times)])
        assert code == 2 and text.count("\n") == 1, text
        assert "ran none of its 1 example" in text, text
        text, code = run_history_append(str(times), history)
        assert code == 2 and "ran none of its examples" in text, text
    assert not history.exists()
