"""Whether shard artifacts were planned for the tree a merge builds: one plan, its examples.

A merge build skips every example whose outputs are in place, and a gallery folder an
earlier merge (or build) filled holds outputs of examples no shard of this merge ran:
published, they would read as this build's. So the merge takes shards only when they
come from one plan whose examples are the tree's, each in exactly one shard, and says in
one line which artifact differs and how otherwise, before it writes anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from docsaccel.shard.plan import ShardError

__all__ = ["PLAN_KEY", "check_planned", "plan_entry"]

#: The manifest key holding the whole plan the shard was one of: each shard's examples,
#: by index. Manifests written before it lack it; their own examples are checked then.
PLAN_KEY = "plan"


def plan_entry(shards: Sequence[Sequence[str]]) -> list[list[str]]:
    """The whole plan as a manifest keeps it (:data:`PLAN_KEY`)."""
    return [sorted(examples) for examples in shards]


def check_planned(
    manifests: Mapping[Path, Mapping[str, Any]], tree: Sequence[str], docs: Path
) -> None:
    """Refuse, in one line naming the artifact and what differs, shards of different plans
    or of a plan whose examples are not ``tree``'s (the example ids of the source folder
    ``docs`` being merged)."""
    ordered = sorted(manifests.items(), key=lambda item: item[1]["index"])
    for folder, manifest in ordered:
        _check_lists(manifest, folder)
    _check_one_plan(ordered)
    planned_by: dict[str, Path] = {}
    for folder, manifest in ordered:
        for example_id in manifest["examples"]:
            if example_id in planned_by:
                raise ShardError(
                    f"{folder}: plans {example_id}, which {planned_by[example_id]} plans "
                    "too: the shards come from different plans; build every shard from "
                    "the same inputs"
                )
            planned_by[example_id] = folder
    in_tree = set(tree)
    unknown = [example_id for example_id in planned_by if example_id not in in_tree]
    if unknown:
        raise ShardError(
            f"{planned_by[unknown[0]]}: plans {_some(unknown)}, which the tree being merged "
            f"({docs}) does not have: its shards were planned for another tree"
        )
    missing = [example_id for example_id in tree if example_id not in planned_by]
    if missing:
        folder, first = ordered[0]
        said = "its plan has no" if PLAN_KEY in first else "no shard of its plan has"
        raise ShardError(
            f"{folder}: {said} {_some(missing)}, which the tree being merged ({docs}) has: "
            "its shards were planned for another tree, and no earlier build's outputs stand "
            "for an example no shard ran"
        )


def _check_lists(manifest: Mapping[str, Any], folder: Path) -> None:
    """The manifest's examples (and plan, when it has one) are lists of example ids."""
    if not _ids(manifest.get("examples")):
        raise ShardError(f"{folder}: examples must be a list of example ids")
    plan = manifest.get(PLAN_KEY)
    if PLAN_KEY in manifest and not (isinstance(plan, list) and all(_ids(s) for s in plan)):
        raise ShardError(f"{folder}: {PLAN_KEY} must be a list of lists of example ids")


def _ids(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _check_one_plan(ordered: Sequence[tuple[Path, Mapping[str, Any]]]) -> None:
    """Every artifact that keeps its plan keeps the same one, and is its own shard of it."""
    kept = [(folder, manifest) for folder, manifest in ordered if PLAN_KEY in manifest]
    for folder, manifest in kept:
        plan = manifest[PLAN_KEY]
        index = manifest["index"]
        if index >= len(plan) or sorted(manifest["examples"]) != plan[index]:
            raise ShardError(
                f"{folder}: its examples are not those of shard {index} of the plan it keeps"
            )
    if not kept:
        return
    first_folder, first = kept[0]
    where_first = _where(first[PLAN_KEY])
    for folder, manifest in kept[1:]:
        where = _where(manifest[PLAN_KEY])
        differing = sorted(
            i for i in set(where) | set(where_first) if where.get(i) != where_first.get(i)
        )
        if differing:
            example_id = differing[0]
            here, there = where.get(example_id), where_first.get(example_id)
            raise ShardError(
                f"{folder}: planned from other inputs than {first_folder}: {example_id} is "
                f"{_shard_of(here)} here, {_shard_of(there)} there; build every shard from "
                "the same inputs"
            )


def _where(plan: Sequence[Sequence[str]]) -> dict[str, int]:
    return {example_id: index for index, examples in enumerate(plan) for example_id in examples}


def _shard_of(index: int | None) -> str:
    return "in no shard" if index is None else f"in shard {index}"


def _some(example_ids: Sequence[str]) -> str:
    """The first of ``example_ids`` and how many more: one line, however many differ."""
    more = len(example_ids) - 1
    return example_ids[0] + (f" (and {more} more)" if more else "")
