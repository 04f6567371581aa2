"""Benchmark an example that creates and drops many ``multiprocessing`` pools.

A pool left to the garbage collector ends its workers with SIGTERM. A worker that had
inherited a Python-level SIGTERM handler of the build's could keep the signal pending
while it waited on the pool's lock, and the build waited for it forever; docsaccel puts
the handler back as it was in forked children (:mod:`docsaccel.gallery.process_end`).
This measures that such an example runs as fast with the plugin as without it, with the
cache off and on (where every worker also records what it runs,
:mod:`docsaccel.cache.child`).

A tiny gallery with one example that creates ``--pools`` fork pools of 2 workers, maps
over each, and drops it. Three builds alternate each round: sphinx-gallery alone, with
the plugin (cache off), with the plugin and the cache (module granularity, an empty
cache each time). Measured: the example's execution time as sphinx-gallery reports it
(:func:`docsaccel.sg_compat.cached_seconds`) and the build's CPU time (its processes
and their children).
``plugin_ratio`` and ``cache_ratio`` are the medians of the paired ratios of execution
time against sphinx-gallery alone (target <= 1.10 each), with the CPU ratios beside
them.

Prints one line per build and a last line with one JSON object.

Usage::

    python tools/bench_pools.py                # 300 pools, 3 rounds
    python tools/bench_pools.py --pools 100 --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from docsaccel.sg_compat import cached_seconds

EXAMPLE = '''"""
Pools
=====
"""
import multiprocessing

for _ in range({pools}):
    pool = multiprocessing.get_context("fork").Pool(2)
    pool.map(abs, range(-4, 4))
    del pool  # left to the garbage collector, as many examples leave their pool
print("done")
'''
CONF = """
extensions = ["sphinx_gallery.gen_gallery"{plugin}]
exclude_patterns = ["_build", "examples"]
sphinx_gallery_conf = {{
    "examples_dirs": ["examples"],
    "gallery_dirs": ["auto_examples"],
    "filename_pattern": "/plot_",
    "download_all_examples": False,
}}
"""
SIDES = {
    "sphinx-gallery": ("", {}),
    "plugin": (', "docsaccel.gallery"', {"DOCSACCEL_CACHE": "0"}),
    "plugin+cache": (', "docsaccel.gallery"', {}),
}


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def build(workdir: Path, side: str, pools: int, index: int) -> tuple[float, float, float]:
    """One build from a fresh folder: (example seconds, build wall seconds, CPU seconds)."""
    plugin, env = SIDES[side]
    docs = workdir / f"{side}-{index}"
    shutil.rmtree(docs, ignore_errors=True)
    (docs / "examples").mkdir(parents=True)
    (docs / "conf.py").write_text(CONF.format(plugin=plugin), "utf-8")
    (docs / "index.rst").write_text("Pools\n=====\n\n.. toctree::\n\n   auto_examples/index\n")
    (docs / "examples" / "README.rst").write_text("Examples\n========\n", "utf-8")
    (docs / "examples" / "plot_pools.py").write_text(EXAMPLE.format(pools=pools), "utf-8")
    variables = {k: v for k, v in os.environ.items() if not k.startswith("DOCSACCEL_")}
    variables["DOCSACCEL_CACHE"] = str(workdir / f"cache-{index}")
    variables.update(env)
    cpu_before, started = _cpu(), time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-q", str(docs), str(docs / "_build")],
        env=variables,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    wall, cpu = time.perf_counter() - started, _cpu() - cpu_before
    if done.returncode != 0:
        sys.exit(f"{side} build failed:\n{(done.stdout + done.stderr)[-3000:]}")
    example = cached_seconds(docs / "auto_examples" / "plot_pools.py")
    if example is None:
        sys.exit(f"{side} build left no measured time of its example")
    return example, wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pools", type=int, default=300, help="pools per run (300)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds (3)")
    args = parser.parse_args()
    if args.pools < 1 or args.rounds < 1:
        parser.error("--pools and --rounds must be 1 or more")
    ratios: dict[str, list[float]] = {"plugin": [], "plugin+cache": []}
    cpu_ratios: dict[str, list[float]] = {"plugin": [], "plugin+cache": []}
    seconds: dict[str, list[float]] = {side: [] for side in SIDES}
    with tempfile.TemporaryDirectory(prefix="docsaccel-bench-pools-") as name:
        workdir = Path(name)
        for index in range(args.rounds):
            order = list(SIDES)[index % 3 :] + list(SIDES)[: index % 3]
            measured = {}
            for side in order:
                measured[side] = build(workdir, side, args.pools, index)
                example, wall, cpu = measured[side]
                seconds[side].append(example)
                print(
                    f"round {index + 1} {side}: example {example:.2f} s, build {wall:.1f} s, "
                    f"CPU {cpu:.1f} s"
                )
            base = measured["sphinx-gallery"]
            for side in ratios:
                ratios[side].append(measured[side][0] / base[0])
                cpu_ratios[side].append(measured[side][2] / base[2])
    result = {
        "pools": args.pools,
        "rounds": args.rounds,
        "example_seconds": {side: round(statistics.median(v), 2) for side, v in seconds.items()},
        "plugin_ratio": round(statistics.median(ratios["plugin"]), 3),
        "plugin_cpu_ratio": round(statistics.median(cpu_ratios["plugin"]), 3),
        "cache_ratio": round(statistics.median(ratios["plugin+cache"]), 3),
        "cache_cpu_ratio": round(statistics.median(cpu_ratios["plugin+cache"]), 3),
        "target_ratio": 1.10,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
