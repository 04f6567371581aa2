"""Every docsaccel module imports on its own, first, in a fresh interpreter.

A module that only imports when another one was imported before it (a circular import
between packages) works in the test suite by luck of import order and fails for the user
who imports it first. One child process imports each module with docsaccel's own modules
forgotten in between (third-party packages stay loaded, so this stays fast).
"""

from __future__ import annotations

import importlib.util
import os
import pkgutil
import subprocess
import sys

import docsaccel

_CHILD = """
import importlib, os, sys, traceback
# Optional extras this environment does not have (torchrl's, on a Python with no torch
# CPU build): a module that needs one may fail to import for that reason alone.
absent = set(os.environ.get("ABSENT_EXTRAS", "").split())
failed = []
for name in sys.argv[1:]:
    for loaded in [m for m in sys.modules if m == "docsaccel" or m.startswith("docsaccel.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as error:
        if (error.name or "").split(".")[0] not in absent:
            failed.append(name + ": " + traceback.format_exc().strip().splitlines()[-1])
    except Exception:
        failed.append(name + ": " + traceback.format_exc().strip().splitlines()[-1])
print("\\n".join(failed))
sys.exit(1 if failed else 0)
"""


def _modules() -> list[str]:
    names = [docsaccel.__name__]
    for info in pkgutil.walk_packages(docsaccel.__path__, prefix="docsaccel."):
        names.append(info.name)
    return sorted(names)


def test_every_module_imports_first() -> None:
    modules = _modules()
    assert "docsaccel.video.recorder" in modules and "docsaccel.shard.roles" in modules
    absent = " ".join(n for n in ("torch", "torchrl") if importlib.util.find_spec(n) is None)
    result = subprocess.run(
        [sys.executable, "-c", _CHILD, *modules],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "ABSENT_EXTRAS": absent},
    )
    assert result.returncode == 0, result.stdout + result.stderr[-2000:]


def test_render_still_exports_the_file_recorder() -> None:
    from docsaccel.render import VideoFileRecorder
    from docsaccel.video.recorder import VideoFileRecorder as defined

    assert VideoFileRecorder is defined
