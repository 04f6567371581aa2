"""Sharded docs builds: 3 shards of a tiny real gallery, then a merge that executes nothing.

The shards and the merge run as ``docsaccel shard-build`` / ``shard-merge`` in child
processes, exactly as ``nox -s docs_shard`` / ``docs_merge`` run them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.gallery_build import make_project

from docsaccel import layout
from docsaccel.report.commands import run_check
from docsaccel.schema import load_report
from docsaccel.shard import ShardError
from docsaccel.shard.build import merge_artifacts, read_project

pytestmark = pytest.mark.slow

EXAMPLES = ["plot_figure.py", "plot_quick.py", "plot_video_knobs.py", "skipped.py"]
EXECUTABLE = {"examples/plot_figure.py", "examples/plot_quick.py", "examples/plot_video_knobs.py"}
ENV = {"DOCSACCEL_FAST": "1", "DOCSACCEL_ON_OVERRUN": "fail"}
# The merged site gets the report page too.
CONF = 'docsaccel_report_page = "budget_report"\n'


def docsaccel(src: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "docsaccel.cli", *args, "--docs", "."],
        cwd=src,
        env={**os.environ, **ENV},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module")
def shards(tmp_path_factory) -> Path:
    """The artifacts of 3 shards of a 4-example gallery, each built in its own process."""
    src = make_project(tmp_path_factory.mktemp("sharded"), EXAMPLES, conf=CONF)
    artifacts = src.parent / "artifacts"
    for index in range(3):
        done = docsaccel(
            src, "shard-build", "--shards", "3", "--index", str(index),
            "--artifact", str(artifacts / f"docs-shard-{index}"),
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
    return artifacts


def manifests(artifacts: Path) -> dict[int, dict]:
    found = (json.loads(p.read_text("utf-8")) for p in artifacts.glob("*/manifest.json"))
    return {manifest["index"]: manifest for manifest in found}


def fresh_project(tmp_path: Path, artifacts: Path) -> tuple[Path, Path]:
    """A clean copy of the project (no gallery outputs) and a copy of the artifacts."""
    src = make_project(tmp_path, EXAMPLES, conf=CONF)
    copied = tmp_path / "artifacts"
    shutil.copytree(artifacts, copied)
    return src, copied


def test_three_shards_merge_into_one_site_executing_nothing_twice(shards, tmp_path) -> None:
    by_index = manifests(shards)
    assert sorted(by_index) == [0, 1, 2]
    executed = [example for m in by_index.values() for example in m["executed"]]
    assert sorted(executed) == sorted(EXECUTABLE), "each example executed by exactly one shard"
    assert sorted(e for m in by_index.values() for e in m["examples"]) == [
        f"examples/{name}" for name in EXAMPLES
    ]
    shard_records = {
        record["id"]: record
        for path in shards.glob("*/records/*.json")
        for record in [json.loads(path.read_text("utf-8"))]
    }
    assert set(shard_records) == EXECUTABLE
    assert len({r["pid"] for r in shard_records.values()}) == 3, "one shard process each"

    src, artifacts = fresh_project(tmp_path, shards)
    done = docsaccel(src, "shard-merge", "-W", str(artifacts))

    assert done.returncode == 0, done.stdout + done.stderr
    html = src / "_build" / "html"
    report = load_report(html / "docsaccel" / "report.json")
    merged = {record["id"]: record for record in report["examples"]}
    # The union of the shard records, unchanged: the real status, time, pid and start of
    # the shard that executed each example. Had the merge build executed one, its hook
    # would have written a record of its own with the merge's pid and times.
    for example_id, record in shard_records.items():
        assert merged[example_id] == record
        assert record["status"] == "ok" and record["started_at"] is not None
    assert merged["examples/skipped.py"]["status"] == "not-executed"
    assert report["build"]["complete"] is True
    # Every page, with the outputs its shard produced (the very files).
    pages = html / "auto_examples"
    assert "quick done" in (pages / "plot_quick.html").read_text("utf-8")
    assert "sphx_glr_plot_figure_001.png" in (pages / "plot_figure.html").read_text("utf-8")
    video_page = (pages / "plot_video_knobs.html").read_text("utf-8")
    assert "<video" in video_page and "sphx_glr_plot_video_knobs_001.mp4" in video_page
    assert "frames = 8 (full build: 24)" in video_page
    assert (pages / "skipped.html").is_file()
    for name in ("sphx_glr_plot_figure_001.png", "sphx_glr_plot_video_knobs_001.mp4"):
        [from_shard] = artifacts.glob(f"*/files/auto_examples/images/{name}")
        assert (html / "_images" / name).read_bytes() == from_shard.read_bytes()
    assert "Build budget report" in (html / "budget_report.html").read_text("utf-8")


def test_merge_refuses_an_example_executed_by_two_shards(shards, tmp_path) -> None:
    src, artifacts = fresh_project(tmp_path, shards)
    by_index = manifests(artifacts)
    donor = next(m for m in by_index.values() if m["executed"])
    other = next(m for m in by_index.values() if m["index"] != donor["index"])
    example_id = next(iter(donor["executed"]))
    other["executed"][example_id] = donor["executed"][example_id]
    manifest_path = artifacts / f"docs-shard-{other['index']}" / "manifest.json"
    manifest_path.write_text(json.dumps(other), encoding="utf-8")

    with pytest.raises(ShardError, match=f"{example_id} was executed by two shards"):
        merge_artifacts(read_project(src, src), artifacts, tmp_path / "records")


def test_merge_refuses_a_missing_shard(shards, tmp_path) -> None:
    src, artifacts = fresh_project(tmp_path, shards)
    shutil.rmtree(artifacts / "docs-shard-1")

    with pytest.raises(ShardError, match=r"artifacts of shard 1 of 3 are missing"):
        merge_artifacts(read_project(src, src), artifacts, tmp_path / "records")
    shutil.rmtree(artifacts / "docs-shard-2")
    with pytest.raises(ShardError, match=r"artifacts of shards 1, 2 of 3 are missing"):
        merge_artifacts(read_project(src, src), artifacts, tmp_path / "records")


def test_merge_build_refuses_an_example_no_shard_executed(shards, tmp_path) -> None:
    src, artifacts = fresh_project(tmp_path, shards)
    folder = next(p.parent for p in artifacts.glob("*/manifest.json") if "quick" in p.read_text())
    manifest = json.loads((folder / "manifest.json").read_text("utf-8"))
    del manifest["executed"]["examples/plot_quick.py"]
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")

    done = docsaccel(src, "shard-merge", str(artifacts))

    assert done.returncode == 2
    assert "must execute no example, but no shard left the outputs of: " in done.stderr
    assert "examples/plot_quick.py (sphinx-gallery would execute them here)" in done.stderr
    assert "quick done" not in done.stdout + done.stderr, "the example must not have run"


def test_local_parallel_shards_build_the_site(tmp_path) -> None:
    src = make_project(tmp_path, EXAMPLES, conf=CONF)

    done = docsaccel(src, "shard-local", "--shards", "2")

    assert done.returncode == 0, done.stdout + done.stderr
    report = load_report(src / "_build" / "html" / "docsaccel" / "report.json")
    statuses = {record["id"]: record["status"] for record in report["examples"]}
    assert statuses == {**dict.fromkeys(EXECUTABLE, "ok"), "examples/skipped.py": "not-executed"}
    assert len({r["pid"] for r in report["examples"] if r["pid"]}) == 2, "one process a shard"
    for index in range(2):
        assert (src / "_build" / "shard-work" / f"{index}.log").is_file()
    # Every build removed its note that it started: the merged report passes the gate.
    assert not list((src / "_build").rglob(layout.BUILD_STARTED_FILE))
    out, code = run_check([str(src / "_build" / "html" / "docsaccel" / "report.json")])
    assert code == 0, out


def test_a_failing_example_in_a_local_shard_is_named_and_reported(tmp_path) -> None:
    src = make_project(tmp_path, ["plot_crash.py", "plot_quick.py"])

    done = docsaccel(src, "shard-local", "--shards", "2")

    # As a serial build: exit 2, the failing example named, its report failing the gate.
    assert done.returncode == 2, done.stdout + done.stderr
    error = done.stderr.strip()
    assert len(error.splitlines()) == 1, error
    assert "examples/plot_crash.py failed: RuntimeError: this example crashes on purpose" in error
    report = load_report(src / "_build" / "html" / "docsaccel" / "report.json")
    statuses = {record["id"]: record["status"] for record in report["examples"]}
    assert statuses == {"examples/plot_crash.py": "failed", "examples/plot_quick.py": "ok"}
    check = subprocess.run(
        [sys.executable, "-m", "docsaccel.cli", "check", "_build/html/docsaccel/report.json"],
        cwd=src,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert check.returncode == 3, check.stdout + check.stderr
    assert "plot_crash.py" in check.stdout + check.stderr


def test_an_example_over_its_budget_in_a_local_shard_is_named(tmp_path) -> None:
    """In fail mode, the error line of a shard whose build an example's budget failed
    names the example, as it names one that raised; the merged report fails the gate."""
    budgets = '[examples]\n"plot_sleep.py" = "0.5s"\n'
    src = make_project(tmp_path, ["plot_sleep.py", "plot_quick.py"], budgets=budgets)

    done = docsaccel(src, "shard-local", "--shards", "2")

    assert done.returncode == 2, done.stdout + done.stderr
    (error,) = done.stderr.strip().splitlines()
    assert "1 example stopped at its budget: examples/plot_sleep.py; sphinx-build" in error
    out, code = run_check([str(src / "_build" / "html" / "docsaccel" / "report.json")])
    assert code == 3, out
    assert out.startswith(
        "FAIL: the build failed: 1 example stopped at its budget: examples/plot_sleep.py"
    ), out
