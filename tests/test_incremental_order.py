"""The order of what the documents put in Sphinx's domains and indexes, with the Sphinx
state: a clean build reads the documents in sorted order, so the objects, modules, labels
and index entries of a new page sit among the others by its name; a restored environment
must hold them in that order too, or the search index, the general index and the module
index list them differently from a clean build.

Each build is from a fresh copy of the project (new modification times everywhere), with
the cache of a build of the unchanged tree; the output is compared with a clean build of
the same tree, file by file.
"""

from __future__ import annotations

import pytest
from helpers.incremental_build import Workspace, from_cache, needs_state, replace, write

pytestmark = [pytest.mark.slow, needs_state]

#: A module whose name sorts before every other module of the package: its pages are read
#: first in a clean build.
NEW_MODULE = '''\
"""Areas of plane figures.

.. index:: single: area; of a square

.. py:data:: UNIT

   The side of the unit square (the search index's first object of its type).
"""

UNIT = 1.0


def square(side):
    """Area of a square.

    Parameters
    ----------
    side : float
        Its side.
    """
    return side * side
'''
EDITS = [
    write("src/pkg/area.py", NEW_MODULE),
    replace("src/pkg/__init__.py", "from pkg import base,", "from pkg import area, base,"),
    replace("src/pkg/__init__.py", '__all__ = ["base",', '__all__ = ["area", "base",'),
]


@pytest.mark.parametrize("jobs", [1, 2], ids=["serial", "j2"])
def test_a_new_module_sits_in_document_order(tmp_path, jobs):
    first = Workspace(tmp_path / "first", jobs=jobs)
    built = first.build()
    assert built.returncode == 0, built.output
    ws = from_cache(first.cache, tmp_path / "second", EDITS, jobs=jobs)
    built = ws.build()
    assert built.returncode == 0, built.output
    assert built.state["origin"] == "cache", built.output
    assert "api/pkg.area" in built.read and "guide" not in built.read, built.state
    assert "pkg.area.square" in (ws.outdir / "searchindex.js").read_text("utf-8")
    assert ws.differences() == []


#: A method of the same name as the package's ``describe`` methods, on a page that sorts
#: after the API pages, and a page referring to "a ``describe`` method": the reference
#: finds several targets and takes the first the Python domain holds.
SAME_NAME = [
    replace(
        "docs/guide.rst",
        "Details\n",
        ".. py:class:: Thing\n\n   .. py:method:: describe()\n\n      Say what it is.\n\nDetails\n",
    ),
    replace(
        "docs/other.rst",
        "See :ref:`setup-guide`",
        "Any :py:meth:`.describe` will do.\n\nSee :ref:`setup-guide`",
    ),
]


def test_a_fuzzy_reference_takes_the_target_a_clean_build_takes(tmp_path):
    first = Workspace(tmp_path / "first")
    for edit in SAME_NAME:
        first.fresh_copy(edit)
    built = first.build()
    assert built.returncode == 0, built.output
    assert "more than one target found" in built.output
    ws = from_cache(first.cache, tmp_path / "second", [*SAME_NAME, *EDITS])
    built = ws.build()
    assert built.returncode == 0, built.output
    assert "guide" not in built.read and "other" in built.written, built.state
    assert ws.differences() == []
