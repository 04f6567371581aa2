"""The merge's check that its shard artifacts come from one plan of its tree, fed the
manifests a shard writes (:func:`docsaccel.shard.merge_plan.check_planned`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from docsaccel.shard import ShardError
from docsaccel.shard.merge_plan import check_planned, plan_entry

TREE = ["examples/a.py", "examples/b.py", "examples/c.py"]
DOCS = Path("docs")


def manifest(index: int, plan: list[list[str]] | None) -> dict:
    examples = [] if plan is None else plan[index]
    found = {"index": index, "shards": 2, "examples": examples, "executed": {}}
    if plan is not None:
        found["plan"] = plan_entry(plan)
    return found


def test_shards_of_one_plan_of_the_tree_pass() -> None:
    plan = [["examples/a.py"], ["examples/b.py", "examples/c.py"]]
    check_planned({Path("s0"): manifest(0, plan), Path("s1"): manifest(1, plan)}, TREE, DOCS)


def test_shards_of_plans_from_different_inputs_are_refused_naming_the_artifact() -> None:
    # Shard 0 of one plan and shard 1 of another: b is in no shard, c in both.
    one = [["examples/a.py", "examples/c.py"], ["examples/b.py"]]
    other = [["examples/a.py", "examples/b.py"], ["examples/c.py"]]

    with pytest.raises(ShardError) as refused:
        check_planned({Path("s0"): manifest(0, one), Path("s1"): manifest(1, other)}, TREE, DOCS)

    assert str(refused.value) == (
        "s1: planned from other inputs than s0: examples/b.py is in shard 0 here, in shard "
        "1 there; build every shard from the same inputs"
    )


def test_manifests_without_a_plan_are_checked_by_their_examples() -> None:
    s0 = {**manifest(0, None), "examples": ["examples/a.py", "examples/b.py"]}
    s1 = {**manifest(1, None), "examples": ["examples/b.py"]}

    with pytest.raises(ShardError, match=r"^s1: plans examples/b.py, which s0 plans too"):
        check_planned({Path("s0"): s0, Path("s1"): s1}, TREE, DOCS)


def test_a_plan_of_another_tree_is_refused_naming_what_differs() -> None:
    plan = [["examples/a.py", "examples/d.py"], ["examples/b.py", "examples/c.py"]]

    with pytest.raises(ShardError) as refused:
        check_planned({Path("s0"): manifest(0, plan), Path("s1"): manifest(1, plan)}, TREE, DOCS)

    assert str(refused.value) == (
        "s0: plans examples/d.py, which the tree being merged (docs) does not have: its "
        "shards were planned for another tree"
    )
