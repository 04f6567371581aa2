"""Two merges of the same shard artifacts report the same runs: a history records them
once, as it records a build once through any of its files."""

from __future__ import annotations

import json
import shutil

import pytest
from helpers.gallery_build import make_project, run_cli

from docsaccel import layout

pytestmark = pytest.mark.slow


def test_a_second_merge_of_the_same_shards_is_not_appended_again(tmp_path) -> None:
    src = make_project(tmp_path, ["plot_quick.py"])
    where = ("--docs", str(src), "--root", str(src))
    artifacts = tmp_path / "shards"
    done = run_cli(
        "shard-build", "--shards", "1", "--index", "0",
        "--artifact", str(artifacts / "docs-shard-0"), *where,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    report = layout.report_path(src / "_build" / "html")
    history = tmp_path / "history.jsonl"

    appended = []
    for _ in range(2):
        done = run_cli("shard-merge", str(artifacts), *where)
        assert done.returncode == 0, done.stdout + done.stderr
        appended.append(run_cli("history", "append", str(report), "--to", str(history)))

    first, second = appended
    assert first.returncode == 0, first.stdout + first.stderr
    # The second merge wrote another report (its own build id) of the very same runs.
    assert second.returncode == 2, second.stdout + second.stderr
    line = second.stderr.strip()
    assert len(line.splitlines()) == 1, line
    assert f"{history}: already records the runs of {report}" in line
    assert "not appended" in line
    assert len(history.read_text("utf-8").splitlines()) == 1
    runs = json.loads(report.read_text("utf-8"))["build"]["shard"]["runs"]
    manifest = json.loads((artifacts / "docs-shard-0" / "manifest.json").read_text("utf-8"))
    assert runs == [manifest["build_id"]]


def test_a_merge_reusing_recorded_shard_builds_is_refused_naming_them(tmp_path) -> None:
    """CI rebuilt one shard and reused the other's artifact: the second merge names one
    run the history already records beside a new one. Appended, the reused run's times
    would count twice in every median; refused, naming the run already recorded."""
    src = make_project(tmp_path, ["plot_quick.py", "plot_inline.py"])
    where = ("--docs", str(src), "--root", str(src))
    artifacts = tmp_path / "shards"

    def shard_build(index: int) -> str:
        artifact = artifacts / f"docs-shard-{index}"
        done = run_cli(
            "shard-build", "--shards", "2", "--index", str(index),
            "--artifact", str(artifact), *where,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        return json.loads((artifact / "manifest.json").read_text("utf-8"))["build_id"]

    reused = shard_build(0)
    shard_build(1)
    report = layout.report_path(src / "_build" / "html")
    history = tmp_path / "history.jsonl"
    appended = []
    for rebuilt in (False, True):
        if rebuilt:
            shutil.rmtree(artifacts / "docs-shard-1")
            rebuilt_run = shard_build(1)
        done = run_cli("shard-merge", str(artifacts), *where)
        assert done.returncode == 0, done.stdout + done.stderr
        appended.append(run_cli("history", "append", str(report), "--to", str(history)))

    first, second = appended
    assert first.returncode == 0, first.stdout + first.stderr
    runs = json.loads(report.read_text("utf-8"))["build"]["shard"]["runs"]
    assert runs == sorted([reused, rebuilt_run])
    assert second.returncode == 2, second.stdout + second.stderr
    line = second.stderr.strip()
    assert len(line.splitlines()) == 1, line
    assert f"{history}: already records the shard build {reused} of {report}" in line
    assert rebuilt_run not in line and "not appended" in line
    assert len(history.read_text("utf-8").splitlines()) == 1
