"""The examples of a build and the budget of each, settled before any of them runs.

Settling budgets up front means a bad inline override or an ambiguous pattern stops the
build before the first example spends any time, and the same plan travels (pickled with
sphinx-gallery's config) to parallel workers.

Example::

    examples = plan_examples(app.srcdir, gallery_conf, load_budgets("conf/budgets.toml"))
    examples[0].id, examples[0].budget.describe()
    # ('tutorials/plot_quick.py', "30s from conf/budgets.toml [examples] 'plot_quick.py'")
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docsaccel.budgets import Budget, BudgetError, BudgetTable
from docsaccel.gallery import sg_compat

__all__ = ["Example", "plan_examples"]


@dataclass(frozen=True)
class Example:
    """One example: where it is, where its page goes, whether it runs, its budget."""

    gallery: str  # examples dir, relative to the source dir (posix)
    name: str  # path inside the gallery folder (posix): what budget patterns match
    src_file: str  # absolute, normalised as sphinx-gallery names it
    target_file: str  # the copy next to the generated page
    docname: str  # the generated page
    executable: bool
    budget: Budget

    @property
    def id(self) -> str:
        return f"{self.gallery}/{self.name}"


def plan_examples(
    srcdir: str | Path, gallery_conf: dict[str, Any], table: BudgetTable, fast: bool = False
) -> list[Example]:
    """Every example of every gallery, with its budget; raises :class:`BudgetError`.

    Ambiguous pattern ties among the examples and bad inline overrides raise here.
    ``fast``: the build runs with the fast path (fast-path budgets apply).
    """
    srcdir = Path(srcdir)
    examples = []
    for examples_dir, gallery_dir in sg_compat.gallery_dirs(gallery_conf):
        root = srcdir / examples_dir
        for path in sg_compat.example_files(root, gallery_conf):
            name = path.relative_to(root).as_posix()
            src_file = os.path.normpath(path)
            try:
                source = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise BudgetError(f"{src_file}: cannot read the example: {exc}") from exc
            target = srcdir / gallery_dir / name
            examples.append(
                Example(
                    gallery=Path(examples_dir).as_posix(),
                    name=name,
                    src_file=src_file,
                    target_file=os.path.normpath(target),
                    docname=(Path(gallery_dir) / name).with_suffix("").as_posix(),
                    executable=sg_compat.is_executable(src_file, gallery_conf),
                    budget=table.resolve(name, source_text=source, fast=fast),
                )
            )
    return examples
