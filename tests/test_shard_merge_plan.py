"""A merge takes only shards of one plan of the tree it builds: outputs an earlier merge
left in the gallery folders never stand for an example no shard ran.

Real ``shard-local``, ``shard-build`` and ``shard-merge`` runs of a tiny gallery.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers.gallery_build import make_project, run_cli

from docsaccel import layout

pytestmark = pytest.mark.slow

EXAMPLES = ["plot_quick.py", "plot_inline.py", "plot_knobs.py"]
#: Left out of the tree the shards are planned for.
LEFT_OUT = "plot_knobs.py"


def shard_command(src: Path, *args: str):
    return run_cli(*args, "--docs", str(src), "--root", str(src))


def shards_of_a_smaller_tree(src: Path, artifacts: Path) -> None:
    """Two shards built while ``src`` lacked :data:`LEFT_OUT`, which is then put back."""
    example = src / "examples" / LEFT_OUT
    aside = src.parent / LEFT_OUT
    shutil.move(example, aside)
    try:
        for index in range(2):
            done = shard_command(
                src, "shard-build", "--shards", "2", "--index", str(index),
                "--artifact", str(artifacts / f"docs-shard-{index}"),
            )  # fmt: skip
            assert done.returncode == 0, done.stdout + done.stderr
    finally:
        shutil.move(aside, example)


def assert_refused(done, artifacts: Path) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    line = done.stderr.strip()
    assert len(line.splitlines()) == 1, line
    assert f"{artifacts / 'docs-shard-0'}: its plan has no examples/{LEFT_OUT}" in line, line
    assert "which the tree being merged" in line, line


def test_a_merge_folder_that_merged_once_refuses_shards_of_another_tree(tmp_path) -> None:
    src = make_project(tmp_path / "merged", EXAMPLES)
    done = shard_command(src, "shard-local", "--shards", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    report = layout.report_path(src / "_build" / "html")
    before = report.read_bytes()
    artifacts = tmp_path / "shards"
    shards_of_a_smaller_tree(src, artifacts)

    done = shard_command(src, "shard-merge", str(artifacts))

    # The earlier merge's outputs of the example no shard ran are not published as this
    # build's: refused, the last site's report as it was.
    assert_refused(done, artifacts)
    assert report.read_bytes() == before
    merged = {record["id"]: record["status"] for record in json.loads(before)["examples"]}
    assert merged[f"examples/{LEFT_OUT}"] == "ok"

    # A fresh merge folder refuses the same shards in the same words.
    fresh = make_project(tmp_path / "fresh", EXAMPLES)
    done = shard_command(fresh, "shard-merge", str(artifacts))

    assert_refused(done, artifacts)


def test_a_merge_build_publishes_no_earlier_output_for_an_example_no_shard_ran(
    tmp_path,
) -> None:
    """Shards of the tree's plan whose artifact lost an example's outputs: the merge build
    refuses the example rather than publish what the earlier merge left of it."""
    src = make_project(tmp_path, EXAMPLES)
    done = shard_command(src, "shard-local", "--shards", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    artifacts = tmp_path / "shards"
    shutil.copytree(src / "_build" / "shard-artifacts", artifacts)
    example_id = f"examples/{LEFT_OUT}"
    manifests = {p: json.loads(p.read_text("utf-8")) for p in artifacts.glob("*/manifest.json")}
    [(path, manifest)] = [(p, m) for p, m in manifests.items() if example_id in m["executed"]]
    del manifest["executed"][example_id]
    path.write_text(json.dumps(manifest), encoding="utf-8")

    done = shard_command(src, "shard-merge", str(artifacts))

    assert done.returncode == 2, done.stdout + done.stderr
    assert f"publishes only what they ran, but no shard ran: {example_id}" in done.stderr
