"""``env-get-outdated``: which documents are read again, decided by content, never by time.

The design, in full: the caching guide's *Design* section.
"""

from __future__ import annotations

import time
from typing import Any

from sphinx.application import Sphinx
from sphinx.environment import CONFIG_OK, BuildEnvironment
from sphinx.util import logging

from docsaccel.cache.recorder import Recorder
from docsaccel.incremental.pages import Checker, Tables
from docsaccel.incremental.sphinxext import exports, viewcode
from docsaccel.incremental.sphinxext.state_build import TABLES_ATTR, current, pages_of

__all__ = ["on_before_read_docs", "on_env_get_outdated"]

logger = logging.getLogger(__name__)
#: The build log names at most this many documents with their reasons; the report has all.
LOGGED = 50


def _unsafe_extensions(app: Sphinx) -> list[str]:
    return sorted(n for n, e in app.extensions.items() if e.parallel_read_safe is not True)


def on_env_get_outdated(
    app: Sphinx, env: BuildEnvironment, added: set[str], changed: set[str], removed: set[str]
) -> list[str]:
    build = current(app)
    if build is None:
        return []
    root = app.config.root_doc
    build.reading.exports_before = exports.offers(env, removed & set(env.all_docs))
    build.reading.navigation_before = exports.navigation(env, root)[1]
    build.reading.domains_before = exports.domain_digests(env)
    build.reading.numbers_before = exports.numbers_digest(env)
    build.reading.viewcode_before = viewcode.links(env)
    for docname in added:
        build.reading.reasons[docname] = ["new document"]
    if not build.restored.origin:
        return []
    if env.config_status != CONFIG_OK:
        which = env.config_status_extra.strip()
        for docname in added:
            build.reading.reasons[docname] = [f"the configuration changed {which}".strip()]
        return []  # every document is read: Sphinx said why
    try:
        decided = _decide(app, env, build)
    except Exception as exc:  # when in doubt, read again: never a crash, never stale
        logger.warning(
            f"docsaccel: cannot tell which documents changed ({exc!r}); every document is read",
            type="docsaccel",
            subtype="cache",
        )
        decided = {
            d: ["what changed could not be told"] for d in env.found_docs & set(env.all_docs)
        }
    changed.clear()
    changed.update(decided)
    build.reading.reasons.update(decided)
    return []


def _decide(app: Sphinx, env: BuildEnvironment, build: Any) -> dict[str, list[str]]:
    records = pages_of(env)
    tables = Tables.from_json(getattr(env, TABLES_ATTR, None))
    checker = Checker(
        tables, build.restored.place.root, moved=build.restored.moved_from is not None
    )
    build.reading.checker = checker
    warned = set(build.restored.previous.warned_read)
    unsafe = _unsafe_extensions(app)
    decided: dict[str, list[str]] = {}
    for docname in sorted(env.found_docs & set(env.all_docs)):
        reasons: list[str] = []
        if unsafe:
            reasons.append(f"extension {unsafe[0]} does not declare it can read documents apart")
        if docname in build.restored.moved_texts:
            reasons.append("its text shows a path of the checkout, which moved")
        record = records.get(docname)
        if docname in env.reread_always and not (isinstance(record, dict) and record.get("reread")):
            # The record says why when docsaccel asked (see .reading).
            reasons.append("read again in every build (an import failed, or an extension asks)")
        if not (env.doctreedir / f"{docname}.doctree").is_file():
            reasons.append("its doctree is missing")
        if docname in warned:
            reasons.append("it warned when last read")
        if record is None:
            reasons.append("no recorded dependencies")
        elif not unsafe:
            reasons += checker.reasons(record)
        if reasons:
            decided[docname] = reasons
    return decided


def on_before_read_docs(app: Sphinx, env: BuildEnvironment, docnames: list[str]) -> None:
    build = current(app)
    if build is None:
        return
    Recorder.get().phases.end_between()  # each document's read records its own from here
    build.reading.started_ns = time.time_ns()
    # Before they are purged: what these documents offered the pages that stay.
    build.reading.exports_before.update(exports.offers(env, set(docnames) & set(env.all_docs)))
    for docname in docnames:
        build.reading.reasons.setdefault(docname, ["another extension asked to read it again"])
    if not build.restored.origin:
        return
    if (
        len(docnames) == len(env.found_docs)
        and len({r[0] for r in build.reading.reasons.values()}) == 1
    ):
        reason = next(iter(build.reading.reasons.values()), ["?"])[0] if docnames else ""
        logger.info(f"docsaccel: every document: {reason}")
        return
    for docname in sorted(docnames)[:LOGGED]:
        reasons = build.reading.reasons[docname]
        more = f" (and {len(reasons) - 1} more)" if len(reasons) > 1 else ""
        logger.info(f"docsaccel: {env.doc2path(docname, False)}: {reasons[0]}{more}")
    if len(docnames) > LOGGED:
        logger.info(f"docsaccel: ... and {len(docnames) - LOGGED} more documents")
