"""A journal or a record given directly where a build's report is read (``check``,
``compare``, ``report``): when its build finished and wrote its report beside it, that
report says how the build ended and is read, as the output folder is; the journal alone
would read as that of a build killed outright. Real Sphinx builds in temporary folders."""

from __future__ import annotations

import pytest
from helpers.gallery_build import build, make_project, run_cli

from docsaccel import layout

pytestmark = pytest.mark.slow


def test_a_finished_builds_journal_is_read_as_its_report(tmp_path) -> None:
    src = make_project(tmp_path, ["plot_quick.py"])
    built = build(src)
    assert built.returncode == 0, built.output
    records = layout.records_dir(built.outdir)
    # Its journals, and the plan of the examples it would run (records too).
    given = [*layout.journals(records), records / layout.PLAN_FILE]
    assert all(path.is_file() for path in given) and len(given) > 1, sorted(records.iterdir())
    for path in given:
        done = run_cli("check", str(path))
        said = done.stdout + done.stderr
        assert done.returncode == 0, said
        assert "killed" not in said and "did not finish" not in said, said
