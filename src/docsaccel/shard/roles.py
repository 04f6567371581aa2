"""Sharded builds: execute only one shard's examples, or merge shards executing none.

The design, in full: the sharding guide's *Design* section.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sphinx.util import logging

from docsaccel import sg_compat
from docsaccel.contract import EXPECTED_FAILURE
from docsaccel.examples import Example
from docsaccel.listed_runs import list_taken_runs
from docsaccel.records import read_records
from docsaccel.settings import Settings, env_name
from docsaccel.stops import config_error

FAST_ENV_VAR = env_name("fast")
SHARD_EXAMPLES_ENV_VAR = env_name("shard_examples")
SHARD_RECORDS_ENV_VAR = env_name("shard_records")

__all__ = ["apply_shard_settings"]

logger = logging.getLogger(__name__)


def apply_shard_settings(
    settings: Settings, examples: list[Example], gallery_conf: dict[str, Any]
) -> dict[str, dict[str, Any]]:
    """Execute only this shard's examples, or (merging shards) check none will execute.

    Returns the records of the examples executed elsewhere (empty unless merging), by id.
    """
    imported: dict[str, dict[str, Any]] = {}
    if settings.shard_records is not None:
        imported = read_records(settings.shard_records)
        # The merge runs none: sphinx-gallery's files list what the shards ran or restored.
        list_taken_runs(examples, imported, gallery_conf)
        _take_expected_failures(examples, imported, gallery_conf)
        _check_all_unchanged(examples, settings.shard_records)
        _check_all_from_shards(examples, imported, settings.shard_records)
        _check_same_fast_path(imported.values(), settings.fast)
    if settings.shard_examples is not None:
        selected = _select_examples(examples, settings.shard_examples)
        sg_compat.run_only(gallery_conf, [e.src_file for e in selected if e.executable])
        logger.info(
            f"docsaccel: {SHARD_EXAMPLES_ENV_VAR} selects {len(selected)} of "
            f"{len(examples)} examples to execute"
        )
    return imported


def _select_examples(examples: list[Example], names: tuple[str, ...]) -> list[Example]:
    """The examples named by ids (``tutorials/plot_a.py``) or paths inside their gallery.

    A path inside a gallery that two galleries share names no example: it must be an id.
    """
    by_name: dict[str, Example] = {e.id: e for e in examples}
    by_path: dict[str, list[Example]] = {}
    for example in examples:
        by_path.setdefault(example.name, []).append(example)
    by_name |= {path: found[0] for path, found in by_path.items() if len(found) == 1}
    ambiguous = [name for name in names if name not in by_name and len(by_path.get(name, ())) > 1]
    if ambiguous:
        raise config_error(
            f"{SHARD_EXAMPLES_ENV_VAR} = {os.environ.get(SHARD_EXAMPLES_ENV_VAR)!r}: "
            + "; ".join(
                f"{name!r} is in several galleries, name one by its id "
                f"({', '.join(e.id for e in by_path[name])})"
                for name in ambiguous
            )
        )
    unknown = [name for name in names if name not in by_name]
    if unknown:
        raise config_error(
            f"{SHARD_EXAMPLES_ENV_VAR} = {os.environ.get(SHARD_EXAMPLES_ENV_VAR)!r} names "
            f"examples this build does not have: {', '.join(unknown)} (known: "
            f"{', '.join(e.id for e in examples) or 'none'})"
        )
    return list({by_name[name].id: by_name[name] for name in names}.values())


def _take_expected_failures(
    examples: list[Example], imported: dict[str, dict[str, Any]], gallery_conf: dict[str, Any]
) -> None:
    """A shard's expected failure is merged as its page and record: it does not fail here,
    which sphinx-gallery must not take for an expected failure that passed."""
    failed = {example_id for example_id, record in imported.items() if record.get(EXPECTED_FAILURE)}
    sg_compat.expect_no_failure_of(gallery_conf, [e.src_file for e in examples if e.id in failed])


def _check_all_unchanged(examples: list[Example], records_dir: Path) -> None:
    """A merge build executes nothing: every example must be skipped as unchanged."""
    would_run = [
        example.id
        for example in examples
        if example.executable and not sg_compat.is_unchanged(example.src_file, example.target_file)
    ]
    if would_run:
        raise config_error(
            f"this build merges shards ({SHARD_RECORDS_ENV_VAR} = {str(records_dir)!r}) and "
            f"must execute no example, but no shard left the outputs of: "
            f"{', '.join(would_run)} (sphinx-gallery would execute them here)"
        )


def _check_all_from_shards(
    examples: list[Example], imported: dict[str, dict[str, Any]], records_dir: Path
) -> None:
    """A merge build publishes only what its shards ran: an example none of them ran is
    unchanged only because an earlier build left its outputs in the gallery folder, which
    would read as this build's (the merge build looks up no example cache: the shards
    did)."""
    not_ran = [
        example.id for example in examples if example.executable and example.id not in imported
    ]
    if not_ran:
        raise config_error(
            f"this build merges shards ({SHARD_RECORDS_ENV_VAR} = {str(records_dir)!r}) and "
            f"publishes only what they ran, but no shard ran: {', '.join(not_ran)} (the "
            "outputs in the gallery folder are an earlier build's)"
        )


def _check_same_fast_path(records: Iterable[dict[str, Any]], fast: bool) -> None:
    # The pages of a merged site must all come from the same path, fast or full.
    other = sorted(r["id"] for r in records if r["fast"] != fast and r["pid"] is not None)
    if other:
        raise config_error(
            f"this build merges shards with the fast path {'on' if fast else 'off'}, but "
            f"the shards executed {', '.join(other)} with it {'off' if fast else 'on'}: "
            f"set {FAST_ENV_VAR} the same way for the shards and the merge"
        )
