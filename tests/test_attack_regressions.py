"""Regressions of defects found by trying to break the plugin and the example cache.

Each test names what went wrong: a warm build that served a stale page, a build that
crashed or went on in a copy of itself, a setting misspelled without a word.
"""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers.gallery_build import build, make_project

from docsaccel.cache.recorder import Recorder
from docsaccel.cache.store import CacheStore
from docsaccel.layout import example_id_of
from docsaccel.layout import id_slug as entry_slug
from docsaccel.settings import SettingError, config_values, read_settings, unknown_settings

#: Bound as a library binds it, when imported: before any recorder was installed.
_BOUND_IMPORT_MODULE = importlib.import_module


def _example(src: Path, name: str, body: str) -> None:
    title = Path(name).stem
    text = f'"""\n{title}\n{"=" * len(title)}\n"""\n{textwrap.dedent(body)}'
    (src / "examples" / name).write_text(text, encoding="utf-8")


def test_import_module_of_a_module_already_imported_is_recorded(tmp_path: Path) -> None:
    # An earlier example imported it: no import event fires, and importlib.import_module
    # does not go through builtins.__import__; editing the module must still re-run this one.
    (tmp_path / "attack_helper_mod.py").write_text("VALUE = 1\n", encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    try:
        importlib.import_module("attack_helper_mod")
        recorder = Recorder.get()
        recorder.start([str(tmp_path)])
        try:
            importlib.import_module("attack_helper_mod")
        finally:
            seen = recorder.stop()
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("attack_helper_mod", None)
    assert "attack_helper_mod" in seen.modules


def test_import_module_bound_to_a_name_before_the_recorder_is_recorded(tmp_path: Path) -> None:
    # Sphinx's inheritance_diagram (and autodoc) call their own `import_module`, bound when
    # Sphinx was imported: the classes of a diagram are the page's dependencies too.
    (tmp_path / "attack_bound_mod.py").write_text("VALUE = 1\n", encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    try:
        _BOUND_IMPORT_MODULE("attack_bound_mod")
        recorder = Recorder.get()
        recorder.start([str(tmp_path)])
        try:
            _BOUND_IMPORT_MODULE("attack_bound_mod")
        finally:
            seen = recorder.stop()
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("attack_bound_mod", None)
    assert "attack_bound_mod" in seen.modules


def test_a_cache_folder_that_is_a_file_stops_the_build_naming_it(tmp_path: Path) -> None:
    (tmp_path / "cache").write_text("not a folder\n", encoding="utf-8")

    class Config:
        pass

    config = Config()
    for key, value, _ in config_values():
        setattr(config, key, value)
    config.docsaccel_cache = "cache"
    with pytest.raises(SettingError, match=r"docsaccel_cache='cache': .*cache is a file"):
        read_settings(config, confdir=tmp_path, env={})
    with pytest.raises(SettingError, match=r"DOCSACCEL_CACHE=.*is a file"):
        read_settings(config, confdir=tmp_path, env={"DOCSACCEL_CACHE": str(tmp_path / "cache")})


def test_misspelled_settings_in_any_case_get_a_suggestion() -> None:
    messages = unknown_settings(["DOCSACCEL_FAST", "docsaccel_FAST", "docsaccel_fast"])
    assert len(messages) == 2
    assert all("did you mean 'docsaccel_fast'?" in m for m in messages)
    (plain,) = unknown_settings(["docsaccel_zzzzzz"])
    assert "(ignored). Settings: docsaccel_budgets" in plain


@pytest.mark.parametrize(
    "ids",
    [
        ("g/a__b.py", "g/a/b.py"),
        ("g/a_/b.py", "g/a/_b.py", "g/a___b.py", "g/a/__b.py"),
        ("g/%5F.py", "g/_.py"),
        ("../ex/a.py", "%2E./ex/a.py", "./ex/a.py"),
    ],
)
def test_two_examples_never_share_a_cache_entry(ids: tuple[str, ...]) -> None:
    names = {CacheStore.entry_name(example_id, "k") for example_id in ids}
    assert len(names) == len(ids)
    assert [example_id_of(entry_slug(example_id)) for example_id in ids] == list(ids)
    assert entry_slug("tutorials/plot_a.py") == "tutorials__plot_a.py"  # names kept
    # A gallery beside the source folder: no entry name hidden by a leading dot.
    assert not any(entry_slug(example_id).startswith(".") for example_id in ids)


@pytest.mark.slow
def test_same_slug_examples_each_get_their_own_entry_and_hit(tmp_path: Path) -> None:
    src = make_project(tmp_path, [], conf='docsaccel_cache = "../cache"\n')
    (src / "examples" / "plot_a").mkdir()
    (src / "examples" / "plot_a" / "README.rst").write_text("Sub\n===\n", encoding="utf-8")
    _example(src, "plot_a/plot_b.py", 'print("nested")\n')
    _example(src, "plot_a__plot_b.py", 'print("flat")\n')
    first = build(src, outdir=tmp_path / "out1")
    assert first.returncode == 0, first.output
    assert len(list((tmp_path / "cache" / "entries").iterdir())) == 2
    shutil.rmtree(src / "auto_examples")  # a fresh checkout, as in CI
    second = build(src, outdir=tmp_path / "out2")
    assert second.returncode == 0, second.output
    statuses = {r["id"]: (r["status"], r["cache"]) for r in second.report["examples"]}
    assert statuses["examples/plot_a/plot_b.py"][0] == "cached", statuses
    assert statuses["examples/plot_a__plot_b.py"][0] == "cached", statuses


@pytest.mark.slow
def test_forked_copy_of_the_build_ends_and_an_unwritable_cache_summary_warns(
    tmp_path: Path,
) -> None:
    # The child of os.fork() in an example used to return into sphinx-gallery and go on
    # building beside the real build, writing a broken record into its output folder.
    src = make_project(tmp_path, [], conf='docsaccel_cache = "../cache"\n')
    _example(
        src,
        "plot_fork.py",
        """\
        import os
        import time

        pid = os.fork()
        if pid:
            time.sleep(1.0)
        print("forked")
        """,
    )
    # The cache's summary cannot be written: a warning, not a crash after every example ran.
    (tmp_path / "cache" / "last-build.json").mkdir(parents=True)
    built = build(src)
    assert built.returncode == 0, built.output
    assert "cannot write its summary" in built.output
    assert "Traceback" not in built.output and "Extension error" not in built.output
    assert built.record("plot_fork.py")["status"] == "ok"
    assert built.report["build"]["complete"] is True


@pytest.mark.slow
def test_a_forked_copy_ended_by_the_cleanup_writes_no_report(tmp_path: Path) -> None:
    # The child sleeps past its parent's example: the cleanup ends it with SIGTERM, which
    # must end the copy, not run the build's handler (an error and a second report).
    src = make_project(tmp_path, [])
    _example(
        src,
        "plot_fork_sleeps.py",
        """\
        import os
        import time

        if os.fork() == 0:
            time.sleep(30)
            os._exit(0)
        print("forked")
        """,
    )
    built = build(src)
    assert built.returncode == 0, built.output
    assert "terminated (SIGTERM)" not in built.output
    assert built.report["build"]["complete"] is True
    assert built.record("plot_fork_sleeps.py")["status"] == "ok"


SIGNALLED_AT_ONCE = """
import os, signal, sys, time
from docsaccel.gallery import process_end

process_end.install()  # the build's SIGTERM handler, as in a build's process
os.sched_setaffinity(0, {0})  # the parent runs on after forking: its child has not yet
survived = 0
for _ in range(20):
    pid = os.fork()
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    os.kill(pid, signal.SIGTERM)  # as a pool ended at once ends its workers
    for _ in range(500):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.01)
    else:
        survived += 1
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
print("survived", survived)
"""


def test_a_child_signalled_before_it_first_runs_still_ends(tmp_path: Path) -> None:
    # The signal reached it through the build's Python-level handler, which a new child
    # drops: a pool ended right after it started its workers waited for one forever.
    done = subprocess.run(
        [sys.executable, "-c", SIGNALLED_AT_ONCE],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["survived", "0"], done.stdout + done.stderr
