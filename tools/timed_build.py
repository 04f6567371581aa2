"""Time one build of this project's docs from a fresh copy: what the docs benchmarks share.

A CI job starts from a clean checkout, so each build copies the project without its build
and gallery outputs (:func:`docsaccel.shard.build.copy_project`: no example is skipped as
unchanged, the working tree is not touched) and runs ``sphinx-build -q`` on the copy in a
child process, with budgets reported, not enforced (``DOCSACCEL_ON_OVERRUN=warn``), so a
slow machine still gives a number. The copy is removed afterwards; the build's output
goes to a log beside it, whose end is shown if the build fails.

``tools/bench_docs.py`` and ``tools/bench_cache.py`` import it (Python puts the folder of
the script it runs on ``sys.path``).

Example::

    built = timed_build(workdir / "fast", {"DOCSACCEL_FAST": "1"})
    print(f"{built.seconds:.1f} s, CPU {built.cpu_seconds:.1f} s", built.report["build"])
"""

from __future__ import annotations

import compileall
import json
import resource
import shutil
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docsaccel.shard import ShardError
from docsaccel.shard.build import copy_project, read_project, run_sphinx

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class TimedBuild:
    """One build's wall seconds, the CPU seconds of its processes, its docsaccel report."""

    seconds: float
    cpu_seconds: float
    report: dict[str, Any]


def compile_docsaccel() -> None:
    """Compile docsaccel's modules to bytecode, once, before anything is measured.

    An installed docsaccel has its bytecode (pip compiles at install). An editable checkout
    under ``PYTHONDONTWRITEBYTECODE`` would compile every module it imports from source in
    every build, which no user pays, and only the side with docsaccel would pay it.
    """
    import docsaccel

    compileall.compile_dir(Path(docsaccel.__file__).parent, quiet=1)


def timed_build(copy: Path, env: Mapping[str, str], conf: str = "") -> TimedBuild:
    """Build this project's docs from a fresh copy at ``copy`` with ``env`` added.

    ``conf`` is appended to the copy's ``conf.py``. The log is ``copy`` + ``.log``; a
    failed build ends this process with the end of its log.
    """
    shutil.rmtree(copy, ignore_errors=True)
    docs = copy_project(read_project(ROOT / "docs", ROOT), copy).docs
    if conf:
        with (docs / "conf.py").open("a", encoding="utf-8") as stream:
            stream.write(f"\n{conf}\n")
    outdir = docs / "_build" / "html"
    log = copy.parent / f"{copy.name}.log"
    cpu_before = _children_cpu()
    started = time.perf_counter()
    try:
        run_sphinx(docs, outdir, {"DOCSACCEL_ON_OVERRUN": "warn", **env}, ["-q"], log=log)
    except ShardError as exc:
        sys.exit(f"{exc}:\n{log.read_text(encoding='utf-8')[-3000:]}")
    seconds = time.perf_counter() - started
    cpu_seconds = _children_cpu() - cpu_before
    report = json.loads((outdir / "docsaccel" / "report.json").read_text(encoding="utf-8"))
    shutil.rmtree(copy, ignore_errors=True)
    return TimedBuild(seconds, cpu_seconds, report)


def _children_cpu() -> float:
    """CPU seconds of this process's finished child processes (the builds), so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime
