"""The warnings an example's processing logged: caught as made, kept as JSON with its
entry, given again as a run in this folder gives them; a malformed entry is unusable."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from sphinx.util import logging as sphinx_logging

from docsaccel import sphinx_logs
from docsaccel.cache import example_logs
from docsaccel.cache.store import ENTRY_FILE, CacheStore, EntryError
from docsaccel.sphinx_logs import Capture, Logged


class _Changing(logging.Handler):
    """Stands for Sphinx's own handler, which changes a record as it shows it."""

    def emit(self, record: logging.LogRecord) -> None:
        record.msg += " [shown]"
        record.location = "changed"


@pytest.fixture
def sphinx_logger():
    logger = logging.getLogger(sphinx_logs._NAMESPACE)
    before = list(logger.handlers)
    logger.addHandler(_Changing())
    yield logger
    logger.handlers[:] = before


def test_the_namespace_is_sphinx_s() -> None:
    assert sphinx_logs._NAMESPACE == sphinx_logging.NAMESPACE


def test_the_capture_sees_a_record_as_made_and_once(sphinx_logger) -> None:
    capture = Capture()
    capture.start()
    sphinx_logging.getLogger("x").warning(
        "%s is missing", "a.png", type="t", subtype="s", location=("index", 3)
    )
    sphinx_logging.getLogger("x").info("not a warning")
    record = logging.LogRecord("sphinx.x", logging.ERROR, "", 0, "handed twice", (), None)
    sphinx_logger.handle(record)
    sphinx_logger.handle(record)  # as Sphinx shows a warning it held back
    found = capture.stop()
    assert found == [
        Logged("a.png is missing", logging.WARNING, "t", "s", ["index", 3]),
        Logged("handed twice", logging.ERROR),
    ]
    assert capture not in sphinx_logger.handlers


def test_what_is_about_the_build_is_left_out() -> None:
    assert not example_logs.about_the_example(Logged("not storing", 30, "docsaccel", "cache"))
    assert not example_logs.about_the_example(
        Logged("no profiler", 30, "sphinx_gallery", "dependency")
    )
    assert example_logs.about_the_example(Logged("thumb", 30, "sphinx_gallery", "thumbnail"))
    assert example_logs.about_the_example(Logged("no video", 30, "docsaccel", "video"))
    assert example_logs.about_the_example(Logged("its own", 40))


def test_a_path_under_the_folder_it_ran_in_is_under_this_one() -> None:
    logged = Logged(
        "'/ci/a/docs/x.png' not found; /ci/ab/y stays", 30, location="/ci/a/docs/p.py:3"
    )
    moved = logged.relocated("/ci/a", "/home/b")
    assert moved.message == "'/home/b/docs/x.png' not found; /ci/ab/y stays"
    assert moved.location == "/home/b/docs/p.py:3"


def test_replayed_as_logged(sphinx_logger) -> None:
    capture = Capture()
    capture.start()
    Logged("50% done", 30, "t", "s", ["index", 3], once=True).replay("docsaccel.cache")
    assert capture.stop() == [Logged("50% done", 30, "t", "s", ["index", 3], once=True)]


@pytest.mark.parametrize(
    "bad",
    [
        "text",
        [{"level": 30}],
        [{"message": "m", "level": "30"}],
        [{"message": "m", "level": 30, "type": 1}],
        [{"message": "m", "level": 30, "location": 3}],
    ],
)
def test_an_entry_with_malformed_warnings_is_unusable(tmp_path: Path, bad) -> None:
    store = CacheStore(tmp_path / "cache")
    page = tmp_path / "plot_a.rst"
    page.write_text("A\n=\n", "utf-8")
    deps = {"source": "s", "files": {}, "code": {}, "dists": {}}
    meta = {"id": "plot_a.py", "context": {}, "deps": deps, "record": {}, "warnings": []}
    name = store.entry_name("plot_a.py", "k")
    store.store(name, meta, {"plot_a.rst": page})
    assert store.load(name).meta["warnings"] == []
    path = store.entries / name / ENTRY_FILE
    path.write_text(json.dumps({**json.loads(path.read_text("utf-8")), "warnings": bad}), "utf-8")
    with pytest.raises(EntryError, match=f"{ENTRY_FILE}: .*warning"):
        store.load(name)


def test_no_file_of_logged_warnings_is_an_input_error(tmp_path: Path) -> None:
    from docsaccel.contract import InputError

    with pytest.raises(InputError):
        example_logs.read(tmp_path / "missing.logged.json")
