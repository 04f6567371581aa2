"""The examples of a build and the budget of each, settled before any of them runs.

The design, in full: the adopting guide's *Design* section.

Example (in a build, :func:`plan_examples` plans every example of the galleries this way):

>>> import tempfile
>>> from pathlib import Path, PurePosixPath
>>> from docsaccel.budgets import BudgetTable
>>> docs = tempfile.TemporaryDirectory()
>>> source = Path(docs.name, "tutorials", "plot_quick.py")
>>> source.parent.mkdir()
>>> _ = source.write_text('# docsaccel_budget = "30s"\\nprint("quick")\\n')
>>> conf = {"examples_dirs": ["tutorials"], "gallery_dirs": ["auto_tutorials"]}
>>> planner = Planner.for_build(docs.name, conf, BudgetTable(), fast=False)
>>> example = planner.example(str(source))
>>> example.id, example.docname
('tutorials/plot_quick.py', 'auto_tutorials/plot_quick')
>>> example.budget.describe()
'30s from plot_quick.py (# docsaccel_budget)'
>>> docs.cleanup()
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from docsaccel import sg_compat
from docsaccel.budgets import Budget, BudgetTable, ExampleFileError
from docsaccel.contract import shown_path

__all__ = ["Example", "Planner", "plan_examples"]


@dataclass(frozen=True)
class Example:
    """One example: where it is, where its page goes, whether it runs, its budget."""

    gallery: str  # examples dir, relative to the source dir (posix)
    name: str  # path inside the gallery folder (posix): budget patterns match it
    src_file: str  # absolute, normalised as sphinx-gallery names it
    target_file: str  # the copy next to the generated page
    docname: str  # the generated page
    executable: bool
    budget: Budget

    @property
    def id(self) -> str:
        return f"{self.gallery}/{self.name}"

    @property
    def ref(self) -> str:
        """sphinx-gallery's label of its page (:func:`docsaccel.sg_compat.page_label`),
        the name every input of its build knows it by."""
        # The docname is the copy's path without its suffix.
        target = PurePosixPath(self.docname).with_name(PurePosixPath(self.name).name)
        return sg_compat.page_label(target.as_posix())


@dataclass(frozen=True)
class Planner:
    """Turns an example's source path into an :class:`Example` with its budget.

    Small and picklable: the hook carries one to sphinx-gallery's workers, to plan an
    example that reaches it unplanned.
    """

    srcdir: str
    #: ``(examples_dir, gallery_dir)`` pairs, relative to ``srcdir``, as in the config.
    galleries: tuple[tuple[str, str], ...]
    table: BudgetTable
    fast: bool = False

    @classmethod
    def for_build(
        cls, srcdir: str | Path, gallery_conf: dict[str, Any], table: BudgetTable, fast: bool
    ) -> Planner:
        pairs = tuple(sg_compat.gallery_dirs(gallery_conf))
        return cls(os.path.normpath(os.path.abspath(srcdir)), pairs, table, fast)

    def plan(
        self, gallery_conf: dict[str, Any], warn: Callable[[str], None] | None = None
    ) -> list[Example]:
        """Every example sphinx-gallery builds, with its budget; raises
        :class:`~docsaccel.budgets.BudgetError`. ``warn`` is given each warning about an
        example's inline budget (a fast-path budget above its full one)."""
        examples = []
        for examples_dir, _ in self.galleries:
            for path in sg_compat.example_files(Path(self.srcdir) / examples_dir, gallery_conf):
                src_file = os.path.normpath(path)
                executable = sg_compat.is_executable(src_file, gallery_conf)
                example = self.example(src_file, executable, warn)
                if example is not None:
                    examples.append(example)
        return examples

    def plan_checked(self, gallery_conf: dict[str, Any]) -> tuple[list[Example], list[str]]:
        """Every example sphinx-gallery builds (:meth:`plan`), and what the build warns of
        in its budgets, one line each: a pattern of the budget file that matches none of
        them, a fast-path budget above its full one (in the file or an example's comment),
        a file that sets no budget. What the build refuses raises
        :class:`~docsaccel.budgets.BudgetError` instead (two patterns tied, a bad inline
        budget). The build and ``doctor`` both tell a warning from a refusal here."""
        inline: list[str] = []
        examples = self.plan(gallery_conf, warn=inline.append)
        return examples, self.table.check_examples((e.name, e.id) for e in examples) + inline

    def example(
        self, src_file: str, executable: bool = True, warn: Callable[[str], None] | None = None
    ) -> Example | None:
        """The example at ``src_file``; ``None`` when it is in none of the galleries.

        Raises :class:`~docsaccel.budgets.ExampleFileError` naming the file as the user
        finds it (:func:`~docsaccel.contract.shown_path`) when its source cannot be read
        or its inline budget is bad.
        """
        src_file = os.path.normpath(src_file)
        found = self._gallery_of(src_file)
        if found is None:
            return None
        examples_dir, gallery_dir, name = found
        shown = shown_path(src_file)
        try:
            source = Path(src_file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ExampleFileError(f"{shown}: cannot read the example: {exc}") from exc
        target = Path(self.srcdir) / gallery_dir / name
        gallery = Path(examples_dir).as_posix()
        budget = self.table.resolve(
            name,
            source_text=source,
            fast=self.fast,
            example_id=f"{gallery}/{name}",
            source_path=shown,
            warn=warn,
        )
        return Example(
            gallery=gallery,
            name=name,
            src_file=src_file,
            target_file=os.path.normpath(target),
            docname=(Path(gallery_dir) / name).with_suffix("").as_posix(),
            executable=executable,
            budget=budget,
        )

    def example_named(self, gallery: str, name: str, executable: bool = True) -> Example | None:
        """The example of id ``<gallery>/<name>`` (as in records)."""
        return self.example(os.path.join(self.srcdir, gallery, name), executable)

    def target_of(self, gallery: str, name: str) -> str | None:
        """The copy in its gallery folder of the example of id ``<gallery>/<name>`` (as in
        records), whether or not its source still exists; ``None`` when it is in none of
        the galleries."""
        found = self._gallery_of(os.path.normpath(os.path.join(self.srcdir, gallery, name)))
        if found is None:
            return None
        _, gallery_dir, relative = found
        return os.path.normpath(os.path.join(self.srcdir, gallery_dir, relative))

    def source_of(self, target: str) -> str | None:
        """The source of which ``target`` (a file in a gallery folder) is the copy: the
        same path, relative to the innermost gallery folder holding it, in that gallery's
        examples folder, whether or not it exists; ``None`` when no gallery folder holds
        ``target``."""
        target = os.path.normpath(os.path.join(self.srcdir, target))
        best: tuple[str, str] | None = None
        for examples_dir, gallery_dir in self.galleries:
            root = os.path.normpath(os.path.join(self.srcdir, gallery_dir))
            if not target.startswith(root + os.sep):
                continue
            relative = os.path.relpath(target, root)
            if best is None or len(relative) < len(best[1]):
                best = (examples_dir, relative)
        if best is None:
            return None
        return os.path.normpath(os.path.join(self.srcdir, best[0], best[1]))

    def _gallery_of(self, src_file: str) -> tuple[str, str, str] | None:
        # The innermost gallery holding the file, should one gallery folder hold another.
        best: tuple[str, str, str] | None = None
        for examples_dir, gallery_dir in self.galleries:
            root = os.path.normpath(os.path.join(self.srcdir, examples_dir))
            if not src_file.startswith(root + os.sep):
                continue
            name = Path(os.path.relpath(src_file, root)).as_posix()
            if best is None or len(name) < len(best[2]):
                best = (examples_dir, gallery_dir, name)
        return best


def plan_examples(
    srcdir: str | Path, gallery_conf: dict[str, Any], table: BudgetTable, fast: bool = False
) -> list[Example]:
    """Every example of every gallery, with its budget; raises
    :class:`~docsaccel.budgets.BudgetError`.

    Ambiguous pattern ties among the examples and bad inline overrides raise here.
    ``fast``: the build runs with the fast path (fast-path budgets apply).
    """
    return Planner.for_build(srcdir, gallery_conf, table, fast).plan(gallery_conf)
