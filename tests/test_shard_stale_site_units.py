"""What a sharded build removes from its site folder when it starts
(:func:`docsaccel.layout.forget_build`): an earlier build's report, records and dead lock,
but nothing of a build that writes into the folder now."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from docsaccel import layout


def _earlier_build(outdir: Path) -> None:
    layout.records_dir(outdir).mkdir(parents=True)
    (layout.records_dir(outdir) / layout.journal_name("3f2a", 12)).write_text("{}\n", "utf-8")
    layout.report_path(outdir).write_text("{}", "utf-8")
    layout.lock_path(outdir).write_text("12", "ascii")


def test_an_earlier_builds_report_records_and_dead_lock_are_removed(tmp_path) -> None:
    _earlier_build(tmp_path)

    assert layout.forget_build(tmp_path) is None

    assert not layout.report_path(tmp_path).exists()
    assert not layout.records_dir(tmp_path).exists()
    assert not layout.lock_path(tmp_path).exists()


def test_a_build_holding_the_folder_keeps_its_files(tmp_path) -> None:
    _earlier_build(tmp_path)
    layout.lock_path(tmp_path).write_text(str(os.getpid()), "ascii")
    with layout.lock_path(tmp_path).open("rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)

        assert layout.forget_build(tmp_path) == str(os.getpid())

    assert layout.report_path(tmp_path).exists()
    assert layout.journals(layout.records_dir(tmp_path))
    assert layout.lock_path(tmp_path).exists()
