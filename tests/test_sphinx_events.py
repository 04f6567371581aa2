"""Sphinx's event handlers wrapped through the one owner of interception, and put back."""

from __future__ import annotations

import gc
import sys
import types
import weakref
from pathlib import Path

import pytest
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.events import EventManager

from docsaccel import intercept
from docsaccel.gallery.handler_errors import note_errors
from docsaccel.sphinx_events import connected_handlers, handler_slots, wrap_handlers
from docsaccel.stops import HandlerStop


class _App:
    """What an event manager needs of a Sphinx application, without a build."""

    pdb = False

    def __init__(self) -> None:
        self.events = EventManager(self)  # type: ignore[arg-type]
        self.confdir = "."

    def connect(self, event: str, callback, priority: int = 500) -> int:
        return self.events.connect(event, callback, priority)


def _theirs(app) -> None:
    raise ValueError("no data\nmore")


def _quiet(app) -> str:
    return "ran"


def test_a_wrapped_handler_notes_its_error_once_and_raises_it_on() -> None:
    app, noted = _App(), []
    app.connect("builder-inited", _theirs)
    patches = note_errors(app, "builder-inited", lambda raised, said: noted.append((raised, said)))
    assert len(patches) == 1 and patches[0].active
    slot = handler_slots(app, "builder-inited")[0]
    assert slot.handler.__name__ == "_theirs"  # functools.wraps: Sphinx names it so
    with pytest.raises(Exception, match="no data"):  # Sphinx wraps it
        app.events.emit("builder-inited")
    [(raised, said)] = noted
    assert raised.endswith("raised ValueError: no data") and said is False, noted
    assert "the builder-inited handler _theirs of test_sphinx_events" in raised
    patches[0].undo()
    assert slot.handler is _theirs


def _gallery_refuses(app) -> None:
    raise ExtensionError('Could not find docstring in file "plot_child.py"')


_gallery_refuses.__module__ = "sphinx_gallery.gen_gallery"  # as sphinx-gallery's own


def test_a_message_sphinx_gallery_raises_becomes_one_logged_stop() -> None:
    """sphinx-gallery's own Sphinx error is noted as said, and goes on as a stop Sphinx
    prints no crash report for (a ``BdbQuit``), whose line is the one the note gives."""
    app, noted = _App(), []
    app.connect("builder-inited", _gallery_refuses)

    def note(raised: str, said: bool) -> str:
        noted.append((raised, said))
        return f"stopped: {raised}"

    note_errors(app, "builder-inited", note)
    with pytest.raises(HandlerStop, match=r"^stopped: sphinx-gallery .*Could not find docstring"):
        app.events.emit("builder-inited")
    said = 'sphinx-gallery raised ExtensionError: Could not find docstring in file "plot_child.py"'
    assert noted == [(said, True)]


def test_the_wrappers_are_undone_once_every_handler_ran() -> None:
    app, noted = _App(), []
    app.connect("builder-inited", _quiet)
    [applied] = note_errors(app, "builder-inited", lambda raised, said: noted.append(raised))
    assert _quiet not in connected_handlers(app)
    assert app.events.emit("builder-inited")[0] == "ran"
    assert not applied.active and applied not in intercept._patches
    assert _quiet in connected_handlers(app) and noted == []


def test_stacked_wrappers_undone_in_any_order_restore_the_handler() -> None:
    app = _App()
    app.connect("build-finished", _quiet)

    def replace(handler):
        return (
            (lambda applied: lambda *a: applied.original(*a) + "+") if handler is _quiet else None
        )

    first = wrap_handlers(app, "build-finished", replace)
    slot = handler_slots(app, "build-finished")[0]
    second = intercept.patch(slot, "handler", lambda applied: lambda *a: applied.original(*a) + "!")
    assert slot.handler(app) == "ran+!"
    first[0].undo()
    assert slot.handler(app) == "ran!"
    second.undo()
    assert slot.handler is _quiet


def test_docsaccel_handlers_are_left_as_they_are() -> None:
    app = _App()
    handler = connected_handlers  # any function of docsaccel's
    app.connect("builder-inited", handler)
    assert note_errors(app, "builder-inited", print) == []
    assert connected_handlers(app) == [handler]


def _start(src: Path, out: Path, conf: str = "") -> None:
    src.mkdir()
    (src / "index.rst").write_text("Title\n=====\n", encoding="utf-8")
    (src / "conf.py").write_text(conf, encoding="utf-8")
    Sphinx(src, src, out, out / ".doctrees", "html", status=None, warning=None)


def test_a_handler_raising_in_builder_inited_leaves_the_app_collectable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    apps, noted = [], []

    def setup(app) -> dict:
        apps.append(weakref.ref(app))
        # As docsaccel's gallery plugin does: wrapped once every extension is set up.
        app.connect(
            "config-inited",
            lambda app, config: note_errors(
                app, "builder-inited", lambda raised, said: noted.append(raised)
            ),
        )
        app.connect("builder-inited", _theirs)
        return {"parallel_read_safe": True}

    extension = types.ModuleType("raising_extension")
    extension.setup = setup  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "raising_extension", extension)
    with pytest.raises(ExtensionError, match="no data"):
        _start(tmp_path / "raising", tmp_path / "raising-out", "extensions = ['raising_extension']")
    assert len(noted) == 1 and "_theirs" in noted[0], noted
    # Sphinx's logging keeps the last application until the next one sets it up.
    _start(tmp_path / "plain", tmp_path / "plain-out")
    gc.collect()
    assert apps[0]() is None
