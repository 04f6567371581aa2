"""``docsaccel cache explain DOCUMENT``: what a document was read from, and what changed.

Reads the Sphinx states in the cache folder (:mod:`.state_store`), never a pickle and never
Sphinx: each state keeps its page records and their digests as JSON. For every state
(build context) that holds the document, it lists the document's dependencies, marks the
ones that changed in the source folder as it is now, and says whether a build in that
context reads it again, and why, in the build log's words.

The design, in full: the caching guide's *Design* section.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from docsaccel.counts import counted
from docsaccel.incremental.last_build import OTHER_VERSION, LastBuild
from docsaccel.incremental.pages import Checker, Tables
from docsaccel.incremental.state_store import StateStore

__all__ = ["explain_document", "find_document"]


def _docname(document: str, docs: Path) -> str:
    path = Path(document)
    if path.is_absolute() or path.exists():
        resolved = path.resolve()
        if resolved.is_relative_to(docs):
            path = resolved.relative_to(docs)
    text = path.as_posix()
    return os.path.splitext(text)[0] if "." in path.name else text


def find_document(document: str, cache: str | os.PathLike[str], docs: str | os.PathLike[str]):
    """``(docname, [(state file, meta)])`` of the states holding ``document`` (a docname,
    or its source file inside ``docs``); empty when none does."""
    docs_dir = Path(docs).resolve()
    docname = _docname(document, docs_dir)
    found = []
    for path, meta in StateStore(cache).all_states():
        pages = (meta or {}).get("build", {}).get("pages")
        if isinstance(pages, dict) and docname in pages:
            found.append((path, meta))
    return docname, found


def _root(docs: Path, meta: dict[str, Any]) -> str:
    """The project root of ``docs`` as the state's context names the source folder."""
    project = str(meta["context"].get("project") or ".")
    parts = [] if project == "." else Path(project).parts
    if parts and docs.parts[-len(parts) :] == tuple(parts):
        return str(Path(*docs.parts[: -len(parts)]))
    return str(docs) if not parts else str(meta["root"])


def _when(timestamp: Any) -> str:
    try:
        return datetime.fromtimestamp(float(timestamp), UTC).isoformat(timespec="seconds")
    except (TypeError, ValueError, OverflowError):
        return "an unknown time"


def explain_document(
    document: str, cache: str | os.PathLike[str], docs: str | os.PathLike[str]
) -> tuple[str, int]:
    """The text of ``docsaccel cache explain`` for a document, and the exit code."""
    docs_dir = Path(docs).resolve()
    docname, states = find_document(document, cache, docs)
    if not states:
        return f"{document!r}: no Sphinx state in {cache} holds this document\n", 2
    lines = [f"{docname}: in {len(states)} Sphinx state{'s' if len(states) > 1 else ''} of {cache}"]
    for path, meta in states:
        context = meta["context"]
        facts = meta["build"]
        record = facts["pages"][docname]
        checker = Checker(Tables.from_json(facts.get("tables")), _root(docs_dir, meta))
        lines += [
            "",
            f"state {path.name}",
            f"  context: {context.get('builder')} builder, Sphinx {context.get('sphinx')}, "
            f"Python {context.get('python')}, theme {context.get('theme')}; "
            f"made {_when(meta.get('made_at'))}",
        ]
        lines += _rows(record, checker)
        reasons = checker.reasons(record)
        last = LastBuild.from_json(facts)
        if last is None:
            # A build in this context reads every document.
            reasons.insert(0, OTHER_VERSION)
        elif docname in last.warned_read:
            reasons.insert(0, "it warned when last read")
        if reasons:
            lines.append(f"  read again: {counted(len(reasons), 'reason')}:")
            lines += [f"    - {reason}" for reason in reasons]
        else:
            lines.append("  up to date: a build in this context does not read it again")
        if last is not None and docname in last.warned_write:
            lines.append("  its page is written again: it warned when last written")
    return "\n".join(lines) + "\n", 0


def _rows(record: dict[str, Any], checker: Checker) -> list[str]:
    """One line per dependency: ``CHANGED``, ``same``, or ``edited`` (a module whose
    change is not in what the page takes from it)."""

    def status(changed: Any) -> str:
        return "CHANGED" if changed else "same"

    rows = [("source", record["source"], status(checker.changed(record["source"])))]
    rows += [("file", key, status(checker.changed(key))) for key in record.get("files", ())]
    dynamic = bool(record.get("dynamic"))
    for key, use in record.get("modules", {}).items():
        shown = use.get("shown") or []
        what = "whole" if use.get("whole") else (f"shows {', '.join(shown)}" if shown else "code")
        if checker.module_reason(key, use, dynamic):
            verdict = "CHANGED"
        else:
            verdict = "edited" if checker.changed(key) else "same"
        rows.append(("module", f"{key} ({what})", verdict))
    for name in record.get("dists", ()):
        before = checker.tables.dists.get(name)
        rows.append(("dist", f"{name} {before}", status(before != checker.version(name))))
    for name in record.get("absent", ()):
        rows.append(("absent", name, status(checker.found(name))))
    lines = [f"  dependencies ({len(rows)}):"]
    lines += [f"    {verdict:<7} {kind:<6} {name}" for kind, name, verdict in rows]
    refs = record.get("refs") or []
    if refs:
        lines.append(f"  refers to {counted(len(refs), 'name')} other pages offer")
    return lines
