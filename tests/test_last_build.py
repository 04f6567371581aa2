"""The record a finished build leaves for the next one: its stored form and its version."""

from __future__ import annotations

import pytest

from docsaccel.incremental.last_build import VERSION, LastBuild


def _record() -> LastBuild:
    return LastBuild(
        warned_read=["intro"],
        warned_write=["api"],
        intersphinx="ab" * 32,
        write={"config": {"html_theme": "alabaster"}, "tags": [], "files": {}},
        outputs={"intro": ["intro.html"]},
        linked_files={"intro": ["_images/plot.png"]},
        filled_late={"todo": ["todo_node"]},
        builder_pages={"genindex": "genindex.html"},
        sphinx_files=["_static/basic.css"],
        site_files=["_static/custom.css"],
        assets={"_static/custom.css": True},
        index_entries={"intro": [["single", "term", "id0", "", None]]},
    )


def test_a_record_reads_back_as_it_was_written() -> None:
    record = _record()
    stored = record.to_json()
    assert stored["version"] == VERSION
    assert LastBuild.from_json(stored) == record


def test_what_is_stored_beside_the_record_is_left_out() -> None:
    # The stored state keeps its page records beside the record's fields.
    stored = {**_record().to_json(), "pages": {"intro": {}}, "tables": {}}
    assert LastBuild.from_json(stored) == _record()


def test_an_empty_record_is_what_no_page_written_leaves() -> None:
    assert LastBuild.from_json(LastBuild().to_json()) == LastBuild()


@pytest.mark.parametrize(
    "stored",
    [
        {**_record().to_json(), "version": VERSION + 1},
        {**_record().to_json(), "version": 0},
        {k: v for k, v in _record().to_json().items() if k != "version"},  # before versions
        {**_record().to_json(), "warned_read": "intro"},
        {**_record().to_json(), "outputs": ["intro.html"]},
        {**_record().to_json(), "intersphinx": 3},
        None,
        [],
        "facts",
    ],
    ids=[
        "newer",
        "older",
        "unversioned",
        "str-for-list",
        "list-for-map",
        "int",
        "none",
        "list",
        "str",
    ],
)
def test_a_record_of_another_version_or_shape_is_no_record(stored) -> None:
    assert LastBuild.from_json(stored) is None
