"""Benchmark: what docsaccel.gallery adds to a docs build.

Builds one gallery of 40 trivial examples with and without ``docsaccel.gallery``, in
alternation (so drift of the machine hits both sides alike), each build from scratch in a
fresh folder with ``python -m sphinx``. Prints each build, then a JSON object as the last
line: the median wall seconds of each side and ``overhead_ratio`` = with / without
(target: <= 1.02).

Usage::

    python tools/bench_gallery_overhead.py [--rounds 5] [--examples 40]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CONF = """
extensions = {extensions!r}
exclude_patterns = ["_build", "examples"]
sphinx_gallery_conf = {{
    "examples_dirs": ["examples"],
    "gallery_dirs": ["auto_examples"],
    "download_all_examples": False,
}}
docsaccel_budgets = "budgets.toml"
"""
EXAMPLE = '''"""
Trivial example {index}
=======================

Prints one line.
"""

print("example {index}")
'''
BUDGETS = 'default = "1m"\n'
WITHOUT = ["sphinx_gallery.gen_gallery"]
WITH = ["sphinx_gallery.gen_gallery", "docsaccel.gallery"]


def make_project(root: Path, extensions: list[str], examples: int) -> Path:
    src = root / "src"
    (src / "examples").mkdir(parents=True)
    (src / "conf.py").write_text(CONF.format(extensions=extensions), encoding="utf-8")
    (src / "budgets.toml").write_text(BUDGETS, encoding="utf-8")
    (src / "index.rst").write_text(
        "Bench\n=====\n\n.. toctree::\n\n   auto_examples/index\n", encoding="utf-8"
    )
    (src / "examples" / "README.rst").write_text("Examples\n========\n", encoding="utf-8")
    for index in range(examples):
        path = src / "examples" / f"plot_example_{index:02d}.py"
        path.write_text(EXAMPLE.format(index=index), encoding="utf-8")
    return src


def timed_build(extensions: list[str], examples: int) -> float:
    with tempfile.TemporaryDirectory(prefix="docsaccel-bench-") as tmp:
        src = make_project(Path(tmp), extensions, examples)
        env = {k: v for k, v in os.environ.items() if not k.startswith("DOCSACCEL_")}
        command = [sys.executable, "-m", "sphinx", "-b", "html", "-q", str(src), str(src / "_b")]
        started = time.perf_counter()
        subprocess.run(command, env=env, check=True, capture_output=True)
        seconds = time.perf_counter() - started
        if extensions == WITH:
            report = json.loads((src / "_b" / "docsaccel" / "report.json").read_text())
            assert len(report["examples"]) == examples, "the plugin missed examples"
        shutil.rmtree(src, ignore_errors=True)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="builds per side (default 5)")
    parser.add_argument("--examples", type=int, default=40, help="examples (default 40)")
    args = parser.parse_args()
    if args.rounds < 1 or args.examples < 1:
        parser.error("--rounds and --examples must be at least 1")
    timed_build(WITHOUT, args.examples)  # warm the file cache; not counted
    times: dict[str, list[float]] = {"without": [], "with": []}
    for round_index in range(args.rounds):
        # Alternate which side goes first, so neither always runs on a warmer machine.
        order = [("without", WITHOUT), ("with", WITH)]
        for side, extensions in order if round_index % 2 == 0 else order[::-1]:
            seconds = timed_build(extensions, args.examples)
            times[side].append(seconds)
            print(f"round {round_index + 1}: {side:<7} docsaccel.gallery  {seconds:.3f} s")
    without, with_plugin = (statistics.median(times[side]) for side in ("without", "with"))
    result = {
        "benchmark": "gallery_overhead",
        "examples": args.examples,
        "rounds": args.rounds,
        "without_seconds": round(without, 3),
        "with_seconds": round(with_plugin, 3),
        "overhead_ratio": round(with_plugin / without, 4),
        "target_ratio": 1.02,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
