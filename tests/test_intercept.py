"""docsaccel.intercept: the one audit hook's listeners and the process-wide patches."""

from __future__ import annotations

import os
import subprocess
import sys
import types

import pytest

from docsaccel import intercept


def test_a_listener_sees_only_its_events_while_registered(tmp_path) -> None:
    seen: list[str] = []
    with intercept.listen({"os.listdir"}, lambda event, args: seen.append(event)) as listener:
        os.listdir(tmp_path)
        (tmp_path / "a").write_text("x")  # an "open" event: not subscribed
        assert listener.listening
    os.listdir(tmp_path)
    assert seen == ["os.listdir"] and not listener.listening
    listener.close()  # twice: nothing


def test_a_raising_listener_refuses_the_call_and_later_ones_do_not_see_it(tmp_path) -> None:
    later: list[str] = []

    def refuse(event: str, args: tuple) -> None:
        raise PermissionError(f"{args[0]} refused")

    with (
        intercept.listen({"os.listdir"}, refuse),
        intercept.listen({"os.listdir"}, lambda e, a: later.append(e)),
        pytest.raises(PermissionError, match="refused"),
    ):
        os.listdir(tmp_path)
    assert later == []
    os.listdir(tmp_path)  # closed: allowed again


def test_the_process_gets_one_audit_hook_however_many_listeners() -> None:
    code = (
        "import sys\n"
        "calls = []\n"
        "real = sys.addaudithook\n"
        "sys.addaudithook = lambda hook: (calls.append(hook), real(hook))\n"
        "from docsaccel import intercept\n"
        "assert calls == []\n"  # importing installs nothing
        "for _ in range(3):\n"
        "    intercept.listen({'open'}, lambda e, a: None).close()\n"
        "intercept.listen({'os.listdir'}, lambda e, a: None)\n"
        "print(len(calls))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1"


def _tagging(tag: str):
    """A wrap that marks what its replacement adds, and forwards through the patch."""

    def wrap(patch: intercept.Patch):
        def replacement(value: str) -> str:
            result = patch.original(value)
            return result + tag if patch.active else result

        return replacement

    return wrap


def test_undo_restores_what_was_there() -> None:
    owner = types.SimpleNamespace(f=str.upper)
    first = intercept.patch(owner, "f", _tagging("+a"))
    assert owner.f("x") == "X+a"
    first.undo()
    assert owner.f is str.upper
    first.undo()  # twice: nothing
    assert owner.f is str.upper


@pytest.mark.parametrize("order", ["first, then second", "second, then first"])
def test_undoing_a_patch_under_a_later_one_restores_exactly(order) -> None:
    owner = types.SimpleNamespace(f=str.upper)
    first = intercept.patch(owner, "f", _tagging("+a"))
    second = intercept.patch(owner, "f", _tagging("+b"))
    assert owner.f("x") == "X+a+b"
    if order == "first, then second":
        first.undo()
        assert owner.f is second.replacement and owner.f("x") == "X+b"
        second.undo()
    else:
        second.undo()
        assert owner.f is first.replacement and owner.f("x") == "X+a"
        first.undo()
    assert owner.f is str.upper


def test_a_patch_under_a_foreign_wrapper_only_forwards_once_undone() -> None:
    owner = types.SimpleNamespace(f=str.upper)
    ours = intercept.patch(owner, "f", _tagging("+a"))
    under = owner.f
    owner.f = lambda value: under(value) + "+theirs"
    ours.undo()
    assert owner.f("x") == "X+theirs"


def test_apply_again_puts_back_a_replacement_something_else_replaced() -> None:
    owner = types.SimpleNamespace(f=str.upper)
    ours = intercept.patch(owner, "f", _tagging("+a"))
    owner.f = str.lower
    ours.apply()
    assert owner.f("x") == "X+a" and ours.original is str.upper
    ours.undo()
    assert owner.f is str.upper


def test_the_exit_guards_undone_under_a_later_patch_keep_it() -> None:
    # In a forked child the build's exit guards are undone; a patch made on top of one
    # of them (a cache child's os._exit that writes its record) stays, over the real one.
    code = (
        "import os, sys\n"
        "from docsaccel import intercept\n"
        "from docsaccel.gallery import process_end\n"
        "process_end._guard_exits()\n"
        "guard = os._exit\n"
        "later = intercept.patch(os, '_exit', lambda p: lambda status: p.original(status))\n"
        "process_end._unguard_exits()\n"
        "assert os._exit is later.replacement, os._exit\n"
        "assert later.original is process_end.real_exit is not guard\n"
        "assert sys.exit is process_end._real_sys_exit\n"
        "later.undo()\n"
        "assert os._exit is process_end.real_exit\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_import_events_reach_their_subscribers_while_subscribed(
    tmp_path, monkeypatch, request
) -> None:
    # An import statement, a failing one in a module's body, a missing name of a
    # package, an import by name and a probe that finds nothing: each kind goes to the
    # callback subscribed to it, until the subscription is closed.
    import importlib
    import importlib.util

    package = tmp_path / "ev_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    body = "try:\n    import ev_no_such_dep\nexcept ImportError:\n    pass\n"
    (package / "mod.py").write_text(body)
    monkeypatch.syspath_prepend(str(tmp_path))
    names = ("ev_pkg", "ev_pkg.mod")
    for name in names:
        monkeypatch.delitem(sys.modules, name, raising=False)
    # Imported here, so not put back by monkeypatch: a module left loaded from this
    # folder reads as a project module to later tests of the same process.
    request.addfinalizer(lambda: [sys.modules.pop(name, None) for name in names])
    imported: list[intercept.ModuleImported] = []
    missing: list[intercept.ModuleNotFound] = []
    done: list[intercept.ImportsDone] = []
    callbacks = {
        intercept.ModuleImported: imported.append,
        intercept.ModuleNotFound: missing.append,
        intercept.ImportsDone: done.append,
    }
    with intercept.subscribe(callbacks) as subscription:
        import ev_pkg.mod

        with pytest.raises(ImportError):
            from ev_pkg import ev_nothing_here  # noqa: F401
        importlib.import_module("ev_pkg.mod")
        assert importlib.util.find_spec("ev_no_such_probe") is None
    assert not subscription.listening
    asked = {(e.absolute(), e.statement) for e in imported}
    assert {("ev_pkg.mod", True), ("ev_no_such_dep", True), ("ev_pkg.mod", False)} <= asked
    mod_file = str(package / "mod.py")
    assert {(e.name, e.importer_file, e.importer_name) for e in missing} >= {
        ("ev_no_such_dep", mod_file, "ev_pkg.mod"),
        ("ev_pkg.ev_nothing_here", __file__, __name__),
        ("ev_no_such_probe", __file__, __name__),
    }
    assert done and all(event == intercept.ImportsDone() for event in done)
    seen = len(imported) + len(missing) + len(done)
    import ev_pkg.mod  # noqa: F401

    assert len(imported) + len(missing) + len(done) == seen


def test_subscribe_refuses_what_is_not_an_import_event() -> None:
    with pytest.raises(ValueError, match="'open' is not an import event kind"):
        intercept.subscribe({"open": print})
