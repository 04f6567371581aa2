"""A generated project whose gallery calls a lot of small project functions.

This project's own tutorials spend their time in MuJoCo and torch, calling little project
code, so recording functions costs them almost nothing. This gallery is the other end: a
library of a few hundred small functions in a dozen modules (``heavylib``), called from a
dozen examples in tight loops, for ``tools/bench_cache.py`` to measure what recording
costs call-heavy code.

Example::

    root = write_project(Path("/tmp/heavy"))    # pyproject.toml, heavylib/, docs/
    build(root, out, cache=Path("/tmp/cache"), granularity="function")  # (wall, CPU)
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

MODULES = 12
FUNCTIONS_PER_MODULE = 25
EXAMPLES = 12

CONF = """
import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
extensions = ["sphinx_gallery.gen_gallery", "docsaccel.gallery"]
exclude_patterns = ["_build", "examples"]
sphinx_gallery_conf = {
    "examples_dirs": ["examples"],
    "gallery_dirs": ["auto_examples"],
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "show_memory": False,
}
"""


def _module(index: int) -> str:
    lines = [f'"""Module {index} of the generated library."""\n', "SCALE = 3\n"]
    for number in range(FUNCTIONS_PER_MODULE):
        name = f"f{index}_{number}"
        callee = f"f{index}_{number + 1}(x - 1)" if number + 1 < FUNCTIONS_PER_MODULE else "1"
        lines.append(
            f"\ndef {name}(x):\n"
            "    if x <= 0:\n"
            "        return 1\n"
            "    parts = (x % 3, x % 5, x % 7)\n"
            f"    return {callee} + (max(parts) - min(parts)) * SCALE\n"
        )
    return "".join(lines)


def _example(index: int) -> str:
    used = [index % MODULES, (index * 5 + 1) % MODULES]
    imports = "".join(f"from heavylib import m{m}\n" for m in used)
    calls = " + ".join(f"m{m}.f{m}_{(index + m) % 5}(12)" for m in used)
    return (
        f'"""\nExample {index}\n==========\n"""\n{imports}\n'
        f"total = 0\nfor step in range(20000):\n    total += {calls}\nprint(total)\n"
    )


def write_project(root: Path) -> Path:
    """Write the project under ``root`` (replaced if there) and return ``root``."""
    shutil.rmtree(root, ignore_errors=True)
    (root / "heavylib").mkdir(parents=True)
    (root / "docs" / "examples").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "heavy"\nversion = "0"\n', "utf-8")
    (root / "heavylib" / "__init__.py").write_text(
        "".join(f"from . import m{i}\n" for i in range(MODULES)), "utf-8"
    )
    for index in range(MODULES):
        (root / "heavylib" / f"m{index}.py").write_text(_module(index), "utf-8")
    (root / "docs" / "conf.py").write_text(CONF, "utf-8")
    (root / "docs" / "index.rst").write_text(
        "Heavy\n=====\n\n.. toctree::\n\n   auto_examples/index\n", "utf-8"
    )
    (root / "docs" / "examples" / "README.rst").write_text("Examples\n========\n", "utf-8")
    for index in range(EXAMPLES):
        (root / "docs" / "examples" / f"plot_{index:02d}.py").write_text(_example(index), "utf-8")
    return root


def build(
    pristine: Path, workdir: Path, cache: Path | None, granularity: str
) -> tuple[float, float]:
    """Build a fresh copy of the project; its wall and CPU seconds (build and children)."""
    copy = workdir / f"copy-{time.monotonic_ns()}"
    shutil.copytree(pristine, copy)
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCSACCEL")}
    env.update(
        DOCSACCEL_CACHE=str(cache) if cache else "0",
        DOCSACCEL_FAST="1",
        MPLBACKEND="agg",
    )
    conf = copy / "docs" / "conf.py"
    conf.write_text(
        conf.read_text("utf-8") + f"docsaccel_cache_granularity = {granularity!r}\n", "utf-8"
    )
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-b",
            "html",
            "-q",
            str(copy / "docs"),
            str(copy / "html"),
        ],
        env=env,
        check=True,
        capture_output=True,
    )
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    shutil.rmtree(copy, ignore_errors=True)
    return seconds, cpu
