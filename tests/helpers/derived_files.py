"""What Sphinx derives from a page besides its HTML: its copied source and its words in
the site's search index, for the tests of what the report page's site says.

Example::

    assert "finish" not in indexed_stems(outdir, "budget_report")
"""

from __future__ import annotations

import json
from pathlib import Path

#: What only the report page written before the examples ran says.
UNFINISHED = "did not finish"
#: The search index's stems of its words ("finish", "partial", "replaced"), none of them
#: in the page of a build that finished.
UNFINISHED_STEMS = ("finish", "partial", "replac")


def indexed_stems(outdir: Path, docname: str) -> set[str]:
    """The words (stems) ``searchindex.js`` finds ``docname`` by, in its text or title."""
    text = (outdir / "searchindex.js").read_text("utf-8")
    index = json.loads(text[text.index("(") + 1 : text.rindex(")")])
    number = index["docnames"].index(docname)
    found = set()
    for mapping in (index["terms"], index["titleterms"]):
        for stem, docs in mapping.items():
            if number in (docs if isinstance(docs, list) else [docs]):
                found.add(stem)
    return found


def assert_no_unfinished_text(outdir: Path, docname: str = "budget_report") -> None:
    """The report page of a build that finished, its copied source (if published) and
    its search index entry say nothing of a build that did not finish; the site's index
    page keeps its copied source (the copy is on)."""
    page = outdir / f"{docname}.html"
    assert UNFINISHED not in page.read_text("utf-8"), page
    assert (outdir / "_sources" / "index.rst.txt").is_file(), "html_copy_source is off"
    copy = outdir / "_sources" / f"{docname}.rst.txt"
    assert not copy.exists() or UNFINISHED not in copy.read_text("utf-8"), f"{copy} says so"
    stems = indexed_stems(outdir, docname)
    assert not stems & set(UNFINISHED_STEMS), f"searchindex.js: {docname} by {sorted(stems)}"
